/**
 * `kcm dashboard` on a real control plane (the real kube-apiserver v1.20 on
 * etcd, from $KCM_REAL_BIN): with `kcm controller-manager` its controllers
 * view reads /debug/controllers (queues attributed to controllers, keys);
 * with the real kube-controller-manager it falls back to /metrics (client-go's
 * workqueue series). Both authenticate the dashboard through the API server
 * (delegated TokenReview and SubjectAccessReview). Run by `npm run test:real`;
 * skipped without the real binaries.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { freePort, kcmBin, waitFor } from './harness.js';
import { realClusterConfigured, startRealCluster } from './real-cluster.js';
import type { ControllersState, Snapshot } from '../../src/dashboard/protocol.js';

const skip = realClusterConfigured() ? false : 'needs the real kube-apiserver and kube-controller-manager (KCM_REAL_BIN, npm run test:real)';

/** Starts `kcm dashboard` on the cluster and returns the first snapshot and a controllers state for which `done` holds. */
async function dashboardOf(kubeconfig: string, cmUrl: string, done: (c: ControllersState) => boolean): Promise<{ snapshot: Snapshot; controllers: ControllersState }> {
  const child = spawn(process.execPath, [kcmBin, 'dashboard', '--kubeconfig', kubeconfig, '--port', '0', '--controller-manager-url', cmUrl], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const ac = new AbortController();
  try {
    const login = await waitFor(() => /open (http:\S+)/.exec(out)?.[1], 20_000, `the dashboard URL (stdout: ${out})`);
    const cookie = (await fetch(login, { redirect: 'manual' })).headers.get('set-cookie')!.split(';')[0]!;
    const res = await fetch(login.replace(/login\?.*$/, 'api/stream'), { headers: { Cookie: cookie }, signal: ac.signal });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    let snapshot: Snapshot | undefined;
    let last: ControllersState | undefined;
    const controllers = await waitFor(
      async () => {
        const { value } = await reader.read();
        buf += decoder.decode(value);
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const m = /^event: (\w+)\ndata: (.*)$/m.exec(block);
          if (m?.[1] === 'snapshot') snapshot = JSON.parse(m[2]!) as Snapshot;
          if (m?.[1] === 'controllers') last = JSON.parse(m[2]!) as ControllersState;
        }
        return last && done(last) ? last : undefined;
      },
      60_000,
      'the controllers state',
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last: ${JSON.stringify(last)?.slice(0, 500)}; dashboard stderr: ${err.slice(-2000)}`);
    });
    return { snapshot: snapshot!, controllers };
  } finally {
    ac.abort();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

describe('kcm dashboard on a real kube-apiserver', { skip }, () => {
  for (const cm of ['kcm', 'real'] as const) {
    it(`reads the controllers of ${cm === 'kcm' ? 'kcm controller-manager (/debug/controllers)' : 'the real kube-controller-manager (/metrics)'}`, async () => {
      const port = await freePort();
      const cluster = await startRealCluster({
        controllerManager: cm,
        nodes: 1,
        controllerManagerArgs: [`--secure-port=${port}`, '--bind-address=127.0.0.1'],
        // The kubeconfig is written before the controller manager starts; the flags name its path.
        withKubeconfigFlags: ['--authentication-kubeconfig', '--authorization-kubeconfig'],
      });
      try {
        const { snapshot, controllers } = await dashboardOf(cluster.kubeconfigPath, `https://127.0.0.1:${port}`, (c) => c.ok && c.queues.some((q) => q.name === 'deployment'));
        assert.equal(snapshot.cluster, cluster.url);
        assert.ok(snapshot.objects.some((o) => o.kind === 'Node'));
        assert.equal(controllers.mode, cm === 'kcm' ? 'debug' : 'metrics');
        if (cm === 'kcm') {
          assert.ok(controllers.controllers.some((c) => c.name === 'deployment-controller' && c.queues.includes('deployment')), JSON.stringify(controllers.controllers).slice(0, 500));
          assert.ok(Array.isArray(controllers.queues.find((q) => q.name === 'deployment')!.waiting));
        } else {
          assert.equal(controllers.queues.find((q) => q.name === 'deployment')!.waiting, undefined, 'no keys from /metrics');
        }
      } finally {
        await cluster.stop();
      }
    });
  }
});
