/**
 * A ControllerContext over the fake client for this folder's and the
 * deployment folder's unit tests: real informers on a FakeClock, a fake
 * event recorder per component, and helpers to wait for the caches.
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

export interface TestContext {
  ctx: ControllerContext;
  fake: FakeClient;
  clock: FakeClock;
  informers: SharedInformerFactory;
  /** The recorder of each component, created on first use. */
  recorders: Map<string, FakeEventRecorder>;
  /** All events of all components, as `<type> <reason> <message>`. */
  events(): string[];
  /** Starts the informers registered so far and waits until they synced. */
  start(): Promise<void>;
  /** Waits until every started informer's cache holds exactly what the fake stores. */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

export function newTestContext(start = '2024-01-01T00:00:00Z'): TestContext {
  const clock = new FakeClock(start);
  const fake = newFakeClient({ clock });
  const informers = newSharedInformerFactory(fake, { clock });
  const recorders = new Map<string, FakeEventRecorder>();
  const abort = new AbortController();
  const started: Array<SharedIndexInformer<KubeObject>> = [];
  const ctx: ControllerContext = {
    client: fake,
    informers,
    clock,
    options: { concurrency: {}, extra: {} } as unknown as ControllerOptions,
    recorder(component) {
      let r = recorders.get(component);
      if (!r) {
        r = newFakeRecorder();
        recorders.set(component, r);
      }
      return r;
    },
    logger: (name) => newLogger(name),
  };
  const inSync = (inf: SharedIndexInformer<KubeObject>): boolean => inf.hasSynced();
  return {
    ctx,
    fake,
    clock,
    informers,
    recorders,
    events: () => [...recorders.values()].flatMap((r) => r.events),
    async start() {
      for (const key of ['pods', 'replicaSets', 'replicationControllers', 'deployments'] as const) {
        started.push(informers[key]() as unknown as SharedIndexInformer<KubeObject>);
      }
      informers.start(abort.signal);
      for (let i = 0; i < 1000 && !started.every(inSync); i++) await flushMicrotasks();
      if (!started.every(inSync)) throw new Error('informers did not sync');
    },
    async settle() {
      const keys = ['pods', 'replicaSets', 'replicationControllers', 'deployments'] as const;
      const matches = () =>
        keys.every((key) => {
          const stored = fake.storedList(GVR[key]);
          const cached = informers[key]().getStore().list() as KubeObject[];
          if (stored.length !== cached.length) return false;
          const rv = new Map(cached.map((o) => [`${o.metadata?.namespace}/${o.metadata?.name}`, o.metadata?.resourceVersion]));
          return stored.every((o) => rv.get(`${o.metadata?.namespace}/${o.metadata?.name}`) === o.metadata?.resourceVersion);
        });
      for (let i = 0; i < 2000 && !matches(); i++) await flushMicrotasks();
      if (!matches()) throw new Error('informer caches did not catch up with the fake client');
    },
    async stop() {
      abort.abort();
      await informers.shutdown();
    },
  };
}
