import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { GVR } from '../../api/gvr.js';
import { StatusError, newStatus } from '../../client/errors.js';
import { computeHash } from '../../controller/hash.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newTestContext, type TestContext } from '../replicaset/test-context.js';
import { reportServerVersion } from '../testing/test-context.js';
import { descriptor, newDeploymentController, usesLegacyScalingMessages, type DeploymentController } from './deployment-controller.js';
import { newDeployment, type DeploymentOptions } from './testing.js';
import { REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION, type DeploymentObject, type ReplicaSetObject } from './types.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => setLogOutput(restoreLog));

interface Env {
  t: TestContext;
  c: DeploymentController;
  d(): DeploymentObject;
  rss(): ReplicaSetObject[];
  /** ReplicaSets by name prefix order: sizes keyed by name. */
  sizes(): Record<string, number>;
  sync(): Promise<void>;
  /** Plays the ReplicaSet controller: status.replicas = spec.replicas, `available` of them available (default all). */
  settleRS(available?: (rs: ReplicaSetObject) => number): Promise<void>;
  update(mut: (d: DeploymentObject) => void): Promise<void>;
}

async function env(opts: DeploymentOptions, make: (t: TestContext) => DeploymentController | Promise<DeploymentController> = (t) => newDeploymentController(t.ctx)): Promise<Env> {
  const t = newTestContext();
  t.fake.seed(GVR.deployments, newDeployment(opts));
  const c = await make(t);
  await t.start();
  const e: Env = {
    t,
    c,
    d: () => t.fake.stored<DeploymentObject>(GVR.deployments, 'default', opts.name ?? 'web')!,
    rss: () => t.fake.storedList<ReplicaSetObject>(GVR.replicaSets, 'default'),
    sizes: () => Object.fromEntries(e.rss().map((rs) => [rs.metadata!.name!, rs.spec!.replicas!])),
    async sync() {
      await t.settle();
      await c.sync('default/' + (opts.name ?? 'web'));
      await t.settle();
    },
    async settleRS(available = (rs) => rs.spec?.replicas ?? 0) {
      const res = t.fake.resource<ReplicaSetObject>(GVR.replicaSets).namespace('default');
      for (const rs of e.rss()) {
        const n = rs.spec?.replicas ?? 0;
        await res.updateStatus({
          ...rs,
          status: { replicas: n, readyReplicas: available(rs), availableReplicas: available(rs), observedGeneration: rs.metadata?.generation ?? 0 },
        });
      }
      await t.settle();
    },
    async update(mut) {
      const d = structuredClone(e.d());
      mut(d);
      await t.fake.resource<DeploymentObject>(GVR.deployments).namespace('default').update(d);
      await t.settle();
    },
  };
  return e;
}

describe('deployment controller', () => {
  it('reports a failed replica set create as ReplicaSetCreateError, in the Progressing condition and a Warning event', async () => {
    const e = await env({ replicas: 2 });
    e.t.fake.prependReactor('create', 'replicasets', () => {
      throw new StatusError(newStatus(403, 'Forbidden', 'exceeded quota: q'));
    });
    await e.sync().catch(() => undefined);
    const hash = computeHash(newDeployment().spec!.template, undefined);
    const msg = `Failed to create new replica set "web-${hash}": exceeded quota: q`;
    const progressing = e.d().status?.conditions?.find((c) => c.type === 'Progressing');
    assert.deepEqual([progressing?.status, progressing?.reason, progressing?.message], ['False', 'ReplicaSetCreateError', msg]);
    assert.ok(e.t.events().includes(`Warning ReplicaSetCreateError ${msg}`), e.t.events().join('\n'));
    await e.t.stop();
  });

  it('refuses an empty selector with a SelectingAll warning', async () => {
    const e = await env({ replicas: 1 });
    await e.update((d) => (d.spec!.selector = {}));
    await e.sync();
    assert.equal(e.rss().length, 0);
    assert.ok(e.t.events().includes('Warning SelectingAll This deployment is selecting all pods. A non-empty selector is required.'));
    await e.t.stop();
  });

  it('creates a replica set named after the template hash, labelled with it and sized within maxSurge', async () => {
    const e = await env({ replicas: 3, maxSurge: 1, maxUnavailable: 0 });
    await e.sync();
    const [rs] = e.rss();
    const hash = computeHash(newDeployment().spec!.template, undefined);
    assert.equal(rs!.metadata?.name, `web-${hash}`);
    assert.equal(rs!.metadata?.labels?.['pod-template-hash'], hash);
    assert.equal(rs!.spec?.selector?.matchLabels?.['pod-template-hash'], hash);
    assert.equal(rs!.spec?.template?.metadata?.labels?.['pod-template-hash'], hash);
    assert.equal(rs!.spec?.replicas, 3);
    assert.equal(rs!.metadata?.annotations?.[REVISION_ANNOTATION], '1');
    assert.equal(rs!.metadata?.annotations?.['deployment.kubernetes.io/desired-replicas'], '3');
    assert.equal(rs!.metadata?.annotations?.['deployment.kubernetes.io/max-replicas'], '4');
    assert.deepEqual(rs!.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.controller, r.blockOwnerDeletion]), [['Deployment', 'web', true, true]]);
    assert.deepEqual(e.t.events(), [`Normal ScalingReplicaSet Scaled up replica set web-${hash} from 0 to 3`]);
    const progressing = e.d().status?.conditions?.find((c) => c.type === 'Progressing');
    assert.equal(progressing?.reason, 'NewReplicaSetCreated');
    assert.equal(progressing?.message, `Created new replica set "web-${hash}"`);
    await e.t.stop();
  });

  it('reports a finished rollout as available and complete', async () => {
    const e = await env({ replicas: 2 });
    await e.sync();
    await e.settleRS();
    await e.sync();
    const st = e.d().status!;
    assert.equal(st.replicas, 2);
    assert.equal(st.updatedReplicas, 2);
    assert.equal(st.availableReplicas, 2);
    assert.equal(st.unavailableReplicas, undefined);
    assert.equal(st.observedGeneration, 1);
    const cond = (type: string) => st.conditions?.find((c) => c.type === type);
    assert.deepEqual([cond('Available')?.status, cond('Available')?.reason, cond('Available')?.message], ['True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.']);
    assert.equal(cond('Progressing')?.reason, 'NewReplicaSetAvailable');
    assert.match(cond('Progressing')?.message ?? '', /^ReplicaSet "web-\w+" has successfully progressed\.$/);
    await e.t.stop();
  });

  it('leaves a stuck rolling update at 8 old and 5 new, and scales it proportionally to 20 and 13', async () => {
    const e = await env({ replicas: 10, maxSurge: 3, maxUnavailable: 2 });
    await e.sync();
    await e.settleRS();
    await e.sync();
    const oldName = e.rss()[0]!.metadata!.name!;
    await e.update((d) => (d.spec!.template!.spec!.containers[0]!.image = 'nginx:2'));
    // New pods never become available.
    const stuck = (rs: ReplicaSetObject) => (rs.metadata?.name === oldName ? rs.spec!.replicas! : 0);
    for (let i = 0; i < 5; i++) {
      await e.sync();
      await e.settleRS(stuck);
    }
    const newName = e.rss().find((rs) => rs.metadata?.name !== oldName)!.metadata!.name!;
    assert.deepEqual(e.sizes(), { [oldName]: 8, [newName]: 5 });
    await e.update((d) => (d.spec!.replicas = 30));
    await e.sync();
    assert.deepEqual(e.sizes(), { [oldName]: 20, [newName]: 13 });
    assert.ok(e.t.events().includes(`Normal ScalingReplicaSet Scaled up replica set ${oldName} from 8 to 20`));
    assert.equal(e.rss().find((rs) => rs.metadata?.name === newName)!.metadata?.annotations?.[REVISION_ANNOTATION], '2');
    await e.t.stop();
  });

  it('finishes a rolling update by moving every replica to the new replica set', async () => {
    const e = await env({ replicas: 4, maxSurge: 1, maxUnavailable: 1 });
    await e.sync();
    await e.settleRS();
    await e.update((d) => (d.spec!.template!.spec!.containers[0]!.image = 'nginx:2'));
    for (let i = 0; i < 10; i++) {
      await e.sync();
      await e.settleRS();
      const sizes = Object.values(e.sizes());
      assert.ok(sizes.reduce((a, b) => a + b, 0) <= 5, 'never above replicas + maxSurge');
    }
    const image = (rs: ReplicaSetObject) => rs.spec?.template?.spec?.containers[0]?.image;
    assert.deepEqual(e.rss().map((rs) => [image(rs), rs.spec?.replicas]).sort(), [['nginx:1', 0], ['nginx:2', 4]]);
    assert.equal(e.d().status?.updatedReplicas, 4);
    await e.t.stop();
  });

  it('with Recreate, scales old replica sets to zero and creates the new one only when no old pod is left', async () => {
    const e = await env({ replicas: 3, strategy: 'Recreate' });
    await e.sync();
    await e.settleRS();
    const [old] = e.rss();
    // A pod of the old replica set is still running.
    e.t.fake.seed(GVR.pods, {
      metadata: {
        name: 'old-pod',
        namespace: 'default',
        labels: { app: 'web', 'pod-template-hash': old!.metadata!.labels!['pod-template-hash']! },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: old!.metadata!.name!, uid: old!.metadata!.uid!, controller: true }],
      },
      spec: { containers: [{ name: 'web', image: 'nginx:1' }] },
      status: { phase: 'Running' },
    });
    await e.update((d) => (d.spec!.template!.spec!.containers[0]!.image = 'nginx:2'));
    await e.sync();
    assert.deepEqual(Object.values(e.sizes()), [0], 'old scaled down, no new replica set yet');
    await e.settleRS();
    await e.sync();
    assert.equal(e.rss().length, 1, 'still waiting for the old pod');
    await e.t.fake.resource(GVR.pods).namespace('default').delete('old-pod');
    await e.sync();
    const sizes = e.rss().map((rs) => [rs.spec?.template?.spec?.containers[0]?.image, rs.spec?.replicas]).sort();
    assert.deepEqual(sizes, [['nginx:1', 0], ['nginx:2', 3]]);
    await e.t.stop();
  });

  it('does not roll out a paused deployment but still scales it', async () => {
    const e = await env({ replicas: 2 });
    await e.sync();
    await e.settleRS();
    await e.update((d) => {
      d.spec!.paused = true;
      d.spec!.template!.spec!.containers[0]!.image = 'nginx:2';
    });
    await e.sync();
    assert.equal(e.rss().length, 1);
    const cond = e.d().status?.conditions?.find((c) => c.type === 'Progressing');
    assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['Unknown', 'DeploymentPaused', 'Deployment is paused']);
    await e.update((d) => (d.spec!.replicas = 5));
    await e.sync();
    assert.deepEqual(Object.values(e.sizes()), [5]);
    await e.update((d) => (d.spec!.paused = false));
    await e.sync();
    assert.equal(e.rss().length, 2, 'resuming rolls out');
    assert.equal(e.d().status?.conditions?.find((c) => c.type === 'Progressing')?.reason === 'DeploymentPaused', false);
    await e.t.stop();
  });

  it('marks a stalled rollout ProgressDeadlineExceeded and requeues it for the deadline', async () => {
    const e = await env({ replicas: 2, maxSurge: 1, maxUnavailable: 0, progressDeadlineSeconds: 60 });
    await e.sync();
    await e.settleRS(() => 0);
    await e.sync();
    while (e.c.worker.queue.len() > 0) e.c.worker.queue.done((await e.c.worker.queue.get())!);
    await e.sync();
    await e.t.clock.advance(59_000);
    assert.equal(e.c.worker.queue.len(), 0);
    await e.t.clock.advance(2_100);
    assert.equal(e.c.worker.queue.len(), 1, 'requeued at lastUpdateTime + deadline + 1s');
    await e.sync();
    const cond = e.d().status?.conditions?.find((c) => c.type === 'Progressing');
    assert.equal(cond?.status, 'False');
    assert.equal(cond?.reason, 'ProgressDeadlineExceeded');
    assert.match(cond?.message ?? '', /^ReplicaSet "web-\w+" has timed out progressing\.$/);
    await e.t.stop();
  });

  it('deletes the oldest fully scaled-down replica sets beyond revisionHistoryLimit', async () => {
    const e = await env({ replicas: 1, maxSurge: 1, maxUnavailable: 0, revisionHistoryLimit: 1 });
    for (const image of ['nginx:1', 'nginx:2', 'nginx:3']) {
      await e.update((d) => (d.spec!.template!.spec!.containers[0]!.image = image));
      for (let i = 0; i < 4; i++) {
        await e.sync();
        await e.settleRS();
      }
    }
    await e.sync();
    const images = e.rss().map((rs) => rs.spec?.template?.spec?.containers[0]?.image).sort();
    assert.deepEqual(images, ['nginx:2', 'nginx:3']);
    await e.t.stop();
  });

  it('reuses the old replica set on undo, raising its revision and keeping the old one in revision-history', async () => {
    const e = await env({ replicas: 1, maxSurge: 1, maxUnavailable: 0 });
    await e.sync();
    await e.settleRS();
    const first = e.rss()[0]!;
    await e.update((d) => (d.spec!.template!.spec!.containers[0]!.image = 'nginx:2'));
    for (let i = 0; i < 4; i++) {
      await e.sync();
      await e.settleRS();
    }
    await e.update((d) => (d.spec!.template!.spec!.containers[0]!.image = 'nginx:1'));
    for (let i = 0; i < 4; i++) {
      await e.sync();
      await e.settleRS();
    }
    assert.equal(e.rss().length, 2, 'no third replica set');
    const again = e.rss().find((rs) => rs.metadata?.uid === first.metadata?.uid)!;
    assert.equal(again.spec?.replicas, 1);
    assert.equal(again.metadata?.annotations?.[REVISION_ANNOTATION], '3');
    assert.equal(again.metadata?.annotations?.[REVISION_HISTORY_ANNOTATION], '1');
    await e.t.stop();
  });

  it('adopts an orphaned replica set with the same template instead of creating another', async () => {
    const e = await env({ replicas: 2 });
    await e.sync();
    const [rs] = e.rss();
    // kubectl delete --cascade=orphan: the owner reference is gone.
    await e.t.fake.resource<ReplicaSetObject>(GVR.replicaSets).namespace('default').patch(rs!.metadata!.name!, 'merge', { metadata: { ownerReferences: null } });
    await e.sync();
    const after = e.rss();
    assert.equal(after.length, 1);
    assert.equal(after[0]!.metadata?.uid, rs!.metadata?.uid);
    assert.equal(after[0]!.metadata?.ownerReferences?.[0]?.uid, e.d().metadata?.uid);
    await e.t.stop();
  });

  it('bumps collisionCount when another object holds the replica set name', async () => {
    const t = newTestContext();
    const d = newDeployment({ replicas: 1 });
    const hash = computeHash(d.spec!.template, undefined);
    t.fake.seed(GVR.replicaSets, {
      metadata: { name: `web-${hash}`, namespace: 'default', labels: { other: 'x' } },
      spec: { replicas: 0, selector: { matchLabels: { other: 'x' } }, template: { metadata: { labels: { other: 'x' } } } },
    });
    t.fake.seed(GVR.deployments, d);
    const c = newDeploymentController(t.ctx);
    await t.start();
    await assert.rejects(c.sync('default/web'), /already exists/);
    await t.settle();
    assert.equal(t.fake.stored<DeploymentObject>(GVR.deployments, 'default', 'web')!.status?.collisionCount, 1);
    await c.sync('default/web');
    await t.settle();
    const names = t.fake.storedList<ReplicaSetObject>(GVR.replicaSets, 'default').map((rs) => rs.metadata?.name);
    assert.ok(names.includes(`web-${computeHash(d.spec!.template, 1)}`));
    await t.stop();
  });

  it('gives the new replica set the adopted one\'s int64 revision plus one, beyond 2^53', async () => {
    const t = newTestContext();
    // What the RollingUpdateDeployment conformance test does: an orphan with a huge revision.
    t.fake.seed(GVR.replicaSets, {
      metadata: { name: 'web-old', namespace: 'default', labels: { app: 'web' }, annotations: { [REVISION_ANNOTATION]: '3546343826724305832' } },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'httpd:2' }] } } },
      status: { replicas: 1, availableReplicas: 1 },
    });
    t.fake.seed(GVR.deployments, newDeployment({ replicas: 1 }));
    const c = newDeploymentController(t.ctx);
    await t.start();
    await c.sync('default/web');
    await t.settle();
    const rss = t.fake.storedList<ReplicaSetObject>(GVR.replicaSets, 'default');
    const created = rss.find((rs) => rs.metadata?.name !== 'web-old')!;
    assert.equal(created.metadata?.annotations?.[REVISION_ANNOTATION], '3546343826724305833');
    assert.equal(rss.find((rs) => rs.metadata?.name === 'web-old')!.metadata?.ownerReferences?.[0]?.kind, 'Deployment', 'adopted');
    // The fake's status writes keep only status: read the revision off the written object.
    const statusWrites = t.fake.actions().filter((a) => a.resource === 'deployments' && a.subresource === 'status');
    assert.equal((statusWrites.at(-1)?.object as DeploymentObject | undefined)?.metadata?.annotations?.[REVISION_ANNOTATION], '3546343826724305833');
    await t.stop();
  });

  it('rolls back to the previous revision on deprecated.deployment.rollback.to and clears the request', async () => {
    const e = await env({ replicas: 1, maxSurge: 1, maxUnavailable: 0 });
    await e.sync();
    await e.settleRS();
    await e.update((d) => {
      d.spec!.template!.spec!.containers[0]!.image = 'nginx:2';
      d.metadata!.annotations = { ...d.metadata!.annotations, 'kubernetes.io/change-cause': 'v2' };
    });
    for (let i = 0; i < 4; i++) {
      await e.sync();
      await e.settleRS();
    }
    await e.update((d) => (d.metadata!.annotations = { ...d.metadata!.annotations, 'deprecated.deployment.rollback.to': '0' }));
    await e.sync();
    const d = e.d();
    assert.equal(d.spec?.template?.spec?.containers[0]?.image, 'nginx:1');
    assert.equal(d.spec?.template?.metadata?.labels?.['pod-template-hash'], undefined);
    assert.equal(d.metadata?.annotations?.['deprecated.deployment.rollback.to'], undefined);
    assert.equal(d.metadata?.annotations?.['kubernetes.io/change-cause'], undefined, 'annotations come from the replica set rolled back to');
    assert.ok(e.t.events().includes('Normal DeploymentRollback Rolled back deployment "web" to revision 1'), e.t.events().join('\n'));
    for (let i = 0; i < 4; i++) {
      await e.sync();
      await e.settleRS();
    }
    const first = e.rss().find((rs) => rs.spec?.template?.spec?.containers[0]?.image === 'nginx:1')!;
    assert.equal(first.metadata?.annotations?.[REVISION_ANNOTATION], '3');
    assert.equal(first.spec?.replicas, 1);
    await e.t.stop();
  });

  it('gives up a rollback to a revision that does not exist with a warning', async () => {
    const e = await env({ replicas: 1 });
    await e.sync();
    await e.update((d) => (d.metadata!.annotations = { ...d.metadata!.annotations, 'deprecated.deployment.rollback.to': '9223372036854775807' }));
    await e.sync();
    assert.equal(e.d().metadata?.annotations?.['deprecated.deployment.rollback.to'], undefined);
    assert.ok(e.t.events().includes('Warning DeploymentRollbackRevisionNotFound Unable to find the revision to rollback to.'), e.t.events().join('\n'));
    await e.t.stop();
  });
});

describe('ScalingReplicaSet wording by API server version', () => {
  it('says "from M to N" on current servers and "to N" before 1.22, as that release did', () => {
    assert.equal(usesLegacyScalingMessages({ major: '1', minor: '20' }), true);
    assert.equal(usesLegacyScalingMessages({ major: '1', minor: '21+' }), true);
    assert.equal(usesLegacyScalingMessages({ major: '1', minor: '22' }), false);
    assert.equal(usesLegacyScalingMessages({ major: '1', minor: '33' }), false);
    assert.equal(usesLegacyScalingMessages({ major: '', minor: '' }), false);
  });

  for (const [minor, up, down] of [
    ['20', (rs: string) => `Scaled up replica set ${rs} to 4`, (rs: string) => `Scaled down replica set ${rs} to 2`],
    ['33', (rs: string) => `Scaled up replica set ${rs} from 0 to 4`, (rs: string) => `Scaled down replica set ${rs} from 4 to 2`],
  ] as const) {
    it(`words the events of a create and a scale-down as kube-controller-manager 1.${minor} on a 1.${minor} API server`, async () => {
      const e = await env({ replicas: 4 }, async (t) => {
        reportServerVersion(t.ctx, minor);
        return (await descriptor.create(t.ctx)) as DeploymentController;
      });
      await e.sync();
      const rs = e.rss()[0]!.metadata!.name!;
      await e.settleRS();
      await e.update((d) => (d.spec!.replicas = 2));
      await e.sync();
      assert.deepEqual(e.t.events(), [`Normal ScalingReplicaSet ${up(rs)}`, `Normal ScalingReplicaSet ${down(rs)}`]);
      await e.t.stop();
    });
  }
});
