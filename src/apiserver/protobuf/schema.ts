/**
 * The protobuf schema of the built-in Kubernetes kinds: data/proto/schema.json.gz,
 * written by scripts/gen-proto-schema.mjs from a kubectl binary's
 * generated.proto descriptors and Go struct tags. Loaded once, on first use.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export type ScalarType =
  | 'double' | 'float' | 'int64' | 'uint64' | 'int32' | 'fixed64' | 'fixed32' | 'bool' | 'string' | 'bytes'
  | 'uint32' | 'enum' | 'sfixed32' | 'sfixed64' | 'sint32' | 'sint64';

/** A scalar, a message's full name (`k8s.io.api.core.v1.Pod`), or a map. */
export type FieldType = ScalarType | string | ['map', ScalarType, ScalarType | string];

export const FieldFlag = {
  repeated: 1,
  /** A Go pointer: a zero value on the wire is meaningful (`replicas: 0`) and kept. */
  pointer: 2,
  /** `json:",inline"`: the message's fields go into the parent's JSON object. */
  inline: 4,
  /** A Go slice type carried as a message with one repeated `items` field (`Verbs`). */
  sliceWrapper: 8,
} as const;

/** [number, jsonName, type, flags] */
export type FieldSpec = [number, string, FieldType, number];

export interface ProtoSchema {
  v: number;
  /** What the data was generated from (`kubectl v1.32.4`). */
  source: string;
  messages: Record<string, FieldSpec[]>;
}

/** A message's fields by number, for decoding. */
export interface MessageSpec {
  name: string;
  byNumber: Map<number, FieldSpec>;
}

const scalarTypes = new Set<string>([
  'double', 'float', 'int64', 'uint64', 'int32', 'fixed64', 'fixed32', 'bool', 'string', 'bytes',
  'uint32', 'enum', 'sfixed32', 'sfixed64', 'sint32', 'sint64',
]);

export function isScalar(t: FieldType): t is ScalarType {
  return typeof t === 'string' && scalarTypes.has(t);
}

/**
 * Messages that stand for a Go slice type (`type ExtraValue []string`,
 * `type Verbs []string`): one repeated field `items`, an array in JSON.
 */
export function isSliceMessage(name: string): boolean {
  return name.endsWith('.ExtraValue') || name === 'k8s.io.apimachinery.pkg.apis.meta.v1.Verbs';
}

let loaded: ProtoSchema | undefined;
const specs = new Map<string, MessageSpec | null>();

/** The file data/proto/schema.json.gz above this module (source or compiled layout). */
export function schemaFile(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'data', 'proto', 'schema.json.gz');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`data/proto/schema.json.gz not found above ${dirname(fileURLToPath(import.meta.url))}; run scripts/gen-proto-schema.mjs`);
    dir = parent;
  }
}

/** The whole schema; shared, read-only. */
export function protoSchema(): ProtoSchema {
  if (loaded) return loaded;
  const file = schemaFile();
  try {
    loaded = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as ProtoSchema;
  } catch (err) {
    throw new Error(`cannot load ${file}: ${(err as Error).message}`, { cause: err });
  }
  return loaded;
}

/** The message `name` (full protobuf name), or undefined when the schema has no such message. */
export function messageSpec(name: string): MessageSpec | undefined {
  let s = specs.get(name);
  if (s === undefined) {
    const fields = protoSchema().messages[name];
    s = fields ? { name, byNumber: new Map(fields.map((f) => [f[0], f])) } : null;
    specs.set(name, s);
  }
  return s ?? undefined;
}

/** Replaces the loaded schema (tests). */
export function setProtoSchemaForTest(schema: ProtoSchema | undefined): void {
  loaded = schema;
  specs.clear();
}
