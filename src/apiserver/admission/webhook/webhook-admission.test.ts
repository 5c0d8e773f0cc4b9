// Admission webhooks through the embedded API server, served by this test
// process over HTTPS: what the webhook receives, and what the client gets
// for each kind of answer (allow, deny, patch, warnings, timeouts, garbage),
// with failurePolicy, selectors, matchPolicy, dry run and reinvocation.
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../../test-server.js';
import { jsonPatch, reviewAnswer, startTestWebhookServer, type ReceivedCall, type TestWebhookServer } from './test-support.js';

const vwc = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const mwc = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';

interface HookOpts {
  name?: string;
  path: string;
  rules?: unknown[];
  failurePolicy?: 'Fail' | 'Ignore';
  timeoutSeconds?: number;
  sideEffects?: string;
  namespaceSelector?: unknown;
  objectSelector?: unknown;
  matchPolicy?: 'Exact' | 'Equivalent';
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  admissionReviewVersions?: string[];
  clientConfig?: unknown;
}

const configMapRules = [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['configmaps'] }];

describe('admission webhooks', () => {
  let s: TestServer;
  let hooks: TestWebhookServer;
  const configs: string[] = [];

  function hook(o: HookOpts): Record<string, unknown> {
    return {
      name: o.name ?? `${o.path.slice(1)}.example.com`,
      clientConfig: o.clientConfig ?? { url: `${hooks.base}${o.path}`, caBundle: hooks.caBundle },
      rules: o.rules ?? configMapRules,
      sideEffects: o.sideEffects ?? 'None',
      admissionReviewVersions: o.admissionReviewVersions ?? ['v1'],
      ...(o.failurePolicy ? { failurePolicy: o.failurePolicy } : {}),
      ...(o.timeoutSeconds ? { timeoutSeconds: o.timeoutSeconds } : {}),
      ...(o.namespaceSelector ? { namespaceSelector: o.namespaceSelector } : {}),
      ...(o.objectSelector ? { objectSelector: o.objectSelector } : {}),
      ...(o.matchPolicy ? { matchPolicy: o.matchPolicy } : {}),
      ...(o.reinvocationPolicy ? { reinvocationPolicy: o.reinvocationPolicy } : {}),
    };
  }

  async function install(kind: 'validating' | 'mutating', name: string, webhooks: Record<string, unknown>[]): Promise<void> {
    const path = kind === 'validating' ? vwc : mwc;
    const res = await s.request('POST', path, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: kind === 'validating' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration',
      metadata: { name },
      webhooks,
    });
    assert.equal(res.status, 201, res.text);
    configs.push(`${path}/${name}`);
  }

  const cm = (name: string, labels?: Record<string, string>, ns = 'default') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...(labels ? { labels } : {}) }, data: { a: '1' } });
  const createCM = (name: string, labels?: Record<string, string>, query = '') => s.request('POST', `/api/v1/namespaces/default/configmaps${query}`, cm(name, labels));
  const callsTo = (path: string): ReceivedCall[] => hooks.calls.filter((c) => c.path === path);

  before(async () => {
    s = await startTestServer();
    hooks = await startTestWebhookServer(['hooks.default.svc']);
    hooks.handle('/allow', (c, res) => reviewAnswer(c, res, { allowed: true }));
    hooks.handle('/deny', (c, res) => reviewAnswer(c, res, { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'configmaps named bad are not allowed' } }));
    hooks.handle('/deny-bare', (c, res) => reviewAnswer(c, res, { allowed: false }));
    hooks.handle('/warn', (c, res) => reviewAnswer(c, res, { allowed: true, warnings: ['first warning', 'second warning'] }));
    hooks.handle('/hang', () => undefined);
    hooks.handle('/garbage', (_c, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"this is": not json'));
    hooks.handle('/no-uid', (c, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: c.body.apiVersion, kind: 'AdmissionReview', response: { uid: 'other', allowed: true } })));
    hooks.handle('/label-a', (c, res) => {
      const labels = c.body.request.object?.metadata?.labels;
      if (labels?.a === 'set') return reviewAnswer(c, res, { allowed: true });
      const ops = labels ? [{ op: 'add', path: '/metadata/labels/a', value: 'set' }] : [{ op: 'add', path: '/metadata/labels', value: { a: 'set' } }];
      reviewAnswer(c, res, { allowed: true, ...jsonPatch(ops) });
    });
    hooks.handle('/label-b', (c, res) => {
      const labels = c.body.request.object?.metadata?.labels;
      if (labels?.b === 'set') return reviewAnswer(c, res, { allowed: true });
      const ops = labels ? [{ op: 'add', path: '/metadata/labels/b', value: 'set' }] : [{ op: 'add', path: '/metadata/labels', value: { b: 'set' } }];
      reviewAnswer(c, res, { allowed: true, ...jsonPatch(ops) });
    });
  });
  after(async () => {
    await s.close();
    await hooks.close();
  });
  beforeEach(async () => {
    for (const c of configs.splice(0)) await s.request('DELETE', c);
    for (const name of (await s.request('GET', '/api/v1/namespaces/default/configmaps')).body.items.map((i: any) => i.metadata.name)) {
      await s.request('DELETE', `/api/v1/namespaces/default/configmaps/${name}`);
    }
    hooks.calls.length = 0;
  });

  it('sends the whole request as an AdmissionReview v1 and lets an allowed request through', async () => {
    await install('validating', 'allow', [hook({ path: '/allow' })]);
    const res = await createCM('one', undefined, '?fieldManager=tester');
    assert.equal(res.status, 201, res.text);
    const [call] = callsTo('/allow');
    assert.ok(call);
    assert.match(call.url, /^\/allow\?timeout=10s$/);
    assert.equal(call.headers['content-type'], 'application/json');
    const { apiVersion, kind, request } = call.body;
    assert.deepEqual([apiVersion, kind], ['admission.k8s.io/v1', 'AdmissionReview']);
    assert.match(request.uid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(request.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(request.resource, { group: '', version: 'v1', resource: 'configmaps' });
    assert.deepEqual(request.requestKind, request.kind);
    assert.deepEqual(request.requestResource, request.resource);
    assert.equal(request.name, 'one');
    assert.equal(request.namespace, 'default');
    assert.equal(request.operation, 'CREATE');
    assert.equal(request.userInfo.username, 'admin');
    assert.equal(request.object.metadata.name, 'one');
    assert.equal(request.object.data.a, '1');
    assert.equal(request.oldObject, null);
    assert.equal(request.dryRun, false);
    assert.deepEqual(request.options, { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'tester' });
  });

  it('sends old and new objects on update and the old object with DeleteOptions on delete', async () => {
    await install('validating', 'allow', [hook({ path: '/allow' })]);
    assert.equal((await createCM('upd')).status, 201);
    const upd = await s.request('PUT', '/api/v1/namespaces/default/configmaps/upd', { ...cm('upd'), data: { a: '2' } });
    assert.equal(upd.status, 200, upd.text);
    const del = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/upd', { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 });
    assert.equal(del.status, 200, del.text);
    const [, u, d] = callsTo('/allow');
    assert.equal(u!.body.request.operation, 'UPDATE');
    assert.equal(u!.body.request.object.data.a, '2');
    assert.equal(u!.body.request.oldObject.data.a, '1');
    assert.equal(u!.body.request.options.kind, 'UpdateOptions');
    assert.equal(d!.body.request.operation, 'DELETE');
    assert.equal(d!.body.request.object, null);
    assert.equal(d!.body.request.oldObject.metadata.name, 'upd');
    assert.deepEqual(d!.body.request.options, { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', gracePeriodSeconds: 0 });
  });

  it('refuses with the webhook status, prefixed as kube-apiserver does', async () => {
    await install('validating', 'deny', [hook({ path: '/deny', name: 'deny.example.com' })]);
    const res = await createCM('bad');
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.reason, 'Forbidden');
    assert.equal(res.body.message, 'admission webhook "deny.example.com" denied the request: configmaps named bad are not allowed');
    assert.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/bad')).status, 404, 'nothing stored');
  });

  it('refuses without explanation with 400 when the webhook gives no status', async () => {
    await install('validating', 'deny-bare', [hook({ path: '/deny-bare', name: 'bare.example.com' })]);
    const res = await createCM('bad');
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.message, 'admission webhook "bare.example.com" denied the request without explanation');
  });

  it('calls validating webhooks in parallel and reports the first refusal in webhook order', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    hooks.handle('/slow-allow', async (c, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 100));
      inFlight--;
      reviewAnswer(c, res, { allowed: true });
    });
    await install('validating', 'parallel', [
      hook({ path: '/slow-allow', name: 'a.example.com' }),
      hook({ path: '/slow-allow', name: 'b.example.com' }),
      hook({ path: '/deny-bare', name: 'c.example.com' }),
      hook({ path: '/deny', name: 'd.example.com' }),
    ]);
    const res = await createCM('bad');
    assert.equal(res.status, 400, res.text);
    assert.match(res.body.message, /"c\.example\.com" denied/);
    assert.equal(maxInFlight, 2, 'both slow webhooks were in flight together');
  });

  it('passes warnings back as Warning headers', async () => {
    await install('validating', 'warn', [hook({ path: '/warn' })]);
    const res = await createCM('warned');
    assert.equal(res.status, 201, res.text);
    const w = res.headers.warning;
    const text = Array.isArray(w) ? w.join(', ') : String(w);
    assert.match(text, /299 - "first warning"/);
    assert.match(text, /299 - "second warning"/);
  });

  it('applies JSONPatch answers of mutating webhooks before validating webhooks run', async () => {
    await install('mutating', 'label-a', [hook({ path: '/label-a' })]);
    await install('validating', 'allow', [hook({ path: '/allow' })]);
    const res = await createCM('patched');
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.metadata.labels.a, 'set');
    const [v] = callsTo('/allow');
    assert.equal(v!.body.request.object.metadata.labels.a, 'set', 'the validating webhook sees the mutated object');
    const stored = await s.request('GET', '/api/v1/namespaces/default/configmaps/patched');
    assert.equal(stored.body.metadata.labels.a, 'set');
  });

  it('reinvokes an IfNeeded webhook once when a later webhook changed the object', async () => {
    await install('mutating', 'reinvoke', [
      hook({ path: '/allow', name: 'first.example.com', reinvocationPolicy: 'IfNeeded' }),
      hook({ path: '/label-b', name: 'second.example.com' }),
    ]);
    const res = await createCM('again');
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.metadata.labels.b, 'set');
    const first = callsTo('/allow');
    assert.equal(first.length, 2, 'called, then reinvoked once');
    assert.equal(first[1]!.body.request.object.metadata.labels.b, 'set', 'the reinvocation sees the later change');
    assert.equal(callsTo('/label-b').length, 1, 'a Never webhook is not reinvoked');
  });

  it('does not reinvoke when nothing changed after it, nor a Never webhook', async () => {
    await install('mutating', 'noreinvoke', [
      hook({ path: '/label-b', name: 'first.example.com', reinvocationPolicy: 'IfNeeded' }),
      hook({ path: '/allow', name: 'second.example.com', reinvocationPolicy: 'Never' }),
    ]);
    assert.equal((await createCM('once')).status, 201);
    assert.equal(callsTo('/label-b').length, 1);
    assert.equal(callsTo('/allow').length, 1);
  });

  it('times out a hanging webhook: Fail refuses with the documented error, Ignore lets the request through', async () => {
    await install('validating', 'hang-fail', [hook({ path: '/hang', name: 'hang.example.com', timeoutSeconds: 1 })]);
    const t0 = Date.now();
    const res = await createCM('slow');
    assert.ok(Date.now() - t0 < 5000, 'answered within the timeout, not stalled');
    assert.equal(res.status, 500, res.text);
    assert.equal(res.body.reason, 'InternalError');
    assert.equal(
      res.body.message,
      `Internal error occurred: failed calling webhook "hang.example.com": failed to call webhook: Post "${hooks.base}/hang?timeout=1s": context deadline exceeded`,
    );
    await s.request('DELETE', configs.pop()!);
    await install('validating', 'hang-ignore', [hook({ path: '/hang', name: 'hang.example.com', timeoutSeconds: 1, failurePolicy: 'Ignore' })]);
    assert.equal((await createCM('slow')).status, 201);
  });

  it('treats a garbage answer and a wrong uid as a failed call', async () => {
    await install('validating', 'garbage', [hook({ path: '/garbage', name: 'garbage.example.com' })]);
    const res = await createCM('g');
    assert.equal(res.status, 500, res.text);
    assert.match(res.body.message, /^Internal error occurred: failed calling webhook "garbage\.example\.com": failed to call webhook: /);
    await s.request('DELETE', configs.pop()!);
    await install('validating', 'no-uid', [hook({ path: '/no-uid', name: 'uid.example.com' })]);
    const res2 = await createCM('g');
    assert.equal(res2.status, 500, res2.text);
    assert.match(res2.body.message, /received invalid webhook response: expected response\.uid=".+", got "other"/);
  });

  it('reports a webhook that cannot be reached, and one whose certificate is not trusted', async () => {
    await install('validating', 'refused', [hook({ path: '/allow', name: 'down.example.com', clientConfig: { url: 'https://127.0.0.1:1/allow', caBundle: hooks.caBundle } })]);
    const res = await createCM('x');
    assert.equal(res.status, 500, res.text);
    assert.equal(res.body.message, 'Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post "https://127.0.0.1:1/allow?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused');
    await s.request('DELETE', configs.pop()!);
    await install('validating', 'untrusted', [hook({ path: '/allow', name: 'tls.example.com', clientConfig: { url: `${hooks.base}/allow` } })]);
    const res2 = await createCM('x');
    assert.equal(res2.status, 500, res2.text);
    assert.match(res2.body.message, /x509: certificate signed by unknown authority$/);
  });

  it('matches objectSelector on the object labels and namespaceSelector on the namespace labels', async () => {
    await install('validating', 'selectors', [
      hook({ path: '/deny-bare', name: 'objsel.example.com', objectSelector: { matchLabels: { guarded: 'yes' } } }),
      hook({ path: '/deny', name: 'nssel.example.com', namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] } }),
    ]);
    assert.equal((await createCM('free')).status, 201);
    assert.equal((await createCM('guarded', { guarded: 'yes' })).status, 400);
    assert.equal((await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod', labels: { env: 'prod' } } })).status, 201);
    const inProd = await s.request('POST', '/api/v1/namespaces/prod/configmaps', cm('x', undefined, 'prod'));
    assert.equal(inProd.status, 403, inProd.text);
    assert.match(inProd.body.message, /"nssel\.example\.com" denied/);
  });

  it('sends dryRun to webhooks without side effects (v1 allows no other)', async () => {
    const side = await s.request('POST', vwc, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'side' }, webhooks: [hook({ path: '/allow', sideEffects: 'Some' })] });
    assert.equal(side.status, 422, side.text);
    assert.match(side.body.message, /webhooks\[0\]\.sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"/);
    await install('validating', 'none', [hook({ path: '/allow', name: 'none.example.com', sideEffects: 'NoneOnDryRun' })]);
    assert.equal((await createCM('dry', undefined, '?dryRun=All')).status, 201);
    const [call] = callsTo('/allow');
    assert.equal(call!.body.request.dryRun, true);
    assert.deepEqual(call!.body.request.options.dryRun, ['All']);
  });

  it('speaks AdmissionReview v1beta1 to a webhook that only accepts it', async () => {
    await install('validating', 'beta', [hook({ path: '/allow', admissionReviewVersions: ['v1beta1'] })]);
    assert.equal((await createCM('b')).status, 201);
    assert.equal(callsTo('/allow')[0]!.body.apiVersion, 'admission.k8s.io/v1beta1');
  });

  it('reaches a webhook by service reference through a selectorless Service and its EndpointSlice at 127.0.0.1', async () => {
    const svc = await s.request('POST', '/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hooks' }, spec: { ports: [{ name: 'https', port: 443 }] } });
    assert.equal(svc.status, 201, svc.text);
    const slice = await s.request('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'hooks-1', labels: { 'kubernetes.io/service-name': 'hooks' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port: hooks.port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    });
    assert.equal(slice.status, 201, slice.text);
    await install('validating', 'by-service', [hook({ path: '/deny', name: 'svc.example.com', clientConfig: { service: { namespace: 'default', name: 'hooks', path: '/deny' }, caBundle: hooks.caBundle } })]);
    const res = await createCM('via-service');
    assert.equal(res.status, 403, res.text);
    assert.match(res.body.message, /"svc\.example\.com" denied/);
  });

  it('calls a webhook registered for another version of the resource under matchPolicy Equivalent, not under Exact', async () => {
    const hpaRules = [{ apiGroups: ['autoscaling'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['horizontalpodautoscalers'] }];
    await install('validating', 'equivalent', [hook({ path: '/allow', name: 'eq.example.com', rules: hpaRules })]);
    await install('validating', 'exact', [hook({ path: '/deny', name: 'exact.example.com', rules: hpaRules, matchPolicy: 'Exact' })]);
    const hpa = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', namespace: 'default' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }] },
    };
    const res = await s.request('POST', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', hpa);
    assert.equal(res.status, 201, res.text);
    const [call] = callsTo('/allow');
    assert.ok(call, 'the Equivalent webhook was called');
    assert.equal(callsTo('/deny').length, 0, 'the Exact webhook was not');
    const r = call.body.request;
    assert.deepEqual(r.kind, { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
    assert.deepEqual(r.requestKind, { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
    assert.equal(r.object.apiVersion, 'autoscaling/v1');
    assert.equal(r.object.spec.targetCPUUtilizationPercentage, 60, 'the object is converted to the webhook version');
  });

  it('never calls webhooks for webhook configurations themselves', async () => {
    const all = [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*/*'] }];
    await install('validating', 'deny-all', [hook({ path: '/deny', name: 'all.example.com', rules: all })]);
    // The configuration can still be removed (and others created) while it refuses everything else.
    assert.equal((await createCM('blocked')).status, 403);
    const other = await s.request('POST', mwc, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'other' }, webhooks: [] });
    assert.equal(other.status, 201, other.text);
    configs.push(`${mwc}/other`);
  });
});
