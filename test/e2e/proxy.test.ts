/**
 * `kcm proxy` against `kcm up`: the rules kube-proxy would program on a
 * simulated node for a Deployment behind a NodePort Service, from the
 * EndpointSlices the controllers publish, in iptables and IPVS mode.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { kcmBin, waitFor, type KcmProcess } from './harness.js';
import { startCluster } from './cluster.js';
import { serviceExternalChain, servicePortPolicyClusterChain } from '../../src/proxy/chains.js';

let kcm: KcmProcess;
before(async () => {
  kcm = await startCluster(['--nodes', '1']);
});
after(async () => {
  await kcm?.stop();
});

function proxy(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [kcmBin, 'proxy', '--kubeconfig', kcm.kubeconfigPath, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('kcm proxy on kcm up', () => {
  it("prints a node's iptables and IPVS rules for a NodePort Service with the Deployment's pod IPs", async () => {
    await kcm.kubectlOk(['create', 'deployment', 'web', '--image=nginx', '--replicas=2']);
    await kcm.kubectlOk(['expose', 'deployment', 'web', '--port=80', '--type=NodePort']);
    const podIPs = await waitFor(async () => {
      const pods = JSON.parse(await kcm.kubectlOk(['get', 'pods', '-l', 'app=web', '-o', 'json'])).items as Array<{ status: { podIP?: string; conditions?: Array<{ type: string; status: string }> } }>;
      const ready = pods.filter((p) => p.status.podIP && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.length === 2 ? ready.map((p) => p.status.podIP!).sort() : undefined;
    }, 60_000, 'two ready web pods');
    const svc = JSON.parse(await kcm.kubectlOk(['get', 'service', 'web', '-o', 'json'])) as { spec: { clusterIP: string; ports: Array<{ nodePort: number }> } };
    const node = (await kcm.kubectlOk(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).trim();
    const svcChain = servicePortPolicyClusterChain('default/web', 'tcp');

    // The EndpointSlice controller may publish after the pods turn ready: poll until both endpoints are in.
    const rules = await waitFor(async () => {
      const r = await proxy(['--node', node, '--cluster-cidr', '10.244.0.0/16', '--print']);
      assert.equal(r.code, 0, r.stderr);
      return podIPs.every((ip) => r.stdout.includes(`--to-destination ${ip}:80`)) ? r.stdout : undefined;
    }, 30_000, 'both endpoints in the printed rules');
    assert.match(rules, /^\*nat$/m);
    assert.match(rules, new RegExp(`^-A KUBE-SERVICES -m comment --comment "default/web cluster IP" -m tcp -p tcp -d ${svc.spec.clusterIP} --dport 80 -j ${svcChain}$`, 'm'));
    assert.match(rules, new RegExp(`^-A KUBE-NODEPORTS -m comment --comment default/web -m tcp -p tcp --dport ${svc.spec.ports[0]!.nodePort} -j ${serviceExternalChain('default/web', 'tcp')}$`, 'm'));
    assert.match(rules, new RegExp(`^-A ${svcChain} .*-m statistic --mode random --probability 0\\.5000000000 -j KUBE-SEP-`, 'm'));

    const ipvs = await proxy(['--node', node, '--mode', 'ipvs', '--print']);
    assert.equal(ipvs.code, 0, ipvs.stderr);
    assert.match(ipvs.stdout, new RegExp(`^-A -t ${svc.spec.clusterIP}:80 -s rr$`, 'm'));
    for (const ip of podIPs) assert.match(ipvs.stdout, new RegExp(`^-a -t ${svc.spec.clusterIP}:80 -r ${ip}:80 -m -w 1$`, 'm'));

    const missing = await proxy(['--node', 'no-such-node', '--print']);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr.trim(), 'Error: node "no-such-node" not found');
  });
});
