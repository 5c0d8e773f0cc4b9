/**
 * CEL types as kcm declares them to the engine, and the declared types of
 * structural schemas (k8s.io/apiserver/pkg/cel/types.go DeclType and
 * common/schemas.go SchemaDeclType): objects with fields, maps from
 * `additionalProperties`, lists, int-or-string as `dyn`, string formats
 * byte/date/date-time/duration as bytes/timestamp/duration, and the size
 * bounds the cost estimator uses (maxLength, maxItems, maxProperties, or
 * what fits in a 3 MiB request).
 */
import type { Schema } from '../crd/schema.js';
import { escapeName } from './escaping.js';

/** A CEL type. Object and opaque types are named; their fields live in the registry. */
export type CelType =
  | { readonly kind: 'primitive'; readonly name: PrimitiveName }
  | { readonly kind: 'list'; readonly elem: CelType }
  | { readonly kind: 'map'; readonly key: CelType; readonly value: CelType }
  | { readonly kind: 'object'; readonly name: string }
  | { readonly kind: 'optional'; readonly elem: CelType };

export type PrimitiveName = 'bool' | 'int' | 'uint' | 'double' | 'string' | 'bytes' | 'null_type' | 'dyn' | 'type' | 'timestamp' | 'duration';

const prim = (name: PrimitiveName): CelType => Object.freeze({ kind: 'primitive', name });
export const BoolType = prim('bool');
export const IntType = prim('int');
export const UintType = prim('uint');
export const DoubleType = prim('double');
export const StringType = prim('string');
export const BytesType = prim('bytes');
export const NullType = prim('null_type');
export const DynType = prim('dyn');
export const TypeType = prim('type');
export const TimestampType = prim('timestamp');
export const DurationType = prim('duration');
export const listOf = (elem: CelType): CelType => ({ kind: 'list', elem });
export const mapOf = (key: CelType, value: CelType): CelType => ({ kind: 'map', key, value });
export const objectType = (name: string): CelType => ({ kind: 'object', name });
export const optionalOf = (elem: CelType): CelType => ({ kind: 'optional', elem });

/** The engine's spelling of a type (`list<int>`, `google.protobuf.Timestamp`). */
export function engineTypeName(t: CelType): string {
  switch (t.kind) {
    case 'primitive':
      if (t.name === 'timestamp') return 'google.protobuf.Timestamp';
      if (t.name === 'duration') return 'google.protobuf.Duration';
      if (t.name === 'null_type') return 'null';
      return t.name;
    case 'list':
      return `list<${engineTypeName(t.elem)}>`;
    case 'map':
      return `map<${engineTypeName(t.key)}, ${engineTypeName(t.value)}>`;
    case 'object':
      return t.name;
    case 'optional':
      return `optional<${engineTypeName(t.elem)}>`;
  }
}

/** cel-go's spelling of an engine type name in messages (`list(int)`, `timestamp`). */
export function celGoTypeName(engineName: string | undefined): string {
  if (!engineName) return 'dyn';
  return engineName
    .replace(/google\.protobuf\.Timestamp/g, 'timestamp')
    .replace(/google\.protobuf\.Duration/g, 'duration')
    .replace(/\boptional</g, 'optional_type<')
    .replace(/\bnull\b/g, 'null')
    .replace(/</g, '(')
    .replace(/>/g, ')');
}

// limits.go
export const maxRequestSizeBytes = 3 * 1024 * 1024;
export const maxDurationSizeJSON = 32;
export const maxDatetimeSizeJSON = 32;
export const minDurationSizeJSON = 3;
export const jsonDateSize = 12;
export const minDatetimeSizeJSON = 21;
export const minStringSize = 2;
export const minBoolSize = 4;
export const minNumberSize = 1;
/** Largest size or cost (cel-go's math.MaxUint64); arithmetic on estimates saturates here. */
export const maxUint64 = 2 ** 64;

/** A field of an object DeclType, by its escaped CEL name. */
export interface DeclField {
  /** The CEL identifier (escaped property name). */
  readonly name: string;
  /** The property name in JSON. */
  readonly property: string;
  readonly type: DeclType;
  readonly required: boolean;
}

/**
 * The declared type of a schema node: what CEL sees (celType) and how large
 * a value may be (maxElements: characters, bytes, items or properties;
 * minSerializedSize: the smallest JSON it can be).
 */
export interface DeclType {
  /** `object` until named; object types are named `<root>.<field>...`. */
  name: string;
  celType: CelType;
  fields?: Map<string, DeclField>;
  elem?: DeclType;
  key?: DeclType;
  maxElements: number;
  minSerializedSize: number;
  /** x-kubernetes-list-type of a list (atomic when unset). */
  listType?: 'atomic' | 'set' | 'map';
  /** x-kubernetes-list-map-keys (JSON property names) of a map list. */
  listMapKeys?: string[];
  /** The structural schema this type comes from, when it comes from one. */
  schema?: Schema;
}

const simple = (name: string, celType: CelType, minSerializedSize: number, maxElements = 0): DeclType => ({ name, celType, minSerializedSize, maxElements });

export const declBool = (): DeclType => simple('bool', BoolType, minBoolSize);
export const declInt = (): DeclType => simple('int', IntType, minNumberSize);
export const declDouble = (): DeclType => simple('double', DoubleType, minNumberSize);
export const declString = (maxElements = maxUint64): DeclType => simple('string', StringType, minStringSize, maxElements);
export const declDyn = (): DeclType => simple('dyn', DynType, 1, maxUint64);

export function newListDecl(elem: DeclType, maxItems: number): DeclType {
  return { name: 'list', celType: listOf(elem.celType), elem, maxElements: maxItems, minSerializedSize: 2 };
}

export function newMapDecl(key: DeclType, elem: DeclType, maxProperties: number): DeclType {
  return { name: 'map', celType: mapOf(key.celType, elem.celType), key, elem, maxElements: maxProperties, minSerializedSize: 2 };
}

export function newObjectDecl(name: string, fields: Map<string, DeclField>): DeclType {
  return { name, celType: objectType(name), fields, maxElements: 0, minSerializedSize: 2 };
}

export const isObjectDecl = (t: DeclType): boolean => !!t.fields;
export const isListDecl = (t: DeclType): boolean => !t.fields && !t.key && !!t.elem;
export const isMapDecl = (t: DeclType): boolean => !t.fields && !!t.key && !!t.elem;

const zeroIfNegative = (v: number): number => (v < 0 ? 0 : v);

/** WithTypeAndObjectMeta: a resource root (or embedded resource) as CEL sees it: kind, apiVersion, metadata.name/generateName. */
export function withTypeAndObjectMeta(s: Schema): Schema {
  const p = s.properties ?? {};
  const md = p.metadata;
  if (p.kind?.type === 'string' && p.apiVersion?.type === 'string' && md?.type === 'object' && md.properties?.name?.type === 'string' && md.properties?.generateName?.type === 'string') {
    return s;
  }
  return {
    ...s,
    properties: {
      ...p,
      kind: { type: 'string' },
      apiVersion: { type: 'string' },
      metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } },
    },
  };
}

function maxStringLengthPerRequest(s: Schema): number {
  if (s['x-kubernetes-int-or-string']) return maxRequestSizeBytes - 2;
  switch (s.format) {
    case 'duration':
      return maxDurationSizeJSON;
    case 'date':
      return jsonDateSize;
    case 'date-time':
      return maxDatetimeSizeJSON;
    default:
      return maxRequestSizeBytes - 2;
  }
}

function maxStringEnumLength(s: Schema): number {
  let max = 0;
  for (const v of s.enum ?? []) if (typeof v === 'string' && Buffer.byteLength(v) > max) max = Buffer.byteLength(v);
  return max;
}

const maxArrayItemsFromMinSize = (minSize: number): number => Math.floor((maxRequestSizeBytes - 2) / (minSize + 1));
const maxAdditionalPropertiesFromMinSize = (minSize: number): number => Math.floor((maxRequestSizeBytes - 2) / (minSize + 6));

/**
 * SchemaDeclType: the declared type of a structural schema node, or
 * undefined when CEL cannot see it (no type, an array without items).
 * Object types come out named `object`; name them with assignTypeNames.
 */
export function schemaDeclType(s: Schema | undefined, isResourceRoot = false): DeclType | undefined {
  if (!s) return undefined;
  if (s['x-kubernetes-int-or-string']) {
    const dyn = simple('dyn', DynType, 1, maxRequestSizeBytes - 2);
    dyn.schema = s;
    return dyn;
  }
  if (isResourceRoot) s = withTypeAndObjectMeta(s);
  let t: DeclType | undefined;
  switch (s.type) {
    case 'array': {
      if (!s.items) return undefined;
      const items = schemaDeclType(s.items, !!s.items['x-kubernetes-embedded-resource']);
      if (!items) return undefined;
      const maxItems = s.maxItems !== undefined ? zeroIfNegative(s.maxItems) : maxArrayItemsFromMinSize(items.minSerializedSize);
      t = newListDecl(items, maxItems);
      t.listType = s['x-kubernetes-list-type'] ?? 'atomic';
      if (t.listType === 'map') t.listMapKeys = [...(s['x-kubernetes-list-map-keys'] ?? [])];
      break;
    }
    case 'object': {
      const ap = s.additionalProperties;
      if (ap !== undefined && ap !== false && typeof ap === 'object') {
        const props = schemaDeclType(ap, !!ap['x-kubernetes-embedded-resource']);
        if (!props) return undefined;
        const maxProperties = s.maxProperties !== undefined ? zeroIfNegative(s.maxProperties) : maxAdditionalPropertiesFromMinSize(props.minSerializedSize);
        t = newMapDecl(declString(maxUint64), props, maxProperties);
        break;
      }
      const fields = new Map<string, DeclField>();
      const required = new Set(Array.isArray(s.required) ? s.required : []);
      let minSerializedSize = 2;
      for (const [name, prop] of Object.entries(s.properties && typeof s.properties === 'object' ? s.properties : {})) {
        if (!prop || typeof prop !== 'object') continue;
        const fieldType = schemaDeclType(prop, !!prop['x-kubernetes-embedded-resource']);
        if (!fieldType) continue;
        const escaped = escapeName(name);
        if (escaped !== undefined) fields.set(escaped, { name: escaped, property: name, type: fieldType, required: required.has(name) });
        if (required.has(name) && prop.default === undefined) minSerializedSize += Buffer.byteLength(name) + fieldType.minSerializedSize + 4;
      }
      t = newObjectDecl('object', fields);
      t.minSerializedSize = minSerializedSize;
      break;
    }
    case 'string': {
      switch (s.format) {
        case 'byte':
          t = simple('bytes', BytesType, minStringSize, s.maxLength !== undefined ? zeroIfNegative(s.maxLength) : maxStringLengthPerRequest(s));
          break;
        case 'duration':
          t = simple('duration', DurationType, minDurationSizeJSON, maxStringLengthPerRequest(s));
          break;
        case 'date':
          t = simple('timestamp', TimestampType, jsonDateSize, maxStringLengthPerRequest(s));
          break;
        case 'date-time':
          t = simple('timestamp', TimestampType, minDatetimeSizeJSON, maxStringLengthPerRequest(s));
          break;
        default: {
          let max: number;
          if (s.maxLength !== undefined) max = zeroIfNegative(s.maxLength) * 4;
          else if ((s.enum ?? []).length > 0) max = maxStringEnumLength(s);
          else max = maxStringLengthPerRequest(s);
          t = simple('string', StringType, minStringSize, max);
        }
      }
      break;
    }
    case 'boolean':
      t = declBool();
      break;
    case 'number':
      t = declDouble();
      break;
    case 'integer':
      t = declInt();
      break;
    default:
      return undefined;
  }
  t.schema = s;
  return t;
}

/**
 * MaybeAssignTypeName: names every object type of the tree after its path
 * (`<name>.spec.template`, lists `.__idx__`, maps `.__elem__`: upstream writes `@idx` and `@elem`, which the engine cannot parse in an operator signature), so that the engine
 * can tell them apart. Returns a new tree; the input is not changed.
 */
export function assignTypeNames(t: DeclType, name: string): DeclType {
  if (t.fields) {
    const typeName = t.name !== 'object' ? t.name : name;
    const fields = new Map<string, DeclField>();
    for (const [fname, f] of t.fields) fields.set(fname, { ...f, type: assignTypeNames(f.type, `${typeName}.${fname}`) });
    return { ...t, name: typeName, celType: objectType(typeName), fields };
  }
  if (t.key && t.elem) {
    const elem = assignTypeNames(t.elem, `${name}.__elem__`);
    return { ...t, elem, celType: mapOf(t.key.celType, elem.celType) };
  }
  if (t.elem) {
    const elem = assignTypeNames(t.elem, `${name}.__idx__`);
    return { ...t, elem, celType: listOf(elem.celType) };
  }
  return t;
}

/** Every named object type of a tree, parents before children. */
export function objectTypesOf(t: DeclType, out: DeclType[] = [], seen = new Set<string>()): DeclType[] {
  if (t.fields) {
    if (!seen.has(t.name)) {
      seen.add(t.name);
      out.push(t);
    }
    for (const f of t.fields.values()) objectTypesOf(f.type, out, seen);
  } else if (t.elem) objectTypesOf(t.elem, out, seen);
  return out;
}
