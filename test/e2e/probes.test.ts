/**
 * Probes of the simulated kubelets with kubectl against `kcm up`: the
 * classic liveness demo (a file the container removes) restarts the
 * container with the kubelet's Unhealthy and Killing events, and a readiness
 * failure forced with the `probe.kcm.dev/fail` annotation takes the pod's
 * endpoint out of service in the Service's EndpointSlice until it is removed.
 * Timings are shortened (1 s periods, small grace periods) as upstream's
 * node e2e tests do.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { notServedFor120, startCluster } from './cluster.js';

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
const apply = (...objs: unknown[]) => kcm.kubectlOk(['apply', '--validate=false', ...ns, '-f', '-'], { input: objs.map((o) => JSON.stringify(o)).join('\n') });
async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse(await kcm.kubectlOk(['get', ...ns, '-o', 'json', ...args])) as T;
}

interface PodJson {
  status?: { containerStatuses?: Array<{ restartCount: number; ready: boolean; lastState?: { terminated?: { exitCode: number; reason: string } } }> };
}
interface EventJson {
  items: Array<{ reason: string; message: string; type: string }>;
}

describe('probes e2e', { timeout: 120_000 }, () => {
  it('restarts the liveness demo container once its health file is gone, with Unhealthy and Killing events', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'liveness-exec', labels: { test: 'liveness' } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'liveness',
            image: 'registry.k8s.io/busybox',
            args: ['/bin/sh', '-c', 'touch /tmp/healthy; sleep 3; rm -f /tmp/healthy; sleep 600'],
            livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 2 },
          },
        ],
      },
    });
    const pod = await waitFor(
      async () => {
        const p = await getJson<PodJson>(['pod', 'liveness-exec']);
        return (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? p : undefined;
      },
      40_000,
      'liveness-exec restarted',
      500,
    );
    const last = pod.status!.containerStatuses![0]!.lastState!.terminated!;
    assert.equal(last.exitCode, 137, 'the shell ignores SIGTERM and is killed at the end of the grace period');
    assert.equal(last.reason, 'Error');
    const table = await kcm.kubectlOk(['get', ...ns, 'pod', 'liveness-exec', '--no-headers']);
    assert.match(table, /^liveness-exec\s+\S+\s+\S+\s+1 \(/, table);
    const events = await waitFor(
      async () => {
        const ev = await getJson<EventJson>(['events', '--field-selector', 'involvedObject.name=liveness-exec']);
        return ev.items.some((e) => e.reason === 'Killing') ? ev : undefined;
      },
      10_000,
      'Killing event',
      500,
    );
    assert.ok(
      events.items.some((e) => e.type === 'Warning' && e.reason === 'Unhealthy' && e.message.startsWith("Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory")),
      JSON.stringify(events.items.map((e) => `${e.reason}: ${e.message}`)),
    );
    assert.ok(events.items.some((e) => e.reason === 'Killing' && e.message === 'Container liveness failed liveness probe, will be restarted'));
  });

  it('takes a pod out of its Service endpoints while the annotation fails its readiness probe', { skip: notServedFor120('endpointslices') }, async () => {
    await apply(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'ready-web', labels: { app: 'ready-web' } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80 }], readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 1, failureThreshold: 1 } }],
        },
      },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ready-web' }, spec: { selector: { app: 'ready-web' }, ports: [{ port: 80 }] } },
    );
    type Slices = { items: Array<{ endpoints?: Array<{ addresses: string[]; conditions?: { ready?: boolean } }> }> };
    const endpointReady = async () => {
      const s = await getJson<Slices>(['endpointslices', '-l', 'kubernetes.io/service-name=ready-web']);
      const eps = s.items.flatMap((i) => i.endpoints ?? []);
      return eps.length === 0 ? undefined : eps[0]!.conditions?.ready === true;
    };
    await waitFor(async () => (await endpointReady()) === true || undefined, 30_000, 'ready endpoint', 300);
    await kcm.kubectlOk(['annotate', ...ns, 'pod', 'ready-web', 'probe.kcm.dev/fail=web=readiness']);
    await waitFor(async () => (await endpointReady()) === false || undefined, 20_000, 'endpoint not ready', 300);
    const pod = await getJson<PodJson>(['pod', 'ready-web']);
    assert.equal(pod.status!.containerStatuses![0]!.ready, false);
    assert.equal(pod.status!.containerStatuses![0]!.restartCount, 0, 'readiness failures do not restart');
    await kcm.kubectlOk(['annotate', ...ns, 'pod', 'ready-web', 'probe.kcm.dev/fail-']);
    await waitFor(async () => (await endpointReady()) === true || undefined, 20_000, 'endpoint ready again', 300);
  });
});
