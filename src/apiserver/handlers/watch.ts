/**
 * WATCH: a chunked JSON stream, one event per line, flushed per event; or,
 * when the client prefers protobuf, length-prefixed protobuf WatchEvent
 * frames (protobuf/watch-event.ts).
 *
 * - resourceVersion "" or "0": synthetic ADDED events for the current state,
 *   then live changes; an exact revision replays history after it; a
 *   compacted one yields one ERROR event (410 Expired) and the end.
 * - sendInitialEvents=true (with resourceVersionMatch=NotOlderThan) ends the
 *   initial events with a BOOKMARK annotated `k8s.io/initial-events-end`.
 * - Selectors apply to each change: leaving the selection is DELETED,
 *   entering it ADDED.
 * - allowWatchBookmarks: periodic BOOKMARKs and one shortly before timeout.
 * - Closing the connection unregisters the watch at once.
 * - Custom resources are converted to the watched version per event (their
 *   CRD's conversion, possibly a webhook), events kept in order. A failed
 *   conversion ends the watch with an ERROR event (500 InternalError), as
 *   kube-apiserver's etcd watcher does when it cannot decode an event.
 */
import type { KubeObject, WatchEvent } from '../../api/types.js';
import { apiVersionOf } from '../../api/types.js';
import type { Timer } from '../../util/clock/clock.js';
import type { RequestScope } from '../context.js';
import type { ServedResource } from '../resources.js';
import { includeObjectParam, negotiateResponse } from '../output.js';
import { encodeWatchEventFrame, protobufWatchMediaType } from '../protobuf/watch-event.js';
import { escapeAsGo, stringifyAsGo } from '../go-json.js';
import { storedText } from '../storage/stored-object.js';
import { partialObjectMetadata, toTable } from '../table.js';
import { present, presentStoredAll, storagePrefix } from '../store.js';
import { selectionFrom } from '../selection.js';
import { StorageError, type StorageEvent, type WatchHandle } from '../storage/storage.js';
import { badRequest, gone, internalError } from '../status.js';
import { parseResourceVersion } from './list.js';
import { truthyParam } from '../request-info.js';
import { setLongTimer } from '../long-timer.js';
import { parseInt64 } from '../parse-int.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** A slow client whose unsent output passes this is disconnected (upstream drops slow watchers too). */
const maxBufferedBytes = 16 * 1024 * 1024;

/** Events of one watch waiting for their conversion (custom resources) before the watch is dropped as too slow. */
const maxQueuedConversions = 1024;

export const initialEventsEndAnnotation = 'k8s.io/initial-events-end';

export async function handleWatch(s: RequestScope): Promise<void> {
  const { server, query: q, r, res } = s;
  const proto = negotiateResponse(s, true).encoding === 'protobuf';
  const storage = server.storage;
  const sel = selectionFrom(r, q, s.name || undefined);
  const rvParam = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch') ?? '';
  const bookmarks = truthyParam(q.get('allowWatchBookmarks'));
  const sendInitial = q.get('sendInitialEvents');
  if (sendInitial !== null && sendInitial !== '') {
    if (match !== 'NotOlderThan') throw badRequest('resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    if (!bookmarks && sendInitial === 'true') throw badRequest('allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true');
  } else if (match) {
    throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
  }
  const initialEvents = sendInitial === 'true' || ((sendInitial === null || sendInitial === '') && (rvParam === '' || rvParam === '0'));
  const timeoutMs = watchTimeoutMs(q.get('timeoutSeconds'), server.minRequestTimeoutSeconds);
  const prefix = storagePrefix(r, r.namespaced ? s.namespace : '');
  const include = s.rendering === 'table' ? includeObjectParam(q) : 'Metadata';

  const render = (obj: KubeObject): KubeObject => {
    switch (s.rendering) {
      case 'object':
        return obj;
      case 'metadata':
        return partialObjectMetadata(obj);
      case 'table':
        return toTable(r.group, r.resource, [obj], include, server.clock.now(), { resourceVersion: obj.metadata?.resourceVersion ?? '' });
    }
  };

  // Initial state, read before the response starts so errors are plain Statuses.
  let from: number;
  let initial: KubeObject[] = [];
  if (initialEvents) {
    const list = await storage.list(prefix, { filter: sel.everything ? undefined : (o) => sel.matches(o) });
    initial = await presentStoredAll(r, list.items.map((x) => x.object), { list: true });
    from = list.revision;
  } else {
    from = rvParam === '' || rvParam === '0' ? storage.currentRevision() : parseResourceVersion(rvParam);
  }

  res.writeHead(200, { 'Content-Type': proto ? protobufWatchMediaType : 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  server.metrics.longRunning(r, s.subresource, 1);

  let closed = false;
  let handle: WatchHandle | undefined;
  let lastRv = from;
  // [0] the timeout, [1] the next bookmark.
  const timers: Timer[] = [];
  const entry = { stop: () => finish() };
  server.watches.add(entry);

  const send = (ev: WatchEvent): void => {
    if (!proto) return sendLine(stringifyAsGo(ev) + '\n');
    // Upstream transforms bookmarks too: a metadata watch gets PartialObjectMetadata.
    const obj = ev.type === 'BOOKMARK' && s.rendering === 'metadata' ? partialObjectMetadata(ev.object as KubeObject) : ev.object;
    const frame = encodeWatchEventFrame(ev.type, obj);
    if (frame) sendLine(frame);
    else server.logger.error(undefined, { resource: r.resource, kind: (obj as KubeObject).kind }, 'watch event object has no protobuf message; dropped');
  };
  const sendLine = (line: string | Uint8Array): void => {
    if (closed) return;
    res.write(line);
    if (res.writableLength > maxBufferedBytes) {
      server.logger.warn({ resource: r.resource, buffered: res.writableLength }, 'watch client too slow, closing');
      finish();
    }
  };
  const sendBookmark = (rv: number, annotations?: Record<string, string>): void => {
    const md: { resourceVersion: string; annotations?: Record<string, string> } = { resourceVersion: String(rv) };
    if (annotations) md.annotations = annotations;
    send({ type: 'BOOKMARK', object: { kind: r.kind, apiVersion: apiVersionOf(r.group, r.version), metadata: md } });
  };
  // Events whose objects need an asynchronous conversion (custom resources) go out one at a
  // time in storage order; bookmarks queue behind them, so a bookmark never passes an event.
  const converting = !!r.fromStorage;
  let queue: Promise<void> = Promise.resolve();
  let queued = 0;
  const inOrder = (task: () => void | Promise<void>): void => {
    if (++queued > maxQueuedConversions) {
      // A webhook slower than the writes: drop the watcher, as upstream drops one that cannot keep up.
      server.logger.warn({ resource: r.resource, queued }, 'watch events wait too long for conversion, closing');
      finish();
      return;
    }
    queue = queue
      .then(async () => {
        if (!closed) await task();
      })
      .catch((err: unknown) => {
        server.logger.error(err, { resource: r.resource }, 'watch event could not be sent; ending the watch');
        finish();
      })
      .finally(() => void queued--);
  };
  const bookmark = (annotations?: Record<string, string>): void => {
    const rv = lastRv;
    if (converting) inOrder(() => sendBookmark(rv, annotations));
    else sendBookmark(rv, annotations);
  };
  /** Sends one event whose object is converted first; a failed conversion ends the watch. */
  const sendConverted = (type: 'ADDED' | 'MODIFIED' | 'DELETED', stored: KubeObject): void =>
    inOrder(async () => {
      let obj: KubeObject;
      try {
        [obj] = (await presentStoredAll(r, [stored])) as [KubeObject];
      } catch (err) {
        if (closed) return;
        server.logger.v(2).info({ resource: r.resource, err: (err as Error).message }, 'watch event could not be converted; ending the watch');
        send({ type: 'ERROR', object: internalError(err).status });
        finish();
        return;
      }
      if (!closed) send({ type, object: render(obj) });
    });
  function finish(): void {
    if (closed) return;
    closed = true;
    for (const t of timers) t?.stop();
    handle?.stop();
    server.watches.delete(entry);
    server.metrics.longRunning(r, s.subresource, -1);
    res.end();
  }
  res.on('close', finish);
  s.req.on('close', () => {
    if (!res.writableFinished) finish();
  });

  for (const obj of initial) send({ type: 'ADDED', object: render(obj) });
  if (sendInitial === 'true') bookmark({ [initialEventsEndAnnotation]: 'true' });

  const onEvent = (e: StorageEvent): void => {
    if (e.revision > lastRv) lastRv = e.revision;
    const ev = translate(e, (o) => sel.matches(o));
    if (!ev) return;
    if (converting) sendConverted(ev.type, ev.object);
    else if (s.rendering === 'object') sendLine(proto ? eventFrame(ev.type, r, ev.object) : eventLine(ev.type, r, ev.object));
    else send({ type: ev.type, object: render(s.rendering === 'table' ? present(r, ev.object) : servedView(r, ev.object)) });
  };
  try {
    handle = storage.watch(prefix, from, onEvent, (err) => {
      server.logger.error(err, { resource: r.resource }, 'watch ended by storage');
      finish();
    });
  } catch (err) {
    if (err instanceof StorageError && err.code === 'Compacted') {
      const st = gone(`too old resource version: ${from} (${storage.compactedRevision()})`).status;
      st.reason = 'Expired';
      send({ type: 'ERROR', object: st });
      finish();
      return;
    }
    finish();
    throw err;
  }
  if (closed) {
    // Ended while starting (client gone, slow client): nothing to time out.
    handle.stop();
    return;
  }

  const deadline = server.clock.now() + timeoutMs;
  timers[0] = setLongTimer(server.clock, finish, timeoutMs);
  if (bookmarks) {
    const schedule = (): void => {
      if (closed) return;
      const remaining = deadline - server.clock.now();
      // Periodic, and one just before the timeout so clients can resume from it.
      const next = Math.min(server.bookmarkIntervalMs, Math.max(0, remaining - 2000));
      if (remaining <= 0) return;
      // One pending bookmark timer at a time: a watch may last for years.
      timers[1] = server.clock.setTimer(() => {
        bookmark();
        if (deadline - server.clock.now() > 2000) schedule();
      }, next);
    };
    schedule();
  }
}

/** Go's largest time.Duration (about 292 years), in milliseconds. */
const maxGoDurationMs = Number(2n ** 63n - 1n) / 1e6;

/**
 * How long a watch lasts, as get.go's ListResource decides: `timeoutSeconds`
 * (an int64; 400 with strconv's error otherwise) when not 0, else
 * --min-request-timeout times a random factor in [1, 2). A negative timeout
 * has passed already: the watch ends at once. A huge one lasts as long as
 * Go's Duration can (Go's multiplication would wrap around; kcm saturates).
 */
export function watchTimeoutMs(param: string | null, minRequestTimeoutSeconds: number): number {
  const seconds = param === null ? 0 : parseInt64(param);
  if (seconds === 0) return minRequestTimeoutSeconds * (1 + Math.random()) * 1000;
  if (seconds < 0) return 0;
  return Math.min(seconds * 1000, maxGoDurationMs);
}

/**
 * `obj` as served at `r`'s group/version without copying its parts: for
 * serialising only, never to be changed (stored objects are deep-frozen).
 */
function servedView(r: ServedResource, obj: KubeObject): KubeObject {
  // A resource that decodes what it reads (custom resources' defaults) needs its own copy.
  if (r.decode) return present(r, obj);
  return { ...obj, apiVersion: apiVersionOf(r.group, r.version), kind: r.kind };
}

/** Distinguishes ServedResources whose decode may differ (a CRD's schema changed) in the shared line cache. */
const decodeIds = new WeakMap<ServedResource, number>();
let nextDecodeId = 0;
function decodeId(r: ServedResource): string {
  if (!r.decode) return '';
  let id = decodeIds.get(r);
  if (id === undefined) decodeIds.set(r, (id = ++nextDecodeId));
  return ` #${id}`;
}

/**
 * Encodings of recent stored objects, per event type and served
 * group/version/kind. Stored objects are deep-frozen and never change, so
 * every watcher that sends the same event in the same form shares one
 * encoding instead of a copy and an encoding each.
 *
 * Watchers send an event when it happens, so only recent objects need their
 * encodings: the cache holds those of the last `capacity` objects encoded.
 * Keeping one per object for as long as the object lives would keep a copy
 * of every event in the watch cache's 75-second window as text (at 10,000
 * pods created, hundreds of MB); a watch replaying older events encodes
 * them again.
 */
export class SharedEncodings<T> {
  private readonly byObject = new WeakMap<KubeObject, Map<string, T>>();
  private readonly recent: (KubeObject | undefined)[];
  private next = 0;

  constructor(readonly capacity: number) {
    this.recent = new Array<KubeObject | undefined>(capacity);
  }

  get(obj: KubeObject, form: string): T | undefined {
    return this.byObject.get(obj)?.get(form);
  }

  set(obj: KubeObject, form: string, value: T): void {
    let byForm = this.byObject.get(obj);
    if (!byForm) {
      const evicted = this.recent[this.next];
      if (evicted !== undefined) this.byObject.delete(evicted);
      this.recent[this.next] = obj;
      this.next = (this.next + 1) % this.capacity;
      this.byObject.set(obj, (byForm = new Map()));
    }
    byForm.set(form, value);
  }
}

const SHARED_ENCODINGS = 4096;
const sharedLines = new SharedEncodings<string>(SHARED_ENCODINGS);
const sharedFrames = new SharedEncodings<Uint8Array>(SHARED_ENCODINGS);

/**
 * The encoding of a watch event carrying `obj` served at `r`: shared through
 * `cache` when `obj` is a stored (frozen) object, made afresh otherwise.
 */
function sharedEncoding<T>(cache: SharedEncodings<T>, type: WatchEvent['type'], r: ServedResource, obj: KubeObject, encode: (event: { type: WatchEvent['type']; object: KubeObject }) => T): T {
  if (!Object.isFrozen(obj)) return encode({ type, object: present(r, obj) });
  const form = `${type} ${r.group}/${r.version} ${r.kind}${decodeId(r)}`;
  let encoded = cache.get(obj, form);
  if (encoded === undefined) cache.set(obj, form, (encoded = encode({ type, object: servedView(r, obj) })));
  return encoded;
}

/** The JSON line (with its newline) of a watch event carrying `obj` served at `r`. */
export function eventLine(type: WatchEvent['type'], r: ServedResource, obj: KubeObject): string {
  return sharedEncoding(sharedLines, type, r, obj, (event) => {
    // A stored object just written, served as it is stored: its stored text is the event's object.
    const text = !r.decode && obj.apiVersion === event.object.apiVersion && obj.kind === event.object.kind ? storedText(obj) : undefined;
    return text !== undefined ? `{"type":${JSON.stringify(event.type)},"object":${escapeAsGo(text)}}\n` : stringifyAsGo(event) + '\n';
  });
}

/** The protobuf frame of a watch event carrying `obj` served at `r`; shared like eventLine's lines. */
export function eventFrame(type: WatchEvent['type'], r: ServedResource, obj: KubeObject): Uint8Array {
  // The served kind is built-in (negotiation allows protobuf only then), so it has a message.
  return sharedEncoding(sharedFrames, type, r, obj, (event) => encodeWatchEventFrame(event.type, event.object)!);
}

/** Applies the selection to a storage event (cacher's convertToWatchEvent). */
export function translate(e: StorageEvent, matches: (o: KubeObject) => boolean): { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject } | undefined {
  switch (e.type) {
    case 'ADDED':
      return matches(e.object) ? { type: 'ADDED', object: e.object } : undefined;
    case 'MODIFIED': {
      const now = matches(e.object);
      const before = matches(e.prevObject);
      if (now && before) return { type: 'MODIFIED', object: e.object };
      if (now) return { type: 'ADDED', object: e.object };
      if (before) {
        const prev = deepCopy(e.prevObject);
        prev.metadata = { ...(prev.metadata ?? {}), resourceVersion: String(e.revision) };
        return { type: 'DELETED', object: prev };
      }
      return undefined;
    }
    case 'DELETED':
      return matches(e.prevObject) || matches(e.object) ? { type: 'DELETED', object: e.object } : undefined;
  }
}
