import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { startTestEnv, type TestEnv } from '../testing/test-env.js';
import { servicePortPolicyClusterChain } from './chains.js';
import { NodeNotFoundError, runProxy } from './run.js';
import { NODE, node, scenarios } from './testdata/fixtures.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const kcm = join(root, 'bin', 'kcm.js');

function kcmProxy(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [kcm, 'proxy', ...args], { timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('kcm proxy against the embedded API server', { timeout: 60_000 }, () => {
  let env: TestEnv;
  let dir: string;
  before(async () => {
    env = await startTestEnv();
    dir = mkdtempSync(join(tmpdir(), 'kcm-proxy-'));
    writeFileSync(join(dir, 'kubeconfig'), env.kubeconfig);
    const sc = scenarios['clusterip-3-endpoints']!;
    await env.client.resource(GVR.namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } });
    await env.client.resource(GVR.nodes).create(node() as KubeObject);
    await env.client.resource(GVR.services).namespace('ns1').create({ ...sc.service, spec: { ...sc.service.spec, clusterIP: '10.0.0.41', clusterIPs: ['10.0.0.41'] } } as KubeObject);
    await env.client.resource(GVR.endpointSlices).namespace('ns1').create(sc.slices[0]! as unknown as KubeObject);
  });
  after(async () => {
    await env?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('prints the KUBE-SVC chain of a Service once the caches synced', async () => {
    let out = '';
    const sections = await runProxy({
      client: env.client,
      nodeName: NODE,
      mode: 'iptables',
      once: true,
      minSyncPeriodMs: 1000,
      syncPeriodMs: 30_000,
      signal: new AbortController().signal,
      write: (s) => (out += s),
    });
    const svc = servicePortPolicyClusterChain('ns1/svc1:p80', 'tcp');
    assert.equal(svc, 'KUBE-SVC-XPGD46QRK7WJZT7O');
    assert.ok(out.includes(`-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 10.0.0.41 --dport 80 -j ${svc}`), out);
    // The node's pod CIDR is the local traffic detector when --cluster-cidr is not given.
    assert.ok(out.includes('! -s 10.244.1.0/24 -j KUBE-MARK-MASQ'), out);
    assert.deepEqual(
      sections.map((s) => s.name),
      ['filter', 'nat'],
    );
  });

  it('--watch prints the changed rules after an EndpointSlice update', async () => {
    const ac = new AbortController();
    let out = '';
    let syncs = 0;
    const done = runProxy({
      client: env.client,
      nodeName: NODE,
      mode: 'iptables',
      once: false,
      minSyncPeriodMs: 0,
      syncPeriodMs: 60_000,
      signal: ac.signal,
      write: (s) => (out += s),
      onSync: () => {
        syncs++;
      },
    });
    const deadline = Date.now() + 10_000;
    while (syncs < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const sc = scenarios['clusterip-3-endpoints']!;
    const slices = env.client.resource<EndpointSlice & KubeObject>(GVR.endpointSlices).namespace('ns1');
    const cur = await slices.get(sc.slices[0]!.metadata!.name!);
    cur.endpoints = [...(cur.endpoints ?? []), { addresses: ['10.244.3.8'], nodeName: 'node-3', conditions: { ready: true } }];
    await slices.update(cur);
    while (!out.includes('+-A KUBE-SEP-') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    ac.abort();
    await done;
    assert.ok(out.includes('--- nat'), out);
    assert.ok(out.includes('+-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.244.1.5:8080" -m statistic --mode random --probability 0.2500000000'), out);
    assert.ok(out.includes('--to-destination 10.244.3.8:8080'), out);
  });

  it('an unknown node is an error', async () => {
    await assert.rejects(
      runProxy({ client: env.client, nodeName: 'no-such-node', mode: 'iptables', once: true, minSyncPeriodMs: 0, syncPeriodMs: 1000, signal: new AbortController().signal, write: () => {} }),
      NodeNotFoundError,
    );
  });

  it('the command: --print in ipvs mode, an unknown node, bad flags', async () => {
    const ok = await kcmProxy(['--kubeconfig', join(dir, 'kubeconfig'), '--node', NODE, '--mode', 'ipvs', '--print']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(ok.stdout.includes('-A -t 10.0.0.41:80 -s rr'), ok.stdout);
    assert.ok(ok.stdout.includes('add KUBE-CLUSTER-IP 10.0.0.41,tcp:80'), ok.stdout);

    const unknown = await kcmProxy(['--kubeconfig', join(dir, 'kubeconfig'), '--node', 'nope', '--print']);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, 'Error: node "nope" not found\n');

    for (const [args, msg] of [
      [['--mode', 'userspace'], /^Error: invalid argument "userspace" for "--mode" flag/],
      [['--print', '--watch'], /^Error: --print and --watch are mutually exclusive\n$/],
      [['--cluster-cidr', '10.0.0.0/99'], /^Error: invalid argument "10.0.0.0\/99" for "--cluster-cidr" flag/],
      [['--iptables-min-sync-period', 'soon'], /^Error: invalid argument "soon" for "--iptables-min-sync-period" flag/],
      [['--bogus'], /^Error: unknown flag: --bogus\n$/],
      [['--mode', 'ipvs', '--apply'], /^Error: --apply is implemented for --mode=iptables only\n$/],
    ] as const) {
      const r = await kcmProxy([...args]);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, msg);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });
});
