import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { decodeKubernetesProtobuf, encodeKubernetesProtobuf } from './envelope.js';
import { schemaFile, setProtoSchemaForTest, type ProtoSchema } from './schema.js';
import { jsonToMessage, parseGoDuration, parseRfc3339 } from './to-proto.js';
import { messageToJson } from './to-json.js';
import { decodeWatchEventFrame, encodeWatchEventFrame, splitFrames } from './watch-event.js';
import { entry, lf, varint, vf } from './test-encoder.js';

const testdata = join(dirname(schemaFile()), 'testdata');
const encodeDir = join(testdata, 'encode');
const core = 'k8s.io.api.core.v1';
const meta = 'k8s.io.apimachinery.pkg.apis.meta.v1';

interface Case {
  name: string;
  object?: Record<string, unknown>;
  watch?: string;
  from?: string;
}
const cases = JSON.parse(readFileSync(join(encodeDir, 'cases.json'), 'utf8')) as Case[];
const objectOf = (c: Case): Record<string, unknown> => (c.from ? cases.find((x) => x.name === c.from)!.object! : c.object!);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function encodeCase(c: Case): Uint8Array | undefined {
  return c.watch ? encodeWatchEventFrame(c.watch, objectOf(c)) : encodeKubernetesProtobuf(objectOf(c));
}

/**
 * Reference bytes written by data/proto/testdata/encode/gen-reference.go:
 * each case's JSON decoded into the Go struct of k8s.io/api v1.20.2 and
 * encoded by apimachinery's protobuf serializer (gogo's generated Marshal),
 * watch cases framed as kube-apiserver's WatchServer does. The encoder runs
 * on the schema read from those same Go structs (schema-go.json), so the
 * bytes must be equal to the last one.
 */
describe('protobuf encoding, byte for byte against Go (k8s.io/api v1.20.2)', () => {
  after(() => setProtoSchemaForTest(undefined));
  const goSchema = JSON.parse(readFileSync(join(encodeDir, 'schema-go.json'), 'utf8')) as ProtoSchema;
  for (const c of cases) {
    it(`writes ${c.name} as Go does`, () => {
      setProtoSchemaForTest(goSchema);
      const want = readFileSync(join(encodeDir, `${c.name}.bin`));
      const got = encodeCase(c);
      assert.ok(got, 'encodes');
      assert.equal(hex(got), hex(want));
    });
  }
});

describe('protobuf encoding, byte for byte against kubectl v1.32 request bodies', () => {
  // The bodies envelope.test.ts decodes: decoding then encoding gives them back unchanged.
  for (const f of readdirSync(testdata).filter((x) => x.endsWith('.bin'))) {
    it(`re-encodes ${f} to the same bytes`, () => {
      const want = readFileSync(join(testdata, f));
      assert.equal(hex(encodeKubernetesProtobuf(decodeKubernetesProtobuf(want))!), hex(want));
    });
  }
});

describe('protobuf encoding round trip (current schema)', () => {
  for (const c of cases.filter((x) => !x.watch)) {
    it(`decodes ${c.name} back to its JSON, and re-encodes it to the same bytes`, () => {
      const bytes = encodeKubernetesProtobuf(c.object)!;
      const back = decodeKubernetesProtobuf(bytes);
      assert.equal(hex(encodeKubernetesProtobuf(back)!), hex(bytes));
      assert.deepEqual(back, goView(c.object!));
    });
  }

  it('frames watch events and reads them back', () => {
    const pod = cases.find((c) => c.name === 'pod')!.object!;
    const a = encodeWatchEventFrame('ADDED', pod)!;
    const b = encodeWatchEventFrame('BOOKMARK', { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: '9' } })!;
    const stream = Buffer.concat([a, b, a.subarray(0, 10)]);
    const { frames, rest } = splitFrames(stream);
    assert.equal(frames.length, 2);
    assert.equal(rest.length, 10);
    assert.equal(a.readUInt32BE(0), a.length - 4);
    const first = decodeWatchEventFrame(frames[0]!);
    assert.equal(first.type, 'ADDED');
    assert.deepEqual(first.object, goView(pod));
    assert.deepEqual(decodeWatchEventFrame(frames[1]!), { type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: '9' } } });
  });
});

/**
 * What protobuf keeps of a JSON object, as the decoder reports it: zero
 * values of non-pointer fields, null times and empty maps and lists are
 * gone (Go cannot tell them from absent). Written out per case below.
 */
function goView(obj: Record<string, unknown>): Record<string, unknown> {
  const o = structuredClone(obj) as any;
  switch (o.kind) {
    case 'Pod': {
      o.spec.activeDeadlineSeconds = 0; // pointer: kept
      delete o.spec.hostNetwork;
      delete o.spec.containers[0].stdin;
      delete o.spec.containers[0].tty;
      delete o.spec.initContainers[0].resources;
      delete o.status.conditions[0].lastProbeTime;
      delete o.status.initContainerStatuses[0].lastState;
      delete o.status.initContainerStatuses[0].restartCount;
      delete o.status.initContainerStatuses[0].state.terminated.exitCode;
      delete o.status.containerStatuses[0].lastState.terminated.startedAt;
      delete o.status.containerStatuses[0].imageID;
      delete o.status.containerStatuses[0].ready;
      delete o.spec.containers[0].env[1].value;
      delete o.metadata.annotations.a; // "" in a map stays
      o.metadata.annotations.a = '';
      return o;
    }
    case 'Deployment':
      delete o.spec.template.metadata.creationTimestamp;
      delete o.spec.template.spec.containers[0].resources;
      delete o.spec.minReadySeconds;
      delete o.status.replicas;
      return o;
    case 'ConfigMapList':
      delete o.metadata.remainingItemCount;
      o.metadata.remainingItemCount = 0; // pointer: kept
      return o;
    case 'Status':
      delete o.metadata;
      return o;
    case 'Event':
      if (o.apiVersion === 'v1') {
        delete o.eventTime;
        delete o.reportingComponent;
        delete o.reportingInstance;
      }
      return o;
    case 'Lease':
      // acquireTime has zero micros: written as .000000Z either way
      return o;
    case 'PodDisruptionBudget':
      delete o.status.disruptionsAllowed;
      return o;
    case 'APIResourceList':
      for (const r of o.resources) if (r.singularName === '') delete r.singularName;
      return o;
    case 'TokenReview':
      delete o.metadata;
      return o;
    case 'Job':
      delete o.status.active;
      return o;
    case 'Service':
      delete o.status;
      return o;
    case 'PartialObjectMetadataList':
      for (const i of o.items) {
        delete i.apiVersion;
        delete i.kind;
      }
      return o;
    default:
      return o;
  }
}

describe('protobuf encoding rules', () => {
  const enc = (type: string, v: unknown) => [...jsonToMessage(type, v)];

  it('writes non-pointer scalars even when zero, pointers only when set (zero included)', () => {
    assert.deepEqual(enc(`${core}.ContainerPort`, {}), [...lf(1, ''), ...vf(2, 0), ...vf(3, 0), ...lf(4, ''), ...lf(5, '')]);
    assert.deepEqual(enc(`${core}.ContainerPort`, { containerPort: 80, name: null }), [...lf(1, ''), ...vf(2, 0), ...vf(3, 80), ...lf(4, ''), ...lf(5, '')]);
    const tol = [...lf(1, 'k'), ...lf(2, ''), ...lf(3, ''), ...lf(4, '')];
    assert.deepEqual(enc(`${core}.Toleration`, { key: 'k' }), tol);
    assert.deepEqual(enc(`${core}.Toleration`, { key: 'k', tolerationSeconds: 0 }), [...tol, ...vf(5, 0)]);
    // a non-pointer message is written even when absent: PodTemplateSpec{metadata, spec}
    const tpl = enc(`${core}.PodTemplateSpec`, {});
    assert.deepEqual(tpl.slice(0, 2), [0x0a, tpl[1]]);
  });

  it('writes negative int32 and int64 as ten-byte varints', () => {
    const got = enc(`${core}.Toleration`, { tolerationSeconds: -5 });
    assert.deepEqual(got.slice(-11), vf(5, -5));
    assert.equal(varint(-5).length, 10);
  });

  it('writes map entries in Go byte order of the keys', () => {
    // "Z" < "a" < "é" < "日" < "😀" in UTF-8; U+FF5E sorts before U+1F600 in UTF-8 but after it in UTF-16.
    const keys = ['😀', '\uff5e', '日', 'é', 'a', 'Z'];
    const data = Object.fromEntries(keys.map((k) => [k, 'v']));
    const want = ['Z', 'a', 'é', '日', '\uff5e', '😀'].flatMap((k) => entry(2, lf(1, k), lf(2, 'v')));
    assert.deepEqual(enc(`${core}.ConfigMap`, { data }).slice(-want.length), want);
  });

  it('writes bytes when present, even empty, and leaves null ones out', () => {
    const want = [...entry(3, lf(1, 'a'), lf(2, [])), ...entry(3, lf(1, 'b'), []), ...entry(3, lf(1, 'c'), lf(2, [0, 255]))];
    assert.deepEqual(enc(`${core}.ConfigMap`, { binaryData: { a: '', b: null, c: 'AP8=' } }).slice(-want.length), want);
  });

  it('writes times as seconds (Time) or seconds and nanos (MicroTime), and nothing for zero or null', () => {
    const t = (v: unknown) => enc(`${meta}.Time`, v);
    assert.deepEqual(t('2024-01-01T00:00:00Z'), [...vf(1, 1704067200), ...vf(2, 0)]);
    assert.deepEqual(t('2024-01-01T01:00:00.5+01:00'), [...vf(1, 1704067200), ...vf(2, 0)]);
    assert.deepEqual(t(null), []);
    assert.deepEqual(t('0001-01-01T00:00:00Z'), []);
    assert.deepEqual(enc(`${meta}.MicroTime`, '2024-01-01T00:00:00.000123Z'), [...vf(1, 1704067200), ...vf(2, 123000)]);
    assert.deepEqual(parseRfc3339('1969-12-31T23:59:59Z'), { seconds: -1, nanos: 0 });
  });

  it('writes IntOrString, Quantity and Duration in their message forms', () => {
    assert.deepEqual(enc('k8s.io.apimachinery.pkg.util.intstr.IntOrString', 8080), [...vf(1, 0), ...vf(2, 8080), ...lf(3, '')]);
    assert.deepEqual(enc('k8s.io.apimachinery.pkg.util.intstr.IntOrString', '25%'), [...vf(1, 1), ...vf(2, 0), ...lf(3, '25%')]);
    assert.deepEqual(enc('k8s.io.apimachinery.pkg.api.resource.Quantity', '500m'), lf(1, '500m'));
    assert.deepEqual(enc('k8s.io.apimachinery.pkg.api.resource.Quantity', undefined), lf(1, '0'));
    assert.deepEqual(enc(`${meta}.Duration`, '1m30s'), vf(1, 90e9));
    assert.equal(parseGoDuration('1h2m3.5s'), 3723.5e9);
    assert.equal(parseGoDuration('-150ms'), -150e6);
    assert.equal(parseGoDuration('1.5µs'), 1500);
    assert.equal(parseGoDuration('0'), 0);
  });

  it('round-trips every message shape the decoder knows', () => {
    const v = { data: { a: '1' }, binaryData: { b: 'AP8=' }, immutable: false, metadata: { name: 'x', labels: { k: 'v' } } };
    assert.deepEqual(messageToJson(`${core}.ConfigMap`, jsonToMessage(`${core}.ConfigMap`, v)), v);
    const extra = { username: 'u', extra: { a: ['1', '2'], b: [] } };
    assert.deepEqual(messageToJson('k8s.io.api.authentication.v1.UserInfo', jsonToMessage('k8s.io.api.authentication.v1.UserInfo', extra)), extra);
  });
});
