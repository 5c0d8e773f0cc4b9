/**
 * Kubernetes protobuf bodies (`application/vnd.kubernetes.protobuf`): the
 * 4-byte magic `k8s\0`, then a runtime.Unknown holding the object's
 * apiVersion and kind (typeMeta) and the object's own message bytes (raw).
 * See k8s.io/apimachinery/pkg/runtime/serializer/protobuf.
 *
 * Decoding: readEnvelope / decodeKubernetesProtobuf take any field order,
 * skip unknown fields and refuse encoded (compressed) payloads.
 * Encoding: writeEnvelope / encodeKubernetesProtobuf write what the Go
 * serializer's Unknown.NestedMarshalTo writes: typeMeta {apiVersion, kind},
 * raw (always present, even empty), contentEncoding "" and contentType "",
 * in that order, every field written even when empty.
 */
import { messageSpec } from './schema.js';
import { ProtoDecodeError, messageToJson } from './to-json.js';
import { writeMessageBody } from './to-proto.js';
import { readFields } from './wire.js';
import { ReverseWriter } from './writer.js';

export const protobufMediaType = 'application/vnd.kubernetes.protobuf';
export const protobufMagic = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** The parts of a runtime.Unknown. */
export interface UnknownEnvelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

const utf8 = new TextDecoder();

export function hasProtobufMagic(buf: Uint8Array): boolean {
  return buf.length >= 4 && buf[0] === 0x6b && buf[1] === 0x38 && buf[2] === 0x73 && buf[3] === 0x00;
}

/** Splits a `k8s\0` body into its envelope; ProtoDecodeError when it is not one. */
export function readEnvelope(buf: Uint8Array): UnknownEnvelope {
  if (!hasProtobufMagic(buf)) throw new ProtoDecodeError('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  const env: UnknownEnvelope = { apiVersion: '', kind: '', raw: new Uint8Array(0), contentEncoding: '', contentType: '' };
  try {
    for (const f of readFields(buf.subarray(4))) {
      if (f.wt !== 2) continue;
      if (f.no === 1) {
        for (const t of readFields(f.v)) {
          if (t.wt !== 2) continue;
          if (t.no === 1) env.apiVersion = utf8.decode(t.v);
          else if (t.no === 2) env.kind = utf8.decode(t.v);
        }
      } else if (f.no === 2) env.raw = f.v;
      else if (f.no === 3) env.contentEncoding = utf8.decode(f.v);
      else if (f.no === 4) env.contentType = utf8.decode(f.v);
    }
  } catch (err) {
    if (err instanceof ProtoDecodeError) throw err;
    throw new ProtoDecodeError(`invalid protobuf envelope: ${(err as Error).message}`, { cause: err });
  }
  return env;
}

/** Packages whose protobuf package is not `k8s.io.api.<first label of the group>`. */
const packageOverrides: Record<string, string> = {
  'meta.k8s.io': 'k8s.io.apimachinery.pkg.apis.meta',
  'internal.apiserver.k8s.io': 'k8s.io.api.apiserverinternal',
  'metrics.k8s.io': 'k8s.io.metrics.pkg.apis.metrics',
};

/** Kinds of meta/v1 that every group version registers (DeleteOptions in an eviction or a delete). */
const metaKinds = new Set(['DeleteOptions', 'Status', 'ListOptions', 'GetOptions', 'CreateOptions', 'UpdateOptions', 'PatchOptions', 'WatchEvent', 'APIGroup', 'APIGroupList', 'APIResourceList', 'APIVersions', 'Table', 'PartialObjectMetadata', 'PartialObjectMetadataList']);

/**
 * The protobuf message of `apiVersion`/`kind`, or undefined when the schema
 * has none. Only built-in groups (no dot, or `*.k8s.io`) have messages: a
 * custom resource in `apps.example.com` is not an apps/v1 kind.
 */
export function messageNameFor(apiVersion: string, kind: string): string | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  if (group.includes('.') && !group.endsWith('.k8s.io')) return undefined;
  const pkg = group === '' ? 'k8s.io.api.core' : (packageOverrides[group] ?? `k8s.io.api.${group.split('.')[0]}`);
  const name = `${pkg}.${version}.${kind}`;
  if (messageSpec(name)) return name;
  if (metaKinds.has(kind)) {
    const m = `k8s.io.apimachinery.pkg.apis.meta.v1.${kind}`;
    if (messageSpec(m)) return m;
  }
  return undefined;
}

/**
 * Decodes a whole `application/vnd.kubernetes.protobuf` body to the JSON
 * object it stands for, apiVersion and kind first. ProtoDecodeError for a
 * malformed body, an encoded (compressed) body, or a kind without schema.
 */
export function decodeKubernetesProtobuf(buf: Uint8Array): Record<string, unknown> {
  const env = readEnvelope(buf);
  if (env.contentEncoding !== '') throw new ProtoDecodeError(`unsupported content encoding ${JSON.stringify(env.contentEncoding)} in protobuf envelope`);
  if (env.kind === '') throw new ProtoDecodeError("Object 'Kind' is missing in protobuf envelope");
  const type = messageNameFor(env.apiVersion, env.kind);
  if (!type) throw new ProtoDecodeError(`no protobuf schema for ${env.apiVersion === '' ? '' : env.apiVersion + ', '}Kind=${env.kind}`);
  const obj = messageToJson(type, env.raw) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  if (env.apiVersion !== '') out.apiVersion = env.apiVersion;
  out.kind = env.kind;
  return Object.assign(out, obj);
}

/**
 * Writes (back to front, see writer.ts) `k8s\0` + runtime.Unknown holding
 * `obj` as message `type`.
 */
export function writeEnvelope(w: ReverseWriter, apiVersion: string, kind: string, type: string, obj: unknown): void {
  w.uvarint(0); // contentType ""
  w.key(0x22);
  w.uvarint(0); // contentEncoding ""
  w.key(0x1a);
  const raw = w.written();
  writeMessageBody(w, type, obj);
  w.uvarint(w.written() - raw);
  w.key(0x12);
  const typeMeta = w.written();
  w.string(kind);
  w.key(0x12);
  w.string(apiVersion);
  w.key(0x0a);
  w.uvarint(w.written() - typeMeta);
  w.key(0x0a);
  w.raw(protobufMagic);
}

/** The `apiVersion`/`kind` of `obj` and its message, or undefined when it has none (custom resources). */
export function messageOf(obj: unknown): { apiVersion: string; kind: string; type: string } | undefined {
  if (obj === null || typeof obj !== 'object') return undefined;
  // Discovery's APIVersions and core APIResourceList have no apiVersion; their envelope has an empty one.
  const { apiVersion = '', kind } = obj as { apiVersion?: unknown; kind?: unknown };
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || kind === '') return undefined;
  const type = messageNameFor(apiVersion, kind);
  return type ? { apiVersion, kind, type } : undefined;
}

/**
 * The whole `application/vnd.kubernetes.protobuf` body of a built-in object
 * (its apiVersion and kind choose the message); undefined for an object
 * whose kind has no message.
 */
export function encodeKubernetesProtobuf(obj: unknown): Buffer | undefined {
  const m = messageOf(obj);
  if (!m) return undefined;
  const w = new ReverseWriter();
  writeEnvelope(w, m.apiVersion, m.kind, m.type, obj);
  return w.result();
}

