/**
 * A ControllerContext over the fake client for controllers' unit tests: real
 * informers on a FakeClock, a fake event recorder per component, and helpers
 * to wait until the informer caches caught up with the fake client.
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

/** Informer accessors of the factory that are also GVR constants (pods, jobs, replicaSets, ...). */
export type InformerKey = keyof SharedInformerFactory & keyof typeof GVR;

export interface ControllerTestContextOptions {
  /** The FakeClock's start time. */
  start: string;
  /** The informers start() starts and settle() compares with the fake client. */
  informers: readonly InformerKey[];
  /** start() throws when the informers did not sync (default false: it returns quietly). */
  failUnsynced?: boolean;
}

export interface ControllerTestContext {
  ctx: ControllerContext;
  fake: FakeClient;
  clock: FakeClock;
  informers: SharedInformerFactory;
  /** The recorder of each component, created on first use. */
  recorders: Map<string, FakeEventRecorder>;
  /** All events of all components, as `<type> <reason> <message>`. */
  events(): string[];
  /** Starts the informers (and those registered so far) and waits until they synced. */
  start(): Promise<void>;
  /** Waits until every listed informer's cache holds exactly what the fake stores. */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

export function newControllerTestContext(opts: ControllerTestContextOptions): ControllerTestContext {
  const clock = new FakeClock(opts.start);
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
  const informerOf = (k: InformerKey) => (informers[k] as () => unknown)() as SharedIndexInformer<KubeObject>;
  const synced = () => opts.informers.every((k) => informerOf(k).hasSynced());
  const matches = () =>
    opts.informers.every((k) => {
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
    recorders,
    events: () => [...recorders.values()].flatMap((r) => r.events),
    async start() {
      for (const k of opts.informers) informerOf(k);
      informers.start(abort.signal);
      for (let i = 0; i < 1000 && !synced(); i++) await flushMicrotasks();
      if (opts.failUnsynced && !synced()) throw new Error('informers did not sync');
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

/** Makes `ctx`'s discovery report an API server v1.<minor>, for controllers that act as that release's kube-controller-manager. */
export function reportServerVersion(ctx: ControllerContext, minor: string): void {
  const base = ctx.discovery!;
  const version = { major: '1', minor, gitVersion: `v1.${minor}.0`, gitCommit: '', gitTreeState: 'clean', buildDate: '', goVersion: '', compiler: 'gc', platform: 'linux/amd64' };
  ctx.discovery = { ...base, serverVersion: async () => version };
}
