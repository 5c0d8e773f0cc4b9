/**
 * Defaulting from the structural schema (apiextensions structural/defaulting):
 * a missing property with a `default` gets a copy of it, then defaulting
 * continues inside the value (defaults within defaults apply). A `null` of a
 * non-nullable property is replaced by its default, or dropped when it has
 * none (PruneNonNullableNullsWithoutDefaults). Applied on create, update and
 * when objects are read.
 */
import { isPlainObject, type Schema } from './schema.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** Applies the defaults of `schema` to `value` in place. */
export function applyDefaults(value: unknown, schema: Schema | undefined): void {
  if (!schema) return;
  walk(value, schema);
}

function walk(value: unknown, s: Schema): void {
  if (Array.isArray(value)) {
    if (!s.items) return;
    for (let i = 0; i < value.length; i++) {
      if (value[i] === null && !s.items.nullable && s.items.default !== undefined) value[i] = deepCopy(s.items.default);
      walk(value[i], s.items);
    }
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [k, prop] of Object.entries(s.properties ?? {})) {
    if (value[k] === null && !prop.nullable) {
      if (prop.default !== undefined) value[k] = deepCopy(prop.default);
      else delete value[k];
    } else if (value[k] === undefined && prop.default !== undefined) {
      value[k] = deepCopy(prop.default);
    }
  }
  const additional = isPlainObject(s.additionalProperties) ? s.additionalProperties : undefined;
  for (const k of Object.keys(value)) {
    const prop = s.properties?.[k] ?? additional;
    if (prop) walk(value[k], prop);
  }
}
