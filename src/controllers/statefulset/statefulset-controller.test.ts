import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { StatusError, newStatus } from '../../client/errors.js';
import type { KubeObject } from '../../api/types.js';
import { newFakeClient } from '../../controller/testing/fake-client.js';
import { newSharedInformerFactory } from '../../tools/cache/factory.js';
import { newFakeRecorder } from '../../tools/record/fake-recorder.js';
import { FakeClock, rfc3339 } from '../../util/clock/clock.js';
import { newLogger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerOptions } from '../types.js';
import { newStatefulSetController } from './statefulset-controller.js';

type Obj = KubeObject;
const RESOURCES = [GVR.statefulSets, GVR.pods, GVR.controllerRevisions, GVR.persistentVolumeClaims];

function setup(spec: Partial<StatefulSet['spec']> = {}) {
  const clock = new FakeClock();
  const fake = newFakeClient({ clock });
  const informers = newSharedInformerFactory(fake, { clock });
  const recorder = newFakeRecorder();
  const ctx: ControllerContext = {
    client: fake,
    informers,
    clock,
    options: { concurrency: {}, extra: {} } as unknown as ControllerOptions,
    recorder: () => recorder,
    logger: (n) => newLogger(n),
  };
  const controller = newStatefulSetController(ctx);
  const [set] = fake.seed<Obj>(GVR.statefulSets, {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'ns', generation: 1 },
    spec: {
      replicas: 3,
      serviceName: 'web-svc',
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } },
      ...spec,
    },
  });

  /** Copies the fake store into the informer caches (as the watch would), then syncs. */
  const refresh = () => {
    for (const gvr of RESOURCES) informers.forResource(gvr).getIndexer().replace(fake.storedList(gvr), fake.resourceVersion());
  };
  const sync = async () => {
    refresh();
    await controller.sync('ns/web');
    // The API server sets phase Pending on pod creation.
    for (const p of fake.storedList<Obj & Pod>(GVR.pods, 'ns')) {
      if (!p.status?.phase) await fake.resource<Obj & Pod>(GVR.pods).namespace('ns').updateStatus({ ...p, status: { phase: 'Pending' } });
    }
    refresh();
  };
  const pods = () => fake.storedList<Obj & Pod>(GVR.pods, 'ns');
  const podNames = () => pods().map((p) => p.metadata?.name).sort();
  const setStatus = () => fake.stored<Obj & StatefulSet>(GVR.statefulSets, 'ns', 'web')!.status!;
  const ready = async (name: string, readyAt = clock.now()) => {
    const p = fake.stored<Obj & Pod>(GVR.pods, 'ns', name)!;
    await fake.resource<Obj & Pod>(GVR.pods).namespace('ns').updateStatus({
      ...p,
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: rfc3339(readyAt) }] },
    });
  };
  const fail = async (name: string) => {
    const p = fake.stored<Obj & Pod>(GVR.pods, 'ns', name)!;
    await fake.resource<Obj & Pod>(GVR.pods).namespace('ns').updateStatus({ ...p, status: { phase: 'Failed' } });
  };
  const update = async (f: (s: Obj & StatefulSet) => void) => {
    const s = fake.stored<Obj & StatefulSet>(GVR.statefulSets, 'ns', 'web')!;
    f(s);
    await fake.resource<Obj & StatefulSet>(GVR.statefulSets).namespace('ns').update(s);
  };
  const allReady = async () => {
    for (const p of pods()) await ready(p.metadata!.name!);
  };
  return { clock, fake, recorder, controller, set: set!, sync, pods, podNames, setStatus, ready, fail, update, allReady };
}

describe('statefulset controller: OrderedReady', () => {
  it('creates pods one at a time in ascending order and halts on an unready pod', async () => {
    const t = setup();
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0']);
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0'], 'web-0 is not ready: web-1 must wait');
    await t.ready('web-0');
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0', 'web-1']);
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0', 'web-1']);
    await t.ready('web-1');
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0', 'web-1', 'web-2']);
    assert.ok(t.recorder.events.includes('Normal SuccessfulCreate create Pod web-2 in StatefulSet web successful'));
  });

  it('gives pods a stable identity, revision label and the set as controller', async () => {
    const t = setup();
    await t.sync();
    const pod = t.pods()[0]!;
    assert.equal(pod.spec?.hostname, 'web-0');
    assert.equal(pod.spec?.subdomain, 'web-svc');
    assert.equal(pod.metadata?.labels?.['statefulset.kubernetes.io/pod-name'], 'web-0');
    assert.equal(pod.metadata?.labels?.['apps.kubernetes.io/pod-index'], '0');
    assert.equal(pod.metadata?.labels?.['app'], 'web');
    const rev = pod.metadata?.labels?.['controller-revision-hash'];
    assert.ok(rev && rev.startsWith('web-'));
    const ref = pod.metadata?.ownerReferences?.[0];
    assert.deepEqual([ref?.kind, ref?.name, ref?.uid, ref?.controller], ['StatefulSet', 'web', t.set.metadata?.uid, true]);
    const revisions = t.fake.storedList<Obj>(GVR.controllerRevisions, 'ns');
    assert.equal(revisions.length, 1);
    assert.equal(revisions[0]!.metadata?.name, rev);
    assert.equal((revisions[0] as { revision?: number }).revision, 1);
    const data = (revisions[0] as { data?: { spec?: { template?: Record<string, unknown> } } }).data;
    assert.equal(data?.spec?.template?.['$patch'], 'replace');
    assert.equal(t.setStatus().updateRevision, rev);
    assert.equal(t.setStatus().currentRevision, rev);
  });

  it('waits minReadySeconds before creating the next pod', async () => {
    const t = setup({ minReadySeconds: 10 });
    await t.sync();
    await t.ready('web-0');
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0']);
    assert.equal(t.setStatus().readyReplicas, 1);
    assert.equal(t.setStatus().availableReplicas, 0);
    await t.clock.advance(11_000);
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0', 'web-1']);
    assert.equal(t.setStatus().availableReplicas, 1);
  });

  it('scales down in descending order, one pod per sync', async () => {
    const t = setup();
    for (let i = 0; i < 3; i++) {
      await t.sync();
      await t.allReady();
    }
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0', 'web-1', 'web-2']);
    assert.equal(t.setStatus().readyReplicas, 3);
    await t.update((s) => (s.spec!.replicas = 1));
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0', 'web-1']);
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0']);
    assert.ok(t.recorder.events.includes('Normal SuccessfulDelete delete Pod web-2 in StatefulSet web successful'));
  });

  it('deletes a failed pod and recreates it on a later sync', async () => {
    const t = setup({ replicas: 1 });
    await t.sync();
    await t.fail('web-0');
    await t.sync();
    assert.deepEqual(t.podNames(), []);
    assert.ok(t.recorder.events.includes('Warning RecreatingFailedPod StatefulSet ns/web is recreating failed Pod web-0'));
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0']);
  });

  it('recreates a succeeded pod with a Normal RecreatingTerminatedPod event', async () => {
    const t = setup({ replicas: 1 });
    await t.sync();
    const p = t.fake.stored<Obj & Pod>(GVR.pods, 'ns', 'web-0')!;
    await t.fake.resource<Obj & Pod>(GVR.pods).namespace('ns').updateStatus({ ...p, status: { phase: 'Succeeded' } });
    await t.sync();
    assert.ok(t.recorder.events.includes('Normal RecreatingTerminatedPod StatefulSet ns/web is recreating terminated Pod web-0'));
  });
});

describe('statefulset controller: Parallel', () => {
  it('creates every pod at once without waiting for readiness', async () => {
    const t = setup({ podManagementPolicy: 'Parallel' });
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0', 'web-1', 'web-2']);
  });
});

describe('statefulset controller: volume claims', () => {
  const vct = { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] };

  it('creates the claim before the pod and mounts it', async () => {
    const t = setup({ replicas: 1, ...vct });
    await t.sync();
    const creates = t.fake.actions().filter((a) => a.verb === 'create').map((a) => a.resource);
    assert.ok(creates.indexOf('persistentvolumeclaims') < creates.indexOf('pods'));
    const pvc = t.fake.stored<Obj & PersistentVolumeClaim>(GVR.persistentVolumeClaims, 'ns', 'data-web-0')!;
    assert.ok(pvc);
    assert.equal(pvc.metadata?.labels?.['app'], 'web');
    assert.equal(pvc.metadata?.ownerReferences, undefined, 'Retain keeps claims unowned');
    const vol = t.pods()[0]!.spec?.volumes?.find((v) => v.name === 'data');
    assert.equal(vol?.persistentVolumeClaim?.claimName, 'data-web-0');
    assert.deepEqual(t.recorder.events, [
      'Normal SuccessfulCreate create Claim data-web-0 Pod web-0 in StatefulSet web success',
      'Normal SuccessfulCreate create Pod web-0 in StatefulSet web successful',
    ]);
  });

  it('reports a failed claim create on the claim and on the pod, with the upstream texts', async () => {
    const t = setup({ replicas: 1, ...vct });
    t.fake.prependReactor('create', 'persistentvolumeclaims', () => {
      throw new StatusError(newStatus(403, 'Forbidden', 'exceeded quota: q'));
    });
    await t.sync().catch(() => undefined);
    assert.deepEqual(t.podNames(), []);
    assert.deepEqual(t.recorder.events, [
      'Warning FailedCreate create Claim data-web-0 for Pod web-0 in StatefulSet web failed error: exceeded quota: q',
      'Warning FailedCreate create Pod web-0 in StatefulSet web failed error: failed to create PVC data-web-0: exceeded quota: q',
    ]);
  });

  it('keeps claims on scale-down with the default Retain policy', async () => {
    const t = setup({ replicas: 2, podManagementPolicy: 'Parallel', ...vct });
    await t.sync();
    await t.allReady();
    await t.update((s) => (s.spec!.replicas = 1));
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0']);
    assert.ok(t.fake.stored(GVR.persistentVolumeClaims, 'ns', 'data-web-1'));
  });

  it('owns claims by the set when whenDeleted is Delete and by the pod when scaled away with whenScaled Delete', async () => {
    const t = setup({ replicas: 2, podManagementPolicy: 'Parallel', persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' }, ...vct });
    await t.sync();
    await t.sync();
    const pvc1 = t.fake.stored<Obj>(GVR.persistentVolumeClaims, 'ns', 'data-web-1')!;
    assert.deepEqual(pvc1.metadata?.ownerReferences?.map((r) => r.kind), ['StatefulSet']);
    await t.allReady();
    await t.update((s) => (s.spec!.replicas = 1));
    const pod1Uid = t.fake.stored<Obj>(GVR.pods, 'ns', 'web-1')!.metadata?.uid;
    await t.sync();
    const after = t.fake.stored<Obj>(GVR.persistentVolumeClaims, 'ns', 'data-web-1')!;
    assert.deepEqual(after.metadata?.ownerReferences?.map((r) => [r.kind, r.uid]), [['Pod', pod1Uid]]);
    assert.deepEqual(t.podNames(), ['web-0']);
  });
});

describe('statefulset controller: updates', () => {
  async function rolledOut(spec: Partial<StatefulSet['spec']> = {}) {
    const t = setup({ podManagementPolicy: 'Parallel', ...spec });
    await t.sync();
    await t.allReady();
    await t.sync();
    return t;
  }
  const image = (p: Pod) => p.spec?.containers[0]?.image;

  it('rolls out in reverse ordinal order and completes the revision', async () => {
    const t = await rolledOut();
    const oldRev = t.setStatus().currentRevision;
    await t.update((s) => (s.spec!.template!.spec!.containers[0]!.image = 'nginx:2'));
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0', 'web-1'], 'web-2 deleted first');
    assert.notEqual(t.setStatus().updateRevision, oldRev);
    assert.equal(t.setStatus().currentRevision, oldRev);
    for (let i = 0; i < 8; i++) {
      await t.sync();
      await t.allReady();
    }
    await t.sync();
    assert.deepEqual(t.pods().map(image), ['nginx:2', 'nginx:2', 'nginx:2']);
    assert.equal(t.setStatus().currentRevision, t.setStatus().updateRevision);
    assert.equal(t.setStatus().updatedReplicas, 3);
    assert.equal(t.setStatus().currentReplicas, 3);
  });

  it('keeps ordinals below the partition at the old revision', async () => {
    const t = await rolledOut({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } });
    await t.update((s) => (s.spec!.template!.spec!.containers[0]!.image = 'nginx:2'));
    for (let i = 0; i < 6; i++) {
      await t.sync();
      await t.allReady();
    }
    assert.deepEqual(t.pods().map(image), ['nginx:1', 'nginx:1', 'nginx:2']);
    assert.equal(t.setStatus().updatedReplicas, 1);
    assert.equal(t.setStatus().currentReplicas, 2);
    assert.notEqual(t.setStatus().currentRevision, t.setStatus().updateRevision);
  });

  it('deletes up to maxUnavailable pods at once', async () => {
    const t = await rolledOut({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } });
    await t.update((s) => (s.spec!.template!.spec!.containers[0]!.image = 'nginx:2'));
    await t.sync();
    assert.deepEqual(t.podNames(), ['web-0']);
  });

  it('does not replace pods under OnDelete until they are deleted', async () => {
    const t = await rolledOut({ updateStrategy: { type: 'OnDelete' } });
    await t.update((s) => (s.spec!.template!.spec!.containers[0]!.image = 'nginx:2'));
    await t.sync();
    assert.deepEqual(t.pods().map(image), ['nginx:1', 'nginx:1', 'nginx:1']);
    await t.fake.resource(GVR.pods).namespace('ns').delete('web-1');
    await t.sync();
    assert.deepEqual(t.pods().map(image), ['nginx:1', 'nginx:2', 'nginx:1']);
  });

  it('reuses the old revision with a bumped number on rollback and prunes beyond the history limit', async () => {
    const t = await rolledOut({ revisionHistoryLimit: 0 });
    const first = t.setStatus().currentRevision;
    await t.update((s) => (s.spec!.template!.spec!.containers[0]!.image = 'nginx:2'));
    for (let i = 0; i < 8; i++) {
      await t.sync();
      await t.allReady();
    }
    await t.update((s) => (s.spec!.template!.spec!.containers[0]!.image = 'nginx:1'));
    await t.sync();
    assert.equal(t.setStatus().updateRevision, first);
    const rev = t.fake.stored<Obj & { revision: number }>(GVR.controllerRevisions, 'ns', first!)!;
    assert.equal(rev.revision, 3);
    for (let i = 0; i < 8; i++) {
      await t.sync();
      await t.allReady();
    }
    await t.sync();
    assert.deepEqual(t.fake.storedList(GVR.controllerRevisions, 'ns').map((r) => r.metadata?.name), [first]);
  });
});

describe('statefulset controller: adoption', () => {
  it('adopts orphan pods named for the set and ignores others', async () => {
    const t = setup({ replicas: 1 });
    t.fake.seed<Obj>(
      GVR.pods,
      { metadata: { name: 'web-0', namespace: 'ns', labels: { app: 'web' } }, spec: { containers: [] }, status: { phase: 'Pending' } },
      { metadata: { name: 'other', namespace: 'ns', labels: { app: 'web' } }, spec: { containers: [] }, status: { phase: 'Pending' } },
    );
    await t.sync();
    assert.equal(t.fake.stored<Obj>(GVR.pods, 'ns', 'web-0')!.metadata?.ownerReferences?.[0]?.uid, t.set.metadata?.uid);
    assert.equal(t.fake.stored<Obj>(GVR.pods, 'ns', 'other')!.metadata?.ownerReferences, undefined);
  });
});
