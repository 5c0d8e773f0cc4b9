/**
 * Node lifecycle, taint eviction and node IPAM against `kcm up`, with kubectl:
 * nodes lose the API server's not-ready taint and get a podCIDR; a node
 * whose heartbeat is paused (`kcm.dev/heartbeat: paused`) goes Unknown with
 * the unreachable NoExecute taint, its tolerating pod is evicted after its
 * tolerationSeconds, and resuming clears the taints.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { onRealCluster, startCluster } from './cluster.js';

interface NodeView {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { taints?: { key: string; effect: string }[]; podCIDR?: string; podCIDRs?: string[] };
  status: { conditions?: { type: string; status: string; reason?: string }[] };
}

async function getNode(kcm: KcmProcess, name: string): Promise<NodeView> {
  return JSON.parse(await kcm.kubectlOk(['get', 'node', name, '-o', 'json'])) as NodeView;
}
async function getNodes(kcm: KcmProcess): Promise<NodeView[]> {
  return (JSON.parse(await kcm.kubectlOk(['get', 'nodes', '-o', 'json'])) as { items: NodeView[] }).items;
}
const readyOf = (n: NodeView) => n.status.conditions?.find((c) => c.type === 'Ready');
const hasTaint = (n: NodeView, key: string, effect: string) => !!n.spec.taints?.some((t) => t.key === key && t.effect === effect);

describe('node lifecycle against kcm up', () => {
  let kcm: KcmProcess;
  before(async () => {
    kcm = await startCluster([
      '--controller-manager-secure-port',
      '0',
      '--node-monitor-period=1s',
      // Above the simulated kubelet's 10 s lease renewal, as upstream requires of a grace period.
      '--node-monitor-grace-period=15s',
      '--allocate-node-cidrs',
      '--cluster-cidr=10.244.0.0/16',
    ]);
    if (!onRealCluster) await waitFor(() => /kcm up: ready in \d+ ms/.test(kcm.stdout()), 30_000, `kcm up to report ready (stdout: ${kcm.stdout()})`);
  });
  after(async () => {
    await kcm?.stop();
  });

  it('removes the not-ready taint from new nodes and gives each a distinct podCIDR', async () => {
    const nodes = await waitFor(async () => {
      const ns = await getNodes(kcm);
      return ns.length === 3 && ns.every((n) => !hasTaint(n, 'node.kubernetes.io/not-ready', 'NoSchedule') && n.spec.podCIDR) ? ns : undefined;
    }, 20_000, 'nodes without the not-ready taint and with a podCIDR');
    const cidrs = nodes.map((n) => n.spec.podCIDR!);
    assert.equal(new Set(cidrs).size, 3);
    for (const n of nodes) {
      assert.match(n.spec.podCIDR!, /^10\.244\.\d+\.0\/24$/);
      assert.deepEqual(n.spec.podCIDRs, [n.spec.podCIDR]);
    }
  });

  it('taints a node whose heartbeat is paused unreachable, evicts its tolerating pod after tolerationSeconds, and clears the taints on resume', async () => {
    const node = 'kcm-node-1';
    const podYaml = `apiVersion: v1
kind: Pod
metadata:
  name: tolerates-5s
spec:
  nodeName: ${node}
  tolerations:
  - key: node.kubernetes.io/unreachable
    operator: Exists
    effect: NoExecute
    tolerationSeconds: 5
  containers:
  - name: c
    image: nginx
`;
    await kcm.kubectlOk(['apply', '--validate=false', '-f', '-'], { input: podYaml });
    await waitFor(async () => JSON.parse(await kcm.kubectlOk(['get', 'pod', 'tolerates-5s', '-o', 'json'])).status.phase === 'Running', 20_000, 'pod running');

    await kcm.kubectlOk(['annotate', 'node', node, 'kcm.dev/heartbeat=paused', '--overwrite']);
    const unknownAt = await waitFor(
      async () => {
        const n = await getNode(kcm, node);
        return readyOf(n)?.status === 'Unknown' && hasTaint(n, 'node.kubernetes.io/unreachable', 'NoExecute') ? Date.now() : undefined;
      },
      60_000,
      'node Unknown with the unreachable NoExecute taint',
      250,
    );
    const n = await getNode(kcm, node);
    assert.equal(readyOf(n)?.reason, 'NodeStatusUnknown');
    assert.ok(hasTaint(n, 'node.kubernetes.io/unreachable', 'NoSchedule'));

    await waitFor(
      async () => {
        const r = await kcm.kubectl(['get', 'pod', 'tolerates-5s', '-o', 'json']);
        if (r.code !== 0) return true;
        return JSON.parse(r.stdout).metadata.deletionTimestamp ? true : undefined;
      },
      20_000,
      'tolerating pod evicted',
      250,
    );
    assert.ok(Date.now() - unknownAt >= 3_000, 'not evicted before its tolerationSeconds');
    const events = await kcm.kubectlOk(['get', 'events', '--field-selector', 'reason=TaintManagerEviction', '-o', 'name']);
    assert.ok(events.trim().length > 0, 'TaintManagerEviction event');

    await kcm.kubectlOk(['annotate', 'node', node, 'kcm.dev/heartbeat-']);
    await waitFor(
      async () => {
        const r = await getNode(kcm, node);
        return readyOf(r)?.status === 'True' && !(r.spec.taints ?? []).some((t) => t.key.startsWith('node.kubernetes.io/')) ? true : undefined;
      },
      30_000,
      'node Ready without taints after resume',
      250,
    );
  });
});
