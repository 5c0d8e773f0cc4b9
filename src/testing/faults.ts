/**
 * Fault injection for robustness tests of a controller: the test env's
 * HTTP layer answers chosen requests with the failures a real cluster
 * produces, before the API server sees them.
 *
 *   env.faults.dropWatches();                                   // every open watch ends now
 *   env.faults.expireNext({ verb: 'watch', resource: 'configmaps' });    // 410 Expired: relist
 *   env.faults.throttle({ count: 3, retryAfterSeconds: 1 });    // 429 with Retry-After
 *   env.faults.conflictNextUpdate('deployments', { namespace: 'default', name: 'web' });  // 409
 *   env.faults.slow('secrets', 500);                            // every secrets request takes 500 ms more
 *
 * Resources are named by their plural (`deployments`), optionally with the
 * group (`deployments.apps`); a subresource by `<resource>/<sub>`
 * (`widgets/status`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Status } from '../api/types.js';
import { parseRequestInfo, truthyParam, type Verb } from '../apiserver/request-info.js';

export interface FaultMatch {
  /** `deployments`, `deployments.apps`, `widgets/status`; any when absent. */
  resource?: string;
  /** Request verbs as the API server names them (list, watch, get, create, update, patch, delete, ...); any when absent. */
  verb?: Verb | Verb[];
  namespace?: string;
  name?: string;
}

export interface Faults {
  /** Ends every open watch stream (matching `match`) now, as a restarted API server would; returns how many. */
  dropWatches(match?: FaultMatch): number;
  /** Answers the next `count` (default 1) matching list or watch requests with 410 Expired (`too old resource version`). */
  expireNext(opts?: FaultMatch & { count?: number }): void;
  /** Answers the next `count` matching requests with 429 TooManyRequests and `Retry-After: retryAfterSeconds` (default 1). */
  throttle(opts: FaultMatch & { count: number; retryAfterSeconds?: number }): void;
  /** Makes the next `count` (default 1) updates or patches of one object fail with 409 Conflict. */
  conflictNextUpdate(resource: string, key: { namespace?: string; name: string }, count?: number): void;
  /** Delays every matching request by `ms` before it is served (0 stops delaying). */
  slow(resource: string, ms: number): void;
  /** How many requests each fault has answered so far. */
  injected(): { expired: number; throttled: number; conflicts: number; droppedWatches: number };
  /** Forgets every pending fault and delay. */
  clear(): void;
}

interface Rule {
  match: FaultMatch;
  remaining: number;
  respond: (res: ServerResponse, info: Parsed) => void;
  kind: 'expired' | 'throttled' | 'conflicts';
}

interface Parsed {
  verb: Verb;
  resource: string;
  group: string;
  subresource: string;
  namespace: string;
  name: string;
}

function status(code: number, reason: string, message: string, details?: Status['details']): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...(details ? { details } : {}) };
}

function sendStatus(res: ServerResponse, s: Status, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(s);
  res.writeHead(s.code ?? 500, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

function matches(m: FaultMatch, p: Parsed): boolean {
  if (m.resource) {
    const [res, sub = ''] = m.resource.split('/');
    const dot = res!.indexOf('.');
    const plural = dot < 0 ? res! : res!.slice(0, dot);
    const group = dot < 0 ? undefined : res!.slice(dot + 1);
    if (plural !== p.resource || (group !== undefined && group !== p.group) || sub !== p.subresource) return false;
  }
  if (m.verb !== undefined && !(Array.isArray(m.verb) ? m.verb : [m.verb]).includes(p.verb)) return false;
  if (m.namespace !== undefined && m.namespace !== p.namespace) return false;
  if (m.name !== undefined && m.name !== p.name) return false;
  return true;
}

export interface FaultInjector extends Faults {
  /** Handles the request itself (true) or lets it through (false), possibly after a delay. */
  intercept(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}

export function newFaultInjector(): FaultInjector {
  let rules: Rule[] = [];
  const delays = new Map<string, number>();
  const watches = new Set<{ res: ServerResponse; info: Parsed }>();
  const counts = { expired: 0, throttled: 0, conflicts: 0, droppedWatches: 0 };

  const parse = (req: IncomingMessage): Parsed | undefined => {
    const url = new URL(req.url ?? '/', 'http://x');
    const info = parseRequestInfo(req.method ?? 'GET', url.pathname, truthyParam(url.searchParams.get('watch')));
    if (info.kind !== 'resource') return undefined;
    return { verb: info.verb, resource: info.resource, group: info.group, subresource: info.subresource, namespace: info.namespace, name: info.name };
  };

  return {
    async intercept(req, res) {
      const p = parse(req);
      if (!p) return false;
      const delay = [...delays].find(([r]) => matches({ resource: r }, p))?.[1];
      if (delay) await new Promise((r) => setTimeout(r, delay));
      const rule = rules.find((r) => r.remaining > 0 && matches(r.match, p));
      if (rule) {
        rule.remaining--;
        counts[rule.kind]++;
        rules = rules.filter((r) => r.remaining > 0);
        rule.respond(res, p);
        return true;
      }
      if (p.verb === 'watch') {
        const entry = { res, info: p };
        watches.add(entry);
        res.on('close', () => watches.delete(entry));
      }
      return false;
    },

    dropWatches(match = {}) {
      let n = 0;
      for (const w of [...watches]) {
        if (!matches(match, w.info)) continue;
        watches.delete(w);
        w.res.destroy();
        n++;
      }
      counts.droppedWatches += n;
      return n;
    },

    expireNext(opts = {}) {
      const { count = 1, ...match } = opts;
      rules.push({
        match: { ...match, verb: match.verb ?? ['list', 'watch'] },
        remaining: count,
        kind: 'expired',
        respond: (res) => sendStatus(res, status(410, 'Expired', 'too old resource version: 1 (2)')),
      });
    },

    throttle(opts) {
      const { count, retryAfterSeconds = 1, ...match } = opts;
      rules.push({
        match,
        remaining: count,
        kind: 'throttled',
        respond: (res) =>
          sendStatus(res, status(429, 'TooManyRequests', 'The server has received too many requests and has asked us to try again later', { retryAfterSeconds }), {
            'Retry-After': String(retryAfterSeconds),
          }),
      });
    },

    conflictNextUpdate(resource, key, count = 1) {
      rules.push({
        match: { resource, verb: ['update', 'patch'], name: key.name, ...(key.namespace !== undefined ? { namespace: key.namespace } : {}) },
        remaining: count,
        kind: 'conflicts',
        respond: (res, p) =>
          sendStatus(
            res,
            status(409, 'Conflict', `Operation cannot be fulfilled on ${p.group ? `${p.resource}.${p.group}` : p.resource} "${p.name}": the object has been modified; please apply your changes to the latest version and try again`, {
              name: p.name,
              group: p.group,
              kind: p.resource,
            }),
          ),
      });
    },

    slow(resource, ms) {
      if (ms > 0) delays.set(resource, ms);
      else delays.delete(resource);
    },

    injected() {
      return { ...counts };
    },

    clear() {
      rules = [];
      delays.clear();
    },
  };
}
