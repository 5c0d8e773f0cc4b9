import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-server.js';
import { newAdmissionChain, onlyWhen, writes, type AdmissionAttributes } from './admission.js';

const pod = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }], ...spec } });

describe('admission on pods and nodes', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    await t.request('POST', '/api/v1/namespaces', { metadata: { name: 'nosa' } });
    await t.request('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'default' } });
    await t.request('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'quiet' }, automountServiceAccountToken: false });
  });
  after(async () => {
    await t.close();
  });

  it('refuses a pod whose service account does not exist', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/nosa/pods', pod('p'));
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'pods "p" is forbidden: error looking up service account nosa/default: serviceaccount "default" not found');
  });

  it('defaults the service account and mounts the projected token volume', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/default/pods', pod('sa'));
    assert.equal(res.status, 201, res.text);
    const spec = res.body.spec;
    assert.equal(spec.serviceAccountName, 'default');
    const vol = spec.volumes.find((v: any) => v.name.startsWith('kube-api-access-'));
    assert.match(vol.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.equal(vol.projected.sources[0].serviceAccountToken.path, 'token');
    assert.deepEqual(spec.containers[0].volumeMounts, [{ name: vol.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
  });

  it('does not mount a token when automount is off on the service account', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/default/pods', pod('quiet', { serviceAccountName: 'quiet' }));
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.spec.volumes ?? undefined, undefined);
  });

  it('adds the default not-ready and unreachable tolerations unless present', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/default/pods', pod('tol', { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }] }));
    const tols = res.body.spec.tolerations;
    assert.deepEqual(tols, [
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 },
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
  });

  it('resolves priority from the class name and refuses unknown classes', async () => {
    const ok = await t.request('POST', '/api/v1/namespaces/default/pods', pod('crit', { priorityClassName: 'system-cluster-critical' }));
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.spec.priority, 2000000000);
    const plain = await t.request('POST', '/api/v1/namespaces/default/pods', pod('plain'));
    assert.equal(plain.body.spec.priority, 0);
    const bad = await t.request('POST', '/api/v1/namespaces/default/pods', pod('bad', { priorityClassName: 'nope' }));
    assert.equal(bad.status, 403);
    assert.equal(bad.body.message, 'pods "bad" is forbidden: no PriorityClass with name nope was found');
  });

  it('taints new nodes not-ready:NoSchedule', async () => {
    const res = await t.request('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.spec.taints, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
  });
});

describe('newAdmissionChain', () => {
  const attrs = (resource: string) =>
    ({ operation: 'CREATE', resource: { group: '', resource }, subresource: '', namespace: 'ns', name: 'x', object: {}, oldObject: undefined, user: { username: 'u', groups: [] }, dryRun: false }) as unknown as AdmissionAttributes;

  it('runs plugins in order, awaiting only those that return a promise, and stops at the first refusal', async () => {
    const seen: string[] = [];
    const chain = newAdmissionChain([
      { name: 'sync', validate: () => void seen.push('sync') },
      { name: 'async', validate: async () => void seen.push('async') },
      { name: 'refuses', validate: (a) => { seen.push('refuses'); if (a.resource.resource === 'secrets') throw new Error('no secrets'); } },
      { name: 'after', validate: () => void seen.push('after') },
    ]);
    const run = chain.validate(attrs('configmaps'));
    // The plugins before the first promise ran at once.
    assert.deepEqual(seen, ['sync', 'async']);
    await run;
    assert.deepEqual(seen, ['sync', 'async', 'refuses', 'after']);
    seen.length = 0;
    await assert.rejects(chain.validate(attrs('secrets')), /no secrets/);
    assert.deepEqual(seen, ['sync', 'async', 'refuses']);
  });

  it('onlyWhen: requests a phase does not apply to get no promise', async () => {
    const ran: string[] = [];
    const phase = onlyWhen(writes('CREATE', '', 'pods'), async (a) => void ran.push(a.resource.resource));
    assert.equal(phase(attrs('configmaps')), undefined);
    const p = phase(attrs('pods'));
    assert.ok(p instanceof Promise);
    await p;
    assert.deepEqual(ran, ['pods']);
  });
});
