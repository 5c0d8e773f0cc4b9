/**
 * Deployments with kubectl against `kcm up`: rollout status, Recreate,
 * rollback, pause/resume, restart, scale, progress deadline, orphan delete
 * and re-adoption.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKubectl, waitFor, type KcmProcess } from './harness.js';
import { newJsonStreamDecoder } from '../../src/client/watch-decoder.js';
import { onRealApiServer, onRealControllerManager, startCluster } from './cluster.js';

function manifest(name: string, opts: { replicas?: number; image?: string; strategy?: string; progressDeadlineSeconds?: number } = {}): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: opts.replicas ?? 3,
      selector: { matchLabels: { app: name } },
      ...(opts.strategy ? { strategy: { type: opts.strategy } } : {}),
      ...(opts.progressDeadlineSeconds ? { progressDeadlineSeconds: opts.progressDeadlineSeconds } : {}),
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: opts.image ?? 'nginx:1' }] } },
    },
  });
}

let kcm: KcmProcess;
before(async () => {
  kcm = await startCluster(['--controller-manager-secure-port', '0']);
});
after(async () => {
  await kcm?.stop();
});

async function apply(name: string, opts: Parameters<typeof manifest>[1] = {}) {
  await kcm.kubectlOk(['apply', '--validate=false', '-f', '-'], { input: manifest(name, opts) });
}

async function rsOf(name: string): Promise<Array<{ name: string; uid: string; replicas: number; image: string }>> {
  const out = await kcm.kubectlOk(['get', 'rs', '-l', `app=${name}`, '-o', 'json']);
  return (JSON.parse(out) as { items: Array<{ metadata: { name: string; uid: string }; spec: { replicas: number; template: { spec: { containers: Array<{ image: string }> } } } }> }).items.map(
    (rs) => ({ name: rs.metadata.name, uid: rs.metadata.uid, replicas: rs.spec.replicas, image: rs.spec.template.spec.containers[0]!.image }),
  );
}

const rollout = (name: string) => kcm.kubectlOk(['rollout', 'status', `deploy/${name}`, '--timeout=60s'], { timeoutMs: 70_000 });

describe('deployments with kubectl', { timeout: 300_000 }, () => {
  it('rolls out, updates and rolls back, reusing the old replica set', async () => {
    await apply('roll');
    await rollout('roll');
    await kcm.kubectlOk(['set', 'image', 'deploy/roll', 'app=nginx:2']);
    await rollout('roll');
    const history = await kcm.kubectlOk(['rollout', 'history', 'deploy/roll']);
    assert.match(history, /1\s+<none>[\s\S]*2\s+<none>/);
    const before = await rsOf('roll');
    await kcm.kubectlOk(['rollout', 'undo', 'deploy/roll']);
    await rollout('roll');
    const after = await rsOf('roll');
    assert.equal(after.length, 2, 'undo reuses the old replica set');
    const active = after.find((r) => r.replicas === 3)!;
    assert.equal(active.image, 'nginx:1');
    assert.ok(before.some((r) => r.uid === active.uid));
    await kcm.kubectlOk(['rollout', 'undo', 'deploy/roll', '--to-revision=2']);
    await rollout('roll');
    assert.equal((await rsOf('roll')).find((r) => r.replicas === 3)?.image, 'nginx:2');
  });

  it('recreates: the new replica set scales up only after the old one is gone', async () => {
    await apply('rec', { strategy: 'Recreate', replicas: 2 });
    await rollout('rec');
    await kcm.kubectlOk(['set', 'image', 'deploy/rec', 'app=nginx:2']);
    await rollout('rec');
    const rss = await rsOf('rec');
    assert.deepEqual(rss.map((r) => [r.image, r.replicas]).sort(), [['nginx:1', 0], ['nginx:2', 2]]);
  });

  it('pauses, scales while paused, resumes and restarts', async () => {
    await apply('pz', { replicas: 2 });
    await rollout('pz');
    await kcm.kubectlOk(['rollout', 'pause', 'deploy/pz']);
    await kcm.kubectlOk(['set', 'image', 'deploy/pz', 'app=nginx:2']);
    await kcm.kubectlOk(['scale', 'deploy/pz', '--replicas=4']);
    await waitFor(async () => (await rsOf('pz')).length === 1 && (await rsOf('pz'))[0]!.replicas === 4, 30_000, 'paused scale');
    await kcm.kubectlOk(['rollout', 'resume', 'deploy/pz']);
    await rollout('pz');
    await kcm.kubectlOk(['rollout', 'restart', 'deploy/pz']);
    await rollout('pz');
    assert.equal((await rsOf('pz')).length, 3);
  });

  it('reports ProgressDeadlineExceeded when a rollout cannot progress', async () => {
    await apply('stuck', { replicas: 1, progressDeadlineSeconds: 5 });
    await rollout('stuck');
    // An unschedulable template: the new pod never becomes ready.
    await kcm.kubectlOk(['patch', 'deploy/stuck', '--type=merge', '-p', JSON.stringify({ spec: { template: { spec: { nodeSelector: { nowhere: 'true' } } } } })]);
    const res = await kcm.kubectl(['rollout', 'status', 'deploy/stuck', '--timeout=40s'], { timeoutMs: 50_000 });
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /exceeded its progress deadline/);
  });

  it('never asks for more than replicas + maxSurge pods during rollouts', async () => {
    // 5 replicas, maxSurge 25% -> the replica sets' spec.replicas never add up to more than 7; five updates,
    // the later ones mid-rollout. The bound is the deployment controller's, on its replica sets (upstream's
    // NewRSNewReplicas counts spec.replicas): pods may briefly go over while one replica set controller sync
    // creates the new pods before another deletes the old ones, in kube-controller-manager as in kcm.
    await apply('surge', { replicas: 5 });
    await rollout('surge');
    const rsWatch = startKubectl(kcm.kubeconfigPath, ['get', 'replicasets', '-l', 'app=surge', '--watch', '-o', 'json', '--output-watch-events']);
    const podWatch = startKubectl(kcm.kubeconfigPath, ['get', 'pods', '-l', 'app=surge', '--watch', '-o', 'json', '--output-watch-events']);
    try {
      await waitFor(() => rsWatch.lines().length > 0 && podWatch.lines().length > 0, 10_000, 'the watches');
      for (let i = 2; i <= 6; i++) {
        await kcm.kubectlOk(['set', 'image', 'deploy/surge', `app=nginx:${i}`]);
        if (i % 2 === 0) await rollout('surge');
      }
      await rollout('surge');
    } finally {
      await rsWatch.stop();
      await podWatch.stop();
    }
    type Ev = { type: string; object: { metadata: { name: string; deletionTimestamp?: string }; spec?: { replicas?: number }; status?: { phase?: string } } };
    const decode = (lines: string[]): Ev[] => newJsonStreamDecoder().push(lines.join('\n')).map((t) => JSON.parse(t) as Ev);
    const peakOf = (events: Ev[], count: (objects: Ev['object'][]) => number): number => {
      const live = new Map<string, Ev['object']>();
      let peak = 0;
      for (const e of events) {
        if (e.type === 'DELETED') live.delete(e.object.metadata.name);
        else live.set(e.object.metadata.name, e.object);
        peak = Math.max(peak, count([...live.values()]));
      }
      return peak;
    };
    const rsEvents = decode(rsWatch.lines());
    const podEvents = decode(podWatch.lines());
    assert.ok(rsEvents.length > 5 && podEvents.length > 10, `${rsEvents.length} replica set and ${podEvents.length} pod watch events`);
    const specPeak = peakOf(rsEvents, (sets) => sets.reduce((n, rs) => n + (rs.spec?.replicas ?? 0), 0));
    const podPeak = peakOf(podEvents, (pods) => pods.filter((p) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length);
    assert.ok(podPeak >= 6, `the rollouts surged (peak of ${podPeak} pods)`);
    // kube-controller-manager v1.20 goes over (9 and 10 pods seen in this scenario): it sizes a new ReplicaSet
    // from a cache that may not show its last scale-down yet. On a real etcd-backed kube-apiserver kcm's
    // deployment controller does the same: the cache lag is the server's. On kcm's own server (watch events
    // delivered with the write) kcm keeps the bound.
    if (onRealControllerManager || onRealApiServer) console.log(`peak of ${specPeak} replicas asked and ${podPeak} pods (a real controller manager or API server)`);
    else assert.ok(specPeak <= 7, `the replica sets asked for ${specPeak} pods at once`);
  });

  it('re-adopts the same replica set after an orphaning delete', async () => {
    await apply('orph', { replicas: 2 });
    await rollout('orph');
    const [rs] = await rsOf('orph');
    await kcm.kubectlOk(['delete', 'deploy/orph', '--cascade=orphan']);
    await apply('orph', { replicas: 2 });
    await rollout('orph');
    const after = await rsOf('orph');
    assert.deepEqual(after.map((r) => r.uid), [rs!.uid]);
  });
});
