/**
 * The cloud controllers on `kcm up`'s local cloud provider, with kubectl:
 * nodes are initialised (providerID kcm://<node>, zone/region/instance-type
 * labels, no uninitialized taint); `kubectl expose --type=LoadBalancer`
 * gets an EXTERNAL-IP from the pool within seconds and gives it back on
 * delete (the cleanup finalizer goes); `kcm nodes delete-instance` makes
 * cloud-node-lifecycle-controller delete the Node. kcm up only (the local
 * cloud is kcm's).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { kcmBin, waitFor, type KcmProcess } from './harness.js';
import { onRealCluster, startCluster } from './cluster.js';

interface NodeView {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { providerID?: string; taints?: { key: string; effect: string }[] };
}
interface ServiceView {
  metadata: { finalizers?: string[] };
  status?: { loadBalancer?: { ingress?: { ip?: string }[] } };
}

const runKcm = (args: string[]) => spawnSync(process.execPath, [kcmBin, ...args], { encoding: 'utf8', timeout: 20_000 });

describe('cloud controllers against kcm up (local cloud provider)', { skip: onRealCluster ? 'the local cloud provider is kcm up\'s' : false }, () => {
  let kcm: KcmProcess;
  before(async () => {
    kcm = await startCluster(['--node-monitor-period=1s', '--node-monitor-grace-period=15s', '--load-balancer-ip-range=127.0.0.100-127.0.0.101']);
    await waitFor(() => /kcm up: ready in \d+ ms/.test(kcm.stdout()), 30_000, `kcm up to report ready (stdout: ${kcm.stdout()})`);
  });
  after(async () => {
    await kcm?.stop();
  });

  it('initialises nodes: providerID, zone, region and instance-type labels, no uninitialized taint', async () => {
    const nodes = await waitFor(async () => {
      const items = (JSON.parse(await kcm.kubectlOk(['get', 'nodes', '-o', 'json'])) as { items: NodeView[] }).items;
      return items.length === 3 && items.every((n) => n.spec.providerID && !n.spec.taints?.some((t) => t.key === 'node.cloudprovider.kubernetes.io/uninitialized')) ? items : undefined;
    }, 15_000, 'three initialised nodes');
    for (const n of nodes) {
      assert.equal(n.spec.providerID, `kcm://${n.metadata.name}`);
      assert.match(n.metadata.labels?.['topology.kubernetes.io/zone'] ?? '', /^kcm-zone-[abc]$/);
      assert.equal(n.metadata.labels?.['topology.kubernetes.io/region'], 'kcm-local');
      assert.equal(n.metadata.labels?.['node.kubernetes.io/instance-type'], 'kcm.standard');
    }
    assert.equal(new Set(nodes.map((n) => n.metadata.labels?.['topology.kubernetes.io/zone'])).size, 3, 'spread over three zones');
  });

  it('gives a LoadBalancer Service an EXTERNAL-IP within seconds and returns it to the pool on delete', async () => {
    await kcm.kubectlOk(['create', 'deployment', 'web', '--image=nginx']);
    await kcm.kubectlOk(['expose', 'deploy', 'web', '--type=LoadBalancer', '--port', '80']);
    const line = await waitFor(async () => {
      const out = await kcm.kubectlOk(['get', 'svc', 'web', '--no-headers']);
      return /127\.0\.0\.100/.test(out) ? out : undefined;
    }, 10_000, 'EXTERNAL-IP 127.0.0.100');
    assert.match(line, /^web\s+LoadBalancer\s+\S+\s+127\.0\.0\.100\s+80:\d+\/TCP/);
    const svc = JSON.parse(await kcm.kubectlOk(['get', 'svc', 'web', '-o', 'json'])) as ServiceView;
    assert.deepEqual(svc.metadata.finalizers, ['service.kubernetes.io/load-balancer-cleanup']);
    const events = await kcm.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.name=web,involvedObject.kind=Service', '-o', 'jsonpath={.items[*].reason}']);
    assert.match(events, /EnsuringLoadBalancer/);
    assert.match(events, /EnsuredLoadBalancer/);

    // A second one takes the other address; a third finds the pool empty.
    await kcm.kubectlOk(['create', 'service', 'loadbalancer', 'second', '--tcp=80:80']);
    await waitFor(async () => /127\.0\.0\.101/.test(await kcm.kubectlOk(['get', 'svc', 'second', '--no-headers'])), 10_000, 'second gets 127.0.0.101');
    await kcm.kubectlOk(['create', 'service', 'loadbalancer', 'third', '--tcp=80:80']);
    await waitFor(async () => /SyncLoadBalancerFailed/.test(await kcm.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.name=third', '-o', 'jsonpath={.items[*].reason}'])), 10_000, 'third fails: pool empty');

    // Deleting web waits for its balancer (finalizer), then frees 127.0.0.100, which third gets on its retry.
    await kcm.kubectlOk(['delete', 'svc', 'web', '--timeout=20s']);
    assert.match((await kcm.kubectl(['get', 'svc', 'web'])).stderr, /NotFound/);
    await waitFor(async () => /127\.0\.0\.100/.test(await kcm.kubectlOk(['get', 'svc', 'third', '--no-headers'])), 20_000, 'third gets the freed 127.0.0.100');
  });

  it('deletes the Node of an instance deleted with kcm nodes delete-instance', async () => {
    const r = runKcm(['nodes', 'delete-instance', 'kcm-node-2', '--kubeconfig', kcm.kubeconfigPath]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'node/kcm-node-2 instance deleted\n');
    await waitFor(async () => (await kcm.kubectl(['get', 'node', 'kcm-node-2'])).code !== 0, 45_000, 'node kcm-node-2 deleted');
    const events = await kcm.kubectlOk(['get', 'events', '-A', '--field-selector', 'involvedObject.name=kcm-node-2,reason=DeletingNode', '-o', 'jsonpath={.items[*].message}']);
    assert.match(events, /Deleting node kcm-node-2 because it does not exist in the cloud provider/);
    // Not registered again by its (gone) kubelet.
    await new Promise((r) => setTimeout(r, 1500));
    assert.notEqual((await kcm.kubectl(['get', 'node', 'kcm-node-2'])).code, 0);
  });

  it('kcm controller-manager rejects an unknown --cloud-provider with a one-line error', () => {
    const r = runKcm(['controller-manager', '--cloud-provider=nimbus', '--kubeconfig', kcm.kubeconfigPath]);
    assert.equal(r.status, 1);
    assert.equal(r.stderr, 'Error: cloud provider could not be initialized: unknown cloud provider "nimbus"\n');
  });
});
