import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { startTestServer, eventually, type TestServer } from './test-server.js';
import { encodeKubernetesProtobuf } from './protobuf/envelope.js';
import { exceedsDepth, jsonDepthExceededAt, lineOf, maxNestingDepth, objectExceedsDepth, sortedJsonText } from './nesting-depth.js';

const L = maxNestingDepth;

/** `d` nested objects and lists around a string (`nest(1)` is `{"a":"x"}`). */
function nest(d: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < d; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

/** `d` nested objects. */
function nestObjects(d: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < d; i++) v = { a: v };
  return v;
}

/** Block YAML of nested maps (lists in flow style), written iteratively: the test must not need more stack than the server. */
function toYaml(v: unknown): string {
  const lines: string[] = [];
  const stack: [unknown, number, string | null][] = [[v, 0, null]];
  while (stack.length) {
    const [x, indent, key] = stack.pop()!;
    if (x !== null && typeof x === 'object' && !Array.isArray(x)) {
      if (key !== null) lines.push(`${' '.repeat(indent)}${key}:`);
      for (const [k, c] of Object.entries(x).reverse()) stack.push([c, key === null ? indent : indent + 1, k]);
    } else lines.push(`${' '.repeat(indent)}${key}: ${JSON.stringify(x)}`);
  }
  return `${lines.join('\n')}\n`;
}

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const loose = '/apis/depth.example.com/v1/namespaces/default/looses';

function crd(plural: string, kind: string, schema: unknown) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.depth.example.com` },
    spec: { group: 'depth.example.com', scope: 'Namespaced', names: { plural, singular: kind.toLowerCase(), kind }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }] },
  };
}

/** A custom resource whose body nests `depth` deep: root (1), spec (2), then `spec.x`. */
const looseBody = (name: string, depth: number, field = 'x') => ({ apiVersion: 'depth.example.com/v1', kind: 'Loose', metadata: { name }, spec: { [field]: nest(depth - 2) } });

async function establish(t: TestServer, body: ReturnType<typeof crd>): Promise<number> {
  const res = await t.request('POST', crdPath, body);
  if (res.status === 201) await eventually(async () => (await t.request('GET', `/apis/depth.example.com/v1/${body.spec.names.plural}`)).status === 200, 10_000);
  return res.status;
}

/**
 * The deepest objects the server accepts, through every write path and
 * back out, and one level more refused; returns what went wrong. Runs on a
 * third of the usual stack (below), so every recursive path keeps a margin.
 */
async function deepestObjects(): Promise<string[]> {
  const t = await startTestServer();
  const problems: string[] = [];
  const expect = async (what: string, status: number, res: Promise<{ status: number; text: string }>) => {
    const r = await res;
    if (r.status !== status) problems.push(`${what}: ${r.status} (want ${status}) ${r.text.slice(0, 300)}`);
  };
  const yaml = { 'Content-Type': 'application/yaml' };
  const apply = { 'Content-Type': 'application/apply-patch+yaml' };
  try {
    await expect('preserving CRD', 201, establish(t, crd('looses', 'Loose', { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } })).then((status) => ({ status, text: '' })));
    await expect('create', 201, t.request('POST', loose, looseBody('a', L)));
    await expect('create one deeper', 400, t.request('POST', loose, looseBody('b', L + 1)));
    await expect('create YAML', 201, t.request('POST', loose, toYaml(looseBody('y', L)), yaml));
    await expect('create YAML one deeper', 400, t.request('POST', loose, toYaml(looseBody('z', L + 1)), yaml));
    await expect('get', 200, t.request('GET', `${loose}/a`));
    await expect('list', 200, t.request('GET', loose));
    await expect('table', 200, t.request('GET', loose, undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }));
    const w = await t.watch(`${loose}?watch=1&resourceVersion=0`);
    const added = await w.next().catch((err: Error) => ({ type: err.message }));
    w.close();
    if (added.type !== 'ADDED') problems.push(`watch: ${added.type}`);
    await expect('update', 200, t.request('PUT', `${loose}/a`, { ...looseBody('a', L), spec: { x: nest(L - 2), y: nest(L - 2) } }));
    await expect('merge patch', 200, t.request('PATCH', `${loose}/a`, { spec: { z: nest(L - 2) } }, { 'Content-Type': 'application/merge-patch+json' }));
    await expect('JSON patch', 200, t.request('PATCH', `${loose}/a`, [{ op: 'add', path: '/spec/w', value: nest(L - 2) }], { 'Content-Type': 'application/json-patch+json' }));
    // A short patch can nest deeper than its body: an object at the deepest leaf.
    await expect('objects only', 201, t.request('POST', loose, { ...looseBody('o', L), spec: { x: nestObjects(L - 2) } }));
    const leaf = `/spec/x${'/a'.repeat(L - 2)}`;
    await expect('JSON patch at the deepest leaf', 200, t.request('PATCH', `${loose}/o`, [{ op: 'replace', path: leaf, value: 'y' }], { 'Content-Type': 'application/json-patch+json' }));
    await expect('JSON patch one deeper', 422, t.request('PATCH', `${loose}/o`, [{ op: 'replace', path: leaf, value: {} }], { 'Content-Type': 'application/json-patch+json' }));
    await expect('apply (create)', 201, t.request('PATCH', `${loose}/c?fieldManager=m`, looseBody('c', L), apply));
    await expect('apply (update, force)', 200, t.request('PATCH', `${loose}/c?fieldManager=n&force=true`, looseBody('c', L, 'v'), apply));
    await expect('apply YAML', 200, t.request('PATCH', `${loose}/c?fieldManager=n&force=true`, toYaml(looseBody('c', L, 'q')), apply));
    await expect('apply one deeper', 400, t.request('PATCH', `${loose}/c?fieldManager=n`, looseBody('c', L + 1), apply));
    // A built-in object as deep: a CRD whose schema nests (root, spec, versions, [0], schema, openAPIV3Schema, then two per level).
    const levels = Math.floor((L - 6) / 2);
    let schema: unknown = { type: 'string', default: 'd' };
    for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema } };
    const deepCrd = crd('deeps', 'Deep', schema);
    await expect('deep CRD', 201, establish(t, deepCrd).then((status) => ({ status, text: '' })));
    await expect('deep CRD strategic merge', 200, t.request('PATCH', `${crdPath}/deeps.depth.example.com`, { metadata: { labels: { a: 'b' } }, spec: deepCrd.spec }, { 'Content-Type': 'application/strategic-merge-patch+json' }));
    await expect('deep CRD apply', 200, t.request('PATCH', `${crdPath}/deeps.depth.example.com?fieldManager=m&force=true`, deepCrd, apply));
    const deeps = '/apis/depth.example.com/v1/namespaces/default/deeps';
    await expect('resource of the deep CRD', 201, t.request('POST', deeps, { apiVersion: 'depth.example.com/v1', kind: 'Deep', metadata: { name: 'd' }, ...(nestObjects(levels) as object) }));
    await expect('its defaults on read', 200, t.request('GET', `${deeps}/d`));
    await expect('CRD table', 200, t.request('GET', crdPath, undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }));
    await expect('OpenAPI v2', 200, t.request('GET', '/openapi/v2'));
    await expect('OpenAPI v3', 200, t.request('GET', '/openapi/v3/apis/depth.example.com/v1'));
    await expect('unknown field of a built-in kind', 201, t.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, x: nest(L - 1) }));
    await expect('unknown field of a built-in kind, strict', 400, t.request('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c2' }, x: nest(L - 1) }));
  } catch (err) {
    problems.push(`threw: ${(err as Error).stack}`);
  } finally {
    await t.close();
  }
  return problems;
}

if (!isMainThread && workerData === 'deepest-objects') {
  void deepestObjects().then((p) => parentPort!.postMessage(p));
}

if (isMainThread) {
  describe('nesting depth', () => {
    it('finds the bracket that opens one level too many, ignoring brackets inside strings', () => {
      assert.equal(jsonDepthExceededAt('{"a":[1,{"b":2}]}', 3), -1);
      assert.equal(jsonDepthExceededAt('{"a":[1,{"b":[2]}]}', 3), 13);
      assert.equal(jsonDepthExceededAt('{"a":"[[[[\\"[[[","b":{}}', 2), -1);
      assert.equal(jsonDepthExceededAt(`${'['.repeat(1_000_000)}`, L), L);
    });

    it('measures decoded values without recursion', () => {
      assert.equal(exceedsDepth('x', 0), false);
      assert.equal(exceedsDepth({ a: [1] }, 2), false);
      assert.equal(exceedsDepth({ a: [[1]] }, 2), true);
      assert.equal(exceedsDepth(nest(1_000_000), L), true);
    });

    it('lets managedFields mirror an object five levels below its content', () => {
      const withFields = (content: number, fields: number) => ({ metadata: { managedFields: [{ fieldsV1: nest(fields - 4) }] }, spec: nest(content - 1) });
      assert.equal(objectExceedsDepth(withFields(L, L + 5)), false);
      assert.equal(objectExceedsDepth(withFields(L + 1, L)), true);
      assert.equal(objectExceedsDepth(withFields(L, L + 6)), true);
    });

    it('writes JSON of any depth with sorted keys', () => {
      assert.equal(sortedJsonText({ b: [1, { d: null, c: 'x' }], a: undefined, e: {} }), '{"b":[1,{"c":"x","d":null}],"e":{}}');
      assert.equal(sortedJsonText(nest(200_000)).length, JSON.stringify(nest(2_000)).length * 100 - 99 * 3);
    });

    it('numbers lines as Go decoders do', () => {
      assert.equal(lineOf('a\nb\nc', 0), 1);
      assert.equal(lineOf('a\nb\nc', 2), 2);
      assert.equal(lineOf('a\nb\nc', 4), 3);
    });
  });

  describe('objects nested up to the bound', () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer();
    });
    after(async () => {
      await t.close();
    });

    it('refuses a deeper create or update body with the decoder\'s 400, before reading it', async () => {
      const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`;
      const res = await t.request('POST', '/api/v1/namespaces/default/configmaps', body);
      assert.equal(res.status, 400);
      assert.equal(res.body.message, 'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: exceeded max depth ({"apiVersion":"v1","kind":"Con ...)');
      const yaml = await t.request('POST', '/api/v1/namespaces/default/configmaps', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nx: ${'['.repeat(L)}${']'.repeat(L)}\n`, { 'Content-Type': 'application/yaml' });
      assert.equal(yaml.status, 400);
      assert.match(yaml.body.message, new RegExp(`^the object provided is unrecognized \\(must be of type ConfigMap\\): yaml: line 5: exceeded max depth of ${L} \\(61706956`));
      const put = await t.request('PUT', '/api/v1/namespaces/default/configmaps/deep', body);
      assert.equal(put.status, 400);
    });

    it('refuses a protobuf body whose embedded JSON (a RawExtension) nests deeper', async () => {
      const revision = (data: unknown) => encodeKubernetesProtobuf({ apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r' }, revision: 1, data })!;
      const proto = { 'Content-Type': 'application/vnd.kubernetes.protobuf' };
      const deep = await t.request('POST', '/apis/apps/v1/namespaces/default/controllerrevisions', revision({ x: nest(L) }), proto);
      assert.equal(deep.status, 400, deep.text);
      assert.equal(deep.body.message, 'exceeded max depth');
      const ok = await t.request('POST', '/apis/apps/v1/namespaces/default/controllerrevisions', revision({ x: nest(L - 2) }), proto);
      assert.equal(ok.status, 201, ok.text);
    });

    it('words a deeper patch as each patch type\'s decoder does', async () => {
      await t.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p' } });
      const deep = nest(L + 1);
      const cases: [string, unknown, string][] = [
        ['application/merge-patch+json', { data: deep }, 'error decoding patch: exceeded max depth'],
        ['application/strategic-merge-patch+json', { data: deep }, 'exceeded max depth'],
        ['application/json-patch+json', [{ op: 'add', path: '/data', value: deep }], 'error decoding patch: exceeded max depth'],
        ['application/apply-patch+yaml', { apiVersion: 'v1', kind: 'ConfigMap', data: deep }, `error decoding YAML: error converting YAML to JSON: yaml: exceeded max depth of ${L}`],
      ];
      for (const [type, patch, message] of cases) {
        const res = await t.request('PATCH', '/api/v1/namespaces/default/configmaps/p?fieldManager=m', patch, { 'Content-Type': type });
        assert.equal(res.status, 400, type);
        assert.equal(res.body.message, message, type);
      }
      const ignored = await t.request('PATCH', '/api/v1/namespaces/default/configmaps/p?fieldValidation=Ignore', { data: deep }, { 'Content-Type': 'application/merge-patch+json' });
      assert.equal(ignored.body.message, 'Invalid JSON Patch');
    });

    it('refuses a JSON patch whose result nests too deep with the 422 of an undecodable patch result', async () => {
      await t.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'grow', annotations: { a: 'b' } } });
      // Each copy into its own deepest leaf doubles the depth of metadata.x; nothing recurses while the operations run.
      const ops: unknown[] = [{ op: 'add', path: '/metadata/x', value: nestObjects(20) }];
      for (let i = 0; i < 12; i++) ops.push({ op: 'copy', from: '/metadata/x', path: `/metadata/x${'/a'.repeat(20 * 2 ** i)}` });
      const res = await t.request('PATCH', '/api/v1/namespaces/default/configmaps/grow', ops, { 'Content-Type': 'application/json-patch+json' });
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.reason, 'Invalid');
      assert.match(res.body.message, /^ "" is invalid: patch: Invalid value: "\{\\"apiVersion\\":\\"v1\\",.*": couldn't get version\/kind; json parse error: exceeded max depth$/s);
    });

    it('bounds what JSON patch copies add up to, as --json-patch-max-copy-bytes', async () => {
      await t.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'copies' }, data: { a: 'x'.repeat(100_000) } });
      const ops = Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '/data/a', path: `/data/c${i}` }));
      const res = await t.request('PATCH', '/api/v1/namespaces/default/configmaps/copies', ops, { 'Content-Type': 'application/json-patch+json' });
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.details.causes[0].message, 'Unable to complete the copy, the accumulated size increase of copy is 3200064, exceeding the limit 3145728');
    });

    it('accepts the deepest objects through every write path and back out, on a third of the usual stack', async () => {
      // Node's main thread has V8's default stack (984 KB); this worker has about 320 KB of it usable.
      const worker = new Worker(new URL(import.meta.url), { workerData: 'deepest-objects', resourceLimits: { stackSizeMb: 0.5 } });
      const problems = await new Promise<string[]>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      await worker.terminate();
      assert.deepEqual(problems, []);
    });
  });
}
