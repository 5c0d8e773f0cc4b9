/** The `kcm apiserver` command itself: flags, help, signals, exit codes. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { kcmBin, startApiServerProcess, startKubectl, waitFor } from './harness.js';

const runKcm = (args: string[]) => spawnSync(process.execPath, [kcmBin, ...args], { encoding: 'utf8', timeout: 20_000 });

describe('kcm apiserver command', () => {
  it('prints grouped help with defaults and exits 0', () => {
    const r = runKcm(['apiserver', '--help']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /Secure serving flags:/);
    assert.match(r.stdout, /--secure-port int +.*\(default 6443\)/);
    assert.match(r.stdout, /--service-cluster-ip-range cidr +.*\(default "10\.0\.0\.0\/24"\)/);
  });

  it('rejects a bad flag value with one line on stderr and exit code 1', () => {
    const r = runKcm(['apiserver', '--secure-port=http']);
    assert.equal(r.status, 1);
    assert.equal(r.stderr, 'Error: invalid argument "http" for "--secure-port" flag: strconv.ParseInt: parsing "http": invalid syntax\n');
    const u = runKcm(['apiserver', '--etcd-servers=x']);
    assert.equal(u.status, 1);
    assert.equal(u.stderr, 'Error: unknown flag: --etcd-servers\n');
  });

  it('prints the kubeconfig hint and exits 0 on SIGTERM', async () => {
    const kcm = await startApiServerProcess();
    try {
      assert.match(kcm.stdout(), new RegExp(`export KUBECONFIG=${kcm.kubeconfigPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; kubectl get ns`));
      assert.match(kcm.stdout(), /^kcm apiserver listening on https:\/\/127\.0\.0\.1:\d+$/m);
      // An open watch must not hold the shutdown up: it is ended, and kubectl sees its stream close.
      const watcher = startKubectl(kcm.kubeconfigPath, ['get', 'namespaces', '-w', '-o', 'name']);
      await waitFor(() => watcher.lines().includes('namespace/default'), 10_000, 'the watch to list namespaces');
      kcm.child.kill('SIGTERM');
      const exit = await Promise.race([kcm.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000))]);
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.match(kcm.stderr(), /shutting down/);
      await watcher.stop();
    } finally {
      await kcm.stop();
    }
  });
});
