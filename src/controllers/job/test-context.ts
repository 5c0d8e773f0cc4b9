/**
 * A ControllerContext over the fake client for the batch controllers' unit
 * tests (job, cronjob, ttl-after-finished): real informers on a FakeClock,
 * fake event recorders, and a helper to wait until the caches caught up.
 */
import { GVR } from '../../api/gvr.js';
import type { KubeObject } from '../../api/types.js';
import { newFakeClient, type FakeClient } from '../../controller/testing/fake-client.js';
import { newSharedInformerFactory, type SharedInformerFactory } from '../../tools/cache/factory.js';
import type { SharedIndexInformer } from '../../tools/cache/interfaces.js';
import { newFakeRecorder, type FakeEventRecorder } from '../../tools/record/fake-recorder.js';
import { FakeClock, flushMicrotasks } from '../../util/clock/clock.js';
import { newLogger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerOptions } from '../types.js';

const KEYS = ['pods', 'jobs', 'cronJobs'] as const;

export interface BatchTestContext {
  ctx: ControllerContext;
  fake: FakeClient;
  clock: FakeClock;
  informers: SharedInformerFactory;
  events(): string[];
  start(): Promise<void>;
  settle(): Promise<void>;
  stop(): Promise<void>;
}

export function newBatchTestContext(start = '2024-01-01T00:00:00Z'): BatchTestContext {
  const clock = new FakeClock(start);
  const fake = newFakeClient({ clock });
  const informers = newSharedInformerFactory(fake, { clock });
  const recorders = new Map<string, FakeEventRecorder>();
  const abort = new AbortController();
  const ctx: ControllerContext = {
    client: fake,
    informers,
    clock,
    options: { concurrency: {}, extra: {} } as unknown as ControllerOptions,
    recorder(component) {
      let r = recorders.get(component);
      if (!r) recorders.set(component, (r = newFakeRecorder()));
      return r;
    },
    logger: (name) => newLogger(name),
  };
  const informerOf = (k: (typeof KEYS)[number]) => informers[k]() as unknown as SharedIndexInformer<KubeObject>;
  const matches = () =>
    KEYS.every((k) => {
      const stored = fake.storedList(GVR[k]);
      const cached = informerOf(k).getStore().list();
      if (stored.length !== cached.length) return false;
      const rv = new Map(cached.map((o) => [`${o.metadata?.namespace}/${o.metadata?.name}`, o.metadata?.resourceVersion]));
      return stored.every((o) => rv.get(`${o.metadata?.namespace}/${o.metadata?.name}`) === o.metadata?.resourceVersion);
    });
  return {
    ctx,
    fake,
    clock,
    informers,
    events: () => [...recorders.values()].flatMap((r) => r.events),
    async start() {
      for (const k of KEYS) informerOf(k);
      informers.start(abort.signal);
      for (let i = 0; i < 1000 && !KEYS.every((k) => informerOf(k).hasSynced()); i++) await flushMicrotasks();
    },
    async settle() {
      for (let i = 0; i < 2000 && !matches(); i++) await flushMicrotasks();
      if (!matches()) throw new Error('informer caches did not catch up with the fake client');
    },
    async stop() {
      abort.abort();
      await informers.shutdown();
    },
  };
}
