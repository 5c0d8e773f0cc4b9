/**
 * A small in-process API server for client and informer tests: HTTP or
 * HTTPS on port 0, request recording, custom handlers, and an object store
 * serving get, list (labelSelector equality, limit/continue), create,
 * update, status, merge patch, delete, watch (with resourceVersion replay,
 * bookmarks and 410 after compact) and discovery.
 *
 * It is not the embedded API server: no validation, defaults or admission.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { GroupVersionResource, KubeObject, Status } from '../../api/types.js';
import { newStatus } from '../errors.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export interface FakeResource {
  gvr: GroupVersionResource;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  /** Subresources served: 'status' etc. */
  subresources?: string[];
}

export interface RecordedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Subject CN of a verified client certificate (HTTPS only). */
  clientCN?: string;
}

/** Return false to let the next handler (or the store) answer. */
export type FakeHandler = (req: RecordedRequest, res: http.ServerResponse) => void | boolean | Promise<void | boolean>;

export interface FakeApiServerOptions {
  tls?: { key: string; cert: string; ca?: string; requestCert?: boolean };
  resources?: FakeResource[];
}

export interface FakeApiServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Adds a handler checked before the store (newest first). `path` matches exactly, or by RegExp. */
  handle(method: string, path: string | RegExp, handler: FakeHandler): void;
  addResource(r: FakeResource): void;
  /** Stores an object as a create would (assigns resourceVersion, uid), notifying watchers. */
  seed<T extends KubeObject>(gvr: GroupVersionResource, obj: T): T;
  objects(gvr: GroupVersionResource): KubeObject[];
  /** Current resourceVersion of the store. */
  resourceVersion(): number;
  /** Makes watches from resourceVersions older than now answer 410 Expired. */
  compact(): void;
  /** Sends a BOOKMARK at the current revision to watches that asked for them. */
  bookmark(): void;
  /** Ends every open watch response. */
  closeWatches(): void;
  close(): Promise<void>;
}

export const DEFAULT_FAKE_RESOURCES: FakeResource[] = [
  { gvr: { group: '', version: 'v1', resource: 'pods' }, kind: 'Pod', namespaced: true, shortNames: ['po'], subresources: ['status'] },
  { gvr: { group: '', version: 'v1', resource: 'configmaps' }, kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  { gvr: { group: '', version: 'v1', resource: 'nodes' }, kind: 'Node', namespaced: false, shortNames: ['no'], subresources: ['status'] },
  { gvr: { group: '', version: 'v1', resource: 'namespaces' }, kind: 'Namespace', namespaced: false, shortNames: ['ns'], subresources: ['status'] },
  { gvr: { group: 'apps', version: 'v1', resource: 'deployments' }, kind: 'Deployment', namespaced: true, shortNames: ['deploy'], subresources: ['status', 'scale'] },
  { gvr: { group: 'apps', version: 'v1', resource: 'replicasets' }, kind: 'ReplicaSet', namespaced: true, shortNames: ['rs'], subresources: ['status', 'scale'] },
  { gvr: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' }, kind: 'Lease', namespaced: true },
];

interface Watcher {
  key: string;
  namespace?: string;
  res: http.ServerResponse;
  bookmarks: boolean;
  match: (o: KubeObject) => boolean;
}

interface HistoryEntry {
  rv: number;
  key: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  obj: KubeObject;
}

const gvrKey = (g: GroupVersionResource) => `${g.group}/${g.version}/${g.resource}`;
const objKey = (o: KubeObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

function parseLabelSelector(s: string | null): (labels: Record<string, string> | undefined) => boolean {
  if (!s) return () => true;
  const reqs = s.split(',').map((p) => {
    const m = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(\S*)\s*$/.exec(p);
    if (m) return { key: m[1]!, op: m[2] === '!=' ? 'ne' : 'eq', value: m[3]! };
    const neg = p.trim().startsWith('!');
    return { key: p.trim().replace(/^!/, ''), op: neg ? 'absent' : 'exists', value: '' };
  });
  return (labels) =>
    reqs.every((r) => {
      const v = labels?.[r.key];
      switch (r.op) {
        case 'eq':
          return v === r.value;
        case 'ne':
          return v !== r.value;
        case 'exists':
          return v !== undefined;
        default:
          return v === undefined;
      }
    });
}

function parseFieldSelector(s: string | null): (o: KubeObject) => boolean {
  if (!s) return () => true;
  const reqs = s.split(',').map((p) => {
    const m = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(\S*)\s*$/.exec(p);
    if (!m) throw new Error(`bad field selector ${p}`);
    return { path: m[1]!.split('.'), ne: m[2] === '!=', value: m[3]! };
  });
  return (o) =>
    reqs.every((r) => {
      let v: unknown = o;
      for (const k of r.path) v = (v as Record<string, unknown> | undefined)?.[k];
      const eq = String(v ?? '') === r.value;
      return r.ne ? !eq : eq;
    });
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function toPartial(o: KubeObject): KubeObject {
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: o.metadata };
}

export async function startFakeApiServer(opts: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const resources = new Map<string, FakeResource>();
  for (const r of opts.resources ?? DEFAULT_FAKE_RESOURCES) resources.set(gvrKey(r.gvr), r);
  const store = new Map<string, Map<string, KubeObject>>();
  const history: HistoryEntry[] = [];
  const watchers = new Set<Watcher>();
  const handlers: { method: string; path: string | RegExp; fn: FakeHandler }[] = [];
  const requests: RecordedRequest[] = [];
  let rv = 1;
  let compactedRv = 0;
  let uid = 0;

  const bucket = (key: string) => {
    let b = store.get(key);
    if (!b) store.set(key, (b = new Map()));
    return b;
  };

  const notify = (key: string, type: HistoryEntry['type'], obj: KubeObject) => {
    history.push({ rv: Number(obj.metadata!.resourceVersion), key, type, obj });
    for (const w of watchers) {
      if (w.key !== key || (w.namespace && obj.metadata?.namespace !== w.namespace) || !w.match(obj)) continue;
      w.res.write(JSON.stringify({ type, object: obj }) + '\n');
    }
  };

  const send = (res: http.ServerResponse, code: number, body: unknown) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const fail = (res: http.ServerResponse, s: Status) => send(res, s.code ?? 500, s);

  const create = (key: string, r: FakeResource, obj: KubeObject, ns: string | undefined): KubeObject | Status => {
    const o = deepCopy(obj);
    o.metadata ??= {};
    if (!o.metadata.name && o.metadata.generateName) o.metadata.name = `${o.metadata.generateName}${(++uid).toString(36).padStart(5, 'x')}`;
    if (!o.metadata.name) return newStatus(422, 'Invalid', `${r.kind} "" is invalid: metadata.name: Required value`);
    if (r.namespaced) o.metadata.namespace = ns ?? o.metadata.namespace ?? 'default';
    const b = bucket(key);
    if (b.has(objKey(o))) {
      return newStatus(409, 'AlreadyExists', `${r.gvr.resource} "${o.metadata.name}" already exists`, { name: o.metadata.name, group: r.gvr.group, kind: r.gvr.resource });
    }
    o.apiVersion = r.gvr.group ? `${r.gvr.group}/${r.gvr.version}` : r.gvr.version;
    o.kind = r.kind;
    o.metadata = { ...o.metadata, uid: `uid-${++uid}`, resourceVersion: String(++rv), creationTimestamp: o.metadata.creationTimestamp ?? '2024-01-01T00:00:00Z' };
    b.set(objKey(o), o);
    notify(key, 'ADDED', o);
    return o;
  };

  const notFound = (r: FakeResource, name: string) =>
    newStatus(404, 'NotFound', `${r.gvr.resource}${r.gvr.group ? '.' + r.gvr.group : ''} "${name}" not found`, { name, group: r.gvr.group, kind: r.gvr.resource });

  const replace = (key: string, r: FakeResource, existing: KubeObject, next: KubeObject): KubeObject | Status => {
    const want = next.metadata?.resourceVersion;
    if (want && want !== existing.metadata?.resourceVersion) {
      return newStatus(409, 'Conflict', `Operation cannot be fulfilled on ${r.gvr.resource} "${existing.metadata?.name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    const o = deepCopy(next);
    o.metadata = { ...o.metadata, name: existing.metadata!.name, namespace: existing.metadata!.namespace, uid: existing.metadata!.uid, resourceVersion: String(++rv) };
    o.apiVersion = existing.apiVersion;
    o.kind = existing.kind;
    bucket(key).set(objKey(o), o);
    notify(key, 'MODIFIED', o);
    return o;
  };

  const discovery = (path: string, res: http.ServerResponse): boolean => {
    if (path === '/version') {
      send(res, 200, { major: '1', minor: '30', gitVersion: 'v1.30.0-fake', gitCommit: '', gitTreeState: 'clean', buildDate: '', goVersion: '', compiler: '', platform: 'linux/amd64' });
      return true;
    }
    if (path === '/api') {
      send(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
      return true;
    }
    if (path === '/apis') {
      const groups = new Map<string, string[]>();
      for (const r of resources.values()) {
        if (!r.gvr.group) continue;
        const vs = groups.get(r.gvr.group) ?? [];
        if (!vs.includes(r.gvr.version)) vs.push(r.gvr.version);
        groups.set(r.gvr.group, vs);
      }
      send(res, 200, {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [...groups].map(([name, vs]) => {
          const versions = vs.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
          return { name, versions, preferredVersion: versions[0] };
        }),
      });
      return true;
    }
    const m = /^\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
    if (!m) return false;
    const group = m[2] ?? '';
    const version = m[1] ?? m[3]!;
    const rs = [...resources.values()].filter((r) => r.gvr.group === group && r.gvr.version === version);
    if (!rs.length) return false;
    const list = rs.flatMap((r) => [
      {
        name: r.gvr.resource,
        singularName: r.kind.toLowerCase(),
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        ...(r.shortNames ? { shortNames: r.shortNames } : {}),
      },
      ...(r.subresources ?? []).map((s) => ({ name: `${r.gvr.resource}/${s}`, singularName: '', namespaced: r.namespaced, kind: s === 'scale' ? 'Scale' : r.kind, verbs: ['get', 'patch', 'update'] })),
    ]);
    send(res, 200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources: list });
    return true;
  };

  const serveStore = (req: RecordedRequest, res: http.ServerResponse): boolean => {
    const m = /^\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))\/(.+)$/.exec(req.path);
    if (!m) return false;
    const group = m[2] ?? '';
    const version = m[1] ?? m[3]!;
    let segs = m[4]!.split('/').map(decodeURIComponent);
    let ns: string | undefined;
    if (segs[0] === 'namespaces' && segs.length >= 3 && resources.get(`${group}/${version}/${segs[2]}`)?.namespaced) {
      ns = segs[1];
      segs = segs.slice(2);
    }
    const r = resources.get(`${group}/${version}/${segs[0]}`);
    if (!r) return false;
    const key = gvrKey(r.gvr);
    const [, name, sub] = segs;
    const b = bucket(key);
    const partial = /as=PartialObjectMetadata/.test(String(req.headers.accept ?? ''));
    const existing = name !== undefined ? b.get(`${r.namespaced ? (ns ?? '') : ''}/${name}`) : undefined;
    let body: KubeObject | undefined;
    if (req.body && req.method !== 'PATCH') {
      try {
        body = JSON.parse(req.body) as KubeObject;
      } catch {
        fail(res, newStatus(400, 'BadRequest', 'the body is not JSON'));
        return true;
      }
    }
    const out = (o: KubeObject | Status, code = 200) => {
      if ((o as Status).kind === 'Status' && (o as Status).status === 'Failure') fail(res, o as Status);
      else send(res, code, partial ? toPartial(o as KubeObject) : o);
    };
    switch (req.method) {
      case 'GET': {
        if (name !== undefined) {
          if (!existing) return fail(res, notFound(r, name)), true;
          out(sub === 'scale' ? { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: existing.metadata, spec: { replicas: (existing.spec as { replicas?: number })?.replicas } } : existing);
          return true;
        }
        const labels = parseLabelSelector(req.query.get('labelSelector'));
        const fields = parseFieldSelector(req.query.get('fieldSelector'));
        const match = (o: KubeObject) => labels(o.metadata?.labels) && fields(o);
        if (req.query.get('watch') === '1' || req.query.get('watch') === 'true') {
          const from = req.query.get('resourceVersion');
          res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
          res.flushHeaders();
          const w: Watcher = { key, namespace: ns, res, bookmarks: req.query.get('allowWatchBookmarks') === 'true', match };
          if (from && from !== '0' && Number(from) < compactedRv) {
            res.end(JSON.stringify({ type: 'ERROR', object: newStatus(410, 'Expired', `too old resource version: ${from} (${compactedRv})`) }) + '\n');
            return true;
          }
          if (!from || from === '0') {
            for (const o of [...b.values()].sort((x, y) => objKey(x).localeCompare(objKey(y)))) {
              if ((!ns || o.metadata?.namespace === ns) && match(o)) res.write(JSON.stringify({ type: 'ADDED', object: o }) + '\n');
            }
          } else {
            for (const h of history) {
              if (h.key === key && h.rv > Number(from) && (!ns || h.obj.metadata?.namespace === ns) && match(h.obj)) res.write(JSON.stringify({ type: h.type, object: h.obj }) + '\n');
            }
          }
          watchers.add(w);
          const t = Number(req.query.get('timeoutSeconds') ?? 0);
          const timer = t > 0 ? setTimeout(() => res.end(), t * 1000) : undefined;
          res.on('close', () => {
            if (timer) clearTimeout(timer);
            watchers.delete(w);
          });
          return true;
        }
        const all = [...b.values()].filter((o) => (!ns || o.metadata?.namespace === ns) && match(o)).sort((x, y) => objKey(x).localeCompare(objKey(y)));
        const start = req.query.get('continue') ? Number(Buffer.from(req.query.get('continue')!, 'base64url').toString()) : 0;
        if (Number.isNaN(start)) return fail(res, newStatus(400, 'BadRequest', 'invalid continue token')), true;
        if (req.query.get('continue') && start < 0) return fail(res, newStatus(410, 'Expired', 'The provided continue parameter is too old')), true;
        const limit = Number(req.query.get('limit') ?? 0);
        const items = limit > 0 ? all.slice(start, start + limit) : all.slice(start);
        const next = limit > 0 && start + limit < all.length ? Buffer.from(String(start + limit)).toString('base64url') : undefined;
        const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
        if (next) {
          metadata.continue = next;
          metadata.remainingItemCount = all.length - start - limit;
        }
        const listKind = partial ? 'PartialObjectMetadataList' : `${r.kind}List`;
        send(res, 200, { kind: listKind, apiVersion: partial ? 'meta.k8s.io/v1' : group ? `${group}/${version}` : version, metadata, items: partial ? items.map(toPartial) : items });
        return true;
      }
      case 'POST': {
        if (name !== undefined) return false;
        if (!body) return fail(res, newStatus(400, 'BadRequest', 'missing body')), true;
        if (req.query.get('dryRun') === 'All') return out({ ...body, metadata: { ...body.metadata, namespace: ns } }, 201), true;
        out(create(key, r, body, ns), 201);
        return true;
      }
      case 'PUT': {
        if (name === undefined || !body) return false;
        if (!existing) return fail(res, notFound(r, name)), true;
        if (sub === 'status') out(replace(key, r, existing, { ...existing, status: body.status, metadata: { ...existing.metadata, resourceVersion: body.metadata?.resourceVersion } }));
        else if (sub) return false;
        else out(replace(key, r, existing, { ...body, status: existing.status }));
        return true;
      }
      case 'PATCH': {
        if (name === undefined) return false;
        if (!existing) return fail(res, notFound(r, name)), true;
        if (req.headers['content-type'] !== 'application/merge-patch+json') {
          return fail(res, newStatus(415, 'UnsupportedMediaType', `the fake server supports only merge patches, not ${req.headers['content-type']}`)), true;
        }
        const patched = mergePatch(existing, JSON.parse(req.body)) as KubeObject;
        out(replace(key, r, existing, { ...patched, metadata: { ...patched.metadata, resourceVersion: undefined } }));
        return true;
      }
      case 'DELETE': {
        if (name === undefined) {
          for (const o of [...b.values()]) if (!ns || o.metadata?.namespace === ns) b.delete(objKey(o)), notify(key, 'DELETED', { ...o, metadata: { ...o.metadata, resourceVersion: String(++rv) } });
          send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' });
          return true;
        }
        if (!existing) return fail(res, notFound(r, name)), true;
        const pre = body?.preconditions as { uid?: string; resourceVersion?: string } | undefined;
        if (pre?.uid && pre.uid !== existing.metadata?.uid) return fail(res, newStatus(409, 'Conflict', 'Precondition failed: UID in precondition')), true;
        b.delete(objKey(existing));
        const gone = { ...existing, metadata: { ...existing.metadata, resourceVersion: String(++rv) } };
        notify(key, 'DELETED', gone);
        out(gone);
        return true;
      }
      default:
        return false;
    }
  };

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://fake');
        const sock = req.socket as TLSSocket;
        const peer = typeof sock.getPeerCertificate === 'function' && sock.authorized ? sock.getPeerCertificate() : undefined;
        const rec: RecordedRequest = {
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          ...(peer?.subject?.CN ? { clientCN: String(peer.subject.CN) } : {}),
        };
        requests.push(rec);
        try {
          for (const h of [...handlers].reverse()) {
            const hit = h.method === '*' || h.method === rec.method;
            const pathHit = typeof h.path === 'string' ? h.path === rec.path : h.path.test(rec.path);
            if (hit && pathHit && (await h.fn(rec, res)) !== false) return;
          }
          if (rec.method === 'GET' && discovery(rec.path, res)) return;
          if (serveStore(rec, res)) return;
          fail(res, newStatus(404, 'NotFound', 'the server could not find the requested resource'));
        } catch (err) {
          if (!res.headersSent) fail(res, newStatus(500, 'InternalError', `fake server: ${(err as Error).message}`));
          else res.destroy(err as Error);
        }
      })();
    });
  };

  const server = opts.tls
    ? https.createServer({ key: opts.tls.key, cert: opts.tls.cert, ca: opts.tls.ca, requestCert: opts.tls.requestCert ?? false, rejectUnauthorized: false }, onRequest)
    : http.createServer(onRequest);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    handle(method, path, fn) {
      handlers.push({ method, path, fn });
    },
    addResource(r) {
      resources.set(gvrKey(r.gvr), r);
    },
    seed(gvr, obj) {
      const r = resources.get(gvrKey(gvr));
      if (!r) throw new Error(`fake server: unknown resource ${gvrKey(gvr)}`);
      const o = create(gvrKey(gvr), r, obj, obj.metadata?.namespace);
      if ((o as Status).kind === 'Status') throw new Error(`fake server: seed failed: ${(o as Status).message}`);
      return o as typeof obj;
    },
    objects(gvr) {
      return [...bucket(gvrKey(gvr)).values()];
    },
    resourceVersion: () => rv,
    compact() {
      compactedRv = rv;
      history.length = 0;
    },
    bookmark() {
      for (const w of watchers) {
        if (w.bookmarks) w.res.write(JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Bookmark', metadata: { resourceVersion: String(rv) } } }) + '\n');
      }
    },
    closeWatches() {
      for (const w of watchers) w.res.end();
      watchers.clear();
    },
    async close() {
      for (const w of watchers) w.res.destroy();
      watchers.clear();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
