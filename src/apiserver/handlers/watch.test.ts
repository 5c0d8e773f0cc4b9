import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, type Timer } from '../../util/clock/clock.js';
import { maxTimerDelayMs } from '../long-timer.js';
import { startTestServer, eventually, type TestServer } from '../test-server.js';
import type { KubeObject } from '../../api/types.js';
import { deepFreeze } from '../storage/stored-object.js';
import { present } from '../store.js';
import { eventLine, SharedEncodings, watchTimeoutMs } from './watch.js';

const cm = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels } });
const path = '/api/v1/namespaces/default/configmaps';

describe('WATCH', () => {
  let t: TestServer;
  const clock = new FakeClock('2024-01-01T00:00:00Z');
  before(async () => {
    t = await startTestServer({ clock });
  });
  after(async () => {
    await t.close();
  });

  it('starts with synthetic ADDED events for resourceVersion 0, then streams live changes', async () => {
    await t.request('POST', path, cm('w1'));
    const w = await t.watch(`${path}?watch=1&resourceVersion=0`);
    assert.equal(w.status, 200);
    const first = await w.next();
    assert.equal(first.type, 'ADDED');
    assert.equal(first.object.metadata.name, 'w1');
    assert.equal(first.object.kind, 'ConfigMap');
    await t.request('POST', path, cm('w2'));
    const second = await w.next();
    assert.deepEqual([second.type, second.object.metadata.name], ['ADDED', 'w2']);
    const cur = (await t.request('GET', `${path}/w2`)).body;
    cur.data = { a: 'b' };
    await t.request('PUT', `${path}/w2`, cur);
    const third = await w.next();
    assert.deepEqual([third.type, third.object.data], ['MODIFIED', { a: 'b' }]);
    await t.request('DELETE', `${path}/w2`);
    const fourth = await w.next();
    assert.equal(fourth.type, 'DELETED');
    assert.equal(fourth.object.metadata.name, 'w2');
    w.close();
  });

  it('replays history after an exact resourceVersion', async () => {
    const rv = (await t.request('GET', path)).body.metadata.resourceVersion;
    await t.request('POST', path, cm('r1'));
    await t.request('POST', path, cm('r2'));
    const w = await t.watch(`${path}?watch=true&resourceVersion=${rv}`);
    assert.equal((await w.next()).object.metadata.name, 'r1');
    assert.equal((await w.next()).object.metadata.name, 'r2');
    w.close();
  });

  it('sends one ERROR event with 410 Expired and ends for a compacted resourceVersion', async () => {
    const rv = (await t.request('GET', path)).body.metadata.resourceVersion;
    await t.request('POST', path, cm('gone1'));
    await t.storage.compact(t.storage.currentRevision());
    const w = await t.watch(`${path}?watch=1&resourceVersion=${rv}`);
    const ev = await w.next();
    assert.equal(ev.type, 'ERROR');
    assert.equal(ev.object.kind, 'Status');
    assert.equal(ev.object.code, 410);
    assert.equal(ev.object.reason, 'Expired');
    assert.match(ev.object.message, /^too old resource version: \d+ \(\d+\)$/);
    await w.ended;
  });

  it('turns selector leave into DELETED and enter into ADDED', async () => {
    await t.request('POST', path, cm('sel', { role: 'a' }));
    const w = await t.watch(`${path}?watch=1&labelSelector=role%3Da`);
    assert.equal((await w.next()).type, 'ADDED');
    const cur = (await t.request('GET', `${path}/sel`)).body;
    cur.metadata.labels.role = 'b';
    const moved = (await t.request('PUT', `${path}/sel`, cur)).body;
    const left = await w.next();
    assert.equal(left.type, 'DELETED');
    assert.equal(left.object.metadata.resourceVersion, moved.metadata.resourceVersion);
    moved.metadata.labels.role = 'a';
    await t.request('PUT', `${path}/sel`, moved);
    assert.equal((await w.next()).type, 'ADDED');
    w.close();
  });

  it('watches a single object with fieldSelector metadata.name', async () => {
    await t.request('POST', path, cm('one'));
    await t.request('POST', path, cm('two'));
    const w = await t.watch(`${path}?watch=1&fieldSelector=metadata.name%3Dtwo`);
    const ev = await w.next();
    assert.equal(ev.object.metadata.name, 'two');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(w.events.length, 1);
    w.close();
  });

  it('sends periodic BOOKMARKs and ends at timeoutSeconds after a last bookmark', async () => {
    const w = await t.watch(`${path}?watch=1&allowWatchBookmarks=true&timeoutSeconds=120&resourceVersion=${t.storage.currentRevision()}`);
    await eventually(() => clock.pendingTimers() >= 2);
    await clock.advance(60_000);
    const bm = await w.next();
    assert.equal(bm.type, 'BOOKMARK');
    assert.equal(bm.object.kind, 'ConfigMap');
    assert.equal(bm.object.metadata.resourceVersion, String(t.storage.currentRevision()));
    await clock.advance(59_000);
    assert.equal((await w.next()).type, 'BOOKMARK', 'a bookmark just before the timeout');
    await clock.advance(1_000);
    await w.ended;
  });

  it('ends initial events with a bookmark annotated k8s.io/initial-events-end for sendInitialEvents', async () => {
    const w = await t.watch(`${path}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    let ev;
    const added = [];
    while ((ev = await w.next()).type === 'ADDED') added.push(ev.object.metadata.name);
    assert.ok(added.length > 0);
    assert.equal(ev.type, 'BOOKMARK');
    assert.deepEqual(ev.object.metadata.annotations, { 'k8s.io/initial-events-end': 'true' });
    w.close();
  });

  it('unregisters the watch as soon as the client disconnects', async () => {
    await eventually(() => t.handler.openWatches() === 0);
    const w = await t.watch(`${path}?watch=1`);
    await w.next();
    assert.equal(t.handler.openWatches(), 1);
    w.close();
    await eventually(() => t.handler.openWatches() === 0);
  });

  it('renders watch events as metadata for as=PartialObjectMetadata', async () => {
    const w = await t.watch(`${path}?watch=1`, { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' });
    const ev = await w.next();
    assert.equal(ev.object.kind, 'PartialObjectMetadata');
    w.close();
  });
});

describe('watch event lines', () => {
  const served = (version: string) => ({ group: 'apps', version, kind: 'Deployment' }) as unknown as Parameters<typeof eventLine>[1];
  const stored = () => deepFreeze({ metadata: { name: 'd', namespace: 'ns', resourceVersion: '7' }, spec: { replicas: 2 } }) as KubeObject;

  it('encodes the event with the served apiVersion and kind, as a copy served at that version would be', () => {
    const obj = stored();
    const line = eventLine('MODIFIED', served('v1'), obj);
    assert.ok(line.endsWith('\n'));
    assert.deepEqual(JSON.parse(line), { type: 'MODIFIED', object: { ...structuredClone(obj), apiVersion: 'apps/v1', kind: 'Deployment' } });
    assert.equal(line, JSON.stringify({ type: 'MODIFIED', object: present(served('v1') as never, obj) }) + '\n');
  });

  it('encodes a stored object once per event type and served version, for every watcher', () => {
    const obj = stored();
    const a = eventLine('ADDED', served('v1'), obj);
    assert.equal(eventLine('ADDED', served('v1'), obj), a);
    assert.equal(JSON.parse(eventLine('DELETED', served('v1'), obj)).type, 'DELETED');
    assert.equal(JSON.parse(eventLine('ADDED', served('v1beta1'), obj)).object.apiVersion, 'apps/v1beta1');
  });

  it('never reuses the encoding of an object that is not frozen and may still change', () => {
    const obj: KubeObject = { metadata: { name: 'x', labels: { a: '1' } } };
    assert.equal(JSON.parse(eventLine('DELETED', served('v1'), obj)).object.metadata.labels.a, '1');
    obj.metadata!.labels = { a: '2' };
    assert.equal(JSON.parse(eventLine('DELETED', served('v1'), obj)).object.metadata.labels.a, '2');
  });
});

describe('SharedEncodings', () => {
  it('keeps the encodings of the last `capacity` objects only, every form of each', () => {
    const enc = new SharedEncodings<string>(2);
    const [a, b, c] = [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }, { metadata: { name: 'c' } }] as KubeObject[];
    enc.set(a!, 'ADDED v1', 'a1');
    enc.set(a!, 'MODIFIED v1', 'a2');
    enc.set(b!, 'ADDED v1', 'b1');
    assert.equal(enc.get(a!, 'ADDED v1'), 'a1');
    assert.equal(enc.get(a!, 'MODIFIED v1'), 'a2');
    enc.set(c!, 'ADDED v1', 'c1');
    assert.equal(enc.get(a!, 'ADDED v1'), undefined, 'the oldest object is evicted');
    assert.equal(enc.get(a!, 'MODIFIED v1'), undefined);
    assert.equal(enc.get(b!, 'ADDED v1'), 'b1');
    assert.equal(enc.get(c!, 'ADDED v1'), 'c1');
    enc.set(a!, 'ADDED v1', 'a3');
    assert.equal(enc.get(b!, 'ADDED v1'), undefined);
    assert.equal(enc.get(a!, 'ADDED v1'), 'a3');
  });
});

/** A fake clock whose timers behave as Node's setTimeout: a delay past 2^31 - 1 ms fires after 1 ms. */
class NodeTimersClock extends FakeClock {
  override setTimer(fn: () => void, ms: number): Timer {
    return super.setTimer(fn, ms > maxTimerDelayMs ? 1 : ms);
  }
}

describe('WATCH timeoutSeconds, as get.go reads it', () => {
  let t: TestServer;
  const clock = new NodeTimersClock('2024-01-01T00:00:00Z');
  const day = 24 * 3600 * 1000;
  before(async () => {
    t = await startTestServer({ clock });
  });
  after(async () => {
    await t.close();
  });

  it('keeps a watch open however long its timeoutSeconds, past what setTimeout holds', async () => {
    const w = await t.watch(`${path}?watch=1&timeoutSeconds=9999999999999&resourceVersion=${t.storage.currentRevision()}`);
    assert.equal(w.status, 200);
    await eventually(() => clock.pendingTimers() >= 1);
    await clock.advance(1);
    await clock.advance(30 * day);
    await t.request('POST', path, cm('long'));
    assert.equal((await w.next()).object.metadata.name, 'long', 'the watch is still open');
    w.close();
  });

  it('ends a watch whose timeout has passed already (negative) at once', async () => {
    const w = await t.watch(`${path}?watch=1&timeoutSeconds=-5&resourceVersion=${t.storage.currentRevision()}`);
    assert.equal(w.status, 200);
    await eventually(() => clock.pendingTimers() >= 1);
    await clock.advance(0);
    await w.ended;
  });

  it('takes 0 for --min-request-timeout times a random factor in [1, 2)', async () => {
    assert.ok(watchTimeoutMs('0', 1800) >= 1_800_000 && watchTimeoutMs('0', 1800) < 3_600_000);
    assert.ok(watchTimeoutMs(null, 1800) >= 1_800_000);
    assert.equal(watchTimeoutMs('30', 1800), 30_000);
    assert.equal(watchTimeoutMs('-1', 1800), 0);
    // Go's Duration stops at about 292 years; its multiplication would wrap, kcm saturates.
    assert.equal(watchTimeoutMs('9223372036854775807', 1800), Number(2n ** 63n - 1n) / 1e6);
  });

  it('refuses a timeoutSeconds that is not an int64 with strconv\'s 400, on watches and lists', async () => {
    for (const q of ['watch=1&timeoutSeconds=1.5', 'timeoutSeconds=x', 'watch=1&timeoutSeconds=99999999999999999999']) {
      const res = await t.request('GET', `${path}?${q}`);
      assert.equal(res.status, 400, q);
      assert.match(res.body.message, /^strconv\.ParseInt: parsing "[^"]*": (invalid syntax|value out of range)$/);
    }
  });
});
