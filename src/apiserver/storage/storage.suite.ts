/**
 * The shared conformance suite of the `Storage` contract. Every backend's test
 * file calls `runStorageSuite` with a factory; a backend passes when it passes
 * this suite unchanged.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { StorageError, type Storage, type StorageEvent, type StorageErrorCode } from './storage.js';

export interface StorageFixture {
  storage: Storage;
  /** Closes the storage and opens the same data again (persistent backends only). */
  reopen?: () => Promise<Storage>;
  /** Frees whatever the fixture created (temp dirs); the suite closes the storage itself. */
  cleanup?: () => Promise<void>;
}

export type StorageFactory = () => Promise<StorageFixture>;

function pod(name: string, ns = 'default', extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { app: 'web' } }, spec: { nodeName: '' }, ...extra };
}

/** Lets microtasks and immediates (replays, group commits) run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function expectStorageError(p: Promise<unknown> | (() => unknown), code: StorageErrorCode): Promise<StorageError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    assert.ok(err instanceof StorageError, `expected StorageError ${code}, got ${String(err)}`);
    assert.equal(err.code, code);
    return err;
  }
  assert.fail(`expected StorageError ${code}, but it succeeded`);
}

function summary(e: StorageEvent): string {
  return `${e.type} ${e.key} ${e.revision}`;
}

interface Collector {
  events: StorageEvent[];
  errors: Error[];
  stop(): void;
}

function collect(s: Storage, prefix: string, from: number): Collector {
  const events: StorageEvent[] = [];
  const errors: Error[] = [];
  const h = s.watch(prefix, from, (e) => events.push(e), (err) => errors.push(err));
  return { events, errors, stop: () => h.stop() };
}

async function withStorage(factory: StorageFactory, fn: (s: Storage, fx: StorageFixture) => Promise<void>): Promise<void> {
  const fx = await factory();
  let current = fx.storage;
  const wrapped: StorageFixture = {
    ...fx,
    storage: fx.storage,
    reopen: fx.reopen
      ? async () => {
          current = await fx.reopen!();
          return current;
        }
      : undefined,
  };
  try {
    await fn(fx.storage, wrapped);
  } finally {
    await current.close();
    await fx.cleanup?.();
  }
}

export function runStorageSuite(name: string, factory: StorageFactory): void {
  const test = (title: string, fn: (s: Storage, fx: StorageFixture) => Promise<void>) => it(title, () => withStorage(factory, fn));

  describe(`Storage contract: ${name}`, () => {
    describe('writes and reads', () => {
      test('starts empty at revision 0', async (s) => {
        assert.equal(s.currentRevision(), 0);
        assert.equal(s.compactedRevision(), 0);
        assert.equal(await s.get('/registry/pods/default/a'), undefined);
        const l = await s.list('/registry/pods/');
        assert.deepEqual(l.items, []);
        assert.equal(l.more, false);
      });

      test('creates an object and returns it with resourceVersion set to the new revision', async (s) => {
        const created = await s.create('/registry/pods/default/a', pod('a'));
        assert.equal(created.revision, 1);
        assert.equal(created.key, '/registry/pods/default/a');
        assert.equal(created.object.metadata?.resourceVersion, '1');
        assert.equal(s.currentRevision(), 1);
        const got = await s.get('/registry/pods/default/a');
        assert.ok(got);
        assert.equal(got.revision, 1);
        assert.deepEqual(got.object, { ...pod('a'), metadata: { ...pod('a').metadata, resourceVersion: '1' } });
      });

      test('ignores a resourceVersion on the object written', async (s) => {
        await s.create('/registry/pods/default/x', pod('x'));
        const obj = pod('a');
        obj.metadata = { ...obj.metadata, resourceVersion: '999' };
        const created = await s.create('/registry/pods/default/a', obj);
        assert.equal(created.object.metadata?.resourceVersion, '2');
        assert.equal((await s.get('/registry/pods/default/a'))?.object.metadata?.resourceVersion, '2');
      });

      test('rejects a create of an existing key with KeyExists and allows it again after delete', async (s) => {
        await s.create('/registry/pods/default/a', pod('a'));
        await expectStorageError(s.create('/registry/pods/default/a', pod('a')), 'KeyExists');
        assert.equal(s.currentRevision(), 1);
        await s.delete('/registry/pods/default/a');
        const again = await s.create('/registry/pods/default/a', pod('a'));
        assert.equal(again.revision, 3);
      });

      test('lets exactly one of two creates of the same key issued together succeed', async (s) => {
        const results = await Promise.allSettled([
          s.create('/registry/pods/default/a', pod('a', 'default', { n: 1 })),
          s.create('/registry/pods/default/a', pod('a', 'default', { n: 2 })),
          s.create('/registry/pods/default/b', pod('b')),
        ]);
        assert.equal(results[0]!.status, 'fulfilled');
        assert.equal(results[1]!.status, 'rejected');
        assert.equal(((results[1] as PromiseRejectedResult).reason as StorageError).code, 'KeyExists');
        assert.equal(results[2]!.status, 'fulfilled');
        assert.equal((await s.get('/registry/pods/default/a'))?.object.n, 1);
        assert.equal(s.currentRevision(), 2);
      });

      test('updates an object, honouring a revision precondition', async (s) => {
        const a = await s.create('/registry/pods/default/a', pod('a'));
        const u1 = await s.update('/registry/pods/default/a', pod('a', 'default', { status: { phase: 'Running' } }), { revision: a.revision });
        assert.equal(u1.revision, 2);
        assert.equal(u1.object.metadata?.resourceVersion, '2');
        const err = await expectStorageError(s.update('/registry/pods/default/a', pod('a'), { revision: a.revision }), 'Conflict');
        assert.equal(err.current?.revision, 2);
        assert.deepEqual(err.current?.object.status, { phase: 'Running' });
        const u2 = await s.update('/registry/pods/default/a', pod('a', 'default', { status: { phase: 'Succeeded' } }));
        assert.equal(u2.revision, 3);
        assert.deepEqual((await s.get('/registry/pods/default/a'))?.object.status, { phase: 'Succeeded' });
      });

      test('rejects an update or delete of a missing key with NotFound', async (s) => {
        await expectStorageError(s.update('/registry/pods/default/a', pod('a')), 'NotFound');
        await expectStorageError(s.delete('/registry/pods/default/a'), 'NotFound');
        await s.create('/registry/pods/default/a', pod('a'));
        await s.delete('/registry/pods/default/a');
        await expectStorageError(s.update('/registry/pods/default/a', pod('a')), 'NotFound');
        await expectStorageError(s.delete('/registry/pods/default/a'), 'NotFound');
        assert.equal(s.currentRevision(), 2);
      });

      test('deletes an object, returning its last state at the deletion revision', async (s) => {
        const a = await s.create('/registry/pods/default/a', pod('a'));
        await s.update('/registry/pods/default/b', pod('b')).catch(() => undefined);
        await expectStorageError(s.delete('/registry/pods/default/a', { revision: a.revision + 5 }), 'Conflict');
        const d = await s.delete('/registry/pods/default/a', { revision: a.revision });
        assert.equal(d.revision, 2);
        assert.equal(d.object.metadata?.name, 'a');
        assert.equal(d.object.metadata?.resourceVersion, '2');
        assert.equal(await s.get('/registry/pods/default/a'), undefined);
      });

      test('never lets a caller change stored state through objects given or returned', async (s) => {
        const input = pod('a');
        const created = await s.create('/registry/pods/default/a', input);
        (input.metadata!.labels as Record<string, string>).app = 'changed-input';
        try {
          (created.object.metadata!.labels as Record<string, string>).app = 'changed-output';
        } catch (err) {
          assert.ok(err instanceof TypeError, 'frozen objects throw TypeError in strict mode');
        }
        const got = await s.get('/registry/pods/default/a');
        try {
          (got!.object.metadata!.labels as Record<string, string>).app = 'changed-get';
        } catch (err) {
          assert.ok(err instanceof TypeError);
        }
        assert.equal((await s.get('/registry/pods/default/a'))?.object.metadata?.labels?.app, 'web');
        assert.equal((await s.list('/registry/pods/')).items[0]?.object.metadata?.labels?.app, 'web');
      });
    });

    describe('lists', () => {
      test('lists keys in order and keeps sibling prefixes apart', async (s) => {
        for (const k of ['/registry/pods/ab/z', '/registry/pods/a/y', '/registry/pods/a/b', '/registry/podsx/a/q', '/registry/pods/a/a', '/registry/pods/b/c']) {
          await s.create(k, pod(k.split('/').pop()!));
        }
        const a = await s.list('/registry/pods/a/');
        assert.deepEqual(a.items.map((i) => i.key), ['/registry/pods/a/a', '/registry/pods/a/b', '/registry/pods/a/y']);
        const all = await s.list('/registry/pods/');
        assert.deepEqual(all.items.map((i) => i.key), ['/registry/pods/a/a', '/registry/pods/a/b', '/registry/pods/a/y', '/registry/pods/ab/z', '/registry/pods/b/c']);
        assert.equal(all.revision, 6);
        for (const i of all.items) assert.equal(i.object.metadata?.resourceVersion, String(i.revision));
      });

      test('pages with limit and startAfter over one consistent snapshot while writes happen', async (s) => {
        for (let i = 0; i < 10; i++) await s.create(`/registry/pods/default/p${i}`, pod(`p${i}`));
        const p1 = await s.list('/registry/pods/', { limit: 4 });
        assert.deepEqual(p1.items.map((i) => i.object.metadata?.name), ['p0', 'p1', 'p2', 'p3']);
        assert.equal(p1.more, true);
        assert.equal(p1.remaining, 6);
        assert.equal(p1.revision, 10);
        // writes between pages
        await s.delete('/registry/pods/default/p5');
        await s.update('/registry/pods/default/p6', pod('p6', 'default', { changed: true }));
        await s.create('/registry/pods/default/p55', pod('p55'));
        const p2 = await s.list('/registry/pods/', { limit: 4, startAfter: p1.items.at(-1)!.key, revision: p1.revision });
        assert.deepEqual(p2.items.map((i) => i.object.metadata?.name), ['p4', 'p5', 'p6', 'p7']);
        assert.equal(p2.items[2]!.object.changed, undefined);
        assert.equal(p2.revision, 10);
        assert.equal(p2.more, true);
        assert.equal(p2.remaining, 2);
        const p3 = await s.list('/registry/pods/', { limit: 4, startAfter: p2.items.at(-1)!.key, revision: p1.revision });
        assert.deepEqual(p3.items.map((i) => i.object.metadata?.name), ['p8', 'p9']);
        assert.equal(p3.more, false);
        const latest = await s.list('/registry/pods/');
        assert.equal(latest.items.length, 10);
        assert.ok(latest.items.some((i) => i.object.metadata?.name === 'p55'));
        assert.equal(latest.items.find((i) => i.object.metadata?.name === 'p6')?.object.changed, true);
      });

      test('applies the filter before counting the limit', async (s) => {
        for (let i = 0; i < 10; i++) await s.create(`/registry/pods/default/p${i}`, pod(`p${i}`, 'default', { odd: i % 2 === 1 }));
        const l = await s.list('/registry/pods/', { limit: 3, filter: (o) => o.odd === true });
        assert.deepEqual(l.items.map((i) => i.object.metadata?.name), ['p1', 'p3', 'p5']);
        assert.equal(l.more, true);
        const rest = await s.list('/registry/pods/', { limit: 3, startAfter: l.items.at(-1)!.key, revision: l.revision, filter: (o) => o.odd === true });
        assert.deepEqual(rest.items.map((i) => i.object.metadata?.name), ['p7', 'p9']);
        assert.equal(rest.more, false);
      });

      test('lists at a past revision with the values of that time', async (s) => {
        await s.create('/registry/pods/default/a', pod('a', 'default', { v: 1 }));
        await s.create('/registry/pods/default/b', pod('b'));
        await s.update('/registry/pods/default/a', pod('a', 'default', { v: 2 }));
        await s.delete('/registry/pods/default/b');
        await s.create('/registry/pods/default/c', pod('c'));
        const at2 = await s.list('/registry/pods/', { revision: 2 });
        assert.equal(at2.revision, 2);
        assert.deepEqual(at2.items.map((i) => [i.key, i.revision, i.object.v, i.object.metadata?.resourceVersion]), [
          ['/registry/pods/default/a', 1, 1, '1'],
          ['/registry/pods/default/b', 2, undefined, '2'],
        ]);
        const at4 = await s.list('/registry/pods/', { revision: 4 });
        assert.deepEqual(at4.items.map((i) => [i.key, i.object.v]), [['/registry/pods/default/a', 2]]);
      });

      test('refuses to read compacted revisions and still reads the compaction revision', async (s) => {
        await s.create('/registry/pods/default/a', pod('a', 'default', { v: 1 }));
        await s.create('/registry/pods/default/b', pod('b'));
        await s.update('/registry/pods/default/a', pod('a', 'default', { v: 2 }));
        await s.delete('/registry/pods/default/b');
        await s.create('/registry/pods/default/c', pod('c'));
        await s.compact(4);
        assert.equal(s.compactedRevision(), 4);
        await expectStorageError(s.list('/registry/pods/', { revision: 3 }), 'Compacted');
        const at4 = await s.list('/registry/pods/', { revision: 4 });
        assert.deepEqual(at4.items.map((i) => [i.key, i.object.v]), [['/registry/pods/default/a', 2]]);
        assert.equal((await s.list('/registry/pods/')).items.length, 2);
        assert.equal((await s.get('/registry/pods/default/a'))?.object.v, 2);
        // compacting to an older revision is a no-op
        await s.compact(2);
        assert.equal(s.compactedRevision(), 4);
      });
    });

    describe('watches', () => {
      test('replays history from revision 0 and then delivers live events in order', async (s) => {
        await s.create('/registry/pods/default/a', pod('a', 'default', { v: 1 }));
        await s.update('/registry/pods/default/a', pod('a', 'default', { v: 2 }));
        const w = collect(s, '/registry/pods/', 0);
        assert.equal(w.events.length, 0, 'replay is delivered after watch returns');
        await settle();
        assert.deepEqual(w.events.map(summary), ['ADDED /registry/pods/default/a 1', 'MODIFIED /registry/pods/default/a 2']);
        await s.create('/registry/pods/default/b', pod('b'));
        await s.delete('/registry/pods/default/a');
        await settle();
        assert.deepEqual(w.events.map(summary), [
          'ADDED /registry/pods/default/a 1',
          'MODIFIED /registry/pods/default/a 2',
          'ADDED /registry/pods/default/b 3',
          'DELETED /registry/pods/default/a 4',
        ]);
        const mod = w.events[1]!;
        assert.equal(mod.type, 'MODIFIED');
        if (mod.type === 'MODIFIED') {
          assert.equal(mod.object.v, 2);
          assert.equal(mod.object.metadata?.resourceVersion, '2');
          assert.equal(mod.prevObject.v, 1);
          assert.equal(mod.prevObject.metadata?.resourceVersion, '1');
        }
        const del = w.events[3]!;
        assert.equal(del.type, 'DELETED');
        if (del.type === 'DELETED') {
          assert.equal(del.object.v, 2, 'a delete event carries the last state');
          assert.equal(del.object.metadata?.resourceVersion, '4');
          assert.equal(del.prevObject.metadata?.resourceVersion, '2');
        }
        for (const e of w.events) assert.equal(e.object.metadata?.resourceVersion, String(e.revision));
        w.stop();
      });

      test('watches from a revision, seeing only later changes', async (s) => {
        await s.create('/registry/pods/default/a', pod('a'));
        await s.create('/registry/pods/default/b', pod('b'));
        await s.update('/registry/pods/default/a', pod('a', 'default', { v: 2 }));
        const w = collect(s, '/registry/pods/', 2);
        const c = s.create('/registry/pods/default/c', pod('c'));
        await c;
        await settle();
        assert.deepEqual(w.events.map(summary), ['MODIFIED /registry/pods/default/a 3', 'ADDED /registry/pods/default/c 4']);
        w.stop();
      });

      test('delivers only keys under the watched prefix', async (s) => {
        const w = collect(s, '/registry/pods/a/', 0);
        const all = collect(s, '/registry/', 0);
        await s.create('/registry/pods/a/x', pod('x', 'a'));
        await s.create('/registry/pods/ab/y', pod('y', 'ab'));
        await s.create('/registry/nodes/n1', { kind: 'Node', metadata: { name: 'n1' } });
        await s.update('/registry/pods/a/x', pod('x', 'a', { v: 2 }));
        await settle();
        assert.deepEqual(w.events.map(summary), ['ADDED /registry/pods/a/x 1', 'MODIFIED /registry/pods/a/x 4']);
        assert.equal(all.events.length, 4);
        // replay filters the same way
        const late = collect(s, '/registry/pods/ab/', 0);
        await settle();
        assert.deepEqual(late.events.map(summary), ['ADDED /registry/pods/ab/y 2']);
        w.stop();
        all.stop();
        late.stop();
      });

      test('stops delivering after stop', async (s) => {
        const w = collect(s, '/registry/pods/', 0);
        await s.create('/registry/pods/default/a', pod('a'));
        await settle();
        w.stop();
        await s.create('/registry/pods/default/b', pod('b'));
        await settle();
        assert.deepEqual(w.events.map(summary), ['ADDED /registry/pods/default/a 1']);
      });

      test('keeps other watchers going when one callback throws', async (s) => {
        const errors: Error[] = [];
        s.watch('/registry/pods/', 0, () => {
          throw new Error('boom');
        }, (err) => errors.push(err));
        const good = collect(s, '/registry/pods/', 0);
        await s.create('/registry/pods/default/a', pod('a'));
        await s.create('/registry/pods/default/b', pod('b'));
        await settle();
        assert.equal(errors.length, 1);
        assert.equal(errors[0]!.message, 'boom');
        assert.equal(good.events.length, 2);
        good.stop();
      });

      test('refuses a watch from a compacted revision and replays from the compaction revision', async (s) => {
        await s.create('/registry/pods/default/a', pod('a'));
        await s.create('/registry/pods/default/b', pod('b'));
        await s.update('/registry/pods/default/a', pod('a', 'default', { v: 2 }));
        await s.delete('/registry/pods/default/b');
        await s.compact(3);
        await expectStorageError(() => s.watch('/registry/pods/', 2, () => {}), 'Compacted');
        const w = collect(s, '/registry/pods/', 3);
        await settle();
        assert.deepEqual(w.events.map(summary), ['DELETED /registry/pods/default/b 4']);
        const del = w.events[0]!;
        assert.equal(del.type === 'DELETED' && del.prevObject.metadata?.name, 'b');
        w.stop();
      });

      test('ends watches with an error when the storage closes and rejects later calls', async (s) => {
        const w = collect(s, '/registry/pods/', 0);
        await s.create('/registry/pods/default/a', pod('a'));
        await s.close();
        await settle();
        assert.equal(w.errors.length, 1);
        await expectStorageError(s.get('/registry/pods/default/a'), 'Closed');
        await expectStorageError(s.create('/registry/pods/default/b', pod('b')), 'Closed');
      });
    });

    describe('revisions', () => {
      test('gives every write a strictly greater revision, also across a restart', async (s, fx) => {
        const revs: number[] = [];
        for (let i = 0; i < 5; i++) revs.push((await s.create(`/registry/pods/default/p${i}`, pod(`p${i}`))).revision);
        revs.push((await s.update('/registry/pods/default/p0', pod('p0', 'default', { v: 2 }))).revision);
        revs.push((await s.delete('/registry/pods/default/p1')).revision);
        assert.deepEqual(revs, [1, 2, 3, 4, 5, 6, 7]);
        if (!fx.reopen) return;
        const s2 = await fx.reopen();
        assert.equal(s2.currentRevision(), 7);
        assert.equal((await s2.get('/registry/pods/default/p0'))?.object.v, 2);
        assert.equal(await s2.get('/registry/pods/default/p1'), undefined);
        assert.equal((await s2.list('/registry/pods/')).items.length, 4);
        assert.equal((await s2.list('/registry/pods/', { revision: 5 })).items.length, 5);
        // delete everything and compact all history: revisions still continue
        for (const i of [0, 2, 3, 4]) await s2.delete(`/registry/pods/default/p${i}`);
        assert.equal(s2.currentRevision(), 11);
        await s2.compact(11);
        const s3 = await fx.reopen();
        assert.equal(s3.currentRevision(), 11);
        assert.equal(s3.compactedRevision(), 11);
        await expectStorageError(s3.list('/registry/pods/', { revision: 10 }), 'Compacted');
        assert.equal((await s3.create('/registry/pods/default/new', pod('new'))).revision, 12);
        const w = collect(s3, '/registry/pods/', 11);
        await settle();
        assert.deepEqual(w.events.map(summary), ['ADDED /registry/pods/default/new 12']);
        w.stop();
      });
    });
  });
}
