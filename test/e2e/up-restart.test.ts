/**
 * `kcm up` restarts its controller side when it dies, and a side that came
 * back and got ready again is, at its next crash, restarted after the
 * initial delay (1 s), not after a delay that kept doubling.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startKcm, waitFor } from './harness.js';

/** The pid of the controller side child of `kcm up` (process isolation). */
async function controllerSidePid(upPid: number): Promise<number | undefined> {
  try {
    const { stdout } = await promisify(execFile)('pgrep', ['-P', String(upPid), '-f', 'controller-side-main']);
    const pid = Number(stdout.trim().split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

describe('kcm up controller side restarts', () => {
  it('restarts a killed controller side, after 1 s each time it had become ready again', async () => {
    const up = await startKcm('up', ['--nodes', '1'], { readyTimeoutMs: 60_000 });
    try {
      const synced = () => (up.stdout().match(/controller-manager caches synced|controller side ready again/g) ?? []).length;
      await waitFor(() => synced() >= 1, 60_000, 'the first caches synced');
      for (let round = 1; round <= 3; round++) {
        const pid = await waitFor(() => controllerSidePid(up.child.pid!), 20_000, 'the controller side process');
        process.kill(pid, 'SIGKILL');
        await waitFor(() => synced() >= round + 1, 60_000, `ready again after kill ${round}`);
      }
      const delays = [...(up.stderr() + up.stdout()).matchAll(/restarting in (\d+) ms/g)].map((m) => Number(m[1]));
      assert.deepEqual(delays, [1000, 1000, 1000]);
      // The cluster works with the restarted controllers.
      await up.kubectlOk(['create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2']);
      await waitFor(async () => (await up.kubectlOk(['get', 'deployment', 'web', '-o', 'jsonpath={.status.readyReplicas}'])) === '2', 60_000, 'the deployment ready');
    } finally {
      await up.stop();
    }
  });
});
