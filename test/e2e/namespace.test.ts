/**
 * Namespace lifecycle with kubectl against `kcm up`: deletion of all content,
 * finalizers keeping a namespace Terminating, default service account and
 * kube-root-ca.crt in new namespaces, pod GC of pods on missing nodes.
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
const gone = async (args: string[]) => (await kcm.kubectl(['get', ...args])).code !== 0;

describe('namespace lifecycle e2e', () => {
  it('a new namespace gets the default service account and kube-root-ca.crt', async () => {
    await kcm.kubectlOk(['create', 'namespace', 'fresh']);
    await waitFor(async () => !(await gone(['serviceaccount', 'default', '-n', 'fresh'])), 30_000, 'default');
    await waitFor(async () => !(await gone(['configmap', 'kube-root-ca.crt', '-n', 'fresh'])), 30_000, 'root ca');
    const cm = JSON.parse(await kcm.kubectlOk(['get', 'configmap', 'kube-root-ca.crt', '-n', 'fresh', '-o', 'json']));
    assert.match(cm.data['ca.crt'], /BEGIN CERTIFICATE/);
    await kcm.kubectlOk(['delete', 'serviceaccount', 'default', '-n', 'fresh']);
    await waitFor(async () => !(await gone(['serviceaccount', 'default', '-n', 'fresh'])), 30_000, 'default recreated');
  });

  it('deleting a namespace with a Deployment, a Service, ConfigMaps and a custom resource leaves nothing', async () => {
    await kcm.kubectlOk(['create', 'namespace', 'full']);
    await waitFor(async () => !(await gone(['serviceaccount', 'default', '-n', 'full'])), 30_000, 'default');
    await apply('full', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    });
    await apply('full', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
    await apply('full', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { x: '1' } });
    await kcm.kubectlOk(['apply', '--validate=false', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'gadgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
        },
      }),
    });
    await waitFor(async () => (await kcm.kubectl(['get', 'gadgets', '-n', 'full'])).code === 0, 30_000, 'crd served');
    await apply('full', { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' } });
    await kcm.kubectlOk(['delete', 'namespace', 'full', '--wait=false']);
    await waitFor(async () => gone(['namespace', 'full']), 120_000, 'namespace gone');
    assert.equal((await kcm.kubectlOk(['get', 'gadgets', '-A', '-o', 'name'])).trim(), '');
  });

  it('a finalizer keeps a namespace Terminating with NamespaceFinalizersRemaining', async () => {
    await kcm.kubectlOk(['create', 'namespace', 'held']);
    await apply('held', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stuck', finalizers: ['example.com/hold'] } });
    await kcm.kubectlOk(['delete', 'namespace', 'held', '--wait=false']);
    const cond = await waitFor(async () => {
      const ns = JSON.parse(await kcm.kubectlOk(['get', 'namespace', 'held', '-o', 'json']));
      return ns.status?.conditions?.find((c: any) => c.type === 'NamespaceFinalizersRemaining' && c.status === 'True');
    }, 60_000, 'condition');
    assert.equal(cond.message, 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances');
    assert.equal(JSON.parse(await kcm.kubectlOk(['get', 'namespace', 'held', '-o', 'json'])).status.phase, 'Terminating');
    await kcm.kubectlOk(['patch', 'configmap', 'stuck', '-n', 'held', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    await waitFor(async () => gone(['namespace', 'held']), 120_000, 'namespace gone');
  });

  it('a pod bound to a missing node is collected by podgc', async () => {
    await kcm.kubectlOk(['create', 'namespace', 'podgc']);
    await waitFor(async () => !(await gone(['serviceaccount', 'default', '-n', 'podgc'])), 30_000, 'default');
    await apply('podgc', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'lost' }, spec: { nodeName: 'no-such-node', containers: [{ name: 'c', image: 'nginx' }] } });
    // 20 s period + 40 s quarantine.
    await waitFor(async () => gone(['pod', 'lost', '-n', 'podgc']), 120_000, 'pod collected');
  });
});
