import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProtoDecodeError, formatGoDuration, messageToJson } from './to-json.js';
import { doublef, entry, lf, vf } from './test-encoder.js';

const core = 'k8s.io.api.core.v1';
const meta = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const decode = (type: string, bytes: number[]) => messageToJson(type, Uint8Array.from(bytes));

describe('protobuf to JSON conversion', () => {
  it('keeps zero values of Go pointer fields and drops those of plain fields', () => {
    // DeploymentSpec: replicas (*int32) 0 kept, minReadySeconds (int32) 0 dropped, paused (bool) false dropped
    const spec = decode('k8s.io.api.apps.v1.DeploymentSpec', [...vf(1, 0), ...vf(5, 0), ...vf(7, false), ...vf(6, 0)]);
    assert.deepEqual(spec, { replicas: 0, revisionHistoryLimit: 0 });
    // ObjectMeta as Go writes it: every plain string present, empty
    const om = decode(`${meta}.ObjectMeta`, [...lf(1, 'x'), ...lf(2, ''), ...lf(3, ''), ...lf(6, ''), ...vf(7, 0), ...lf(8, [])]);
    assert.deepEqual(om, { name: 'x' });
  });

  it('keeps an empty message held by a pointer (emptyDir: {}) and merges inlined fields', () => {
    // Volume{name, volumeSource (inline){emptyDir (pointer) {}}}
    const vol = decode(`${core}.Volume`, [...lf(1, 'cache'), ...lf(2, lf(2, []))]);
    assert.deepEqual(vol, { name: 'cache', emptyDir: {} });
    // Probe{handler (inline){httpGet{path, port}}, periodSeconds}
    const probe = decode(`${core}.Probe`, [...lf(1, lf(2, [...lf(1, '/healthz'), ...lf(2, [...vf(1, 0), ...vf(2, 8080)])])), ...vf(4, 10)]);
    assert.deepEqual(probe, { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10 });
  });

  it('collects unpacked and packed repeated scalars alike', () => {
    // PodSecurityContext.supplementalGroups is repeated int64: Go writes it unpacked, other writers may pack it.
    const unpacked = decode(`${core}.PodSecurityContext`, [...vf(4, 1000), ...vf(4, 2000)]);
    assert.deepEqual(unpacked, { supplementalGroups: [1000, 2000] });
    const packed = decode(`${core}.PodSecurityContext`, [...lf(4, [...[0xe8, 0x07], ...[0xd0, 0x0f]])]);
    assert.deepEqual(packed, { supplementalGroups: [1000, 2000] });
  });

  it('decodes maps of strings, of bytes (base64) and of messages', () => {
    const cm = decode(`${core}.ConfigMap`, [...entry(2, lf(1, 'a'), lf(2, '1')), ...entry(2, lf(1, 'empty'), lf(2, '')), ...entry(3, lf(1, 'b'), lf(2, [0, 255]))]);
    assert.deepEqual(cm, { data: { a: '1', empty: '' }, binaryData: { b: 'AP8=' } });
    const rq = decode(`${core}.ResourceQuotaSpec`, [...entry(1, lf(1, 'pods'), lf(2, lf(1, '2')))]);
    assert.deepEqual(rq, { hard: { pods: '2' } });
  });

  it('writes Time with second precision and MicroTime with microseconds, and drops the zero time', () => {
    const t = [...vf(1, 1704067200), ...vf(2, 123456789)];
    assert.equal(decode(`${meta}.Time`, t), '2024-01-01T00:00:00Z');
    assert.equal(decode(`${meta}.MicroTime`, t), '2024-01-01T00:00:00.123456Z');
    assert.deepEqual(decode(`${meta}.ObjectMeta`, [...lf(1, 'x'), ...lf(8, [])]), { name: 'x' });
    assert.deepEqual(decode(`${meta}.ObjectMeta`, [...lf(1, 'x'), ...lf(9, t)]), { name: 'x', deletionTimestamp: '2024-01-01T00:00:00Z' });
    assert.equal(decode(`${meta}.Time`, [...vf(1, -62135596800)]), undefined);
  });

  it('decodes IntOrString, Quantity, Duration and the JSON inside RawExtension and FieldsV1', () => {
    const ios = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';
    assert.equal(decode(ios, [...vf(1, 0), ...vf(2, 8080), ...lf(3, '')]), 8080);
    assert.equal(decode(ios, [...vf(1, 1), ...vf(2, 0), ...lf(3, '25%')]), '25%');
    // PDB spec: maxUnavailable is a pointer, so 0 is kept
    assert.deepEqual(decode('k8s.io.api.policy.v1.PodDisruptionBudgetSpec', [...lf(3, [...vf(1, 0), ...vf(2, 0), ...lf(3, '')])]), { maxUnavailable: 0 });
    assert.equal(decode('k8s.io.apimachinery.pkg.api.resource.Quantity', lf(1, '1500m')), '1500m');
    assert.equal(decode(`${meta}.Duration`, vf(1, 90e9)), '1m30s');
    assert.deepEqual(decode('k8s.io.apimachinery.pkg.runtime.RawExtension', lf(1, '{"a":[1,2]}')), { a: [1, 2] });
    assert.deepEqual(decode(`${meta}.ManagedFieldsEntry`, [...lf(1, 'kubectl'), ...lf(7, lf(1, '{"f:data":{}}'))]), { manager: 'kubectl', fieldsV1: { 'f:data': {} } });
    assert.throws(() => decode('k8s.io.apimachinery.pkg.runtime.RawExtension', lf(1, 'not json')), ProtoDecodeError);
  });

  it('unwraps Go slice types carried as messages (APIResource.verbs)', () => {
    const r = decode(`${meta}.APIResource`, [...lf(1, 'pods'), ...vf(2, true), ...lf(4, [...lf(1, 'get'), ...lf(1, 'list')])]);
    assert.deepEqual(r, { name: 'pods', namespaced: true, verbs: ['get', 'list'] });
  });

  it('skips unknown field numbers and rejects a wire type that does not fit the field', () => {
    assert.deepEqual(decode(`${core}.LocalObjectReference`, [...lf(1, 'a'), ...vf(99, 7), ...doublef(98, 1.5)]), { name: 'a' });
    assert.throws(() => decode(`${core}.LocalObjectReference`, vf(1, 7)), /wire type 0 does not fit string/);
    assert.throws(() => decode('no.such.Message', []), /no protobuf schema/);
  });

  it('formats durations as Go does', () => {
    assert.equal(formatGoDuration(0), '0s');
    assert.equal(formatGoDuration(1.5e9), '1.5s');
    assert.equal(formatGoDuration(3600e9 + 2e9), '1h0m2s');
    assert.equal(formatGoDuration(150e6), '150ms');
    assert.equal(formatGoDuration(-5e9), '-5s');
  });
});
