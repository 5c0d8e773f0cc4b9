import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { flushMicrotasks } from '../../util/clock/clock.js';
import { DeletedFinalStateUnknown } from './interfaces.js';
import type { Deltas } from './delta-fifo.js';
import { FIFOClosedError, newDeltaFIFO } from './delta-fifo.js';
import { metaNamespaceKeyFunc, newIndexer } from './store.js';

function pod(name: string, v = 1): KubeObject {
  return { metadata: { namespace: 'ns', name, resourceVersion: String(v) } };
}

function fifo(known?: KubeObject[]) {
  const store = newIndexer();
  for (const o of known ?? []) store.add(o);
  return { store, q: newDeltaFIFO<KubeObject>({ keyFunc: metaNamespaceKeyFunc, knownObjects: known ? store : undefined }) };
}

async function popOne(q: ReturnType<typeof fifo>['q']): Promise<{ deltas: Deltas<KubeObject>; initial: boolean }> {
  let out: { deltas: Deltas<KubeObject>; initial: boolean } | undefined;
  await q.pop((deltas, initial) => {
    out = { deltas, initial };
  });
  return out!;
}

const types = (d: Deltas<KubeObject>) => d.map((x) => x.type);

describe('DeltaFIFO', () => {
  it('accumulates the deltas of one object under one queue entry, oldest first', async () => {
    const { q } = fifo();
    q.add(pod('a', 1));
    q.add(pod('b', 1));
    q.update(pod('a', 2));
    assert.deepEqual(q.listKeys(), ['ns/a', 'ns/b']);
    const first = await popOne(q);
    assert.deepEqual(types(first.deltas), ['Added', 'Updated']);
    assert.equal((first.deltas[1]!.object as KubeObject).metadata?.resourceVersion, '2');
    const second = await popOne(q);
    assert.deepEqual(types(second.deltas), ['Added']);
    assert.equal(q.len(), 0);
  });

  it('collapses consecutive deletions, keeping the real final state over a tombstone', () => {
    const { q } = fifo([pod('a')]);
    q.delete(new DeletedFinalStateUnknown('ns/a', pod('a', 1)));
    q.delete(pod('a', 3));
    let d = q.getDeltas('ns/a')!;
    assert.deepEqual(types(d), ['Deleted']);
    assert.ok(!(d[0]!.object instanceof DeletedFinalStateUnknown));
    q.delete(new DeletedFinalStateUnknown('ns/a', pod('a', 1)));
    d = q.getDeltas('ns/a')!;
    assert.equal(d.length, 1);
    assert.equal((d[0]!.object as KubeObject).metadata?.resourceVersion, '3');
  });

  it('ignores the deletion of an object neither queued nor known', () => {
    const { q } = fifo([pod('known')]);
    q.delete(pod('unknown'));
    assert.equal(q.len(), 0);
    q.delete(pod('known'));
    assert.deepEqual(types(q.getDeltas('ns/known')!), ['Deleted']);
  });

  it('replace queues Replaced for listed objects and tombstones for known and queued objects missing from the list', () => {
    const { q } = fifo([pod('kept'), pod('gone-known', 7)]);
    q.add(pod('gone-queued', 4));
    q.replace([pod('kept', 2), pod('new')], '10');
    assert.deepEqual(types(q.getDeltas('ns/kept')!), ['Replaced']);
    assert.deepEqual(types(q.getDeltas('ns/new')!), ['Replaced']);
    const gk = q.getDeltas('ns/gone-known')!;
    assert.deepEqual(types(gk), ['Deleted']);
    assert.ok(gk[0]!.object instanceof DeletedFinalStateUnknown);
    assert.equal((gk[0]!.object as DeletedFinalStateUnknown<KubeObject>).key, 'ns/gone-known');
    assert.equal((gk[0]!.object as DeletedFinalStateUnknown<KubeObject>).obj.metadata?.resourceVersion, '7');
    const gq = q.getDeltas('ns/gone-queued')!;
    assert.deepEqual(types(gq), ['Added', 'Deleted']);
    assert.equal((gq[1]!.object as DeletedFinalStateUnknown<KubeObject>).obj.metadata?.resourceVersion, '4');
  });

  it('has synced once the items of the first replace were popped, flagging them as initial', async () => {
    const { q } = fifo([]);
    assert.equal(q.hasSynced(), false);
    q.replace([pod('a'), pod('b')], '5');
    assert.equal(q.hasSynced(), false);
    assert.equal((await popOne(q)).initial, true);
    assert.equal(q.hasSynced(), false);
    assert.equal((await popOne(q)).initial, true);
    assert.equal(q.hasSynced(), true);
    q.add(pod('c'));
    assert.equal((await popOne(q)).initial, false);
  });

  it('has synced at once after an empty first replace', () => {
    const { q } = fifo([]);
    q.replace([], '1');
    assert.equal(q.hasSynced(), true);
  });

  it('resync queues Sync for known objects that have nothing queued', () => {
    const { q } = fifo([pod('a'), pod('b')]);
    q.update(pod('b', 2));
    q.resync();
    assert.deepEqual(types(q.getDeltas('ns/a')!), ['Sync']);
    assert.deepEqual(types(q.getDeltas('ns/b')!), ['Updated']);
  });

  it('hands a waiting pop the next added item', async () => {
    const { q } = fifo();
    let got: string | undefined;
    const p = q.pop((d) => {
      got = (d[0]!.object as KubeObject).metadata?.name;
    });
    await flushMicrotasks();
    assert.equal(got, undefined);
    q.add(pod('late'));
    await p;
    assert.equal(got, 'late');
  });

  it('rejects pops with FIFOClosedError once closed, waking a waiting pop', async () => {
    const { q } = fifo();
    const p = q.pop(() => assert.fail('nothing to pop'));
    q.close();
    await assert.rejects(p, FIFOClosedError);
    await assert.rejects(q.pop(() => {}), FIFOClosedError);
    assert.equal(q.isClosed(), true);
  });

  it('applies the transform to objects as they are queued', () => {
    const q = newDeltaFIFO<KubeObject>({
      keyFunc: metaNamespaceKeyFunc,
      transform: (o) => ({ ...(o as KubeObject), transformed: true }),
    });
    q.add(pod('a'));
    q.replace([pod('b')], '1');
    assert.equal((q.getDeltas('ns/a')![0]!.object as KubeObject).transformed, true);
    assert.equal((q.getDeltas('ns/b')![0]!.object as KubeObject).transformed, true);
    assert.equal(q.list().length, 2);
  });
});
