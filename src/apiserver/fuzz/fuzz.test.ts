/**
 * A seeded fuzz run against the in-process API server: a few thousand
 * requests with broken bodies (JSON, YAML, protobuf), wrong types at every
 * level of the main kinds, deep nesting, huge values, bad query parameters,
 * bad patches of every type and odd content types, on create, update, patch,
 * delete, list and watch of built-in and custom resources. Every answer must
 * be below 500 and every error a Status whose code is the HTTP status; the
 * server must still answer normally afterwards.
 *
 * Before the random run, a sweep puts a null and a value of another type
 * at every position of every main kind (create, update, strategic merge,
 * apply), and a few bodies test the size limits.
 *
 * KCM_FUZZ_SEED=<n> replays a random run (its seed is in the test name and
 * every failure); KCM_FUZZ_REQUESTS=<n> changes its length; KCM_FUZZ_VERBOSE=1
 * prints every request and answer as test diagnostics.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { parse as parseYaml } from 'yaml';
import { startTestServer, eventually, type TestServer } from '../test-server.js';
import { decodeKubernetesProtobuf } from '../protobuf/envelope.js';
import { Rng, crd, kinds, nextRequest, sweep, sweepRequest, type Sent } from './test-support.js';

const seed = Number(process.env.KCM_FUZZ_SEED ?? 20240611);
const total = Number(process.env.KCM_FUZZ_REQUESTS ?? 2500);

interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** Sends one request; a watch that starts (200) is closed once its headers arrive. */
function send(base: string, req: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers };
    if (req.body) headers['Content-Length'] = String(req.body.length);
    const r = http.request(base + req.path, { method: req.method, headers, agent: false }, (res) => {
      const w = new URL(req.path, base).searchParams.get('watch');
      const watching = req.method === 'GET' && res.statusCode === 200 && w !== null && !['', '0', 'false'].includes(w.toLowerCase());
      if (watching) {
        res.destroy();
        resolve({ status: 200, contentType: '', body: Buffer.alloc(0) });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.setTimeout(20_000, () => r.destroy(new Error('no answer within 20 s')));
    if (req.body) r.write(req.body);
    r.end();
  });
}

/** The error body in whichever encoding the client asked for. */
function decodeAnswer(a: Answer): unknown {
  if (a.contentType.startsWith('application/vnd.kubernetes.protobuf')) return decodeKubernetesProtobuf(a.body);
  if (a.contentType.startsWith('application/yaml')) return parseYaml(a.body.toString('utf8'));
  return JSON.parse(a.body.toString('utf8'));
}

type StatusBody = { kind?: string; code?: number; reason?: string; details?: { causes?: { reason?: string }[] } };

/**
 * Why `a` breaks the contract, or undefined. The one 5xx kube-apiserver
 * answers to a well-formed request is allowed: a list at a resourceVersion
 * the server has not reached yet is 504 Timeout, cause
 * ResourceVersionTooLarge, retry after a second (the cacher's
 * NewTooLargeResourceVersionError), not a failure of the server.
 */
function violation(a: Answer): string | undefined {
  if (a.status < 100) return `status ${a.status}`;
  if (a.status < 400) return undefined;
  let body: StatusBody;
  try {
    body = decodeAnswer(a) as StatusBody;
  } catch {
    return `an error body that does not decode (${a.contentType})`;
  }
  if (body.kind !== 'Status') return `an error body of kind ${String(body.kind)}`;
  if (body.code !== a.status) return `a Status with code ${String(body.code)} for HTTP ${a.status}`;
  const tooLargeRv = a.status === 504 && body.reason === 'Timeout' && body.details?.causes?.[0]?.reason === 'ResourceVersionTooLarge';
  if (a.status >= 500 && !tooLargeRv) return `status ${a.status}`;
  return undefined;
}

function describeSent(s: Sent): string {
  const body = s.body ? s.body.toString('utf8') : '';
  return `${s.method} ${s.path} ${JSON.stringify(s.headers)} ${body.length > 600 ? `${body.slice(0, 600)}... (${body.length} bytes)` : body}`;
}

describe('API server fuzzing', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    const ok = async (method: string, path: string, body: unknown) => {
      const res = await t.request(method, path, body);
      assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
    };
    await ok('POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
    await ok('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', ...crd('widgets', 'Widget') });
    await eventually(async () => (await t.request('GET', kinds.find((k) => k.customResource)!.path)).status === 200, 10_000);
    for (const k of kinds) await ok('POST', k.path, { apiVersion: k.apiVersion, kind: k.kind, ...k.valid(`fuzz-${k.name}`) });
  });
  after(async () => {
    await t.close();
  });

  it('answers a null and a value of another type at every position of every main kind below 500 with Status errors', async () => {
    const failures = new Map<string, string>();
    let n = 0;
    for (const k of kinds) {
      for (const { path, obj } of sweep(k.valid(`fuzz-${k.name}`))) {
        const sent = sweepRequest(k, obj, n++);
        const a = await send(t.base, sent);
        const v = violation(a);
        const text = a.body.toString('utf8').slice(0, 1000);
        if (v && !failures.has(`${v} ${text}`)) failures.set(`${v} ${text}`, `${k.kind} ${path}: ${v}\n${describeSent(sent)}\n=> ${text}`);
        if (failures.size >= 20) break;
      }
    }
    if (failures.size) assert.fail([...failures.values()].join('\n\n'));
  });

  it('answers bodies at and past the size limit: huge strings, wide maps, long patches', async () => {
    const limit = 3 * 1024 * 1024;
    const cm = (name: string, extra: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, ...extra });
    const fill = (name: string, bytes: number) => {
      const head = JSON.stringify(cm(name, { data: { a: '' } }));
      return Buffer.from(head.replace('"a":""', `"a":"${'x'.repeat(bytes - head.length)}"`));
    };
    const wide = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`key${i}`, `value-${i}`]));
    const wideYaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wide-yaml\ndata:\n${Object.entries(wide).map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`;
    const cases: Sent[] = [
      { method: 'POST', path: '/api/v1/namespaces/default/configmaps', headers: { 'Content-Type': 'application/json' }, body: fill('at-limit', limit) },
      { method: 'POST', path: '/api/v1/namespaces/default/configmaps', headers: { 'Content-Type': 'application/json' }, body: fill('past-limit', limit + 1) },
      { method: 'POST', path: '/api/v1/namespaces/default/configmaps', headers: { 'Content-Type': 'application/json' }, body: Buffer.from(JSON.stringify(cm('wide', { data: wide }))) },
      { method: 'POST', path: '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', headers: { 'Content-Type': 'application/yaml' }, body: Buffer.from(wideYaml) },
      { method: 'POST', path: '/api/v1/namespaces/default/configmaps', headers: { 'Content-Type': 'application/json' }, body: Buffer.from(JSON.stringify(cm('labels', { metadata: { name: 'labels', labels: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`l${i}`, 'v'])) } }))) },
      {
        method: 'PATCH', path: '/api/v1/namespaces/default/configmaps/fuzz-configmap', headers: { 'Content-Type': 'application/json-patch+json' },
        body: Buffer.from(JSON.stringify(Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/kind', value: 'ConfigMap' })))),
      },
      { method: 'PATCH', path: '/api/v1/namespaces/default/configmaps/fuzz-configmap', headers: { 'Content-Type': 'application/merge-patch+json' }, body: fill('fuzz-configmap', limit - 10) },
    ];
    const problems: string[] = [];
    for (const sent of cases) {
      const a = await send(t.base, sent);
      const v = violation(a);
      if (v) problems.push(`${v}\n${describeSent(sent)}\n=> ${a.body.toString('utf8').slice(0, 500)}`);
    }
    assert.deepEqual(problems, []);
  });

  it(`answers ${total} broken requests below 500 with Status errors, then still serves (seed ${seed})`, async (ctx) => {
    const r = new Rng(seed);
    const codes = new Map<number, number>();
    // Distinct failures (by answer), reported together.
    const failures = new Map<string, string>();
    for (let i = 0; i < total && failures.size < 20; i++) {
      const sent = nextRequest(r, r.pick(kinds), i);
      let a: Answer;
      try {
        a = await send(t.base, sent);
      } catch (err) {
        assert.fail(`seed ${seed}, request ${i}: ${(err as Error).message}\n${describeSent(sent)}`);
      }
      const v = violation(a);
      const text = a.body.toString('utf8').slice(0, 2000);
      if (v && !failures.has(`${v} ${text}`)) failures.set(`${v} ${text}`, `request ${i}: ${v}\n${describeSent(sent)}\n=> ${text}`);
      codes.set(a.status, (codes.get(a.status) ?? 0) + 1);
      if (process.env.KCM_FUZZ_VERBOSE) {
        let msg = '';
        try {
          msg = String((decodeAnswer(a) as { message?: string }).message ?? '');
        } catch {
          // not JSON
        }
        ctx.diagnostic(`${i} ${sent.method} ${sent.path.split('?')[0]} ${sent.headers['Content-Type'] ?? ''} -> ${a.status} ${msg.slice(0, 160)}`);
      }
    }
    ctx.diagnostic(`answers by status: ${JSON.stringify(Object.fromEntries([...codes].sort((x, y) => x[0] - y[0])))}`);
    if (failures.size) assert.fail(`seed ${seed} (KCM_FUZZ_SEED=${seed} replays it):\n\n${[...failures.values()].join('\n\n')}`);
    // Both successes and refusals were exercised.
    assert.ok([...codes.keys()].some((c) => c < 300), `seed ${seed}: no request succeeded: ${JSON.stringify([...codes])}`);
    assert.ok([...codes.keys()].some((c) => c >= 400), `seed ${seed}: no request was refused: ${JSON.stringify([...codes])}`);
    const health = await t.request('GET', '/api/v1/namespaces/default');
    assert.equal(health.status, 200, `seed ${seed}: ${health.text}`);
    const created = await t.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-fuzz' }, data: { a: 'b' } });
    assert.equal(created.status, 201, `seed ${seed}: ${created.text}`);
  });
});
