import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-server.js';

const pod = (name: string, spec: Record<string, unknown> = {}, resources?: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx:1.25', ...(resources ? { resources } : {}) }], ...spec },
});
const quota = (name: string, hard: Record<string, string>, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec: { hard, ...extra } });

describe('ResourceQuota admission', () => {
  let t: TestServer;
  const nsPath = (ns: string) => `/api/v1/namespaces/${ns}`;
  async function namespace(ns: string) {
    await t.request('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    await t.request('POST', `${nsPath(ns)}/serviceaccounts`, { metadata: { name: 'default' } });
  }
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('refuses the pod that would pass the pods limit, with upstream message', async () => {
    await namespace('q1');
    assert.equal((await t.request('POST', `${nsPath('q1')}/resourcequotas`, quota('q', { pods: '2' }))).status, 201);
    assert.equal((await t.request('POST', `${nsPath('q1')}/pods`, pod('a'))).status, 201);
    assert.equal((await t.request('POST', `${nsPath('q1')}/pods`, pod('b'))).status, 201);
    const res = await t.request('POST', `${nsPath('q1')}/pods`, pod('x'));
    assert.equal(res.status, 403);
    assert.equal(res.body.reason, 'Forbidden');
    assert.equal(res.body.message, 'pods "x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2');
  });

  it('frees the slot as soon as a pod is deleted or finished', async () => {
    const del = await t.request('DELETE', `${nsPath('q1')}/pods/a?gracePeriodSeconds=0`);
    assert.ok(del.status < 300, del.text);
    assert.equal((await t.request('POST', `${nsPath('q1')}/pods`, pod('c'))).status, 201);
    const st = await t.request('GET', `${nsPath('q1')}/pods/b`);
    const done = { ...st.body, status: { phase: 'Succeeded' } };
    assert.equal((await t.request('PUT', `${nsPath('q1')}/pods/b/status`, done)).status, 200);
    assert.equal((await t.request('POST', `${nsPath('q1')}/pods`, pod('d'))).status, 201);
  });

  it('does not let two concurrent creates both take the last slot', async () => {
    await namespace('q2');
    await t.request('POST', `${nsPath('q2')}/resourcequotas`, quota('one', { pods: '1' }));
    const results = await Promise.all(['p1', 'p2', 'p3', 'p4'].map((n) => t.request('POST', `${nsPath('q2')}/pods`, pod(n))));
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 403, 403, 403]);
  });

  it('requires cpu limits on every container when a quota limits limits.cpu', async () => {
    await namespace('q3');
    await t.request('POST', `${nsPath('q3')}/resourcequotas`, quota('compute', { 'limits.cpu': '1', 'requests.memory': '1Gi' }));
    const res = await t.request('POST', `${nsPath('q3')}/pods`, pod('nolimit'));
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'pods "nolimit" is forbidden: failed quota: compute: must specify limits.cpu for: c; requests.memory for: c');
    const ok = await t.request('POST', `${nsPath('q3')}/pods`, pod('small', {}, { limits: { cpu: '600m', memory: '512Mi' } }));
    assert.equal(ok.status, 201, ok.text);
    const big = await t.request('POST', `${nsPath('q3')}/pods`, pod('big', {}, { limits: { cpu: '500m', memory: '768Mi' } }));
    assert.equal(big.status, 403);
    assert.equal(big.body.message, 'pods "big" is forbidden: exceeded quota: compute, requested: limits.cpu=500m,requests.memory=768Mi, used: limits.cpu=600m,requests.memory=512Mi, limited: limits.cpu=1,requests.memory=1Gi');
  });

  it('counts only pods in scope', async () => {
    await namespace('q4');
    await t.request('POST', `${nsPath('q4')}/resourcequotas`, quota('be', { pods: '1' }, { scopes: ['BestEffort'] }));
    assert.equal((await t.request('POST', `${nsPath('q4')}/pods`, pod('be1'))).status, 201);
    assert.equal((await t.request('POST', `${nsPath('q4')}/pods`, pod('burst', {}, { requests: { cpu: '100m' } }))).status, 201);
    assert.equal((await t.request('POST', `${nsPath('q4')}/pods`, pod('be2'))).status, 403);
    await t.request('POST', `${nsPath('q4')}/resourcequotas`, quota('crit', { pods: '0' }, { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['system-cluster-critical'] }] } }));
    const crit = await t.request('POST', `${nsPath('q4')}/pods`, pod('crit', { priorityClassName: 'system-cluster-critical' }, { requests: { cpu: '1' } }));
    assert.equal(crit.status, 403);
    assert.match(crit.body.message, /exceeded quota: crit, requested: pods=1, used: pods=0, limited: pods=0/);
  });

  it('limits object counts, services, node ports and load balancers', async () => {
    await namespace('q5');
    await t.request('POST', `${nsPath('q5')}/resourcequotas`, quota('objs', { 'count/configmaps': '1', 'services.nodeports': '1', 'services.loadbalancers': '0', 'count/deployments.apps': '0' }));
    assert.equal((await t.request('POST', `${nsPath('q5')}/configmaps`, { metadata: { name: 'a' } })).status, 201);
    const cm = await t.request('POST', `${nsPath('q5')}/configmaps`, { metadata: { name: 'b' } });
    assert.equal(cm.body.message, 'configmaps "b" is forbidden: exceeded quota: objs, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1');
    const svc = (name: string, type: string, ports: number[]) => ({ metadata: { name }, spec: { type, selector: { a: 'b' }, ports: ports.map((p) => ({ name: `p${p}`, port: p })) } });
    assert.equal((await t.request('POST', `${nsPath('q5')}/services`, svc('np', 'NodePort', [80]))).status, 201);
    const two = await t.request('POST', `${nsPath('q5')}/services`, svc('np2', 'NodePort', [80]));
    assert.equal(two.status, 403);
    assert.match(two.body.message, /requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1/);
    const lb = await t.request('POST', `${nsPath('q5')}/services`, svc('lb', 'LoadBalancer', [80]));
    assert.equal(lb.status, 403);
    assert.match(lb.body.message, /services.loadbalancers=1/);
    const dep = await t.request('POST', `/apis/apps/v1/namespaces/q5/deployments`, {
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    });
    assert.equal(dep.status, 403);
    assert.equal(dep.body.message, 'deployments.apps "d" is forbidden: exceeded quota: objs, requested: count/deployments.apps=1, used: count/deployments.apps=0, limited: count/deployments.apps=0');
  });

  it('charges a service update that turns it into a NodePort', async () => {
    const cur = await t.request('GET', `${nsPath('q5')}/services`);
    assert.equal(cur.status, 200);
    const mk = await t.request('POST', `${nsPath('q5')}/services`, { metadata: { name: 'cip' }, spec: { selector: { a: 'b' }, ports: [{ port: 81 }] } });
    assert.equal(mk.status, 201, mk.text);
    const res = await t.request('PATCH', `${nsPath('q5')}/services/cip`, { spec: { type: 'NodePort' } });
    assert.equal(res.status, 403, res.text);
    assert.match(res.body.message, /^services "cip" is forbidden: exceeded quota: objs, requested: services.nodeports=1/);
  });

  it('dry-run creates are checked but hold no slot', async () => {
    await namespace('q6');
    await t.request('POST', `${nsPath('q6')}/resourcequotas`, quota('q', { pods: '1' }));
    assert.equal((await t.request('POST', `${nsPath('q6')}/pods?dryRun=All`, pod('dry'))).status, 201);
    assert.equal((await t.request('POST', `${nsPath('q6')}/pods`, pod('real'))).status, 201);
    assert.equal((await t.request('POST', `${nsPath('q6')}/pods?dryRun=All`, pod('dry2'))).status, 403);
  });

  it('counts replica sets and custom resources by count/<resource>.<group>, and ignores events', async () => {
    await namespace('q7');
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.quota.example.com' },
      spec: {
        group: 'quota.example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    assert.equal((await t.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status, 201);
    await t.request('POST', `${nsPath('q7')}/resourcequotas`, quota('objs', { 'count/replicasets.apps': '1', 'count/gadgets.quota.example.com': '1', 'count/events': '0' }));
    const rs = (name: string) => ({
      metadata: { name },
      spec: { replicas: 0, selector: { matchLabels: { a: name } }, template: { metadata: { labels: { a: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    });
    assert.equal((await t.request('POST', '/apis/apps/v1/namespaces/q7/replicasets', rs('a'))).status, 201);
    const second = await t.request('POST', '/apis/apps/v1/namespaces/q7/replicasets', rs('b'));
    assert.equal(second.status, 403);
    assert.equal(second.body.message, 'replicasets.apps "b" is forbidden: exceeded quota: objs, requested: count/replicasets.apps=1, used: count/replicasets.apps=1, limited: count/replicasets.apps=1');

    const gadget = (name: string) => ({ apiVersion: 'quota.example.com/v1', kind: 'Gadget', metadata: { name } });
    let first: { status: number; text: string } = { status: 0, text: '' };
    for (let i = 0; i < 150; i++) {
      first = await t.request('POST', '/apis/quota.example.com/v1/namespaces/q7/gadgets', gadget('g1'));
      if (first.status !== 404) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(first.status, 201, first.text);
    const g2 = await t.request('POST', '/apis/quota.example.com/v1/namespaces/q7/gadgets', gadget('g2'));
    assert.equal(g2.status, 403, g2.text);
    assert.match(g2.body.message, /exceeded quota: objs, requested: count\/gadgets.quota.example.com=1, used: count\/gadgets.quota.example.com=1, limited: count\/gadgets.quota.example.com=1$/);

    const ev = { metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'q7' }, reason: 'R', message: 'm', type: 'Normal' };
    assert.equal((await t.request('POST', `${nsPath('q7')}/events`, ev)).status, 201, 'events are never charged');
  });
});
