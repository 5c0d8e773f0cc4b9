import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Volume } from 'kubernetes-types/core/v1.js';
import type { VolumeFile } from '../shell/fs.js';
import { failedMountMessage, volumeFiles } from './volumes.js';
import { formatMap, goQuote } from './downward.js';
import { NODE, b64, pod, source } from './testutil.js';

function files(r: ReturnType<typeof volumeFiles>): Record<string, { text: string; mode: string }> {
  assert.ok('kind' in r && r.kind === 'atomic', JSON.stringify(r));
  const out: Record<string, { text: string; mode: string }> = {};
  for (const [k, f] of Object.entries((r as { files: Record<string, VolumeFile> }).files)) {
    out[k] = { text: Buffer.from(f.content).toString('utf8'), mode: (f.mode ?? 0o644).toString(8) };
  }
  return out;
}

const CM = { metadata: { namespace: 'ns1', name: 'cfg' }, data: { 'data-1': 'value-1', 'data-2': 'value-2' }, binaryData: { bin: b64('\x00\x01raw') } };
const SEC = { metadata: { namespace: 'ns1', name: 'sec' }, data: { 'data-1': b64('value-1\n'), token: b64('abc') } };
const SRC = source({ configMaps: [CM], secrets: [SEC] });

test('configMap volume: all keys (data and binaryData) with defaultMode 0644', () => {
  const r = volumeFiles(pod(), { name: 'v', configMap: { name: 'cfg' } }, SRC, NODE);
  assert.deepEqual(files(r), {
    bin: { text: '\x00\x01raw', mode: '644' },
    'data-1': { text: 'value-1', mode: '644' },
    'data-2': { text: 'value-2', mode: '644' },
  });
});

test('configMap volume: items with paths in subdirectories, per-item mode, defaultMode', () => {
  const v: Volume = { name: 'v', configMap: { name: 'cfg', defaultMode: 0o400, items: [{ key: 'data-1', path: 'path/to/data-2' }, { key: 'data-2', path: 'x', mode: 0o600 }] } };
  assert.deepEqual(files(volumeFiles(pod(), v, SRC, NODE)), {
    'path/to/data-2': { text: 'value-1', mode: '400' },
    x: { text: 'value-2', mode: '600' },
  });
});

test('configMap and secret volumes: pods mounting the same object version share its bytes; a new version has its own', () => {
  const content = (r: ReturnType<typeof volumeFiles>, k: string) => (r as { files: Record<string, VolumeFile> }).files[k]!.content;
  const cmVol: Volume = { name: 'v', projected: { sources: [{ configMap: { name: 'cfg', items: [{ key: 'data-1', path: 'ca.crt' }] } }, { secret: { name: 'sec' } }] } };
  const a = volumeFiles(pod(), cmVol, SRC, NODE);
  const b = volumeFiles(pod(), cmVol, SRC, NODE);
  assert.equal(content(a, 'ca.crt'), content(b, 'ca.crt'));
  assert.equal(content(a, 'token'), content(b, 'token'));
  const all = volumeFiles(pod(), { name: 'v', configMap: { name: 'cfg' } }, SRC, NODE);
  assert.equal(content(all, 'data-1'), content(a, 'ca.crt'), 'with or without items');
  const changed = source({ configMaps: [{ ...CM, data: { ...CM.data, 'data-1': 'value-1b' } }], secrets: [SEC] });
  const c = volumeFiles(pod(), cmVol, changed, NODE);
  assert.notEqual(content(c, 'ca.crt'), content(a, 'ca.crt'));
  assert.equal(Buffer.from(content(c, 'ca.crt')).toString(), 'value-1b');
  assert.equal(Buffer.from(content(a, 'ca.crt')).toString(), 'value-1');
});

test('configMap volume: missing object or key, optional or not', () => {
  assert.deepEqual(volumeFiles(pod(), { name: 'v', configMap: { name: 'nope' } }, SRC, NODE), { error: 'configmap "nope" not found' });
  assert.deepEqual(files(volumeFiles(pod(), { name: 'v', configMap: { name: 'nope', optional: true } }, SRC, NODE)), {});
  const badKey: Volume = { name: 'v', configMap: { name: 'cfg', items: [{ key: 'zz', path: 'zz' }] } };
  assert.deepEqual(volumeFiles(pod(), badKey, SRC, NODE), { error: 'configmap references non-existent config key: zz' });
  assert.deepEqual(files(volumeFiles(pod(), { name: 'v', configMap: { ...badKey.configMap!, optional: true } }, SRC, NODE)), {});
  assert.equal(failedMountMessage('v', 'configmap "nope" not found'), 'MountVolume.SetUp failed for volume "v" : configmap "nope" not found');
});

test('secret volume: base64 decoded, items, modes, optional, errors', () => {
  assert.deepEqual(files(volumeFiles(pod(), { name: 'v', secret: { secretName: 'sec', defaultMode: 0o400 } }, SRC, NODE)), {
    'data-1': { text: 'value-1\n', mode: '400' },
    token: { text: 'abc', mode: '400' },
  });
  const items: Volume = { name: 'v', secret: { secretName: 'sec', items: [{ key: 'data-1', path: 'new-path-data-1', mode: 0o444 }] } };
  assert.deepEqual(files(volumeFiles(pod(), items, SRC, NODE)), { 'new-path-data-1': { text: 'value-1\n', mode: '444' } });
  assert.deepEqual(volumeFiles(pod(), { name: 'v', secret: { secretName: 'nope' } }, SRC, NODE), { error: 'secret "nope" not found' });
  assert.deepEqual(files(volumeFiles(pod(), { name: 'v', secret: { secretName: 'nope', optional: true } }, SRC, NODE)), {});
  const badKey: Volume = { name: 'v', secret: { secretName: 'sec', items: [{ key: 'zz', path: 'zz' }] } };
  assert.deepEqual(volumeFiles(pod(), badKey, SRC, NODE), { error: 'references non-existent secret key: zz' });
});

test('fsGroup adds 0440 to every file (SetVolumeOwnership on a read-only volume)', () => {
  const p = pod({ securityContext: { fsGroup: 1001 } });
  assert.deepEqual(files(volumeFiles(p, { name: 'v', secret: { secretName: 'sec', defaultMode: 0o400, items: [{ key: 'token', path: 't' }] } }, SRC, NODE)), {
    t: { text: 'abc', mode: '440' },
  });
});

test('FormatMap: sorted key="value" lines, Go %q escaping, no trailing newline', () => {
  assert.equal(formatMap({ b: '2', a: 'x"y\\z\n\t', c: 'é\u0001' }), 'a="x\\"y\\\\z\\n\\t"\nb="2"\nc="é\\x01"');
  assert.equal(formatMap({}), '');
  assert.equal(goQuote('\u200b'), '"\\u200b"');
});

test('downwardAPI volume: metadata fields, labels/annotations, resources with defaulting, modes', () => {
  const p = pod(
    { containers: [{ name: 'app', resources: { requests: { cpu: '250m', memory: '32Mi' }, limits: { memory: '64Mi' } } }] },
    { labels: { key1: 'value1', key2: 'value2' }, annotations: { builder: 'bar"' } },
  );
  const v: Volume = {
    name: 'podinfo',
    downwardAPI: {
      defaultMode: 0o400,
      items: [
        { path: 'podname', fieldRef: { fieldPath: 'metadata.name' } },
        { path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } },
        { path: 'uid', fieldRef: { fieldPath: 'metadata.uid' } },
        { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
        { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' }, mode: 0o644 },
        { path: './sub/key1', fieldRef: { fieldPath: "metadata.labels['key1']" } },
        { path: 'cpu_limit', resourceFieldRef: { containerName: 'app', resource: 'limits.cpu' } },
        { path: 'cpu_limit_m', resourceFieldRef: { containerName: 'app', resource: 'limits.cpu', divisor: '1m' } },
        { path: 'cpu_request', resourceFieldRef: { containerName: 'app', resource: 'requests.cpu', divisor: '1m' } },
        { path: 'memory_limit', resourceFieldRef: { containerName: 'app', resource: 'limits.memory' } },
        { path: 'memory_request', resourceFieldRef: { containerName: 'app', resource: 'requests.memory', divisor: '1Mi' } },
      ],
    },
  };
  assert.deepEqual(files(volumeFiles(p, v, source({}), NODE)), {
    podname: { text: 'web-0', mode: '400' },
    namespace: { text: 'ns1', mode: '400' },
    uid: { text: 'uid-123', mode: '400' },
    labels: { text: 'key1="value1"\nkey2="value2"', mode: '400' },
    annotations: { text: 'builder="bar\\""', mode: '644' },
    'sub/key1': { text: 'value1', mode: '400' },
    cpu_limit: { text: '4', mode: '400' },
    cpu_limit_m: { text: '4000', mode: '400' },
    cpu_request: { text: '250', mode: '400' },
    memory_limit: { text: String(64 * 1024 * 1024), mode: '400' },
    memory_request: { text: '32', mode: '400' },
  });
  const bad: Volume = { name: 'v', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'spec.nodeName' } }] } };
  assert.deepEqual(volumeFiles(p, bad, source({}), NODE), { error: 'unsupported fieldPath: spec.nodeName' });
});

test('projected volume: configMap + secret + downwardAPI + serviceAccountToken; kube-api-access', () => {
  const root = { metadata: { namespace: 'ns1', name: 'kube-root-ca.crt' }, data: { 'ca.crt': '-----BEGIN CERTIFICATE-----\n' } };
  const asked: unknown[] = [];
  const src = source({
    configMaps: [CM, root],
    secrets: [SEC],
    token: (aud, exp) => {
      asked.push([aud, exp]);
      return 'eyJtoken';
    },
  });
  const v: Volume = {
    name: 'kube-api-access-x7k2p',
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  };
  assert.deepEqual(files(volumeFiles(pod(), v, src, NODE)), {
    token: { text: 'eyJtoken', mode: '644' },
    'ca.crt': { text: '-----BEGIN CERTIFICATE-----\n', mode: '644' },
    namespace: { text: 'ns1', mode: '644' },
  });
  assert.deepEqual(asked, [[undefined, 3607]]);
  const mixed: Volume = {
    name: 'all',
    projected: {
      sources: [
        { configMap: { name: 'cfg', items: [{ key: 'data-1', path: 'cm/data-1' }] } },
        { secret: { name: 'sec', items: [{ key: 'data-1', path: 'sec/data-1', mode: 0o400 }] } },
        { serviceAccountToken: { path: 'tok', audience: 'vault' } },
      ],
    },
  };
  assert.deepEqual(files(volumeFiles(pod({ securityContext: { fsGroup: 2000 } }), mixed, src, NODE)), {
    'cm/data-1': { text: 'value-1', mode: '644' },
    'sec/data-1': { text: 'value-1\n', mode: '440' },
    tok: { text: 'eyJtoken', mode: '640' },
  });
  assert.deepEqual(asked[1], ['vault', 3600]);
  const failing: Volume = { name: 'p', projected: { sources: [{ configMap: { name: 'nope' } }, { secret: { name: 'nope2' } }] } };
  assert.deepEqual(volumeFiles(pod(), failing, src, NODE), { error: '[configmap "nope" not found, secret "nope2" not found]' });
  const optional: Volume = { name: 'p', projected: { sources: [{ configMap: { name: 'nope', optional: true } }] } };
  assert.deepEqual(files(volumeFiles(pod(), optional, src, NODE)), {});
  const noToken: Volume = { name: 'p', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } };
  assert.deepEqual(volumeFiles(pod(), noToken, source({}), NODE), { error: 'failed to fetch token: serviceaccounts "default" not found' });
});

test("a token given as its file's bytes is written as those very bytes (no copy per volume write)", () => {
  const bytes = Buffer.from('eyJbytes');
  const v: Volume = { name: 'p', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } };
  const r = volumeFiles(pod(), v, source({ token: () => bytes }), NODE);
  assert.equal(files(r).token!.text, 'eyJbytes');
  assert.equal((r as { files: Record<string, VolumeFile> }).files.token!.content, bytes);
});

test('invalid payload paths are AtomicWriter errors; other volume kinds', () => {
  const v: Volume = { name: 'v', configMap: { name: 'cfg', items: [{ key: 'data-1', path: '..bad' }] } };
  assert.deepEqual(volumeFiles(pod(), v, SRC, NODE), { error: "invalid path: must not start with '..': ..bad" });
  assert.deepEqual(volumeFiles(pod(), { name: 'e', emptyDir: {} }, SRC, NODE), { kind: 'dir' });
  assert.deepEqual(volumeFiles(pod(), { name: 'h', hostPath: { path: '/var/log' } }, SRC, NODE), { kind: 'dir' });
  assert.deepEqual(volumeFiles(pod(), { name: 'n', nfs: { server: 's', path: '/' } }, SRC, NODE), { kind: 'unsupported' });
});
