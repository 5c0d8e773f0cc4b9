/**
 * Pruning of unknown fields (apiextensions structural/pruning): a field not
 * named by the schema is dropped unless its object (or an ancestor without a
 * schema of its own) has `x-kubernetes-preserve-unknown-fields: true`. At the
 * root and in `x-kubernetes-embedded-resource` objects, apiVersion, kind and
 * metadata are always kept.
 */
import { isPlainObject, type Schema } from './schema.js';

/**
 * Removes the unknown fields of `value` in place. Returns the dotted paths
 * that were removed (for `fieldValidation=Warn|Strict`), in document order.
 */
export function prune(value: unknown, schema: Schema | undefined, opts: { root?: boolean } = { root: true }): string[] {
  const removed: string[] = [];
  if (!schema) return removed;
  walk(value, schema, '', !!opts.root, removed);
  return removed;
}

function walk(value: unknown, s: Schema, path: string, typeMeta: boolean, removed: string[]): void {
  if (Array.isArray(value)) {
    if (s.items) value.forEach((item, i) => walk(item, s.items!, `${path}[${i}]`, !!s.items!['x-kubernetes-embedded-resource'], removed));
    return;
  }
  if (!isPlainObject(value)) return;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const additional = isPlainObject(s.additionalProperties) ? s.additionalProperties : undefined;
  for (const k of Object.keys(value)) {
    const here = path ? `${path}.${k}` : k;
    if (typeMeta && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) {
      continue; // metadata has a fixed shape; schemas may only restrict name/generateName
    }
    const prop = s.properties?.[k] ?? additional;
    if (prop) walk(value[k], prop, here, !!prop['x-kubernetes-embedded-resource'], removed);
    else if (!preserve && s.additionalProperties !== true) {
      delete value[k];
      removed.push(here);
    }
  }
}
