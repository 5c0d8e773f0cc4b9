/**
 * Graceful pod deletion by the simulated kubelets with kubectl against
 * `kcm up`: a pod whose command is `sleep` (which ignores SIGTERM as PID 1)
 * with a preStop hook stays Terminating for its grace period and is then
 * gone; a server without a command ends right after its preStop hook.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { startCluster } from './cluster.js';

let kcm: KcmProcess;
before(async () => {
  kcm = await startCluster();
  // Pods are refused until the serviceaccount controller made the namespace's default account.
  await waitFor(async () => (await kcm.kubectl(['get', 'serviceaccount', 'default', '-n', 'default'])).code === 0 || undefined, 30_000, 'default service account', 200);
});
after(async () => {
  await kcm?.stop();
});

const ns = ['-n', 'default'];
const apply = (obj: unknown) => kcm.kubectlOk(['apply', '--validate=false', ...ns, '-f', '-'], { input: JSON.stringify(obj) });

function pod(name: string, grace: number, container: Record<string, unknown>) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { terminationGracePeriodSeconds: grace, containers: [{ name: 'c', lifecycle: { preStop: { exec: { command: ['sh', '-c', 'sleep 3'] } } }, ...container }] },
  };
}

async function running(name: string): Promise<void> {
  await waitFor(
    async () => {
      const p = JSON.parse(await kcm.kubectlOk(['get', ...ns, 'pod', name, '-o', 'json'])) as { status?: { phase?: string } };
      return p.status?.phase === 'Running' || undefined;
    },
    30_000,
    `${name} running`,
    300,
  );
}

/** Deletes the pod without waiting and returns how long it stayed (it must show Terminating meanwhile). */
async function deleteAndTime(name: string): Promise<number> {
  const t0 = Date.now();
  await kcm.kubectlOk(['delete', ...ns, 'pod', name, '--wait=false']);
  const table = await kcm.kubectlOk(['get', ...ns, 'pod', name, '--no-headers']);
  assert.match(table, /Terminating/, table);
  await waitFor(
    async () => {
      const r = await kcm.kubectl(['get', ...ns, 'pod', name, '--no-headers']);
      return (r.code !== 0 && /NotFound/.test(r.stderr)) || undefined;
    },
    20_000,
    `${name} gone`,
    200,
  );
  return Date.now() - t0;
}

describe('termination e2e', { timeout: 120_000 }, () => {
  it('keeps a sleeping pod with a preStop "sleep 3" Terminating for its grace period, then removes it', async () => {
    await apply(pod('sleeper', 5, { image: 'busybox', command: ['sleep', '3600'] }));
    await running('sleeper');
    const ms = await deleteAndTime('sleeper');
    assert.ok(ms >= 4_500, `gone after ${ms} ms, before the 5 s grace period`);
    assert.ok(ms < 12_000, `gone after ${ms} ms`);
  });

  it('removes a server pod right after its preStop hook (it ends at SIGTERM)', async () => {
    await apply(pod('server', 30, { image: 'nginx' }));
    await running('server');
    const ms = await deleteAndTime('server');
    assert.ok(ms >= 2_500, `gone after ${ms} ms, before the 3 s preStop hook ended`);
    assert.ok(ms < 10_000, `gone after ${ms} ms: it should not wait for the 30 s grace period`);
  });
});

describe('kubelet admission e2e', { timeout: 60_000 }, () => {
  it('rejects a pod bound to a node whose host port is taken: Failed, NodePorts, an event', async () => {
    const bound = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName: 'kcm-node-0', containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80, hostPort: 18080 }] }] },
    });
    await apply(bound('port-first'));
    await running('port-first');
    await apply(bound('port-second'));
    const rejected = await waitFor(
      async () => {
        const p = JSON.parse(await kcm.kubectlOk(['get', ...ns, 'pod', 'port-second', '-o', 'json'])) as { status?: { phase?: string; reason?: string; message?: string } };
        return p.status?.phase === 'Failed' ? p.status : undefined;
      },
      20_000,
      'port-second rejected',
      300,
    );
    assert.equal(rejected.reason, 'NodePorts');
    assert.equal(rejected.message, "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports");
    const events = await kcm.kubectlOk(['get', ...ns, 'events', '--field-selector', 'involvedObject.name=port-second', '-o', 'jsonpath={range .items[*]}{.type} {.reason}: {.message}{"\\n"}{end}']);
    assert.match(events, /^Warning NodePorts: Predicate NodePorts failed: node\(s\) didn't have free ports for the requested pod ports$/m);
    await kcm.kubectlOk(['delete', ...ns, 'pod', 'port-first', 'port-second', '--wait=false']);
  });
});

describe('image pulls e2e', { timeout: 60_000 }, () => {
  it('fails to pull an image that cannot exist, as upstream e2e tests use (webserver:404): ErrImagePull, then ImagePullBackOff', async () => {
    await apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'missing-image' }, spec: { containers: [{ name: 'web', image: 'webserver:404' }] } });
    const waiting = await waitFor(
      async () => {
        const p = JSON.parse(await kcm.kubectlOk(['get', ...ns, 'pod', 'missing-image', '-o', 'json'])) as { status?: { containerStatuses?: Array<{ state?: { waiting?: { reason?: string } } }> } };
        const reason = p.status?.containerStatuses?.[0]?.state?.waiting?.reason;
        return reason === 'ImagePullBackOff' ? reason : undefined;
      },
      20_000,
      'ImagePullBackOff',
      300,
    );
    assert.equal(waiting, 'ImagePullBackOff');
    const events = await kcm.kubectlOk(['get', ...ns, 'events', '--field-selector', 'involvedObject.name=missing-image', '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}']);
    assert.match(events, /^Failed: Failed to pull image "webserver:404": failed to pull and unpack image "docker\.io\/library\/webserver:404": .*: not found$/m);
    assert.match(events, /^Failed: Error: ErrImagePull$/m);
    await kcm.kubectlOk(['delete', ...ns, 'pod', 'missing-image', '--wait=false']);
  });
});
