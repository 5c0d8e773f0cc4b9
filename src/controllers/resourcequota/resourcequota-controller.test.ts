import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceQuota } from 'kubernetes-types/core/v1.js';
import type { Kube } from '../../tools/cache/factory.js';
import { GVR } from '../../api/gvr.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newTestContext, until } from '../garbagecollector/test-support.js';
import { descriptor, newResourceQuotaController, DEFAULT_RESOURCE_QUOTA_SYNC_PERIOD_MS, QUOTA_DISCOVERY_PERIOD_MS } from './resourcequota-controller.js';
import { res } from '../garbagecollector/test-support.js';

const pod = (name: string, cpu?: string, phase = 'Running') => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns' },
  spec: { containers: [{ name: 'c', image: 'i', ...(cpu ? { resources: { requests: { cpu }, limits: { cpu } } } : {}) }] },
  status: { phase },
});
const quota = (hard: Record<string, string>, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'ns' }, spec: { hard, ...extra } });

async function setup(seed: (t: ReturnType<typeof newTestContext>) => void) {
  const t = newTestContext();
  seed(t);
  const c = newResourceQuotaController(t.ctx);
  t.ctx.informers.start(t.stop.signal);
  await until(() => c.hasSynced(), 'synced');
  return { t, c };
}

const status = (t: ReturnType<typeof newTestContext>) => t.fake.stored<Kube<ResourceQuota>>(GVR.resourceQuotas, 'ns', 'q')?.status;

describe('resource quota controller', () => {
  before(() => setLogOutput(() => {}));

  it('is registered as resourcequota-controller with 5 workers', () => {
    assert.equal(descriptor.name, 'resourcequota-controller');
    assert.deepEqual(descriptor.aliases, ['resourcequota']);
    assert.equal(descriptor.defaultWorkers, 5);
  });

  it('mirrors spec.hard into status.hard and counts running pods, not finished ones', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.resourceQuotas, quota({ pods: '10', 'requests.cpu': '4', 'count/pods': '20', secrets: '3' }));
      t.fake.seed(GVR.pods, pod('a', '500m'), pod('b', '250m'), pod('done', '1', 'Succeeded'));
    });
    await c.syncQuota('ns/q');
    assert.deepEqual(status(t), {
      hard: { 'count/pods': '20', pods: '10', 'requests.cpu': '4', secrets: '3' },
      used: { 'count/pods': '3', pods: '2', 'requests.cpu': '750m', secrets: '0' },
    });
    await until(() => t.ctx.informers.resourceQuotas().getStore().list()[0]?.status !== undefined, 'cache caught up');
    t.fake.clearActions();
    await c.syncQuota('ns/q');
    assert.equal(t.fake.actions().filter((a) => a.verb === 'update').length, 0, 'an unchanged status is not written again');
    await t.close();
  });

  it('counts only the pods in scope', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.resourceQuotas, quota({ pods: '10' }, { scopes: ['BestEffort'] }));
      t.fake.seed(GVR.pods, pod('be'), pod('burst', '1'));
    });
    await c.syncQuota('ns/q');
    assert.deepEqual(status(t)?.used, { pods: '1' });
    await t.close();
  });

  it('resyncs a namespace quota when a counted object appears or goes away', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.resourceQuotas, quota({ configmaps: '5' }));
    });
    // the initial add of the quota
    assert.equal(c.worker.queue.len(), 1);
    await c.syncQuota('ns/q');
    c.worker.queue.done((await c.worker.queue.get())!);
    await t.fake.resource(GVR.configMaps).namespace('ns').create({ metadata: { name: 'x' } });
    await until(() => c.worker.queue.len() === 1, 'enqueued on add');
    await c.syncQuota('ns/q');
    assert.deepEqual(status(t)?.used, { configmaps: '1' });
    await t.close();
  });

  it('enqueues every quota on the periodic full resync', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.resourceQuotas, quota({ pods: '1' }));
    });
    const run = c.run(1, t.stop.signal);
    await until(() => status(t) !== undefined, 'first sync');
    // Make the status stale behind the controller's back: only a resync repairs it.
    const stale = structuredClone(t.fake.stored<Kube<ResourceQuota>>(GVR.resourceQuotas, 'ns', 'q')!);
    stale.status = { hard: { pods: '1' }, used: { pods: '7' } };
    await t.fake.resource(GVR.resourceQuotas).namespace('ns').updateStatus(stale);
    await until(() => c.worker.queue.len() === 0, 'idle');
    await t.clock.advance(DEFAULT_RESOURCE_QUOTA_SYNC_PERIOD_MS);
    await until(() => status(t)?.used?.pods === '0', 'resynced');
    await t.close();
    await run;
  });

  it("counts a discovered resource through another controller's full informer instead of a second, metadata-only watch", async () => {
    const { t, c } = await setup((t) => {
      t.ctx.informers.replicaSets(); // as the ReplicaSet controller, built before this one
      t.fake.seed(GVR.resourceQuotas, quota({ 'count/replicasets.apps': '5' }));
    });
    await c.resyncMonitors(t.stop.signal);
    t.ctx.informers.start(t.stop.signal);
    await until(() => t.fake.actions().some((a) => a.verb === 'list' && a.resource === 'widgets'), 'monitors listing');
    const lists = t.fake.actions().filter((a) => a.verb === 'list');
    assert.ok(!lists.some((a) => a.resource === 'replicasets' && a.metadataOnly), 'no metadata-only replica set list');
    assert.ok(lists.some((a) => a.resource === 'replicasets' && !a.metadataOnly), 'replica sets listed in full once');
    assert.ok(lists.some((a) => a.resource === 'widgets' && a.metadataOnly), 'resources no one else watches stay metadata-only');
    await t.close();
  });

  it('captures the life of a replica set in count/replicasets.apps (0, 1, 0), from discovery', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.resourceQuotas, quota({ 'count/replicasets.apps': '5', resourcequotas: '1' }));
    });
    await c.resyncMonitors(t.stop.signal);
    assert.ok(c.monitored().includes('apps/replicasets'));
    assert.ok(c.monitored().includes('example.com/widgets'), 'custom resources are counted too');
    assert.ok(!c.monitored().includes('/events'), 'events are ignored');
    assert.ok(!c.monitored().includes('/nodes'), 'only namespaced resources');
    await until(() => t.ctx.informers.forResourceMetadata(GVR.replicaSets).hasSynced(), 'monitor synced');
    const drain = async () => {
      while (c.worker.queue.len() > 0) {
        const k = (await c.worker.queue.get())!;
        await c.syncQuota(k);
        c.worker.queue.done(k);
      }
    };
    await drain();
    assert.deepEqual(status(t)?.used, { 'count/replicasets.apps': '0', resourcequotas: '1' });
    const rs = t.fake.resource(GVR.replicaSets).namespace('ns');
    await rs.create({ metadata: { name: 'r' }, spec: { selector: { matchLabels: { a: 'b' } }, template: {} } });
    await until(() => c.worker.queue.len() === 1, 'enqueued on add');
    await drain();
    assert.equal(status(t)?.used?.['count/replicasets.apps'], '1');
    await rs.delete('r');
    await until(() => c.worker.queue.len() === 1, 'enqueued on delete');
    await drain();
    assert.equal(status(t)?.used?.['count/replicasets.apps'], '0');
    await t.close();
  });

  it('counts a custom resource served after start once discovery is re-read', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.resourceQuotas, quota({ 'count/gadgets.other.io': '2' }));
    });
    const gadgets = { group: 'other.io', version: 'v1', resource: 'gadgets' };
    await c.syncQuota('ns/q');
    assert.deepEqual(status(t)?.used, {}, 'a resource not served is not measured');
    t.discovery.lists.push({ groupVersion: 'other.io/v1', resources: [res('gadgets', 'Gadget')] });
    const run = c.run(1, t.stop.signal);
    await t.clock.advance(QUOTA_DISCOVERY_PERIOD_MS);
    await until(() => c.monitored().includes('other.io/gadgets'), 'monitored');
    await t.fake.resource(gadgets).namespace('ns').create({ apiVersion: 'other.io/v1', kind: 'Gadget', metadata: { name: 'g' } });
    await until(() => status(t)?.used?.['count/gadgets.other.io'] === '1', 'counted');
    await t.close();
    await run;
  });

  it('does not resync a quota for objects it does not track', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.resourceQuotas, quota({ configmaps: '5' }));
    });
    await c.syncQuota('ns/q');
    c.worker.queue.done((await c.worker.queue.get())!);
    await t.fake.resource(GVR.pods).namespace('ns').create(pod('p'));
    await t.fake.resource(GVR.secrets).namespace('ns').create({ metadata: { name: 's' } });
    await until(() => t.ctx.informers.secrets().getStore().list().length === 1, 'seen');
    assert.equal(c.worker.queue.len(), 0);
    await t.close();
  });

  it("resyncs for a pod's update only when the pod stops counting or its resources change, not for its status", async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.resourceQuotas, quota({ pods: '5', 'requests.cpu': '4' }));
      t.fake.seed(GVR.pods, pod('p', '1'));
    });
    await c.syncQuota('ns/q');
    c.worker.queue.done((await c.worker.queue.get())!);
    const pods = t.fake.resource(GVR.pods).namespace('ns');
    const update = async (change: (p: ReturnType<typeof pod>) => void, what: string, subresource: 'status' | '' = '') => {
      const live = (await pods.get('p')) as ReturnType<typeof pod>;
      change(live);
      const rv = (await (subresource ? pods.updateStatus(live) : pods.update(live))).metadata?.resourceVersion;
      await until(() => t.ctx.informers.pods().getStore().getByKey('ns/p')?.metadata?.resourceVersion === rv, `${what} seen`);
    };
    await update((p) => void ((p.status as Record<string, unknown>).conditions = [{ type: 'Ready', status: 'True' }]), 'a status write', 'status');
    assert.equal(c.worker.queue.len(), 0, 'a status write does not resync the quota');
    await update((p) => void (p.spec.containers[0]!.resources = { requests: { cpu: '2' }, limits: { cpu: '2' } }), 'a resize');
    await until(() => c.worker.queue.len() === 1, 'resynced for the resize');
    c.worker.queue.done((await c.worker.queue.get())!);
    await update((p) => void (p.status.phase = 'Succeeded'), 'finishing', 'status');
    await until(() => c.worker.queue.len() === 1, 'resynced when the pod stops counting');
    await t.close();
  });

  it('resyncs the other quotas of a namespace counting resourcequotas when one is created', async () => {
    const { t, c } = await setup((t) => {
      t.fake.seed(GVR.resourceQuotas, quota({ resourcequotas: '5' }));
    });
    await c.syncQuota('ns/q');
    assert.deepEqual(status(t)?.used, { resourcequotas: '1' });
    c.worker.queue.done((await c.worker.queue.get())!);
    await t.fake.resource(GVR.resourceQuotas).namespace('ns').create({ metadata: { name: 'other' }, spec: { hard: { pods: '1' } } });
    await until(() => c.worker.queue.len() === 2, 'both enqueued');
    await c.syncQuota('ns/q');
    assert.deepEqual(status(t)?.used, { resourcequotas: '2' });
    await t.close();
  });
});
