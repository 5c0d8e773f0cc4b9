/**
 * Cascading deletion with kubectl against `kcm up` (garbage collector,
 * deployment, replicaset controllers, scheduler and simulated nodes).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { startCluster } from './cluster.js';

let kcm: KcmProcess;
before(async () => {
  kcm = await startCluster();
});
after(async () => {
  await kcm?.stop();
});

const apply = (ns: string, obj: unknown) => kcm.kubectlOk(['apply', '--validate=false', '-n', ns, '-f', '-'], { input: JSON.stringify(obj) });
const names = async (ns: string, kind: string, selector?: string) =>
  (await kcm.kubectlOk(['get', kind, '-n', ns, '-o', 'name', ...(selector ? ['-l', selector] : [])])).split('\n').filter(Boolean);
const getJson = async (ns: string, what: string[]) => JSON.parse(await kcm.kubectlOk(['get', ...what, '-n', ns, '-o', 'json'])) as any;

async function namespace(name: string): Promise<string> {
  await kcm.kubectlOk(['create', 'namespace', name]);
  await waitFor(async () => (await kcm.kubectl(['get', 'serviceaccount', 'default', '-n', name])).code === 0, 30_000, 'default service account');
  return name;
}

const deployment = (name: string, replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
});

async function deploymentWithPods(ns: string, name: string, replicas = 2): Promise<void> {
  await apply(ns, deployment(name, replicas));
  await waitFor(async () => (await names(ns, 'pods', `app=${name}`)).length === replicas, 60_000, 'pods created');
}

describe('garbage collector e2e', () => {
  it('--cascade=background deletes the ReplicaSet and pods after the Deployment', async () => {
    const ns = await namespace('gc-bg');
    await deploymentWithPods(ns, 'web');
    await kcm.kubectlOk(['delete', 'deployment', 'web', '-n', ns, '--cascade=background']);
    await waitFor(async () => (await names(ns, 'replicasets')).length === 0 && (await names(ns, 'pods', 'app=web')).length === 0, 60_000, 'cascade');
  });

  it('--cascade=foreground deletes dependents before the Deployment goes', async () => {
    const ns = await namespace('gc-fg');
    await deploymentWithPods(ns, 'web');
    await kcm.kubectlOk(['delete', 'deployment', 'web', '-n', ns, '--cascade=foreground', '--wait=false']);
    await waitFor(async () => (await kcm.kubectl(['get', 'deployment', 'web', '-n', ns])).code !== 0, 60_000, 'deployment gone');
    assert.deepEqual(await names(ns, 'replicasets'), []);
    await waitFor(async () => (await names(ns, 'pods', 'app=web')).length === 0, 60_000, 'pods gone');
  });

  it('--cascade=orphan keeps the ReplicaSet and pods without owner references', async () => {
    const ns = await namespace('gc-orphan');
    await deploymentWithPods(ns, 'web');
    await kcm.kubectlOk(['delete', 'deployment', 'web', '-n', ns, '--cascade=orphan']);
    await waitFor(async () => {
      const rs = await getJson(ns, ['replicasets']);
      return rs.items.length === 1 && !(rs.items[0].metadata.ownerReferences ?? []).length;
    }, 30_000, 'rs orphaned');
    assert.equal((await names(ns, 'pods', 'app=web')).length, 2);
  });

  it('a ReplicationController deleted in foreground stays while a pod holds a finalizer', async () => {
    const ns = await namespace('gc-rc');
    await apply(ns, {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'rc' },
      spec: { replicas: 1, selector: { app: 'rc' }, template: { metadata: { labels: { app: 'rc' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    });
    await waitFor(async () => (await names(ns, 'pods', 'app=rc')).length === 1, 60_000, 'pod');
    const [pod] = await names(ns, 'pods', 'app=rc');
    await kcm.kubectlOk(['patch', pod!, '-n', ns, '--type=merge', '-p', '{"metadata":{"finalizers":["example.com/hold"]}}']);
    await kcm.kubectlOk(['delete', 'rc', 'rc', '-n', ns, '--cascade=foreground', '--wait=false']);
    await new Promise((r) => setTimeout(r, 3000));
    const rc = await getJson(ns, ['rc', 'rc']);
    assert.ok(rc.metadata.deletionTimestamp);
    assert.deepEqual(rc.metadata.finalizers, ['foregroundDeletion']);
    await kcm.kubectlOk(['patch', pod!, '-n', ns, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    await waitFor(async () => (await kcm.kubectl(['get', 'rc', 'rc', '-n', ns])).code !== 0, 60_000, 'rc gone');
  });

  it('a dependent with a second live owner survives; a ConfigMap with a missing owner uid is deleted', async () => {
    const ns = await namespace('gc-owners');
    await apply(ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner-a' } });
    await apply(ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner-b' } });
    const a = await getJson(ns, ['configmap', 'owner-a']);
    const b = await getJson(ns, ['configmap', 'owner-b']);
    const ref = (o: any) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: o.metadata.name, uid: o.metadata.uid });
    await apply(ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared', ownerReferences: [ref(a), ref(b)] } });
    await apply(ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dangling', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'nobody', uid: '00000000-0000-0000-0000-000000000000' }] } });
    await waitFor(async () => (await kcm.kubectl(['get', 'configmap', 'dangling', '-n', ns])).code !== 0, 60_000, 'dangling collected');
    await kcm.kubectlOk(['delete', 'configmap', 'owner-a', '-n', ns]);
    await waitFor(async () => (await getJson(ns, ['configmap', 'shared'])).metadata.ownerReferences?.length === 1, 60_000, 'ref removed');
  });

  it('a custom resource owner cascades to its dependents', async () => {
    const ns = await namespace('gc-crd');
    await kcm.kubectlOk(['apply', '--validate=false', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
        },
      }),
    });
    await waitFor(async () => (await kcm.kubectl(['get', 'widgets', '-n', ns])).code === 0, 30_000, 'crd served');
    await apply(ns, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } });
    const w = await getJson(ns, ['widget', 'w']);
    await apply(ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'of-w', ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: w.metadata.uid }] } });
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal((await kcm.kubectl(['get', 'configmap', 'of-w', '-n', ns])).code, 0);
    await kcm.kubectlOk(['delete', 'widget', 'w', '-n', ns]);
    await waitFor(async () => (await kcm.kubectl(['get', 'configmap', 'of-w', '-n', ns])).code !== 0, 60_000, 'dependent collected');
  });
});
