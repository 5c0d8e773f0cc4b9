/**
 * The node streaming endpoints, as kube-apiserver wires them: pods/log,
 * pods/exec, pods/attach, pods/portforward (pkg/registry/core/pod/rest,
 * pkg/registry/core/pod/strategy.go LogLocation, ExecLocation,
 * AttachLocation, PortForwardLocation), and the proxy subresources
 * pods/proxy, services/proxy, nodes/proxy (ResourceLocation of
 * pkg/registry/core/{pod,service,node}). The API server validates the
 * request, finds the pod's node and the node's kubelet, and proxies to it
 * (apimachinery's UpgradeAwareHandler): plain requests are streamed through,
 * upgrade requests (exec, attach, port-forward; websockets on the proxies)
 * get their sockets spliced to a connection to the kubelet.
 *
 * The kubelet is found as the `kcm.dev/kubelet-endpoint` annotation of the
 * Node (a base URL; a simulated node's kubelet server may serve many nodes),
 * else by the node's address of the first type in
 * --kubelet-preferred-address-types and status.daemonEndpoints.kubeletEndpoint.Port
 * (10250 when unset) over HTTPS. The kubelet's certificate is not verified
 * (kcm has no kubelet CA yet: as kube-apiserver without --kubelet-certificate-authority).
 * Requests carry `Authorization: Bearer <--kubelet-token>` when the token is set.
 *
 * Simulated pod IPs are not routable, so the pod proxy goes through the
 * kubelet (`/kcm/podProxy/{ns}/{pod}/{port}/{path}`, kcm-specific) instead of
 * dialing the pod IP. Differences from upstream: no `Location` header or HTML
 * link rewriting on proxied responses; no redirect following (kube-apiserver
 * 1.20 follows none for these either once StreamingProxyRedirects is off);
 * IsProxyableHostname/IP is not applied to node addresses (simulated
 * kubelets listen on loopback); the scheme of `https:pod:port` is accepted
 * but the kubelet's pod proxy decides how to reach the container.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Endpoints, Node, Pod, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { Status } from '../../api/types.js';
import { newStatus, statusInGoOrder } from '../../client/errors.js';
import type { KubeObject } from '../../api/types.js';
import type { RequestScope, ServerContext } from '../context.js';
import { badRequest, invalid, StatusError, toStatusError, type FieldErrorLike } from '../status.js';
import { storagePrefix } from '../store.js';
import { acceptWebSocket } from '../../util/net/websocket.js';

/** The annotation by which a simulated node advertises its kubelet's base URL. */
export const KUBELET_ENDPOINT_ANNOTATION = 'kcm.dev/kubelet-endpoint';

/** kube-apiserver's default --kubelet-preferred-address-types. */
export const DEFAULT_KUBELET_PREFERRED_ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];

/** How the API server reaches kubelets. */
export interface KubeletClientConfig {
  /** Sent as `Authorization: Bearer <token>` to kubelets (kcm's --kubelet-token); none when unset. */
  token?: string;
  /** --kubelet-preferred-address-types (default DEFAULT_KUBELET_PREFERRED_ADDRESS_TYPES). */
  preferredAddressTypes?: readonly string[];
  /** The kubelet port when a node does not publish one (kube-apiserver's --kubelet-port, 10250). */
  defaultPort?: number;
}

/** Where a proxied request goes. */
export interface BackendTarget {
  url: URL;
  /** Bearer token for the backend (the kubelet's); none for other backends. */
  token?: string;
}

// ---------------------------------------------------------------------------
// Locations

async function getObject<T>(server: ServerContext, resource: string, namespace: string, name: string): Promise<T & KubeObject> {
  const r = server.resources.find('', 'v1', resource)!;
  return (await server.store.get(r, namespace, name)) as T & KubeObject;
}

/** NodeConnectionInfoGetter.GetConnectionInfo: the kubelet's base URL for a node. */
export async function kubeletBase(server: ServerContext, nodeName: string): Promise<URL> {
  const node = await getObject<Node>(server, 'nodes', '', nodeName);
  const annotated = node.metadata?.annotations?.[KUBELET_ENDPOINT_ANNOTATION];
  if (annotated) {
    try {
      return new URL(annotated.replace(/\/+$/, ''));
    } catch {
      throw new StatusError(newStatus(500, 'InternalError', `Internal error occurred: node ${nodeName} has an invalid ${KUBELET_ENDPOINT_ANNOTATION} annotation ${JSON.stringify(annotated)}`));
    }
  }
  const types = server.kubelet?.preferredAddressTypes ?? DEFAULT_KUBELET_PREFERRED_ADDRESS_TYPES;
  const host = preferredNodeAddress(node, types);
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port || server.kubelet?.defaultPort || 10250;
  return new URL(`https://${net.isIPv6(host) ? `[${host}]` : host}:${port}`);
}

/** nodeutil.GetPreferredNodeAddress. */
function preferredNodeAddress(node: Node, types: readonly string[]): string {
  const addrs = node.status?.addresses ?? [];
  for (const t of types) {
    const a = addrs.find((x) => x.type === t);
    if (a) return a.address;
    // A Hostname address may come from the kubernetes.io/hostname label instead.
    if (t === 'Hostname') {
      const label = node.metadata?.labels?.['kubernetes.io/hostname'];
      if (label) return label;
    }
  }
  const known = addrs.map((a) => `{${a.type} ${a.address}}`).join(' ');
  throw new StatusError(newStatus(500, 'InternalError', `no preferred addresses found; known addresses: [${known}]`));
}

function kubeletTarget(server: ServerContext, base: URL, path: string, query: URLSearchParams | string): BackendTarget {
  const url = new URL(base.href);
  url.pathname = (base.pathname.replace(/\/+$/, '') + path) || '/';
  url.search = typeof query === 'string' ? query : query.toString();
  return { url, ...(server.kubelet?.token ? { token: server.kubelet.token } : {}) };
}

/** podutil.VisitContainers with every container type: init, regular, ephemeral. */
function containerNames(pod: Pod): string[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? []), ...(pod.spec?.ephemeralContainers ?? [])].map((c) => c.name);
}

/** strategy.go validateContainer. */
function validateContainer(container: string, pod: Pod & KubeObject): string {
  const name = pod.metadata?.name ?? '';
  if (!container) {
    const cs = pod.spec?.containers ?? [];
    if (cs.length === 1) return cs[0]!.name;
    if (cs.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
    throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${containerNames(pod).join(' ')}]`);
  }
  if (!containerNames(pod).includes(container)) throw badRequest(`container ${container} is not valid for pod ${name}`);
  return container;
}

/** strconv.ParseBool, as query parameters convert to bool fields. */
function parseBool(q: URLSearchParams, key: string): boolean {
  const v = q.get(key);
  if (v === null) return false;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False', ''].includes(v)) return false;
  throw badRequest(`strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

function parseInt64(q: URLSearchParams, key: string): number | undefined {
  const v = q.get(key);
  if (v === null || v === '') return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  return Number(v);
}

/** pods/log: ValidatePodLogOptions, then LogLocation. Undefined when the pod has no node yet (an empty log). */
export async function logLocation(server: ServerContext, namespace: string, name: string, q: URLSearchParams): Promise<BackendTarget | undefined> {
  const follow = parseBool(q, 'follow');
  const previous = parseBool(q, 'previous');
  const timestamps = parseBool(q, 'timestamps');
  parseBool(q, 'insecureSkipTLSVerifyBackend'); // accepted; kcm never verifies kubelet certificates
  const tailLines = parseInt64(q, 'tailLines');
  const limitBytes = parseInt64(q, 'limitBytes');
  const sinceSeconds = parseInt64(q, 'sinceSeconds');
  const sinceTimeRaw = q.get('sinceTime') || undefined;
  let sinceTime: string | undefined;
  if (sinceTimeRaw !== undefined) {
    const ms = Date.parse(sinceTimeRaw);
    if (!/^\d{4}-\d\d-\d\dT/.test(sinceTimeRaw) || Number.isNaN(ms)) throw badRequest(`parsing time ${JSON.stringify(sinceTimeRaw)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(sinceTimeRaw)} as RFC3339`);
    sinceTime = new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  }
  const errs: FieldErrorLike[] = [];
  if (tailLines !== undefined && tailLines < 0) errs.push({ type: 'FieldValueInvalid', field: 'tailLines', message: `tailLines: Invalid value: ${tailLines}: must be greater than or equal to 0` });
  if (limitBytes !== undefined && limitBytes < 1) errs.push({ type: 'FieldValueInvalid', field: 'limitBytes', message: `limitBytes: Invalid value: ${limitBytes}: must be greater than 0` });
  if (sinceSeconds !== undefined && sinceTime !== undefined) {
    errs.push({ type: 'FieldValueForbidden', field: '', message: ': Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified' });
  } else if (sinceSeconds !== undefined && sinceSeconds < 1) {
    errs.push({ type: 'FieldValueInvalid', field: 'sinceSeconds', message: `sinceSeconds: Invalid value: ${sinceSeconds}: must be greater than 0` });
  }
  if (errs.length > 0) throw invalid('', 'PodLogOptions', name, errs);

  const pod = await getObject<Pod>(server, 'pods', namespace, name);
  const container = validateContainer(q.get('container') ?? '', pod);
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) return undefined;
  const base = await kubeletBase(server, nodeName);
  const params = new URLSearchParams();
  if (follow) params.append('follow', 'true');
  if (previous) params.append('previous', 'true');
  if (timestamps) params.append('timestamps', 'true');
  if (sinceSeconds !== undefined) params.append('sinceSeconds', String(sinceSeconds));
  if (sinceTime !== undefined) params.append('sinceTime', sinceTime);
  if (tailLines !== undefined) params.append('tailLines', String(tailLines));
  if (limitBytes !== undefined) params.append('limitBytes', String(limitBytes));
  return kubeletTarget(server, base, `/containerLogs/${seg(namespace)}/${seg(name)}/${seg(container)}`, sortedQuery(params));
}

/** Go's url.Values.Encode sorts by key. */
function sortedQuery(p: URLSearchParams): string {
  const keys = [...new Set([...p.keys()])].sort();
  const out = new URLSearchParams();
  for (const k of keys) for (const v of p.getAll(k)) out.append(k, v);
  return out.toString();
}

function seg(s: string): string {
  return encodeURIComponent(s);
}

export type StreamKind = 'exec' | 'attach' | 'portforward';

/** ExecLocation, AttachLocation, PortForwardLocation (streamLocation and streamParams). */
export async function streamLocation(server: ServerContext, kind: StreamKind, namespace: string, name: string, q: URLSearchParams): Promise<BackendTarget> {
  const pod = await getObject<Pod>(server, 'pods', namespace, name);
  const params = new URLSearchParams();
  let path: string;
  if (kind === 'portforward') {
    const ports = q.getAll('ports').flatMap((v) => v.split(',')).filter((v) => v !== '');
    for (const p of ports) if (!/^\d+$/.test(p) || Number(p) > 2147483647) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(p)}: invalid syntax`);
    if (!pod.spec?.nodeName) throw badRequest(`pod ${name} does not have a host assigned`);
    if (ports.length > 0) params.append('port', ports.map(Number).join(','));
    path = `/portForward/${seg(namespace)}/${seg(name)}`;
  } else {
    const stdin = parseBool(q, 'stdin');
    const stdout = parseBool(q, 'stdout');
    const stderr = parseBool(q, 'stderr');
    const tty = parseBool(q, 'tty');
    const container = validateContainer(q.get('container') ?? '', pod);
    if (!pod.spec?.nodeName) throw badRequest(`pod ${name} does not have a host assigned`);
    if (stdin) params.append('input', '1');
    if (stdout) params.append('output', '1');
    if (stderr) params.append('error', '1');
    if (tty) params.append('tty', '1');
    if (kind === 'exec') for (const c of q.getAll('command')) params.append('command', c);
    path = `/${kind}/${seg(namespace)}/${seg(name)}/${seg(container)}`;
  }
  const base = await kubeletBase(server, pod.spec!.nodeName!);
  return kubeletTarget(server, base, path, sortedQuery(params));
}

/** utilnet.SplitSchemeNamePort: `name`, `name:port`, `scheme:name:port`. */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name = '';
  let port = '';
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) [name, port] = parts as [string, string];
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string];
  else return undefined;
  if (name && (scheme === '' || scheme === 'http' || scheme === 'https')) return { scheme, name, port };
  return undefined;
}

/** The path after `/proxy` in the request (`''`, `/`, `/a/b/`), kept as sent. */
export function proxyRestPath(pathname: string): string {
  const m = /^(?:\/api\/[^/]+|\/apis\/[^/]+\/[^/]+)(?:\/namespaces\/[^/]+)?\/[^/]+\/[^/]+\/proxy(\/.*)?$/.exec(pathname);
  return m?.[1] ?? '';
}

/** The pod proxy through its node's kubelet: `/kcm/podProxy/{ns}/{pod}/{port}{rest}`. */
async function podProxyTarget(server: ServerContext, pod: Pod & KubeObject, port: number | string, rest: string, rawQuery: string): Promise<BackendTarget> {
  const ns = pod.metadata?.namespace ?? '';
  const name = pod.metadata?.name ?? '';
  const podIP = pod.status?.podIP ?? '';
  // proxyutil.IsProxyableIP: no (parsable) pod IP is "address not allowed".
  if (!net.isIP(podIP) || !pod.spec?.nodeName) throw badRequest('address not allowed');
  const base = await kubeletBase(server, pod.spec.nodeName);
  return kubeletTarget(server, base, `/kcm/podProxy/${seg(ns)}/${seg(name)}/${seg(String(port))}${rest || '/'}`, rawQuery);
}

/** pods/{[scheme:]name[:port]}/proxy{rest}: pod ResourceLocation. */
export async function podProxyLocation(server: ServerContext, namespace: string, id: string, rest: string, rawQuery: string): Promise<BackendTarget> {
  const parsed = splitSchemeNamePort(id);
  if (!parsed) throw badRequest(`invalid pod request ${JSON.stringify(id)}`);
  const pod = await getObject<Pod>(server, 'pods', namespace, parsed.name);
  let port: string | number = parsed.port;
  if (port === '') {
    // The first declared port of the first container that declares one; else the scheme's default.
    const first = (pod.spec?.containers ?? []).find((c) => (c.ports ?? []).length > 0)?.ports?.[0]?.containerPort;
    port = first ?? (parsed.scheme === 'https' ? 443 : 80);
  } else if (!/^\d+$/.test(port)) {
    // kcm resolves a named container port (upstream dials "ip:name" and fails).
    const named = (pod.spec?.containers ?? []).flatMap((c) => c.ports ?? []).find((p) => p.name === port);
    if (!named) throw badRequest(`no container port named ${JSON.stringify(port)} in pod ${parsed.name}`);
    port = named.containerPort;
  }
  return podProxyTarget(server, pod, port, rest, rawQuery);
}

/** nodes/{[scheme:]name[:port]}/proxy{rest}: node ResourceLocation. */
export async function nodeProxyLocation(server: ServerContext, id: string, rest: string, rawQuery: string): Promise<BackendTarget> {
  const parsed = splitSchemeNamePort(id);
  if (!parsed) throw badRequest(`invalid node request ${JSON.stringify(id)}`);
  const base = await kubeletBase(server, parsed.name);
  const kubeletPort = base.port || (base.protocol === 'https:' ? '443' : '80');
  if (parsed.port === '' || parsed.port === kubeletPort) return kubeletTarget(server, base, rest || '/', rawQuery);
  // Another port on the node: dialed directly, with the requested scheme and no kubelet credentials.
  const url = new URL(`${parsed.scheme || 'http'}://${base.hostname}:${parsed.port}`);
  url.pathname = rest || '/';
  url.search = rawQuery;
  return { url };
}

/** services/{[scheme:]name[:port]}/proxy{rest}: service ResourceLocation (pkg/registry/core/service/storage/rest.go). */
export async function serviceProxyLocation(server: ServerContext, namespace: string, id: string, rest: string, rawQuery: string): Promise<BackendTarget> {
  const parsed = splitSchemeNamePort(id);
  if (!parsed) throw badRequest(`invalid service request ${JSON.stringify(id)}`);
  const svcName = parsed.name;
  let portName = parsed.port;
  if (/^\d+$/.test(portName)) {
    const svc = await getObject<Service>(server, 'services', namespace, svcName);
    const sp = (svc.spec?.ports ?? []).find((p) => p.port === Number(portName));
    if (!sp) throw serviceUnavailable(`no service port ${Number(portName)} found for service ${JSON.stringify(svcName)}`);
    portName = sp.name ?? '';
  }
  const candidates = await serviceAddresses(server, namespace, svcName, portName);
  const noEndpoints = () => serviceUnavailable(`no endpoints available for service ${JSON.stringify(svcName)}`);
  if (candidates === undefined) throw noEndpoints();
  const start = candidates.length > 0 ? Math.floor(Math.random() * candidates.length) : 0;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[(start + i) % candidates.length]!;
    if (!c.targetRef) {
      // Not a pod (e.g. the kubernetes Service's own endpoint): a real address, dialed directly.
      const url = new URL(`${parsed.scheme || 'http'}://${net.isIPv6(c.ip) ? `[${c.ip}]` : c.ip}:${c.port}`);
      url.pathname = rest || '/';
      url.search = rawQuery;
      return { url };
    }
    // isValidAddress: the target pod exists and has the address's IP.
    let pod: Pod & KubeObject;
    try {
      pod = await getObject<Pod>(server, 'pods', c.targetRef.namespace || namespace, c.targetRef.name);
    } catch {
      continue;
    }
    if (pod.status?.podIP !== c.ip && !(pod.status?.podIPs ?? []).some((p) => p.ip === c.ip)) continue;
    if (!pod.spec?.nodeName) continue;
    return podProxyTarget(server, pod, c.port, rest, rawQuery);
  }
  throw noEndpoints();
}

function serviceUnavailable(message: string): StatusError {
  return new StatusError(newStatus(503, 'ServiceUnavailable', message));
}

interface Candidate {
  ip: string;
  port: number;
  targetRef?: { name: string; namespace?: string };
}

/**
 * The ready addresses serving `portName`: from the Endpoints object (as
 * kube-apiserver 1.20), else from the Service's EndpointSlices. Undefined
 * when neither has a subset or slice (no endpoints at all).
 */
async function serviceAddresses(server: ServerContext, namespace: string, svcName: string, portName: string): Promise<Candidate[] | undefined> {
  const epR = server.resources.find('', 'v1', 'endpoints')!;
  const ep = (await server.store.getStored(epR, namespace, svcName))?.object as (Endpoints & KubeObject) | undefined;
  if (ep && (ep.subsets ?? []).length > 0) {
    const out: Candidate[] = [];
    for (const ss of ep.subsets ?? []) {
      const p = (ss.ports ?? []).find((x) => (x.name ?? '') === portName);
      if (!p) continue;
      for (const a of ss.addresses ?? []) {
        out.push({ ip: a.ip, port: p.port, ...(a.targetRef?.kind === 'Pod' && a.targetRef.name ? { targetRef: { name: a.targetRef.name, ...(a.targetRef.namespace ? { namespace: a.targetRef.namespace } : {}) } } : {}) });
      }
    }
    return out;
  }
  const sliceR = server.resources.find('discovery.k8s.io', 'v1', 'endpointslices');
  if (!sliceR) return undefined;
  const slices = (await server.storage.list(storagePrefix(sliceR, namespace))).items
    .map((x) => x.object as unknown as EndpointSlice)
    .filter((s) => s.metadata?.labels?.['kubernetes.io/service-name'] === svcName);
  if (slices.length === 0) return undefined;
  const out: Candidate[] = [];
  for (const s of slices) {
    const p = (s.ports ?? []).find((x) => (x.name ?? '') === portName);
    if (!p || p.port === undefined) continue;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      const ip = e.addresses[0];
      if (!ip) continue;
      out.push({ ip, port: p.port, ...(e.targetRef?.kind === 'Pod' && e.targetRef.name ? { targetRef: { name: e.targetRef.name, ...(e.targetRef.namespace ? { namespace: e.targetRef.namespace } : {}) } } : {}) });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Dialing and errors

/** Go's dial error text for a Node socket error: `dial tcp 127.0.0.1:1: connect: connection refused`. */
export function dialErrorText(err: unknown, host: string, port: string): string {
  const e = err as NodeJS.ErrnoException;
  const addr = `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
  switch (e?.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'ETIMEDOUT':
    case 'ESOCKETTIMEDOUT':
      return `dial tcp ${addr}: i/o timeout`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${host}: no such host`;
    case 'EHOSTUNREACH':
      return `dial tcp ${addr}: connect: no route to host`;
    case 'ENETUNREACH':
      return `dial tcp ${addr}: connect: network is unreachable`;
    case 'ECONNRESET':
      return `read tcp ${addr}: read: connection reset by peer`;
    default:
      return `dial tcp ${addr}: ${e?.message ?? String(err)}`;
  }
}

function hostOf(u: URL): { host: string; port: string } {
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return { host, port: u.port || (u.protocol === 'https:' ? '443' : '80') };
}

/** Headers not forwarded: hop-by-hop ones and the client's credentials (the authentication filter drops them upstream). */
const dropHeaders = new Set(['authorization', 'host', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function forwardHeaders(req: IncomingMessage, target: BackendTarget, keepUpgrade: boolean): [string, string][] {
  const out: [string, string][] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!;
    const lk = k.toLowerCase();
    if (lk.startsWith('impersonate-')) continue;
    if (dropHeaders.has(lk) && !(keepUpgrade && (lk === 'connection' || lk === 'upgrade'))) continue;
    out.push([k, raw[i + 1]!]);
  }
  if (target.token) out.push(['Authorization', `Bearer ${target.token}`]);
  return out;
}

// ---------------------------------------------------------------------------
// Plain (non-upgrade) proxying

/**
 * Streams `req` to `target` and the answer back (UpgradeAwareHandler's
 * reverse proxy). `mode: 'log'` writes 200 text/plain with the backend's body
 * (LocationStreamer), turning a backend error into a Status.
 */
export function proxyPlain(s: RequestScope, target: BackendTarget, mode: 'proxy' | 'log', resourceName = ''): Promise<void> {
  const { req, res } = s;
  return new Promise<void>((resolve) => {
    const { host, port } = hostOf(target.url);
    const headers: Record<string, string | string[]> = {};
    if (mode === 'proxy') {
      for (const [k, v] of forwardHeaders(req, target, false)) {
        const cur = headers[k];
        headers[k] = cur === undefined ? v : Array.isArray(cur) ? [...cur, v] : [cur, v];
      }
    } else if (target.token) headers.Authorization = `Bearer ${target.token}`;
    const options: https.RequestOptions = {
      method: mode === 'log' ? 'GET' : req.method ?? 'GET',
      host,
      port: Number(port),
      path: target.url.pathname + target.url.search,
      headers,
      agent: false,
      ...(target.url.protocol === 'https:' ? { rejectUnauthorized: false } : {}),
    };
    const mod = target.url.protocol === 'https:' ? https : http;
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        resolve();
      }
    };
    const upstream = mod.request(options, (up) => {
      const code = up.statusCode ?? 502;
      if (mode === 'log' && (code < 200 || code > 206)) {
        readLimited(up, 64 * 1024).then((body) => {
          writeStatusOnce(res, logBackendError(code, body, resourceName));
          finish();
        }, () => finish());
        return;
      }
      if (mode === 'log') {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
      } else {
        const out: [string, string][] = [];
        for (let i = 0; i + 1 < up.rawHeaders.length; i += 2) {
          const k = up.rawHeaders[i]!;
          if (dropHeaders.has(k.toLowerCase()) && k.toLowerCase() !== 'trailer') continue;
          out.push([k, up.rawHeaders[i + 1]!]);
        }
        res.writeHead(code, up.statusMessage, out.flat() as unknown as http.OutgoingHttpHeaders);
      }
      // Writes flush as chunks arrive (kubectl logs -f follows them).
      up.on('data', (chunk: Buffer) => res.write(chunk));
      up.on('end', () => {
        res.end();
        finish();
      });
      up.on('error', () => {
        res.destroy();
        finish();
      });
      up.on('aborted', () => res.destroy());
    });
    upstream.on('error', (err) => {
      if (res.headersSent || res.destroyed) {
        res.destroy();
        finish();
        return;
      }
      const text = dialErrorText(err, host, port);
      // LocationStreamer's client.Do error names the request; the reverse proxy's is the dial error alone.
      const message = mode === 'log' ? `Get ${JSON.stringify(target.url.href)}: ${text}` : text;
      writeStatusOnce(res, unknownError(message));
      finish();
    });
    // The client went away: close the backend request (kubectl logs -f interrupted).
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
      finish();
    });
    if (mode === 'log' || req.method === 'GET' || req.method === 'HEAD') {
      req.resume();
      upstream.end();
    } else req.pipe(upstream);
  });
}

/** ErrorToAPIStatus of an error that is no Status: 500 with the error's text and no reason (StatusReasonUnknown). */
function unknownError(message: string): Status {
  const st = newStatus(500, '', message);
  delete st.reason;
  return st;
}

function writeStatusOnce(res: ServerResponse, st: Status): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify(statusInGoOrder(st));
  res.writeHead(st.code ?? 500, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-cache, private' });
  res.end(body);
}

function readLimited(stream: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    stream.on('data', (c: Buffer) => {
      if (n < limit) chunks.push(c.subarray(0, limit - n));
      n += c.length;
    });
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
}

/**
 * A kubelet's error answer to containerLogs. kcm's kubelet answers a Status:
 * it passes through; any other body gets GenericHttpResponseChecker's treatment.
 */
function logBackendError(code: number, body: string, name: string): Status {
  try {
    const parsed = JSON.parse(body) as Status;
    if (parsed && parsed.kind === 'Status') return { ...parsed, code: parsed.code ?? code };
  } catch {
    // not a Status
  }
  if (code === 500) return newStatus(500, 'InternalError', `Internal error occurred: ${body}`, { causes: [{ message: body }] });
  if (code === 400) return newStatus(400, 'BadRequest', body);
  const gr = ` ( pods/log ${name})`;
  switch (code) {
    case 404:
      return newStatus(404, 'NotFound', `the server could not find the requested resource${gr}`, { name, kind: 'pods/log' });
    case 401:
      return newStatus(401, 'Unauthorized', `the server has asked for the client to provide credentials${gr}`, { name, kind: 'pods/log' });
    case 403:
      return newStatus(403, 'Forbidden', `${body}${gr}`, { name, kind: 'pods/log' });
    case 503:
      return newStatus(503, 'ServiceUnavailable', `the server is currently unable to handle the request${gr}`, { name, kind: 'pods/log' });
    default:
      if (code >= 500) return newStatus(code, 'InternalError', `an error on the server (${JSON.stringify(body)}) has prevented the request from succeeding${gr}`, { name, kind: 'pods/log' });
      return newStatus(code, '', `the server responded with the status code ${code} but did not return more information${gr}`, { name, kind: 'pods/log' });
  }
}

// ---------------------------------------------------------------------------
// Upgrade requests

/** Writes a Status as a complete HTTP/1.1 response on a raw socket and closes it. */
export function writeStatusToSocket(socket: Duplex, st: Status): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(statusInGoOrder(st));
  const code = st.code ?? 500;
  socket.end(
    `HTTP/1.1 ${code} ${http.STATUS_CODES[code] ?? 'Error'}\r\n` +
      'Content-Type: application/json\r\nCache-Control: no-cache, private\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Dials the backend, writes the client's upgrade request (translated path,
 * the client's headers with Upgrade/Connection, the kubelet's bearer token),
 * then splices the sockets: the backend's answer (101 or an error) reaches
 * the client verbatim, and bytes flow both ways until either side closes.
 * Resolves once the splice is set up, rejects with the Status to answer when
 * the dial fails.
 */
export function spliceUpgrade(req: IncomingMessage, client: Duplex, head: Buffer, target: BackendTarget, timeoutMs = 30_000): Promise<void> {
  const { host, port } = hostOf(target.url);
  return new Promise<void>((resolve, reject) => {
    // The client left while the location was looked up: nothing to dial.
    if (client.destroyed) return resolve();
    const onConnect = () => {
      backend.setTimeout(0);
      if (client.destroyed) {
        backend.destroy();
        return resolve();
      }
      const lines = [`${req.method ?? 'GET'} ${target.url.pathname}${target.url.search} HTTP/1.1`, `Host: ${target.url.host}`];
      for (const [k, v] of forwardHeaders(req, target, true)) lines.push(`${k}: ${v}`);
      backend.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) backend.write(head);
      backend.off('error', onDialError);
      backend.on('error', () => client.destroy());
      client.on('error', () => backend.destroy());
      backend.pipe(client);
      client.pipe(backend);
      backend.on('close', () => client.destroy());
      client.on('close', () => backend.destroy());
      resolve();
    };
    const onDialError = (err: Error) => {
      backend.destroy();
      reject(new StatusError(unknownError(`error dialing backend: ${dialErrorText(err, host, port)}`)));
    };
    const backend: net.Socket =
      target.url.protocol === 'https:'
        ? tls.connect({ host, port: Number(port), ...(net.isIP(host) ? {} : { servername: host }), rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, onConnect)
        : net.connect({ host, port: Number(port) }, onConnect);
    backend.setTimeout(timeoutMs, () => onDialError(Object.assign(new Error('i/o timeout'), { code: 'ETIMEDOUT' })));
    backend.once('error', onDialError);
    client.once('close', () => {
      if (backend.connecting) backend.destroy();
    });
  });
}

/** A Status for a thrown error, as the upgrade path answers it. */
export function statusOf(err: unknown): Status {
  return toStatusError(err).status;
}

/**
 * pods/log over a WebSocket (kube-apiserver's wsstream reader): the log is
 * sent as binary messages (`binary.k8s.io`, or no protocol) or base64 text
 * messages (`base64.binary.k8s.io`), then the connection closes.
 */
export function streamLogOverWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, target: BackendTarget | undefined): void {
  const ws = acceptWebSocket(req, socket, head, ['binary.k8s.io', 'base64.binary.k8s.io', '']);
  if (!ws) return;
  const base64 = ws.protocol === 'base64.binary.k8s.io';
  if (!target) {
    ws.close();
    return;
  }
  const { host, port } = hostOf(target.url);
  const mod = target.url.protocol === 'https:' ? https : http;
  const upstream = mod.request(
    {
      method: 'GET',
      host,
      port: Number(port),
      path: target.url.pathname + target.url.search,
      headers: target.token ? { Authorization: `Bearer ${target.token}` } : {},
      agent: false,
      ...(target.url.protocol === 'https:' ? { rejectUnauthorized: false } : {}),
    },
    (res) => {
      res.on('data', (chunk: Buffer) => ws.send(base64 ? chunk.toString('base64') : chunk, !base64));
      res.on('end', () => ws.close());
      res.on('error', () => ws.close());
    },
  );
  upstream.on('error', () => ws.close());
  ws.on('close', () => upstream.destroy());
  upstream.end();
}
