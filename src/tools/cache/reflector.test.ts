import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { NetworkError } from '../../client/errors.js';
import { FakeClock } from '../../util/clock/clock.js';
import { setLogOutput } from '../../util/log/logger.js';
import type { ListOptions } from '../../client/interfaces.js';
import { newReflector } from './reflector.js';
import type { ReflectorOptions } from './reflector.js';
import { newStore } from './store.js';
import { expiredError, goneStatus, newFakeListerWatcher } from './testing/fake-lister-watcher.js';
import type { FakeListerWatcher } from './testing/fake-lister-watcher.js';

function pod(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'ns', name } };
}

function setup(objs: KubeObject[] = [pod('a'), pod('b')], extra: Partial<ReflectorOptions<KubeObject>> = {}) {
  const clock = new FakeClock();
  const lw = newFakeListerWatcher<KubeObject>(objs);
  const store = newStore();
  let resyncs = 0;
  const origResync = store.resync.bind(store);
  store.resync = () => {
    resyncs++;
    origResync();
  };
  const listTimes: number[] = [];
  const origList = lw.list.bind(lw);
  lw.list = (o: ListOptions) => {
    listTimes.push(clock.now());
    return origList(o);
  };
  const r = newReflector<KubeObject>({ name: 'pods', lw, store, clock, random: () => 0, ...extra });
  const ac = new AbortController();
  const done = r.run(ac.signal);
  return { clock, lw, store, r, ac, done, listTimes, resyncs: () => resyncs, start: clock.now() };
}

async function stop(s: { ac: AbortController; done: Promise<void>; lw: FakeListerWatcher<KubeObject> }) {
  s.ac.abort();
  await s.done;
  assert.equal(s.lw.openWatchCount(), 0);
}

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => {
  setLogOutput(restoreLog);
});

describe('reflector', () => {
  it('lists, replaces the store, then watches from the list resourceVersion with bookmarks and a 5-10 minute timeout', async () => {
    const s = setup();
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    assert.deepEqual(s.store.listKeys().sort(), ['ns/a', 'ns/b']);
    assert.equal(s.lw.listCalls[0]!.resourceVersion, '0');
    assert.equal(s.lw.listCalls[0]!.limit, 500);
    const w = s.lw.watchCalls[0]!;
    assert.equal(w.resourceVersion, s.lw.resourceVersion());
    assert.equal(w.allowWatchBookmarks, true);
    assert.equal(w.timeoutSeconds, 300);
    assert.equal(s.r.lastSyncResourceVersion(), s.lw.resourceVersion());
    await stop(s);
  });

  it('draws the watch timeout between 5 and 10 minutes', async () => {
    const s = setup([], { random: () => 0.5 });
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    assert.equal(s.lw.watchCalls[0]!.timeoutSeconds, 450);
    await stop(s);
  });

  it('applies watch events to the store and tracks their resourceVersion', async () => {
    const s = setup();
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    s.lw.add(pod('c'));
    s.lw.modify({ ...pod('a'), spec: { x: 1 } });
    s.lw.remove('ns/b');
    await s.lw.until(() => s.r.lastSyncResourceVersion() === s.lw.resourceVersion());
    assert.deepEqual(s.store.listKeys().sort(), ['ns/a', 'ns/c']);
    assert.deepEqual(s.store.getByKey('ns/a')!.spec, { x: 1 });
    await stop(s);
  });

  it('follows continue tokens through a paginated list', async () => {
    const objs = Array.from({ length: 1200 }, (_, i) => pod(`p${String(i).padStart(4, '0')}`));
    const s = setup(objs);
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    assert.equal(s.lw.listCalls.length, 3);
    assert.equal(s.lw.listCalls[1]!.continue !== undefined, true);
    assert.equal(s.lw.listCalls[1]!.resourceVersion, undefined);
    assert.equal(s.store.list().length, 1200);
    await stop(s);
  });

  it('falls back to one full list when a continue token expires part-way', async () => {
    const objs = Array.from({ length: 1200 }, (_, i) => pod(`p${i}`));
    const clock = new FakeClock();
    const lw = newFakeListerWatcher<KubeObject>(objs);
    const orig = lw.list.bind(lw);
    lw.list = async (o) => {
      const r = await orig(o);
      lw.expireContinueTokens();
      return r;
    };
    const store = newStore();
    const r = newReflector<KubeObject>({ lw, store, clock, random: () => 0 });
    const ac = new AbortController();
    const done = r.run(ac.signal);
    await lw.until(() => lw.watchCalls.length === 1);
    assert.equal(lw.listCalls.length, 3);
    assert.equal(lw.listCalls[2]!.limit, undefined);
    assert.equal(lw.listCalls[2]!.continue, undefined);
    assert.equal(store.list().length, 1200);
    ac.abort();
    await done;
  });

  it('relists after a 410 ERROR event, and lists from "" when the last resourceVersion is gone too', async () => {
    const s = setup();
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    const lastRV = s.r.lastSyncResourceVersion();
    s.lw.failLists(expiredError());
    s.lw.sendError(goneStatus());
    await s.lw.until(() => s.lw.openWatchCount() === 0);
    assert.equal(s.lw.listCalls.length, 1);
    await s.clock.advance(800);
    await s.lw.until(() => s.lw.watchCalls.length === 2);
    assert.deepEqual(
      s.lw.listCalls.map((c) => c.resourceVersion),
      ['0', lastRV, ''],
    );
    assert.equal(s.lw.listCalls[2]!.limit, 500);
    // The next relist uses the fresh resourceVersion again.
    s.lw.sendError(goneStatus());
    await s.clock.advance(3000);
    await s.lw.until(() => s.lw.watchCalls.length === 3);
    assert.equal(s.lw.listCalls[3]!.resourceVersion, s.lw.resourceVersion());
    await stop(s);
  });

  it('relists when watch() itself fails with 410', async () => {
    const s = setup();
    s.lw.failWatches(expiredError());
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    assert.equal(s.lw.listCalls.length, 1);
    await s.clock.advance(800);
    await s.lw.until(() => s.lw.watchCalls.length === 2);
    assert.equal(s.lw.listCalls.length, 2);
    assert.equal(s.lw.openWatchCount(), 1);
    await stop(s);
  });

  it('retries watch() after a connection error without relisting', async () => {
    const s = setup();
    s.lw.failWatches(new NetworkError('connect ECONNREFUSED'));
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    await s.clock.advance(800);
    await s.lw.until(() => s.lw.watchCalls.length === 2);
    assert.equal(s.lw.listCalls.length, 1);
    await stop(s);
  });

  it('reports whether a watch is open, since when, and the last error', async () => {
    const s = setup();
    assert.equal(s.r.watchStatus().watching, false);
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    assert.deepEqual(s.r.watchStatus(), { watching: true, sinceMs: s.start });
    await s.clock.advance(5000);
    s.lw.failWatches(new NetworkError('connect ECONNREFUSED'));
    s.lw.breakWatches(new NetworkError('connection reset'));
    await s.lw.until(() => s.lw.watchCalls.length === 2);
    const down = s.r.watchStatus();
    assert.equal(down.watching, false);
    assert.equal(down.sinceMs, s.start + 5000);
    assert.match(down.lastError ?? '', /ECONNREFUSED|connection reset/);
    await s.clock.advance(800);
    await s.lw.until(() => s.lw.watchCalls.length === 3);
    assert.deepEqual(s.r.watchStatus(), { watching: true, sinceMs: s.start + 5800 });
    await stop(s);
  });

  it('resumes at once from the resourceVersion of a bookmark after a watch ends', async () => {
    const s = setup();
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    s.lw.bookmark('5000');
    await s.lw.until(() => s.r.lastSyncResourceVersion() === '5000');
    s.lw.endWatches();
    await s.lw.until(() => s.lw.watchCalls.length === 2);
    assert.equal(s.lw.watchCalls[1]!.resourceVersion, '5000');
    assert.equal(s.lw.listCalls.length, 1);
    assert.equal(s.clock.now(), s.start);
    await stop(s);
  });

  it('treats a watch closed at once without events as an error and relists after backoff', async () => {
    const s = setup();
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    s.lw.endWatches();
    await s.clock.tick();
    assert.equal(s.lw.watchCalls.length, 1);
    await s.clock.advance(800);
    await s.lw.until(() => s.lw.watchCalls.length === 2);
    assert.equal(s.lw.listCalls.length, 2);
    await stop(s);
  });

  it('backs off exponentially on repeated list errors, and starts over after a quiet period', async () => {
    const clock = new FakeClock();
    const start = clock.now();
    const lw = newFakeListerWatcher<KubeObject>([]);
    const times: number[] = [];
    const orig = lw.list.bind(lw);
    lw.list = (o) => {
      times.push(clock.now() - start);
      return orig(o);
    };
    const err = new Error('boom');
    lw.failLists(err, err, err, err, err, err, err, err);
    const r = newReflector<KubeObject>({ lw, store: newStore(), clock, random: () => 0 });
    const ac = new AbortController();
    const done = r.run(ac.signal);
    await clock.advance(200_000);
    // 800 ms doubling, capped at 30 s.
    assert.deepEqual(times, [0, 800, 2400, 5600, 12000, 24800, 50400, 80400, 110400]);
    assert.equal(lw.watchCalls.length, 1);
    // After more than two quiet minutes, a failure backs off 800 ms again.
    lw.bookmark();
    await clock.advance(100_000);
    lw.failLists(err);
    lw.sendError(goneStatus());
    await clock.tick();
    const n = times.length;
    await clock.advance(799);
    assert.equal(times.length, n);
    await clock.advance(1);
    assert.equal(times.length, n + 1, 'relisted after 800 ms');
    await clock.advance(1599);
    assert.equal(times.length, n + 1);
    await clock.advance(1);
    assert.equal(times.length, n + 2, 'then after 1600 ms');
    ac.abort();
    await done;
  });

  it('restarts a watch that stays silent past its timeout plus margin', async () => {
    const s = setup();
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    await s.clock.advance(200_000);
    s.lw.bookmark();
    await s.clock.advance(200_000);
    assert.equal(s.lw.watchCalls.length, 1, 'a bookmark keeps the watch alive');
    await s.clock.advance(130_001);
    await s.lw.until(() => s.lw.watchCalls.length === 2);
    assert.equal(s.lw.watches[0]!.isStopped(), true);
    assert.equal(s.lw.watchCalls[1]!.resourceVersion, s.lw.resourceVersion());
    assert.equal(s.lw.listCalls.length, 1);
    await stop(s);
  });

  it('calls resync every period while watching when shouldResync says so', async () => {
    let want = true;
    const s = setup(undefined, { resyncPeriodMs: 1000, shouldResync: () => want });
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    await s.clock.advance(3000);
    assert.equal(s.resyncs(), 3);
    want = false;
    await s.clock.advance(3000);
    assert.equal(s.resyncs(), 3);
    await stop(s);
    assert.equal(s.clock.pendingTimers(), 0);
  });

  it('resolves run() after the signal aborts, with the watch stopped', async () => {
    const s = setup();
    await s.lw.until(() => s.lw.watchCalls.length === 1);
    s.ac.abort();
    await s.done;
    assert.equal(s.lw.watches[0]!.isStopped(), true);
    assert.equal(s.clock.pendingTimers(), 0);
  });
});
