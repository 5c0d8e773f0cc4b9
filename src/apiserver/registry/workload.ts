/**
 * What all replica-managing kinds share: selector/template checks and the
 * /scale subresource (autoscaling/v1 Scale).
 */
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import type { Scale } from 'kubernetes-types/autoscaling/v1.js';
import type { KubeObject } from '../../api/types.js';
import type { ScaleAccess } from './strategy.js';
import { type FieldError, GoLiteral, invalid, required } from '../../api/validation.js';
import { selectorFromLabelSelector, labelSelectorAsString, selectorFromSet } from '../../api/labels.js';
import { goStringMap, validateLabelSelector, nonNegative } from './meta-validation.js';
import { child } from './generic.js';

type Obj = Record<string, unknown>;

/** `spec` of a workload as a loose record. */
export function specOf(obj: KubeObject): Obj {
  return (obj.spec ?? {}) as Obj;
}

/**
 * The selector rules of apps/v1 kinds and jobs: required, not empty, valid,
 * and matching the template labels. `kind` words the empty-selector message.
 */
export function validateSelectorAndTemplate(obj: KubeObject, kind: string): FieldError[] {
  const s = specOf(obj);
  const sel = s.selector as LabelSelector | undefined;
  const errs: FieldError[] = [];
  if (!sel) return [required('spec.selector', '')];
  errs.push(...validateLabelSelector(sel, 'spec.selector'));
  if (!sel.matchLabels || Object.keys(sel.matchLabels).length === 0) {
    if (!sel.matchExpressions?.length) errs.push(invalid('spec.selector', sel, `empty selector is invalid for ${kind}`));
  }
  if (errs.length > 0) return errs;
  const labels = ((s.template as Obj | undefined)?.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;
  let matches = false;
  try {
    matches = selectorFromLabelSelector(sel).matches(labels ?? {});
  } catch (err) {
    errs.push(invalid('spec.selector', sel, `invalid label selector: ${(err as Error).message}`));
    return errs;
  }
  if (!matches) errs.push(selectorMismatch(labels));
  return errs;
}

/** `spec.template.metadata.labels: Invalid value: map[string]string{...}: `selector` does not match template `labels``. */
export function selectorMismatch(labels: Record<string, string> | undefined): FieldError {
  return invalid('spec.template.metadata.labels', new GoLiteral(goStringMap(labels)), '`selector` does not match template `labels`');
}

export function validateReplicas(obj: KubeObject): FieldError[] {
  return nonNegative(specOf(obj).replicas as number | undefined, 'spec.replicas');
}

/** Scale access for a kind whose status.selector comes from `selectorString`. */
export function scaleAccess(selectorString: (obj: KubeObject) => string): ScaleAccess {
  return {
    get(obj): Scale {
      const m = obj.metadata ?? {};
      const metadata: Scale['metadata'] = { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp };
      for (const k of Object.keys(metadata!) as (keyof NonNullable<Scale['metadata']>)[]) if (metadata![k] === undefined) delete metadata![k];
      return {
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata,
        spec: { replicas: (specOf(obj).replicas as number | undefined) ?? 0 },
        status: { replicas: ((obj.status as Obj | undefined)?.replicas as number | undefined) ?? 0, selector: selectorString(obj) },
      };
    },
    set(obj, replicas) {
      child(obj, 'spec').replicas = replicas;
    },
    selector: selectorString,
  };
}

/** status.selector of apps/v1 kinds: the label selector in string form. */
export function labelSelectorString(obj: KubeObject): string {
  const sel = specOf(obj).selector as LabelSelector | undefined;
  return sel ? labelSelectorAsString(sel) : '';
}

/** status.selector of replication controllers: the map selector in string form. */
export function setSelectorString(obj: KubeObject): string {
  return selectorFromSet((specOf(obj).selector ?? {}) as Record<string, string>).toString();
}
