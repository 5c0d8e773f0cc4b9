/**
 * Navigation over the patch-meta table: which definition a field holds, how
 * its list merges. A `SchemaNode` of undefined means "unknown": maps merge
 * key by key, lists are replaced (atomic), as for an untyped object.
 */
import type { GroupVersionKind } from '../../api/types.js';
import { patchMetaTable, type FieldMeta } from '../openapi/openapi-data.js';

export type { FieldMeta };

/** An object with declared fields (`struct`), or a map whose values are `value` (a definition) or scalars. */
export type SchemaNode = { kind: 'struct'; def: string } | { kind: 'map'; value: SchemaNode | undefined } | undefined;

/** The root schema of a built-in kind, or undefined when the kind is not in the table. */
export function schemaForKind(gvk: GroupVersionKind): SchemaNode {
  const def = patchMetaTable().kinds[`${gvk.group}/${gvk.version}/${gvk.kind}`];
  return def ? { kind: 'struct', def } : undefined;
}

const objectMetaDef = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** A schema for objects outside the table: only `metadata` is known. */
export function genericObjectSchema(): SchemaNode {
  return { kind: 'struct', def: '<generic>' };
}

function defNode(name: string | undefined): SchemaNode {
  if (!name || name === 'scalar' || !patchMetaTable().defs[name]) return undefined;
  return { kind: 'struct', def: name };
}

/** Meta of `field` within `node` (undefined for maps and unknown fields). */
export function fieldMeta(node: SchemaNode, field: string): FieldMeta | undefined {
  if (!node || node.kind !== 'struct') return undefined;
  if (node.def === '<generic>') return field === 'metadata' ? { ref: objectMetaDef } : undefined;
  return patchMetaTable().defs[node.def]?.[field];
}

/** The schema of the value under `field` when it is an object (struct or map). */
export function childSchema(node: SchemaNode, field: string): SchemaNode {
  if (!node) return undefined;
  if (node.kind === 'map') return node.value;
  const m = fieldMeta(node, field);
  if (!m) return undefined;
  if (m.ref) return defNode(m.ref);
  if (m.map) return { kind: 'map', value: defNode(m.map) };
  return undefined;
}

/** The schema of the items of the list under `field`. */
export function itemSchema(node: SchemaNode, field: string): SchemaNode {
  const m = fieldMeta(node, field);
  return m?.items ? defNode(m.items) : undefined;
}

export function hasStrategy(m: FieldMeta | undefined, s: 'merge' | 'retainKeys' | 'replace'): boolean {
  return !!m?.strategy && m.strategy.split(',').includes(s);
}
