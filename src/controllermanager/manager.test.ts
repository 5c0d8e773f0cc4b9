import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newRestConfig } from '../client/rest-config.js';
import { newQueueWorker, type QueueWorker } from '../controller/base-controller.js';
import type { Controller } from '../controller/types.js';
import { FakeClock } from '../util/clock/clock.js';
import { newQueue } from '../util/workqueue/queue.js';
import { controllerRestConfig, createClaimingQueues, renderDebugControllers } from './manager.js';

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
