/**
 * PersistentVolume binding and EndpointSlice mirroring with kubectl against
 * `kcm up`: a claim binds to the smallest fitting volume and the volume is
 * Released with Retain once the claim goes; the Endpoints of a selectorless
 * Service are mirrored into an EndpointSlice.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { notServedFor120, startCluster } from './cluster.js';

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
const pv = (name: string, size: string) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', storageClassName: '', hostPath: { path: `/tmp/${name}` } },
});

describe('persistent volumes and endpointslice mirroring with kubectl', { timeout: 120_000 }, () => {
  it('binds a claim to the smallest fitting volume and releases it when the claim is deleted', async () => {
    // The volumes first, until the controller has seen both (it makes them Available): the claim and the
    // volumes come through different watches, so a claim created right behind them may be synced before the
    // controller's volume cache holds the small one, and bind to the big one (upstream's binder as well).
    await kcm.kubectlOk(['apply', '-f', '-'], { input: docs(pv('e2e-big', '10Gi'), pv('e2e-small', '2Gi')) });
    for (const name of ['e2e-big', 'e2e-small']) {
      await waitFor(async () => (await getJson<{ status?: { phase?: string } }>(['get', 'pv', name])).status?.phase === 'Available' || undefined, 30_000, `volume ${name} Available`);
    }
    await kcm.kubectlOk(['apply', '-f', '-'], {
      input: docs({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } },
      }),
    });
    await waitFor(async () => (await getJson<{ status?: { phase?: string } }>(['get', 'pvc', 'data'])).status?.phase === 'Bound' || undefined, 30_000, 'claim Bound');
    const claim = await getJson<{ spec: { volumeName?: string }; metadata: { annotations?: Record<string, string> } }>(['get', 'pvc', 'data']);
    assert.equal(claim.spec.volumeName, 'e2e-small');
    assert.equal(claim.metadata.annotations?.['pv.kubernetes.io/bind-completed'], 'yes');
    await kcm.kubectlOk(['delete', 'pvc', 'data', '--wait=true', '--timeout=30s'], { timeoutMs: 40_000 });
    await waitFor(async () => (await getJson<{ status?: { phase?: string } }>(['get', 'pv', 'e2e-small'])).status?.phase === 'Released' || undefined, 30_000, 'volume Released');
  });

  it('mirrors the Endpoints of a Service without a selector into an EndpointSlice', { skip: notServedFor120('endpointslices') }, async () => {
    await kcm.kubectlOk(['apply', '-f', '-'], {
      input: docs(
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'external' }, spec: { ports: [{ name: 'http', port: 80 }] } },
        { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'external' }, subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ name: 'http', port: 8080 }] }] },
      ),
    });
    const slice = await waitFor(
      async () => {
        const list = await getJson<{ items: Array<{ addressType: string; endpoints?: Array<{ addresses: string[] }>; metadata: { labels?: Record<string, string> } }> }>([
          'get',
          'endpointslices',
          '-l',
          'kubernetes.io/service-name=external,endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io',
        ]);
        return list.items[0];
      },
      30_000,
      'mirrored slice',
    );
    assert.deepEqual(slice.endpoints?.map((e) => e.addresses[0]), ['192.0.2.10']);
  });
});
