/**
 * A Watch over a streaming HTTP response. Iteration ends quietly when the
 * server closes the stream, the client-side timeout passes or stop() is
 * called; it throws NetworkError when the stream breaks. ERROR events are
 * yielded as they come (the reflector handles 410 Gone). Single use: iterate once.
 */
import type { KubeObject, Status, WatchEvent } from '../api/types.js';
import type { Clock, Timer } from '../util/clock/clock.js';
import { NetworkError, newStatus } from './errors.js';
import type { Watch } from './interfaces.js';
import type { StreamResponse } from './rest-client.js';
import { newJsonStreamDecoder } from './watch-decoder.js';

export interface StreamWatchOptions {
  clock: Clock;
  /** Ends the iteration after this long (the server should close first). */
  timeoutMs?: number;
  /** Applied to objects of ADDED, MODIFIED and DELETED events. */
  transform?: (obj: KubeObject) => KubeObject;
  /** Cut each object's metadata.managedFields out of the event's text before it is parsed. */
  dropManagedFields?: boolean;
  /** Aborting it stops the watch, as stop() does. */
  signal?: AbortSignal;
  /** What is watched, for error messages. */
  description: string;
}

const EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

function decodeError(message: string): WatchEvent<never> {
  return { type: 'ERROR', object: newStatus(500, 'InternalError', message) as Status };
}

/** Parses one event text; malformed input becomes an ERROR event as client-go's StreamWatcher reports it. */
export function parseWatchEvent<T extends KubeObject>(text: string, transform?: (obj: KubeObject) => KubeObject): WatchEvent<T> {
  let v: { type?: unknown; object?: unknown };
  try {
    v = JSON.parse(text) as { type?: unknown; object?: unknown };
  } catch (err) {
    return decodeError(`unable to decode an event from the watch stream: ${(err as Error).message}`);
  }
  if (!v || typeof v !== 'object' || typeof v.type !== 'string' || !EVENT_TYPES.has(v.type) || !v.object || typeof v.object !== 'object') {
    return decodeError(`unable to decode an event from the watch stream: unexpected event ${text.slice(0, 200)}`);
  }
  if (transform && (v.type === 'ADDED' || v.type === 'MODIFIED' || v.type === 'DELETED')) {
    return { type: v.type, object: transform(v.object as KubeObject) } as WatchEvent<T>;
  }
  return v as WatchEvent<T>;
}

export function newStreamWatch<T extends KubeObject>(res: StreamResponse, opts: StreamWatchOptions): Watch<T> {
  let stopped = false;
  let iterated = false;
  let timer: Timer | undefined;
  const onAbort = () => stop();
  const stop = () => {
    if (stopped) return;
    stopped = true;
    timer?.stop();
    opts.signal?.removeEventListener('abort', onAbort);
    res.abort();
  };
  if (opts.signal?.aborted) stop();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.timeoutMs !== undefined && opts.timeoutMs > 0) timer = opts.clock.setTimer(stop, opts.timeoutMs);
  async function* events(): AsyncGenerator<WatchEvent<T>> {
    const decoder = newJsonStreamDecoder({ dropManagedFields: opts.dropManagedFields });
    try {
      for await (const chunk of res.body) {
        for (const text of decoder.push(chunk)) {
          if (stopped) return;
          yield parseWatchEvent<T>(text, opts.transform);
        }
        if (stopped) return;
      }
      if (!stopped && decoder.pending()) throw new NetworkError(`watch ${opts.description}: stream ended in the middle of an event`);
    } catch (err) {
      if (stopped) return;
      if (err instanceof NetworkError) throw err;
      throw new NetworkError(`watch ${opts.description}: stream broke: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    } finally {
      stop();
    }
  }
  return {
    stop,
    [Symbol.asyncIterator]() {
      if (iterated) throw new Error('a Watch can be iterated only once');
      iterated = true;
      return events();
    },
  };
}
