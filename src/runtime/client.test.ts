import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment as DeploymentType } from 'kubernetes-types/apps/v1.js';
import type { ConfigMap as ConfigMapType } from 'kubernetes-types/core/v1.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { StatusError, isConflict, isNotFound, newStatus } from '../client/errors.js';
import type { RestMapper } from '../client/rest-mapper.js';
import type { FakeAction } from '../controller/testing/fake-client.js';
import { setLogOutput } from '../util/log/logger.js';
import { ignoreNotFound } from './client.js';
import { defineKind, kinds, type RuntimeObject } from './kinds.js';
import { mergeFrom } from './patch.js';
import { recordingWrites, type WriteLog } from './read-your-writes.js';
import { testManager, type TestManager } from './test-support.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => {
  setLogOutput(restoreLog);
});

type ConfigMap = ConfigMapType & { [k: string]: unknown };
type Deployment = DeploymentType & { [k: string]: unknown };

interface Widget extends RuntimeObject {
  spec?: { size?: number };
  status?: { ready?: boolean };
}
const Widget = defineKind<Widget>({ group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true });
const widgetsGVR = { group: 'example.com', version: 'v1', resource: 'widgets' };

function cm(name: string, data: Record<string, string> = {}, ns = 'default'): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data };
}

function deploy(name: string, replicas = 1): Deployment {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'default' }, spec: { replicas, selector: {}, template: {} } };
}

/** A manager that is never started: writes and live reads do not need the cache. */
function setup(opts: Parameters<typeof testManager>[0] = {}): TestManager {
  return testManager({ cache: { kinds: [Widget] }, ...opts });
}

function last(t: TestManager): FakeAction {
  const a = t.fake.actions().at(-1);
  assert.ok(a, 'an action was recorded');
  return a;
}

describe('runtime client writes', () => {
  it('creates in the object\'s namespace with the manager\'s name as field manager, and returns the server\'s object', async () => {
    const t = setup();
    assert.equal(t.mgr.client.fieldManager, 'test');
    const out = await t.mgr.client.create(cm('a', { k: 'v' }));
    const a = last(t);
    assert.deepEqual([a.verb, a.resource, a.namespace, a.name, a.subresource], ['create', 'configmaps', 'default', 'a', undefined]);
    assert.deepEqual(a.gvr, GVR.configMaps);
    assert.deepEqual(a.writeOptions, { fieldManager: 'test' });
    assert.ok(out.metadata?.uid);
    assert.equal(out.metadata?.resourceVersion, t.fake.stored(GVR.configMaps, 'default', 'a')?.metadata?.resourceVersion);
    assert.deepEqual(out.data, { k: 'v' });
  });

  it('fills in apiVersion and kind when the server answer lacks them', async () => {
    const t = setup();
    t.fake.prependReactor('create', 'configmaps', (a) => ({ metadata: { ...a.object!.metadata, uid: 'u1', resourceVersion: '42' }, data: { from: 'server' } }));
    const out = await t.mgr.client.create(cm('a'));
    assert.equal(out.apiVersion, 'v1');
    assert.equal(out.kind, 'ConfigMap');
    assert.equal(out.metadata?.resourceVersion, '42');
    assert.deepEqual(out.data, { from: 'server' });
  });

  it('passes a field manager of its own, dryRun and fieldValidation', async () => {
    const t = setup();
    const out = await t.mgr.client.create(cm('a'), { fieldManager: 'someone', dryRun: true, fieldValidation: 'Strict' });
    assert.deepEqual(last(t).writeOptions, { fieldManager: 'someone', dryRun: 'All', fieldValidation: 'Strict' });
    assert.equal(out.metadata?.name, 'a');
    assert.equal(t.fake.stored(GVR.configMaps, 'default', 'a'), undefined, 'a dry run stores nothing');
  });

  it('creates cluster-scoped objects without a namespace', async () => {
    const t = setup();
    await t.mgr.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    const a = last(t);
    assert.deepEqual([a.verb, a.resource, a.namespace], ['create', 'namespaces', '']);
    assert.ok(t.fake.stored(GVR.namespaces, '', 'team-a'));
  });

  it('writes custom kinds the manager caches to their resource', async () => {
    const t = setup();
    const out = await t.mgr.client.create<Widget>({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns1' }, spec: { size: 2 } });
    const a = last(t);
    assert.deepEqual(a.gvr, widgetsGVR);
    assert.equal(a.namespace, 'ns1');
    assert.equal(out.kind, 'Widget');
    assert.deepEqual(t.fake.stored<KubeObject>(widgetsGVR, 'ns1', 'w')?.spec, { size: 2 });
  });

  it('updates the object, and the status through the status subresource', async () => {
    const t = setup();
    const [stored] = t.fake.seed(GVR.deployments, deploy('web'));
    const obj = structuredClone(stored!) as Deployment;
    obj.spec!.replicas = 3;
    const updated = await t.mgr.client.update(obj);
    let a = last(t);
    assert.deepEqual([a.verb, a.resource, a.namespace, a.name, a.subresource], ['update', 'deployments', 'default', 'web', undefined]);
    assert.deepEqual(a.writeOptions, { fieldManager: 'test' });
    assert.equal(a.object?.metadata?.resourceVersion, stored!.metadata?.resourceVersion);
    assert.equal(updated.spec?.replicas, 3);
    assert.equal(updated.kind, 'Deployment');

    updated.status = { replicas: 3 };
    const withStatus = await t.mgr.client.updateStatus(updated);
    a = last(t);
    assert.deepEqual([a.verb, a.resource, a.namespace, a.name, a.subresource], ['update', 'deployments', 'default', 'web', 'status']);
    assert.deepEqual(a.writeOptions, { fieldManager: 'test' });
    assert.deepEqual(withStatus.status, { replicas: 3 });
    assert.deepEqual(t.fake.stored<Deployment>(GVR.deployments, 'default', 'web')?.status, { replicas: 3 });
  });

  it('fails an update of a stale object with 409 Conflict', async () => {
    const t = setup();
    const [stored] = t.fake.seed(GVR.configMaps, cm('a'));
    await t.fake.resource(GVR.configMaps).namespace('default').patch('a', 'merge', { data: { other: 'writer' } });
    await assert.rejects(t.mgr.client.update({ ...(stored as ConfigMap), data: { mine: '1' } }), (err: unknown) => isConflict(err));
  });

  it('sends a raw patch as given', async () => {
    const t = setup();
    t.fake.seed(GVR.configMaps, cm('a', { k: 'v' }));
    const out = await t.mgr.client.patch(cm('a'), { type: 'merge', data: { data: { k: 'w' } } });
    let a = last(t);
    assert.deepEqual([a.verb, a.resource, a.namespace, a.name, a.subresource, a.patchType], ['patch', 'configmaps', 'default', 'a', undefined, 'merge']);
    assert.deepEqual(a.patch, { data: { k: 'w' } });
    assert.deepEqual(a.writeOptions, { fieldManager: 'test' });
    assert.deepEqual(out.data, { k: 'w' });
    assert.equal(out.kind, 'ConfigMap');

    await t.mgr.client.patch(cm('a'), { type: 'json', data: [{ op: 'add', path: '/data/j', value: '1' }] });
    a = last(t);
    assert.equal(a.patchType, 'json');
    assert.deepEqual(a.patch, [{ op: 'add', path: '/data/j', value: '1' }]);
    assert.deepEqual(t.fake.stored<ConfigMap>(GVR.configMaps, 'default', 'a')?.data, { k: 'w', j: '1' });
  });

  it('sends the merge patch from the mergeFrom original to the object', async () => {
    const t = setup();
    const [stored] = t.fake.seed(GVR.configMaps, { ...cm('a', { k: 'v', drop: 'x' }), metadata: { name: 'a', namespace: 'default', labels: { l: '1' } } });
    const obj = structuredClone(stored!) as ConfigMap;
    const base = mergeFrom(obj);
    obj.data = { k: 'w' };
    obj.metadata!.labels = { l: '1', m: '2' };
    await t.mgr.client.patch(obj, base);
    const a = last(t);
    assert.equal(a.patchType, 'merge');
    assert.deepEqual(a.patch, { data: { k: 'w', drop: null }, metadata: { labels: { m: '2' } } });
    const now = t.fake.stored<ConfigMap>(GVR.configMaps, 'default', 'a')!;
    assert.deepEqual(now.data, { k: 'w' });
    assert.deepEqual(now.metadata?.labels, { l: '1', m: '2' });
  });

  it('adds the original resourceVersion to a mergeFrom patch with optimisticLock, so a stale write fails', async () => {
    const t = setup();
    const [stored] = t.fake.seed(GVR.configMaps, cm('a', { k: 'v' }));
    const rv = stored!.metadata!.resourceVersion!;
    const obj = structuredClone(stored!) as ConfigMap;
    const base = mergeFrom(obj, { optimisticLock: true });
    obj.data = { k: 'w' };
    await t.mgr.client.patch(obj, base);
    assert.deepEqual(last(t).patch, { data: { k: 'w' }, metadata: { resourceVersion: rv } });

    // The same base again: the object moved on since, so 409.
    obj.data = { k: 'x' };
    await assert.rejects(t.mgr.client.patch(obj, base), (err: unknown) => isConflict(err));
    assert.deepEqual(t.fake.stored<ConfigMap>(GVR.configMaps, 'default', 'a')?.data, { k: 'w' });
  });

  it('refuses optimisticLock when the original has no resourceVersion', async () => {
    const t = setup();
    t.fake.seed(GVR.configMaps, cm('a'));
    const n = t.fake.actions().length;
    await assert.rejects(t.mgr.client.patch(cm('a', { k: 'v' }), mergeFrom(cm('a'), { optimisticLock: true })), TypeError);
    assert.equal(t.fake.actions().length, n);
  });

  it('patches the status through the status subresource', async () => {
    const t = setup();
    const [stored] = t.fake.seed(GVR.deployments, { ...deploy('web'), status: { replicas: 1 } });
    const obj = structuredClone(stored!) as Deployment;
    const base = mergeFrom(obj);
    obj.status = { replicas: 1, readyReplicas: 1 };
    const out = await t.mgr.client.patchStatus(obj, base);
    const a = last(t);
    assert.deepEqual([a.verb, a.resource, a.name, a.subresource, a.patchType], ['patch', 'deployments', 'web', 'status', 'merge']);
    assert.deepEqual(a.patch, { status: { readyReplicas: 1 } });
    assert.deepEqual(a.writeOptions, { fieldManager: 'test' });
    assert.deepEqual(out.status, { replicas: 1, readyReplicas: 1 });
  });

  it('applies server-side with the field manager and force, without managedFields in the body', async () => {
    const t = setup();
    const managedFields = [{ manager: 'x', operation: 'Apply' as const }];
    const out = await t.mgr.client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default', managedFields }, data: { k: 'v' } }, { force: true });
    const a = last(t);
    assert.deepEqual([a.verb, a.resource, a.namespace, a.name, a.subresource, a.patchType], ['patch', 'configmaps', 'default', 'a', undefined, 'apply']);
    assert.deepEqual(a.patch, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' }, data: { k: 'v' } });
    assert.deepEqual(a.writeOptions, { fieldManager: 'test', force: true });
    assert.equal(out.kind, 'ConfigMap');
    assert.deepEqual(t.fake.stored<ConfigMap>(GVR.configMaps, 'default', 'a')?.data, { k: 'v' });
  });

  it('applies the status through the status subresource with a field manager of its own', async () => {
    const t = setup();
    t.fake.seed(GVR.deployments, deploy('web'));
    await t.mgr.client.applyStatus({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' }, status: { replicas: 2 } }, { fieldManager: 'status-writer' });
    const a = last(t);
    assert.deepEqual([a.verb, a.resource, a.subresource, a.patchType], ['patch', 'deployments', 'status', 'apply']);
    assert.deepEqual(a.writeOptions, { fieldManager: 'status-writer' });
    assert.deepEqual(t.fake.stored<Deployment>(GVR.deployments, 'default', 'web')?.status, { replicas: 2 });
  });

  it('deletes with the options given', async () => {
    const t = setup();
    const [stored] = t.fake.seed(GVR.configMaps, cm('a'));
    await t.mgr.client.delete(cm('a'), { propagationPolicy: 'Foreground', preconditions: { uid: stored!.metadata!.uid } });
    const a = last(t);
    assert.deepEqual([a.verb, a.resource, a.namespace, a.name], ['delete', 'configmaps', 'default', 'a']);
    assert.equal(a.deleteOptions?.propagationPolicy, 'Foreground');
    assert.deepEqual(a.deleteOptions?.preconditions, { uid: stored!.metadata!.uid });
    assert.equal(a.deleteOptions?.dryRun, undefined);
    // Foreground deletion leaves the object with a finalizer and a deletionTimestamp.
    assert.ok(t.fake.stored(GVR.configMaps, 'default', 'a')?.metadata?.deletionTimestamp);
  });

  it('deletes for real by default, and only pretends with dryRun', async () => {
    const t = setup();
    t.fake.seed(GVR.configMaps, cm('a'), cm('b'));
    await t.mgr.client.delete(cm('a'), { dryRun: true });
    assert.equal(last(t).deleteOptions?.dryRun, 'All');
    assert.ok(t.fake.stored(GVR.configMaps, 'default', 'a'));
    await t.mgr.client.delete(cm('b'));
    assert.equal(t.fake.stored(GVR.configMaps, 'default', 'b'), undefined);
  });

  it('rejects with NotFound when deleting what is gone, which ignoreNotFound swallows', async () => {
    const t = setup();
    await assert.rejects(t.mgr.client.delete(cm('missing')), (err: unknown) => isNotFound(err));
    assert.equal(await t.mgr.client.delete(cm('missing')).catch(ignoreNotFound), undefined);
  });

  it('refuses writes of a namespaced kind without a namespace with a TypeError, before calling the server', async () => {
    const t = setup();
    const noNs = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } };
    const c = t.mgr.client;
    for (const [what, write] of [
      ['create', () => c.create(noNs)],
      ['update', () => c.update(noNs)],
      ['updateStatus', () => c.updateStatus(noNs)],
      ['patch', () => c.patch(noNs, { type: 'merge', data: {} })],
      ['patchStatus', () => c.patchStatus(noNs, { type: 'merge', data: {} })],
      ['apply', () => c.apply(noNs)],
      ['delete', () => c.delete(noNs)],
    ] as const) {
      await assert.rejects(write(), (err: unknown) => err instanceof TypeError && /ConfigMap is namespaced: set metadata\.namespace/.test(err.message), what);
    }
    assert.deepEqual(t.fake.actions(), []);
  });

  it('refuses writes without a name, except create', async () => {
    const t = setup();
    const noName = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default' } };
    await assert.rejects(t.mgr.client.update(noName), TypeError);
    await assert.rejects(t.mgr.client.patch(noName, { type: 'merge', data: {} }), TypeError);
    await assert.rejects(t.mgr.client.delete(noName), TypeError);
    await assert.rejects(t.mgr.client.apply(noName), TypeError);
    assert.deepEqual(t.fake.actions(), []);
    const created: RuntimeObject = await t.mgr.client.create({ ...noName, metadata: { namespace: 'default', generateName: 'gen-' } });
    assert.match(created.metadata?.name ?? '', /^gen-/);
  });

  it('records each write for read-your-writes, with the resourceVersion the server returned', async () => {
    const t = setup();
    t.fake.seed(GVR.configMaps, cm('old'));
    const log: WriteLog = { writes: [] };
    let created: ConfigMap | undefined;
    await recordingWrites(log, async () => {
      created = await t.mgr.client.create({ ...cm('a'), metadata: { name: 'a', namespace: 'default', labels: { app: 'web' } } });
      await t.mgr.client.delete(cm('old'));
    });
    assert.equal(log.writes.length, 2);
    const [w, d] = log.writes;
    assert.equal(w!.kind.kind, 'ConfigMap');
    assert.deepEqual([w!.namespace, w!.name, w!.uid, w!.resourceVersion, w!.deleted], ['default', 'a', created!.metadata!.uid, created!.metadata!.resourceVersion, false]);
    assert.deepEqual(w!.labels, { app: 'web' });
    assert.deepEqual([d!.namespace, d!.name, d!.deleted], ['default', 'old', true]);
  });
});

describe('runtime client kindOf', () => {
  it('resolves built-in kinds, namespaced or not', async () => {
    const t = setup();
    const d = await t.mgr.client.kindOf({ apiVersion: 'apps/v1', kind: 'Deployment' });
    assert.deepEqual([d.group, d.version, d.kind, d.plural, d.namespaced, d.apiVersion], ['apps', 'v1', 'Deployment', 'deployments', true, 'apps/v1']);
    const cr = await t.mgr.client.kindOf({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' });
    assert.deepEqual([cr.plural, cr.namespaced], ['clusterroles', false]);
    const p = await t.mgr.client.kindOf({ apiVersion: 'v1', kind: 'Pod' });
    assert.deepEqual([p.group, p.plural], ['', 'pods']);
  });

  it('resolves kinds the manager caches, as the very kind given', async () => {
    const t = setup();
    assert.equal(await t.mgr.client.kindOf({ apiVersion: 'example.com/v1', kind: 'Widget' }), Widget);
  });

  it('errors clearly for an unknown kind, and for an object without apiVersion and kind', async () => {
    const t = setup();
    await assert.rejects(t.mgr.client.kindOf({ apiVersion: 'example.com/v1', kind: 'Gadget' }), {
      message: 'unknown kind Gadget (example.com/v1): pass its ResourceKind to the manager (cache.kinds) or a controller',
    });
    await assert.rejects(t.mgr.client.kindOf({ apiVersion: 'example.com/v2', kind: 'Widget' }), /unknown kind Widget \(example\.com\/v2\)/);
    await assert.rejects(t.mgr.client.kindOf({ metadata: { name: 'x' } }), TypeError);
    await assert.rejects(t.mgr.client.create({ kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } }), TypeError);
  });

  it('asks the REST mapper for kinds it does not know', async () => {
    const asked: string[] = [];
    const restMapper = {
      async restMapping(group: string, kind: string, version?: string) {
        asked.push(`${group}/${version}/${kind}`);
        return { gvr: { group, version: version ?? 'v1', resource: 'gadgetz' }, gvk: { group, version: version ?? 'v1', kind }, namespaced: false };
      },
    } as unknown as RestMapper;
    const t = setup({ restMapper });
    const k = await t.mgr.client.kindOf({ apiVersion: 'example.com/v1beta1', kind: 'Gadget' });
    assert.deepEqual(asked, ['example.com/v1beta1/Gadget']);
    assert.deepEqual([k.group, k.version, k.kind, k.plural, k.namespaced], ['example.com', 'v1beta1', 'Gadget', 'gadgetz', false]);
    assert.equal((await t.mgr.client.kindOf({ apiVersion: 'v1', kind: 'ConfigMap' })).plural, 'configmaps');
    assert.equal(asked.length, 1, 'built-in kinds do not need the mapper');
  });
});

describe('runtime client live reads', () => {
  it('gets from the API server, with apiVersion and kind, even for kinds nobody caches', async () => {
    const t = setup();
    t.fake.seed(GVR.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, data: { a: 'Yg==' } });
    t.fake.prependReactor('get', 'secrets', (a) => {
      const { apiVersion: _a, kind: _k, ...rest } = t.fake.stored(GVR.secrets, a.namespace, a.name!)!;
      return rest;
    });
    const s = await t.mgr.client.live.get(kinds.Secret, { namespace: 'default', name: 's' });
    assert.deepEqual(s?.data, { a: 'Yg==' });
    assert.equal(s?.apiVersion, 'v1');
    assert.equal(s?.kind, 'Secret');
    const a = last(t);
    assert.deepEqual([a.verb, a.resource, a.namespace, a.name], ['get', 'secrets', 'default', 's']);
  });

  it('answers undefined for a 404 and rethrows other errors', async () => {
    const t = setup();
    assert.equal(await t.mgr.client.live.get(kinds.ConfigMap, { namespace: 'default', name: 'missing' }), undefined);
    t.fake.prependReactor('get', 'configmaps', () => {
      throw new StatusError(newStatus(403, 'Forbidden', 'configmaps "x" is forbidden'));
    });
    await assert.rejects(t.mgr.client.live.get(kinds.ConfigMap, { namespace: 'default', name: 'x' }), /forbidden/);
  });

  it('lists with the namespace and the label and field selectors given', async () => {
    const t = setup();
    t.fake.seed(
      GVR.configMaps,
      { ...cm('a'), metadata: { name: 'a', namespace: 'default', labels: { app: 'web', tier: 'db' } } },
      { ...cm('b'), metadata: { name: 'b', namespace: 'default', labels: { app: 'web' } } },
      { ...cm('c'), metadata: { name: 'c', namespace: 'other', labels: { app: 'web', tier: 'db' } } },
    );
    const all = await t.mgr.client.live.list(kinds.ConfigMap, { labelSelector: 'app=web' });
    let a = last(t);
    assert.deepEqual([a.verb, a.resource, a.namespace, a.listOptions?.labelSelector, a.listOptions?.fieldSelector], ['list', 'configmaps', '', 'app=web', undefined]);
    assert.deepEqual(all.map((o) => o.metadata?.name), ['a', 'b', 'c']);
    for (const o of all) assert.deepEqual([o.apiVersion, o.kind], ['v1', 'ConfigMap']);

    const inDefault = await t.mgr.client.live.list(kinds.ConfigMap, { namespace: 'default', labelSelector: { app: 'web', tier: 'db' }, fieldSelector: 'metadata.name=a' });
    a = last(t);
    assert.deepEqual([a.namespace, a.listOptions?.labelSelector, a.listOptions?.fieldSelector], ['default', 'app=web,tier=db', 'metadata.name=a']);
    assert.deepEqual(inDefault.map((o) => o.metadata?.name), ['a']);
  });
});

describe('ignoreNotFound', () => {
  it('swallows a 404 and rethrows anything else', () => {
    assert.equal(ignoreNotFound(new StatusError(newStatus(404, 'NotFound', 'configmaps "a" not found'))), undefined);
    const conflict = new StatusError(newStatus(409, 'Conflict', 'conflict'));
    assert.throws(() => ignoreNotFound(conflict), (err: unknown) => err === conflict);
    const plain = new Error('boom');
    assert.throws(() => ignoreNotFound(plain), (err: unknown) => err === plain);
  });
});
