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

/**
 * Struct and map nodes by definition name, made once: the field-set walk asks
 * for a child's schema at every object of every write, and the nodes are
 * plain descriptors nobody changes. (The table is loaded once per process.)
 */
const structNodes = new Map<string, SchemaNode>();
const mapNodes = new Map<string, SchemaNode>();
const scalarMapNode: SchemaNode = Object.freeze({ kind: 'map', value: undefined });

function defNode(name: string | undefined): SchemaNode {
  if (!name || name === 'scalar') return undefined;
  let node = structNodes.get(name);
  if (node === undefined && !structNodes.has(name)) {
    node = patchMetaTable().defs[name] ? Object.freeze({ kind: 'struct', def: name }) : undefined;
    structNodes.set(name, node);
  }
  return node;
}

function mapNode(valueDef: string): SchemaNode {
  let node = mapNodes.get(valueDef);
  if (node === undefined) {
    const value = defNode(valueDef);
    node = value ? Object.freeze({ kind: 'map', value }) : scalarMapNode;
    mapNodes.set(valueDef, node);
  }
  return node;
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
  if (m.map) return mapNode(m.map);
  return undefined;
}

/** The schema of the items of the list under `field`. */
export function itemSchema(node: SchemaNode, field: string): SchemaNode {
  const m = fieldMeta(node, field);
  return m?.items ? defNode(m.items) : undefined;
}

export function hasStrategy(m: FieldMeta | undefined, s: 'merge' | 'retainKeys' | 'replace'): boolean {
  const st = m?.strategy;
  if (!st) return false;
  if (st === s) return true;
  return st.includes(',') && st.split(',').includes(s);
}
