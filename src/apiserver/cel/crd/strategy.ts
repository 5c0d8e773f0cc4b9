/**
 * x-kubernetes-validations in the custom-resource strategy
 * (apiextensions-apiserver/pkg/registry/customresource/strategy.go and
 * status_strategy.go): after schema validation, on create and on update of
 * the resource or its /status, the CRD version's rules are evaluated and
 * their errors join the same 422 Invalid. Rules compile once per distinct
 * schema (cached here), not per request.
 */
import type { Strategy } from '../../registry/strategy.js';
import type { Schema } from '../../crd/schema.js';
import { newValidator, validateRules, type Validator } from './validator.js';

const validators = new Map<string, Validator | undefined>();
const maxCached = 500;

/** The compiled rules of a CRD version's schema (undefined: it has none). Cached by schema content. */
export function validatorFor(schema: Schema): Validator | undefined {
  const key = JSON.stringify(schema);
  if (validators.has(key)) return validators.get(key);
  const v = newValidator(schema, true);
  if (validators.size >= maxCached) validators.delete(validators.keys().next().value!);
  validators.set(key, v);
  return v;
}

/** A custom resource strategy that also evaluates the schema's validation rules. */
export function withValidationRules(base: Strategy, schema: Schema | undefined): Strategy {
  const v = schema ? validatorFor(schema) : undefined;
  if (!v) return base;
  return {
    ...base,
    validate(obj) {
      const errs = base.validate(obj);
      return [...errs, ...validateRules(v, obj, undefined, errs)];
    },
    validateUpdate(newObj, oldObj) {
      const errs = base.validateUpdate(newObj, oldObj);
      return [...errs, ...validateRules(v, newObj, oldObj, errs)];
    },
  };
}
