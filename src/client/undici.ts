/**
 * The parts of undici kcm uses, Agent and request, imported from undici's own
 * files rather than its index. The index loads all of undici (fetch,
 * WebSocket, caches, mocks, proxies: a megabyte of code, a third of what kcm
 * up's API server process loads at start), and every kcm process paid for it
 * at start. The files are undici 7's (the lockfile pins the version; the
 * client and webhook tests exercise both).
 */
import type { Agent as UndiciAgent, Dispatcher } from 'undici';
import AgentImpl from 'undici/lib/dispatcher/agent.js';
import apiRequest from 'undici/lib/api/api-request.js';

export type { Dispatcher };
export const Agent: typeof UndiciAgent = AgentImpl;
export type Agent = UndiciAgent;

export type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & { method?: Dispatcher.HttpMethod; dispatcher: Dispatcher };

/**
 * undici's `request(url, opts)` for an absolute URL and a dispatcher, as its
 * index wraps it (makeDispatcher): origin, path with query, and the method
 * (GET, or PUT with a body) go to the dispatcher's request.
 */
export function request(url: string | URL, opts: RequestOptions): Promise<Dispatcher.ResponseData> {
  const { dispatcher, ...rest } = opts;
  return apiRequest.call(dispatcher, {
    ...rest,
    ...originAndPath(url),
    method: opts.method ?? (opts.body ? 'PUT' : 'GET'),
  });
}

/** What a dispatcher takes of an absolute URL: its origin and its path with the query (normalised as URL does). */
function originAndPath(url: string | URL): { origin: string; path: string } {
  const u = typeof url === 'string' ? new URL(url) : url;
  return { origin: u.origin, path: u.search ? `${u.pathname}${u.search}` : u.pathname };
}

/** A whole response: status, headers (lower-case names; repeated ones as arrays) and the body. */
export interface BufferedResponse {
  statusCode: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/**
 * `request` for a response read whole: a plain dispatch handler gathers the
 * body, without undici's request machinery (an AsyncResource, a Readable body
 * and its async iterator, an abort listener per request), which cost as much
 * CPU as the HTTP exchange itself in a controller manager's many small
 * requests. `signal` aborts the request at any point.
 */
export function requestBuffered(url: string, opts: { method: Dispatcher.HttpMethod; headers: Record<string, string>; body?: string | Buffer; signal?: AbortSignal; dispatcher: Dispatcher }): Promise<BufferedResponse> {
  const { signal } = opts;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const { origin, path } = originAndPath(url);
  return new Promise((resolve, reject) => {
    let abort: ((err?: Error) => void) | undefined;
    let statusCode = 0;
    let headers: Record<string, string | string[]> = {};
    const chunks: Buffer[] = [];
    let settled = false;
    const onAbort = () => {
      if (abort) abort(signal!.reason as Error);
      else finish(signal!.reason);
    };
    function finish(err: unknown, res?: BufferedResponse) {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (res) resolve(res);
      else reject(err);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      onConnect(a) {
        abort = a;
        if (signal?.aborted) a(signal.reason as Error);
      },
      onHeaders(code, raw) {
        if (code < 200) return true; // 1xx: informational, the response follows
        statusCode = code;
        headers = parseRawHeaders(raw as unknown as Buffer[]);
        return true;
      },
      onData(chunk) {
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        finish(undefined, { statusCode, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
      },
      onError(err) {
        finish(err);
      },
    };
    try {
      // reset: false keeps the connection after a DELETE with a body (undici closes it by default for methods that
      // "expect no payload"): an API server answers it like any request, as Go's client assumes.
      opts.dispatcher.dispatch({ origin, path, method: opts.method, headers: opts.headers, body: opts.body ?? null, reset: false }, handler);
    } catch (err) {
      finish(err);
    }
  });
}

function parseRawHeaders(raw: Buffer[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>; // a header named __proto__ stays a header
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1').toLowerCase();
    const value = raw[i + 1]!.toString('latin1');
    const had = out[name];
    if (had === undefined) out[name] = value;
    else if (Array.isArray(had)) had.push(value);
    else out[name] = [had, value];
  }
  return out;
}
