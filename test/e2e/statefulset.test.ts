/**
 * StatefulSets with kubectl against `kcm up`: ordered scale-up and reverse
 * scale-down, a partitioned rolling update, claims kept after scale-down.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { onRealControllerManager, startCluster } from './cluster.js';

let kcm: KcmProcess;
before(async () => {
  kcm = await startCluster();
});
after(async () => {
  await kcm?.stop();
});

const apply = (obj: unknown) => kcm.kubectlOk(['apply', '--validate=false', '-n', 'default', '-f', '-'], { input: JSON.stringify(obj) });
const getJson = async (args: string[]) => JSON.parse(await kcm.kubectlOk(['get', '-n', 'default', '-o', 'json', ...args]));

function set(name: string, replicas: number, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      // A web server (upstream's e2e sets use httpd) ends at SIGTERM, so ordered deletions do not wait for the grace period.
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } },
      ...extra,
    },
  };
}

/** Pod names of the set (not terminating), sorted by ordinal. */
async function podNames(name: string): Promise<string[]> {
  const list = await getJson(['pods', '-l', `app=${name}`]);
  return (list.items as Array<{ metadata: { name: string; deletionTimestamp?: string } }>)
    .filter((p) => !p.metadata.deletionTimestamp)
    .map((p) => p.metadata.name)
    .sort((a, b) => Number(a.split('-').pop()) - Number(b.split('-').pop()));
}

/** Every observed pod set is a prefix web-0..web-k (ordered creation and deletion). */
function assertPrefix(name: string, names: string[]): void {
  names.forEach((n, i) => assert.equal(n, `${name}-${i}`, `observed ${names.join(',')}`));
}

describe('statefulset e2e', () => {
  it('scales up in order and down in reverse order', async () => {
    // Each pod becomes Ready 2 s after it starts, so the ordered steps are long enough to observe.
    const web = set('web', 3) as { spec: { template: { spec: { containers: Array<Record<string, unknown>> } } } };
    web.spec.template.spec.containers[0]!.readinessProbe = { exec: { command: ['true'] }, initialDelaySeconds: 2 };
    await apply(web);
    const seen: string[][] = [];
    await waitFor(
      async () => {
        const names = await podNames('web');
        seen.push(names);
        const s = await getJson(['statefulset', 'web']);
        return names.length === 3 && s.status?.readyReplicas === 3;
      },
      90_000,
      'three ready pods',
    );
    for (const names of seen) assertPrefix('web', names);
    assert.ok(seen.some((n) => n.length === 1 || n.length === 2), 'creation was observed in steps');
    const pod = await getJson(['pod', 'web-1']);
    assert.equal(pod.spec.hostname, 'web-1');
    assert.equal(pod.spec.subdomain, 'web');
    assert.equal(pod.metadata.labels['statefulset.kubernetes.io/pod-name'], 'web-1');
    // The pod-index label came with Kubernetes 1.28.
    if (!onRealControllerManager) assert.equal(pod.metadata.labels['apps.kubernetes.io/pod-index'], '1');

    await kcm.kubectlOk(['scale', '-n', 'default', 'statefulset', 'web', '--replicas=1']);
    const down: string[][] = [];
    await waitFor(
      async () => {
        const names = await podNames('web');
        down.push(names);
        return names.length === 1;
      },
      90_000,
      'scaled down to one',
    );
    for (const names of down) assertPrefix('web', names);
  });

  it('rolls out only ordinals at or above the partition', async () => {
    await apply(set('part', 3, { podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }));
    await waitFor(async () => (await getJson(['statefulset', 'part'])).status?.readyReplicas === 3, 90_000, 'ready');
    await kcm.kubectlOk(['set', 'image', '-n', 'default', 'statefulset/part', 'c=nginx:2']);
    await waitFor(
      async () => {
        const p = await getJson(['pod', 'part-2']);
        return !p.metadata.deletionTimestamp && p.spec.containers[0].image === 'nginx:2' && p.status?.phase === 'Running';
      },
      90_000,
      'part-2 updated',
    );
    const s = await getJson(['statefulset', 'part']);
    assert.notEqual(s.status.currentRevision, s.status.updateRevision);
    for (const n of ['part-0', 'part-1']) assert.equal((await getJson(['pod', n])).spec.containers[0].image, 'nginx:1');
    await waitFor(async () => (await getJson(['statefulset', 'part'])).status?.updatedReplicas === 1, 30_000, 'updatedReplicas 1');
  });

  it('creates a claim per pod and keeps it after scale-down', async () => {
    await apply(
      set('data', 2, {
        podManagementPolicy: 'Parallel',
        volumeClaimTemplates: [{ metadata: { name: 'vol' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      }),
    );
    await waitFor(async () => (await kcm.kubectl(['get', '-n', 'default', 'pvc', 'vol-data-0', 'vol-data-1'])).code === 0, 60_000, 'claims');
    await kcm.kubectlOk(['scale', '-n', 'default', 'statefulset', 'data', '--replicas=0']);
    await waitFor(async () => (await podNames('data')).length === 0, 60_000, 'pods gone');
    assert.equal((await kcm.kubectl(['get', '-n', 'default', 'pvc', 'vol-data-0', 'vol-data-1'])).code, 0);
  });
});
