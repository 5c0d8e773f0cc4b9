import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-server.js';

const podPath = '/api/v1/namespaces/default/pods';
const pod = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } });

describe('subresources', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    await t.request('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'default' } });
  });
  after(async () => {
    await t.close();
  });

  it('binds a pod to a node, sets PodScheduled, and refuses a second binding with 409', async () => {
    await t.request('POST', podPath, pod('b1'));
    const res = await t.request('POST', `${podPath}/b1/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'b1' }, target: { kind: 'Node', name: 'n1' } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.status, 'Success');
    const got = (await t.request('GET', `${podPath}/b1`)).body;
    assert.equal(got.spec.nodeName, 'n1');
    const cond = got.status.conditions.find((c: any) => c.type === 'PodScheduled');
    assert.equal(cond.status, 'True');
    const again = await t.request('POST', '/api/v1/namespaces/default/bindings', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'b1' }, target: { kind: 'Node', name: 'n2' } });
    assert.equal(again.status, 409);
    assert.match(again.body.message, /pod b1 is already assigned to node "n1"/);
  });

  it('evicts a pod without a PDB by deleting it', async () => {
    await t.request('POST', podPath, pod('e0'));
    const res = await t.request('POST', `${podPath}/e0/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'e0' } });
    assert.equal(res.status, 201, res.text);
    assert.equal((await t.request('GET', `${podPath}/e0`)).status, 404);
  });

  it('honours a PodDisruptionBudget: allowed evictions decrement it, none left gives 429', async () => {
    for (const n of ['e1', 'e2']) {
      await t.request('POST', podPath, pod(n, { app: 'guarded' }));
      await t.request('POST', `${podPath}/${n}/binding`, { metadata: { name: n }, target: { name: 'n1' } });
      const cur = (await t.request('GET', `${podPath}/${n}`)).body;
      cur.status.phase = 'Running';
      assert.equal((await t.request('PUT', `${podPath}/${n}/status`, cur)).status, 200);
    }
    const pdbPath = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
    const pdb = (await t.request('POST', pdbPath, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'pdb' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } } })).body;
    pdb.status = { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, observedGeneration: pdb.metadata.generation ?? 1 };
    assert.equal((await t.request('PUT', `${pdbPath}/pdb/status`, pdb)).status, 200);
    const ok = await t.request('POST', `${podPath}/e1/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'e1' } });
    assert.equal(ok.status, 201, ok.text);
    const after1 = (await t.request('GET', `${pdbPath}/pdb`)).body;
    assert.equal(after1.status.disruptionsAllowed, 0);
    assert.ok(after1.status.disruptedPods.e1);
    const refused = await t.request('POST', `${podPath}/e2/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'e2' } });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.reason, 'TooManyRequests');
    assert.equal(refused.body.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.equal(refused.body.details.causes[0].reason, 'DisruptionBudget');
    assert.equal((await t.request('GET', `${podPath}/e2`)).status, 200);
  });

  it('reads and writes the scale subresource', async () => {
    const path = '/apis/apps/v1/namespaces/default/deployments';
    await t.request('POST', path, { metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } });
    const sc = await t.request('GET', `${path}/web/scale`);
    assert.equal(sc.body.kind, 'Scale');
    assert.equal(sc.body.apiVersion, 'autoscaling/v1');
    assert.equal(sc.body.spec.replicas, 2);
    assert.equal(sc.body.status.selector, 'app=web');
    sc.body.spec.replicas = 5;
    const put = await t.request('PUT', `${path}/web/scale`, sc.body);
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.spec.replicas, 5);
    const d = (await t.request('GET', `${path}/web`)).body;
    assert.equal(d.spec.replicas, 5);
    assert.equal(d.metadata.generation, 2);
    const stale = await t.request('PUT', `${path}/web/scale`, sc.body);
    assert.equal(stale.status, 409);
  });

  it('approves a CertificateSigningRequest through /approval only', async () => {
    const path = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
    const csr = await t.request('POST', path, {
      apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'csr1' },
      spec: { request: Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----\n').toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] },
    });
    assert.equal(csr.status, 201, csr.text);
    const body = csr.body;
    body.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok', lastUpdateTime: '2024-01-01T00:00:00Z' }] };
    const res = await t.request('PUT', `${path}/csr1/approval`, body);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status.conditions[0].type, 'Approved');
    assert.equal(res.body.status.conditions[0].lastUpdateTime, '2024-01-01T00:00:00Z');
    assert.match(res.body.status.conditions[0].lastTransitionTime, /^\d{4}-\d\d-\d\dT/);
  });

  it('serves get and merge patch on /approval: metadata and conditions change, spec and the rest of status do not (csrApprovalStrategy)', async () => {
    const path = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
    const got = await t.request('GET', `${path}/csr1/approval`);
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body.kind, 'CertificateSigningRequest');
    const patch = { metadata: { annotations: { patchedapproval: 'true' } }, spec: { usages: ['digital signature'] }, status: { certificate: 'Zm9v', conditions: [{ type: 'ApprovalPatch', reason: 'e2e' }] } };
    const res = await t.request('PATCH', `${path}/csr1/approval`, patch);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.metadata.annotations.patchedapproval, 'true');
    assert.deepEqual(res.body.spec.usages, ['client auth']);
    assert.equal(res.body.status.certificate, undefined);
    assert.equal(res.body.status.conditions.length, 1);
    const c = res.body.status.conditions[0];
    assert.deepEqual([c.type, c.status, c.reason], ['ApprovalPatch', 'True', 'e2e'], 'status defaults to True');
    assert.ok(c.lastUpdateTime && c.lastTransitionTime);
    assert.equal((await t.request('DELETE', `${path}/csr1/approval`)).status, 405);
  });

  it('finds the node of a pod for log and exec (the node streaming endpoints are tested in node-proxy.test.ts)', async () => {
    const exec = await t.request('POST', `${podPath}/b1/exec?command=ls`);
    assert.equal(exec.status, 404, 'b1 is bound to n1, which does not exist');
    assert.equal(exec.body.message, 'nodes "n1" not found');
    const log = await t.request('GET', `${podPath}/b1/log`);
    assert.equal(log.status, 404);
    assert.equal(log.body.message, 'nodes "n1" not found');
    await t.request('POST', podPath, pod('unbound'));
    const unbound = await t.request('POST', `${podPath}/unbound/exec?command=ls`);
    assert.equal(unbound.status, 400);
    assert.equal(unbound.body.message, 'pod unbound does not have a host assigned');
  });
});
