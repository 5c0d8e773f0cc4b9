/**
 * Services, Endpoints, EndpointSlices and PodDisruptionBudgets with kubectl
 * against `kcm up`: a Deployment behind a Service gets Endpoints and an
 * EndpointSlice listing its pods' IPs once they are Ready; a PDB's status
 * counts them; PVCs get their protection finalizer.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { manifestVersion, notServedFor120, onRealApiServer, startCluster } from './cluster.js';

let kcm: KcmProcess;
before(async () => {
  kcm = await startCluster(['--controller-manager-secure-port', '0']);
});
after(async () => {
  await kcm?.stop();
});

const docs = (...objs: unknown[]) => objs.map((o) => JSON.stringify(o)).join('\n');

async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse(await kcm.kubectlOk([...args, '-o', 'json'])) as T;
}

interface PodList {
  items: Array<{ status: { podIP?: string; conditions?: Array<{ type: string; status: string }> } }>;
}

describe('services, endpoints and disruption budgets with kubectl', { timeout: 180_000 }, () => {
  it('lists the ready pods of a Deployment in Endpoints and an EndpointSlice, and counts them in a PDB', { skip: notServedFor120('endpointslices') }, async () => {
    await kcm.kubectlOk(['apply', '--validate=false', '-f', '-'], {
      input: docs(
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web' },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: 'web' } },
            template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1', ports: [{ name: 'http', containerPort: 8080 }] }] } },
          },
        },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } },
        { apiVersion: manifestVersion('PodDisruptionBudget'), kind: 'PodDisruptionBudget', metadata: { name: 'web' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } },
      ),
    });
    await kcm.kubectlOk(['rollout', 'status', 'deploy/web', '--timeout=90s'], { timeoutMs: 100_000 });
    const ips = await waitFor(
      async () => {
        const pods = await getJson<PodList>(['get', 'pods', '-l', 'app=web']);
        const ready = pods.items.filter((p) => p.status.podIP && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
        return ready.length === 2 ? ready.map((p) => p.status.podIP!).sort() : undefined;
      },
      30_000,
      'two ready pods with IPs',
    );

    await waitFor(
      async () => {
        const ep = await getJson<{ subsets?: Array<{ addresses?: Array<{ ip: string }>; ports?: Array<{ port: number }> }> }>(['get', 'endpoints', 'web']);
        const got = (ep.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
        return JSON.stringify(got) === JSON.stringify(ips) && ep.subsets?.[0]?.ports?.[0]?.port === 8080 ? true : undefined;
      },
      30_000,
      'endpoints list the pod IPs',
    );

    const slice = await waitFor(
      async () => {
        const list = await getJson<{ items: Array<{ metadata: { name: string }; addressType: string; endpoints?: Array<{ addresses: string[]; conditions: { ready: boolean } }>; ports?: Array<{ port: number }> }> }>(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=web']);
        const s = list.items[0];
        const got = (s?.endpoints ?? []).filter((e) => e.conditions.ready).flatMap((e) => e.addresses).sort();
        return list.items.length === 1 && JSON.stringify(got) === JSON.stringify(ips) ? s : undefined;
      },
      30_000,
      'an endpoint slice lists the pod IPs',
    );
    assert.match(slice.metadata.name, /^web-[a-z0-9]{5}$/);
    assert.equal(slice.addressType, 'IPv4');
    assert.equal(slice.ports?.[0]?.port, 8080);

    const pdb = await waitFor(
      async () => {
        const p = await getJson<{ status?: { currentHealthy?: number; desiredHealthy?: number; expectedPods?: number; disruptionsAllowed?: number; conditions?: Array<{ type: string; status: string; reason: string }> } }>(['get', 'pdb', 'web']);
        return p.status?.currentHealthy === 2 ? p.status : undefined;
      },
      30_000,
      'the PDB counts both pods',
    );
    assert.deepEqual([pdb.expectedPods, pdb.desiredHealthy, pdb.disruptionsAllowed], [2, 1, 1]);
    // Kubernetes 1.20 has no status.conditions on PodDisruptionBudgets.
    if (!onRealApiServer) assert.deepEqual(pdb.conditions?.map((c) => [c.type, c.status, c.reason]), [['DisruptionAllowed', 'True', 'SufficientPods']]);

    await kcm.kubectlOk(['delete', 'service', 'web']);
    await waitFor(async () => ((await kcm.kubectl(['get', 'endpoints', 'web'])).code !== 0 ? true : undefined), 30_000, 'endpoints deleted with the service');
  });

  it('protects a PersistentVolumeClaim with its finalizer', async () => {
    await kcm.kubectlOk(['apply', '--validate=false', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }),
    });
    await waitFor(
      async () => ((await getJson<{ metadata: { finalizers?: string[] } }>(['get', 'pvc', 'data'])).metadata.finalizers ?? []).includes('kubernetes.io/pvc-protection') || undefined,
      30_000,
      'pvc-protection finalizer',
    );
    await kcm.kubectlOk(['delete', 'pvc', 'data', '--wait=false']);
    await waitFor(async () => ((await kcm.kubectl(['get', 'pvc', 'data'])).code !== 0 ? true : undefined), 30_000, 'unused claim deleted');
  });
});
