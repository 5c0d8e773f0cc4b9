import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newRestConfig } from '../client/rest-config.js';
import { newQueueWorker, type QueueWorker } from '../controller/base-controller.js';
import type { Controller } from '../controller/types.js';
import { FakeClock } from '../util/clock/clock.js';
import { newQueue } from '../util/workqueue/queue.js';
import { controllerRestConfig, controllerScope, createClaimingQueues, renderDebugControllers } from './manager.js';
import type { Event } from 'kubernetes-types/core/v1.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { newFakeClient } from '../controller/testing/fake-client.js';
import type { ControllerContext } from '../controllers/types.js';
import { newLogger } from '../util/log/logger.js';

describe('per-controller clients', () => {
  it('appends the controller name to the user agent and keeps the manager QPS and burst, as client-go AddUserAgent does for each controller', () => {
    const base = newRestConfig({ host: 'https://127.0.0.1:6443', qps: 20, burst: 30, userAgent: 'kcm-controller-manager/v0.1.0' });
    const c = controllerRestConfig(base, 'replicaset-controller');
    assert.equal(c.userAgent, 'kcm-controller-manager/v0.1.0/replicaset-controller');
    assert.equal(c.qps, 20);
    assert.equal(c.burst, 30);
    assert.equal(c.host, base.host);
    assert.equal(base.userAgent, 'kcm-controller-manager/v0.1.0');
  });
});

describe('per-controller event broadcasters', () => {
  it("writes a controller's events through its own client, not the manager's, with its own recorder per component", async () => {
    const clock = new FakeClock();
    const shared = newFakeClient({ clock });
    const own = newFakeClient({ clock });
    const base = { client: shared, clock, recorder: () => assert.fail('the shared recorder') } as unknown as ControllerContext;
    const { ctx, broadcaster } = controllerScope(base, own, newLogger('test'));
    assert.equal(ctx.client, own);
    ctx.recorder('replicaset-controller').event({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web', namespace: 'ns', uid: 'u1' } }, 'Normal', 'SuccessfulCreate', 'Created pod: web-abcde');
    await broadcaster.whenIdle();
    assert.deepEqual(own.storedList<Event & KubeObject>(GVR.events, 'ns').map((e) => [e.reason, e.source?.component]), [['SuccessfulCreate', 'replicaset-controller']]);
    assert.deepEqual(shared.storedList(GVR.events, 'ns'), []);
    await broadcaster.shutdown();
  });
});

/** A controller shaped like the real ones: its queue is made in its constructor. */
class FakeController implements Controller {
  readonly worker: QueueWorker;
  ok = true;
  constructor(
    readonly name: string,
    clock: FakeClock,
  ) {
    this.worker = newQueueWorker({ name: 'manager-test-widgets', clock, sync: async () => undefined });
  }
  async run(): Promise<void> {}
  healthy(): boolean {
    return this.ok;
  }
}

describe('/debug/controllers', () => {
  it('attributes the queues made while a controller is built to it, and reports its health and the election', async () => {
    const clock = new FakeClock();
    const stray = newQueue<string>({ name: 'manager-test-stray', clock });
    const { controller, queues } = await createClaimingQueues('widget-controller', async () => new FakeController('widget-controller', clock));
    try {
      assert.deepEqual(queues, ['manager-test-widgets']);
      controller.worker.enqueue('ns/a');
      controller.ok = false;
      const election = { lease: 'kube-system/kube-controller-manager', identity: 'host_1', leading: true };
      const doc = renderDebugControllers(clock.now(), [{ name: 'widget-controller', controller }], election);
      assert.equal(doc.time, clock.now());
      assert.deepEqual(doc.controllers, [{ name: 'widget-controller', healthy: false, queues: ['manager-test-widgets'] }]);
      const q = doc.queues.find((x) => x.name === 'manager-test-widgets');
      assert.equal(q?.controller, 'widget-controller');
      assert.equal(q?.depth, 1);
      assert.equal(doc.queues.find((x) => x.name === 'manager-test-stray')?.controller, undefined, 'a queue made before the build is not its');
      assert.deepEqual(doc.leaderElection, election);
      assert.equal('leaderElection' in renderDebugControllers(clock.now(), []), false);
    } finally {
      controller.worker.queue.shutDown();
      stray.shutDown();
    }
  });
});
