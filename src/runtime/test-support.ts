/**
 * Test support for the runtime's unit tests (not a test file): a manager on
 * the fake client and the fake clock, and a client wrapper whose watches
 * can be held back to play a lagging cache.
 */
import type { GroupVersionResource, KubeObject, PartialObjectMetadata, WatchEvent } from '../api/types.js';
import type { Client, ResourceInterface, Watch, WatchOptions } from '../client/interfaces.js';
import { newFakeClient, type FakeClient } from '../controller/testing/fake-client.js';
import { FakeClock, flushMicrotasks } from '../util/clock/clock.js';
import { newManager, type Manager, type ManagerOptions } from './manager.js';

/** Lets the event loop turn until `cond` holds (no clock time passes); throws after `turns`. */
export async function until(cond: () => boolean, what = 'condition', turns = 500): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await flushMicrotasks();
  }
  throw new Error(`${what}: not reached after ${turns} turns`);
}

/** Lets the event loop turn `n` times. */
export async function settle(n = 30): Promise<void> {
  for (let i = 0; i < n; i++) await flushMicrotasks();
}

/**
 * A Client whose watch events for chosen resources are held until released:
 * writes succeed at once but the cache sees them late.
 */
export interface LaggingClient extends Client {
  hold(resource: string): void;
  release(resource: string): void;
}

export function laggingClient(inner: Client): LaggingClient {
  const held = new Set<string>();
  const waiting = new Map<string, Array<() => void>>();
  const wrapWatch = <T extends KubeObject>(resource: string, w: Watch<T>): Watch<T> => ({
    stop: () => w.stop(),
    async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
      for await (const ev of w) {
        while (held.has(resource)) await new Promise<void>((r) => waiting.set(resource, [...(waiting.get(resource) ?? []), r]));
        yield ev;
      }
    },
  });
  const wrap = <T extends KubeObject>(ri: ResourceInterface<T>, resource: string): ResourceInterface<T> =>
    new Proxy(ri, {
      get(target, prop, receiver) {
        if (prop === 'namespace') return (ns: string) => wrap(target.namespace(ns), resource);
        if (prop === 'watch') return async (opts?: WatchOptions, signal?: AbortSignal) => wrapWatch(resource, await target.watch(opts, signal));
        return Reflect.get(target, prop, receiver);
      },
    });
  return {
    resource: <T extends KubeObject = KubeObject>(gvr: GroupVersionResource) => wrap(inner.resource<T>(gvr), gvr.resource),
    metadata: (gvr: GroupVersionResource) => wrap<PartialObjectMetadata>(inner.metadata(gvr), gvr.resource),
    hold: (resource) => held.add(resource),
    release: (resource) => {
      held.delete(resource);
      for (const r of waiting.get(resource) ?? []) r();
      waiting.delete(resource);
    },
  };
}

export interface TestManager {
  clock: FakeClock;
  fake: FakeClient;
  mgr: Manager;
  /** Starts the manager and waits until it leads and its controllers' caches synced. */
  start(): Promise<void>;
  stop(): Promise<void>;
  done: Promise<void> | undefined;
}

export function testManager(opts: Partial<ManagerOptions> & { clock?: FakeClock; fake?: FakeClient; wrap?: (c: Client) => Client } = {}): TestManager {
  const clock = opts.clock ?? new FakeClock();
  const fake = opts.fake ?? newFakeClient({ clock });
  const client = opts.wrap ? opts.wrap(fake) : fake;
  const mgr = newManager({ name: 'test', leaderElection: false, ...opts, client, clock });
  const ac = new AbortController();
  const t: TestManager = {
    clock,
    fake,
    mgr,
    done: undefined,
    async start() {
      t.done = mgr.start(ac.signal);
      await mgr.elected();
      await settle();
    },
    async stop() {
      ac.abort();
      await t.done;
    },
  };
  return t;
}
