import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { FakeClock } from '../../util/clock/clock.js';
import { setLogOutput } from '../../util/log/logger.js';
import { DeletedFinalStateUnknown } from './interfaces.js';
import type { ResourceEventHandler, SharedIndexInformer } from './interfaces.js';
import { newSharedIndexInformer } from './shared-informer.js';
import type { SharedIndexInformerOptions } from './shared-informer.js';
import { NAMESPACE_INDEX, namespaceIndexers } from './store.js';
import { goneStatus, newFakeListerWatcher } from './testing/fake-lister-watcher.js';
import type { FakeListerWatcher } from './testing/fake-lister-watcher.js';

function pod(name: string, ns = 'ns'): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: ns, name } };
}

type Ev = string;
function recorder(events: Ev[], tag = ''): ResourceEventHandler<KubeObject> {
  return {
    onAdd: (o, initial) => events.push(`${tag}add ${o.metadata?.name}${initial ? ' initial' : ''}`),
    onUpdate: (a, b) => events.push(`${tag}update ${b.metadata?.name} ${a.metadata?.resourceVersion}->${b.metadata?.resourceVersion}`),
    onDelete: (o) =>
      events.push(
        o instanceof DeletedFinalStateUnknown ? `${tag}delete-unknown ${o.key}` : `${tag}delete ${o.metadata?.name}`,
      ),
  };
}

interface Setup {
  clock: FakeClock;
  lw: FakeListerWatcher<KubeObject>;
  inf: SharedIndexInformer<KubeObject>;
  ac: AbortController;
  start(): Promise<void>;
  done?: Promise<void>;
}

function setup(objs: KubeObject[], opts: SharedIndexInformerOptions<KubeObject> = {}): Setup {
  const clock = new FakeClock();
  const lw = newFakeListerWatcher<KubeObject>(objs);
  const inf = newSharedIndexInformer<KubeObject>(lw, { clock, indexers: namespaceIndexers(), name: 'pods', ...opts });
  const ac = new AbortController();
  const s: Setup = {
    clock,
    lw,
    inf,
    ac,
    async start() {
      s.done = inf.run(ac.signal);
      await lw.until(() => inf.hasSynced() && lw.watchCalls.length > 0);
    },
  };
  return s;
}

async function stop(s: Setup) {
  s.ac.abort();
  await s.done;
  assert.equal(s.inf.isStopped(), true);
}

let restoreLog: (line: string) => void;
const logged: string[] = [];
before(() => {
  restoreLog = setLogOutput((l) => logged.push(l));
});
after(() => {
  setLogOutput(restoreLog);
});

describe('shared index informer', () => {
  it('delivers the initial list as initial adds and syncs', async () => {
    const s = setup([pod('a'), pod('b')]);
    const events: Ev[] = [];
    const reg = s.inf.addEventHandler(recorder(events));
    assert.equal(s.inf.hasSynced(), false);
    await s.start();
    await s.lw.until(() => reg.hasSynced());
    assert.deepEqual(events.sort(), ['add a initial', 'add b initial']);
    assert.deepEqual(s.inf.getStore().listKeys().sort(), ['ns/a', 'ns/b']);
    assert.equal(s.inf.lastSyncResourceVersion(), s.lw.resourceVersion());
    s.lw.add(pod('c'));
    s.lw.modify(pod('a'));
    s.lw.remove('ns/b');
    await s.lw.until(() => events.length === 5);
    assert.deepEqual(events.slice(2), ['add c', 'update a 101->104', 'delete b']);
    await stop(s);
  });

  it('resolves whenSynced() once the initial list is in the store, for empty and non-empty lists', async () => {
    for (const objs of [[], [pod('a'), pod('b')]]) {
      const s = setup(objs);
      const waiting = s.inf.whenSynced();
      let early: boolean | undefined;
      void waiting.then((v) => (early = v));
      assert.equal(early, undefined);
      s.done = s.inf.run(s.ac.signal);
      assert.equal(await waiting, true);
      assert.equal(s.inf.getStore().listKeys().length, objs.length);
      assert.equal(await s.inf.whenSynced(), true);
      await stop(s);
    }
  });

  it('resolves whenSynced() false when its signal aborts or the informer stops first', async () => {
    const s = setup([pod('a')]);
    s.lw.failLists(new Error('boom'));
    const ac = new AbortController();
    const aborted = s.inf.whenSynced(ac.signal);
    const stopped = s.inf.whenSynced();
    s.done = s.inf.run(s.ac.signal);
    ac.abort();
    assert.equal(await aborted, false);
    s.ac.abort();
    await s.done;
    assert.equal(await stopped, false);
  });

  it('emits a Deleted with a DeletedFinalStateUnknown for objects gone from the server at a relist', async () => {
    const s = setup([pod('a'), pod('b')]);
    const events: Ev[] = [];
    s.inf.addEventHandler(recorder(events));
    await s.start();
    await s.lw.until(() => events.length === 2);
    s.lw.setSilently([pod('a'), pod('c')]);
    s.lw.sendError(goneStatus());
    await s.clock.advance(1600); // the backoff: 800 ms plus up to 100% jitter
    await s.lw.until(() => events.length === 5);
    assert.deepEqual(events.slice(2).sort(), ['add c', 'delete-unknown ns/b', 'update a 101->103']);
    assert.deepEqual(s.inf.getStore().listKeys().sort(), ['ns/a', 'ns/c']);
    await stop(s);
  });

  it('gives a handler added late a synthetic add of every cached object, and reports it synced after', async () => {
    const s = setup([pod('a'), pod('b'), pod('c')]);
    await s.start();
    const events: Ev[] = [];
    const reg = s.inf.addEventHandler(recorder(events));
    assert.equal(reg.hasSynced(), false);
    await s.lw.until(() => reg.hasSynced());
    assert.deepEqual(events.sort(), ['add a initial', 'add b initial', 'add c initial']);
    s.lw.add(pod('d'));
    await s.lw.until(() => events.length === 4);
    assert.equal(events[3], 'add d');
    await stop(s);
  });

  it('does not let a slow handler hold back a fast one', async () => {
    const s = setup([]);
    const fast: Ev[] = [];
    const slow: Ev[] = [];
    s.inf.addEventHandler(recorder(fast));
    s.inf.addEventHandler({
      onAdd: async (o) => {
        await s.clock.sleep(10_000);
        slow.push(`add ${o.metadata?.name}`);
      },
    });
    await s.start();
    for (let i = 0; i < 5; i++) s.lw.add(pod(`p${i}`));
    await s.lw.until(() => fast.length === 5);
    assert.equal(slow.length, 0);
    await s.clock.advance(10_000);
    assert.deepEqual(slow, ['add p0']);
    await s.clock.advance(40_000);
    assert.deepEqual(slow, ['add p0', 'add p1', 'add p2', 'add p3', 'add p4']);
    await stop(s);
  });

  it('delivers resyncs as updates with equal objects, only to handlers that asked for them', async () => {
    const s = setup([pod('a')], { resyncPeriodMs: 10_000 });
    const withResync: Ev[] = [];
    const without: Ev[] = [];
    s.inf.addEventHandler(recorder(withResync));
    s.inf.addEventHandler(recorder(without), 0);
    let same = 0;
    s.inf.addEventHandler({ onUpdate: (a, b) => void (a === b && same++) });
    await s.start();
    await s.lw.until(() => withResync.length === 1 && without.length === 1);
    await s.clock.advance(10_000);
    await s.lw.until(() => withResync.length === 2);
    assert.equal(withResync[1], 'update a 101->101');
    assert.equal(same, 1);
    assert.deepEqual(without, ['add a initial']);
    await stop(s);
  });

  it('honours a per-handler resync period longer than the informer check period', async () => {
    const s = setup([pod('a')], { resyncPeriodMs: 1000 });
    const fastEv: Ev[] = [];
    const slowEv: Ev[] = [];
    s.inf.addEventHandler(recorder(fastEv));
    s.inf.addEventHandler(recorder(slowEv), 5000);
    await s.start();
    await s.clock.advance(5000);
    await s.lw.until(() => fastEv.length === 6);
    assert.equal(slowEv.filter((e) => e.startsWith('update')).length, 1);
    await stop(s);
  });

  it('applies the transform before objects reach the store and the handlers', async () => {
    const s = setup([pod('a')]);
    s.inf.setTransform((o) => ({ ...(o as KubeObject), trimmed: true }));
    let seen: KubeObject | undefined;
    s.inf.addEventHandler({ onAdd: (o) => void (seen = o) });
    await s.start();
    await s.lw.until(() => seen !== undefined);
    assert.equal(seen!.trimmed, true);
    assert.equal(s.inf.getStore().getByKey('ns/a')!.trimmed, true);
    assert.throws(() => s.inf.setTransform((o) => o), /already started/);
    await stop(s);
  });

  it('logs handler exceptions and keeps delivering', async () => {
    const s = setup([]);
    const events: Ev[] = [];
    s.inf.addEventHandler({
      onAdd: (o) => {
        if (o.metadata?.name === 'bad') throw new Error('handler bug');
        events.push(`add ${o.metadata?.name}`);
      },
    });
    await s.start();
    s.lw.add(pod('bad'));
    s.lw.add(pod('good'));
    await s.lw.until(() => events.length === 1);
    assert.deepEqual(events, ['add good']);
    assert.ok(logged.some((l) => l.includes('handler bug')));
    await stop(s);
  });

  it('stops delivering to a removed handler', async () => {
    const s = setup([]);
    const events: Ev[] = [];
    const reg = s.inf.addEventHandler(recorder(events));
    await s.start();
    s.inf.removeEventHandler(reg);
    s.lw.add(pod('a'));
    await s.lw.until(() => s.inf.getStore().listKeys().length === 1);
    assert.deepEqual(events, []);
    await stop(s);
  });

  it('keeps the namespace index current and accepts new indexers', async () => {
    const s = setup([pod('a', 'x'), pod('b', 'y')]);
    await s.start();
    s.inf.addIndexers({ byName: (o) => [o.metadata?.name ?? ''] });
    assert.deepEqual(s.inf.getIndexer().indexKeys('byName', 'b'), ['y/b']);
    s.lw.add(pod('c', 'x'));
    await s.lw.until(() => s.inf.getIndexer().byIndex(NAMESPACE_INDEX, 'x').length === 2);
    await stop(s);
  });

  it('resolves run() once reflector and listeners stopped, refusing handlers afterwards', async () => {
    const s = setup([pod('a')]);
    await s.start();
    await stop(s);
    assert.equal(s.lw.openWatchCount(), 0);
    assert.throws(() => s.inf.addEventHandler({}), /stopped/);
    assert.equal(s.clock.pendingTimers(), 0);
  });
});
