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
