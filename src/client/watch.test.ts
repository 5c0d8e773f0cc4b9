import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, realClock } from '../util/clock/clock.js';
import type { KubeObject, WatchEvent } from '../api/types.js';
import { NetworkError, isNotFound } from './errors.js';
import { newKubeClient, type KubeClient } from './client.js';
import { newRestConfig } from './rest-config.js';
import { newJsonStreamDecoder, omitManagedFields } from './watch-decoder.js';
import { newStreamWatch, parseWatchEvent } from './watch.js';
import { startFakeApiServer, type FakeApiServer } from './testing/fake-api-server.js';
import { waitFor } from './testing/wait-for.js';

const pods = { group: '', version: 'v1', resource: 'pods' };

describe('JSON stream decoder', () => {
  it('finds whole events across any chunk split, several per chunk, and split UTF-8', () => {
    const events = [
      { type: 'ADDED', object: { metadata: { name: 'a', annotations: { x: 'brace } in "string" \\ ok' } } } },
      { type: 'MODIFIED', object: { metadata: { name: 'ünïcødé-€-😀', annotations: { '𝄞': '😀😀' } } } },
      { type: 'DELETED', object: { metadata: { name: 'c' }, items: [[1], { a: [] }] } },
    ];
    const bytes = Buffer.from(events.map((e) => JSON.stringify(e) + '\n').join(''));
    for (let size = 1; size <= bytes.length; size += 7) {
      const d = newJsonStreamDecoder();
      const out: unknown[] = [];
      // Buffers, and plain Uint8Arrays (as a fetch body gives).
      for (let i = 0; i < bytes.length; i += size) out.push(...d.push(size % 2 ? bytes.subarray(i, i + size) : new Uint8Array(bytes.subarray(i, i + size))).map((t) => JSON.parse(t)));
      assert.deepEqual(out, events, `chunk size ${size}`);
      assert.equal(d.pending(), false);
    }
    const d = newJsonStreamDecoder();
    assert.deepEqual(d.push('{"a":1}{"b":'), ['{"a":1}']);
    assert.equal(d.pending(), true);
  });

  it('finds the same events as JSON.stringify wrote them, for random strings full of quotes, backslashes and braces split anywhere', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const alphabet = ['"', '\\', '{', '}', '[', ']', 'a', ' ', '\\"', '"\\', 'é', '€', '😀', '\n', ','];
    const str = () => Array.from({ length: rand(12) }, () => alphabet[rand(alphabet.length)]).join('');
    const value = (d: number): unknown => {
      const k = rand(d > 2 ? 2 : 5);
      if (k === 0) return str();
      if (k === 1) return rand(1000);
      if (k === 2) return Array.from({ length: rand(4) }, () => value(d + 1));
      return Object.fromEntries(Array.from({ length: rand(4) }, () => [str(), value(d + 1)]));
    };
    for (let round = 0; round < 200; round++) {
      const events = Array.from({ length: 1 + rand(5) }, () => ({ type: 'MODIFIED', object: { [str()]: value(0), s: str() } }));
      const bytes = Buffer.from(events.map((e) => JSON.stringify(e) + (rand(2) ? '\n' : '')).join(''));
      const d = newJsonStreamDecoder();
      const out: string[] = [];
      for (let i = 0; i < bytes.length; ) {
        const n = 1 + rand(40);
        out.push(...d.push(bytes.subarray(i, i + n)));
        i += n;
      }
      assert.deepEqual(out, events.map((e) => JSON.stringify(e)), `round ${round}`);
      assert.equal(d.pending(), false);
    }
  });

  it('cuts object.metadata.managedFields out of events, and nothing else, for random events split anywhere', () => {
    const { rand, pick, tricky, managedFields, shuffled, metadata } = trickyObjects(11);
    const event = (): Record<string, unknown> => {
      const k = rand(6);
      if (k === 0) return { type: 'ERROR', object: { kind: 'Status', metadata: {}, details: { managedFields: [1] } } };
      if (k === 1) return { type: 'BOOKMARK', object: { metadata: { resourceVersion: '5', managedFields: [] } } };
      const object = shuffled([['kind', 'Pod'], ['metadata', metadata()], ['spec', { managedFields: managedFields(), metadata: metadata() }], ['data', { managedFields: pick(tricky) }]]);
      return shuffled([['type', pick(['ADDED', 'MODIFIED', 'DELETED'])], ['object', object], ['extra', { metadata: metadata() }]]);
    };
    const expected = (e: Record<string, unknown>) => {
      const object = withoutManagedFields(e.object as Record<string, unknown>);
      return object === e.object ? e : { ...e, object };
    };
    let cut = 0;
    for (let round = 0; round < 300; round++) {
      const events = Array.from({ length: 1 + rand(4) }, event);
      const bytes = Buffer.from(events.map((e) => JSON.stringify(e) + (rand(2) ? '\n' : '')).join(''));
      const d = newJsonStreamDecoder({ dropManagedFields: true });
      const plain = newJsonStreamDecoder();
      const out: string[] = [];
      const plainOut: string[] = [];
      for (let i = 0; i < bytes.length; ) {
        const n = 1 + rand(60);
        out.push(...d.push(bytes.subarray(i, i + n)));
        plainOut.push(...plain.push(bytes.subarray(i, i + n)));
        i += n;
      }
      assert.deepEqual(plainOut, events.map((e) => JSON.stringify(e)), `round ${round}: without the option, the text as written`);
      assert.deepEqual(out.map((t) => JSON.parse(t) as unknown), events.map(expected), `round ${round}`);
      for (let i = 0; i < events.length; i++) if (expected(events[i]!) !== events[i]) cut++;
      assert.equal(d.pending(), false);
    }
    assert.ok(cut > 150, `only ${cut} events had something to cut`);
  });

  it('cuts metadata.managedFields out of PartialObjectMetadata texts, and nothing else', () => {
    const { rand, pick, shuffled, metadata } = trickyObjects(23);
    let cut = 0;
    for (let round = 0; round < 400; round++) {
      const m = metadata();
      if (rand(2)) m.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: pick(['a', '"]', 'managedFields']), uid: 'u', controller: true }];
      const pom = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: shuffled(Object.entries(m)) };
      const text = JSON.stringify(pom);
      const want = withoutManagedFields(pom);
      if (want !== pom) cut++;
      assert.deepEqual(JSON.parse(omitManagedFields(text)), want, `round ${round}: ${text}`);
      // Anything else whole: another kind, another spelling, a text cut short.
      const other = JSON.stringify({ ...pom, kind: 'Pod' });
      assert.equal(omitManagedFields(other), other);
      const pretty = JSON.stringify(pom, null, 1);
      assert.equal(omitManagedFields(pretty), pretty);
      const at = text.indexOf(',"managedFields":[');
      if (at >= 0) {
        const short = text.slice(0, at + 18);
        assert.equal(omitManagedFields(short), short, 'an array that does not end');
      }
    }
    assert.ok(cut > 150, `only ${cut} objects had something to cut`);
  });

  it('reports undecodable events as ERROR events', () => {
    const e = parseWatchEvent('{"type":"WHAT","object":{}}');
    assert.equal(e.type, 'ERROR');
    assert.match((e as { object: { message: string } }).object.message, /unable to decode an event from the watch stream/);
  });
});

/** Random objects made to trip a managedFields cut: keys, values and strings that look like the member. */
function trickyObjects(seed: number) {
  // The high bits of the generator: its low ones repeat with short periods.
  const rand = (n: number) => Math.floor(((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n);
  const pick = <T>(xs: T[]): T => xs[rand(xs.length)]!;
  const tricky = ['managedFields', ',"managedFields":[', '\\', '"', '{"metadata":{', ']', 'x'];
  const managedFields = () =>
    Array.from({ length: rand(3) }, () => ({
      manager: pick(tricky),
      operation: 'Update',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, [`f:${pick(tricky)}`]: {} } }, 'f:spec': { 'k:{"port":80}': { '.': {} } } },
    }));
  /** An object of shuffled members. */
  const shuffled = (members: [string, unknown][]) => {
    for (let i = members.length - 1; i > 0; i--) {
      const j = rand(i + 1);
      [members[i], members[j]] = [members[j]!, members[i]!];
    }
    return Object.fromEntries(members) as Record<string, unknown>;
  };
  /** Metadata with labels and annotations that look like the member, and maybe managedFields (first, later, an array or null). */
  const metadata = (): Record<string, unknown> => {
    const m: [string, unknown][] = [['name', pick(tricky)], ['labels', shuffled([['managedFields', pick(tricky)], ['app', 'web'], [pick(tricky), 'v']])], ['annotations', { a: JSON.stringify({ metadata: { managedFields: [1] } }) }]];
    const k = rand(5);
    if (k < 3) m.push(['managedFields', managedFields()]);
    else if (k === 3) m.push(['managedFields', null]);
    return shuffled(m);
  };
  return { rand, pick, tricky, managedFields, shuffled, metadata };
}

/** What a cut gives: the object without metadata.managedFields when it was an array and not metadata's first member; else the object itself. */
function withoutManagedFields(o: Record<string, unknown>): Record<string, unknown> {
  const meta = o.metadata as Record<string, unknown> | undefined;
  if (!meta || !Array.isArray(meta.managedFields) || Object.keys(meta)[0] === 'managedFields') return o;
  const { managedFields: _, ...rest } = meta;
  return { ...o, metadata: rest };
}

async function collect<T extends KubeObject>(w: AsyncIterable<WatchEvent<T>>, n: number): Promise<WatchEvent<T>[]> {
  const out: WatchEvent<T>[] = [];
  for await (const e of w) {
    out.push(e);
    if (out.length === n) break;
  }
  return out;
}

describe('watch over HTTP', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  before(async () => {
    server = await startFakeApiServer();
    client = newKubeClient(newRestConfig({ host: server.url }), { clock: realClock });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('streams the events after a resourceVersion with the right query', async () => {
    const a = server.seed<KubeObject>(pods, { metadata: { name: 'a', namespace: 'ns' } });
    const w = await client.resource(pods).namespace('ns').watch({ resourceVersion: a.metadata!.resourceVersion, allowWatchBookmarks: true, labelSelector: 'x=y' });
    const req = server.requests.at(-1)!;
    assert.equal(req.path, '/api/v1/namespaces/ns/pods');
    assert.equal(req.query.get('watch'), '1');
    assert.equal(req.query.get('allowWatchBookmarks'), 'true');
    assert.equal(req.query.get('labelSelector'), 'x=y');
    server.seed(pods, { metadata: { name: 'b', namespace: 'ns', labels: { x: 'y' } } });
    server.seed(pods, { metadata: { name: 'skip', namespace: 'ns' } });
    server.bookmark();
    const got = await collect(w, 2);
    assert.deepEqual(
      got.map((e) => [e.type, (e.object as KubeObject).metadata?.name]),
      [
        ['ADDED', 'b'],
        ['BOOKMARK', undefined],
      ],
    );
    w.stop();
  });

  it('ends quietly when the server closes and when stopped', async () => {
    const w = await client.resource(pods).watch({ resourceVersion: String(server.resourceVersion()) });
    const iter = collect(w, 100);
    await waitFor(() => true);
    server.closeWatches();
    assert.deepEqual(await iter, []);
    const w2 = await client.resource(pods).watch({ resourceVersion: String(server.resourceVersion()) });
    const iter2 = collect(w2, 100);
    w2.stop();
    assert.deepEqual(await iter2, []);
  });

  it('yields the 410 ERROR event as is', async () => {
    server.compact();
    const w = await client.resource(pods).watch({ resourceVersion: '1' });
    const [e] = await collect(w, 1);
    assert.equal(e!.type, 'ERROR');
    assert.equal((e as { object: { code: number } }).object.code, 410);
  });

  it('throws NetworkError when the stream breaks mid-event', async () => {
    server.handle('GET', '/api/v1/configmaps', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"x"}}}\n{"type":"ADDED","obj');
      setTimeout(() => res.destroy(), 20);
    });
    const w = await client.resource({ group: '', version: 'v1', resource: 'configmaps' }).watch();
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const e of w) seen.push((e.object as KubeObject).metadata?.name ?? '');
      })(),
      (e: unknown) => e instanceof NetworkError,
    );
    assert.deepEqual(seen, ['x']);
  });

  it('fails the watch call itself on an error response', async () => {
    await assert.rejects(client.resource({ group: 'nope', version: 'v1', resource: 'things' }).watch(), isNotFound);
  });

  it('stops at the timeout on the clock', async () => {
    const clock = new FakeClock();
    const c = newKubeClient(newRestConfig({ host: server.url }), { clock });
    const w = await c.resource(pods).watch({ timeoutSeconds: 30, resourceVersion: String(server.resourceVersion()) });
    assert.equal(server.requests.at(-1)!.query.get('timeoutSeconds'), '30');
    const iter = collect(w, 100);
    await clock.advance(30_000);
    assert.deepEqual(await iter, []);
    await c.close();
  });

  it('stops when the caller signal aborts', async () => {
    const ac = new AbortController();
    const w = await client.resource(pods).watch({ resourceVersion: String(server.resourceVersion()) }, ac.signal);
    const iter = collect(w, 100);
    ac.abort();
    assert.deepEqual(await iter, []);
  });

  it('is single use', () => {
    const w = newStreamWatch({ statusCode: 200, headers: {}, body: (async function* () {})(), abort() {} }, { clock: realClock, description: 'x' });
    w[Symbol.asyncIterator]();
    assert.throws(() => w[Symbol.asyncIterator](), /only once/);
  });
});
