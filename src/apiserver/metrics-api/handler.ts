/**
 * GET and LIST of metrics.k8s.io/v1beta1 `pods` and `nodes`, as
 * metrics-server's REST storage answers them (pkg/api/pod.go, node.go):
 * the pods or nodes are read from the server's storage and filtered by the
 * label selector (on their labels) and the field selector (metadata.name,
 * metadata.namespace), sorted by namespace and name; only those the
 * metrics source has a sample for appear (pods must be Running). A get of a
 * missing pod or node is `pods "x" not found`; of one without metrics,
 * `podmetrics.metrics.k8s.io "ns/x" not found` (`nodemetrics...` for
 * nodes). Tables have metrics-server's columns: Name, one per resource
 * (`cpu`, `memory`, sorted), Window. Responses are JSON (metrics-server's
 * protobuf is not served; clients fall back to JSON).
 */
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../api/types.js';
import { newStatus } from '../../client/errors.js';
import { parseQuantity, quantityToString } from '../../api/quantity.js';
import type { RequestScope, ServerContext } from '../context.js';
import { includeObjectParam, writeJson } from '../output.js';
import { negotiateMedia, notAcceptableMessage } from '../protobuf/negotiate.js';
import { selectionFrom } from '../selection.js';
import { methodNotAllowed, notFound, StatusError } from '../status.js';
import { storagePrefix } from '../store.js';
import { partialObjectMetadata, type IncludeObject } from '../table.js';
import { rfc3339 } from '../../util/clock/clock.js';
import { METRICS_API_VERSION, METRICS_GROUP, type MetricsObjectReader, type NodeMetrics, type PodMetrics, type ResourceMetricsSource } from './types.js';

/** Reads current objects straight from the server's storage. */
export function storageReader(server: ServerContext): MetricsObjectReader {
  return {
    async list(group, resource, namespace = '') {
      const r = server.resources.storageResource(group, resource);
      if (!r) return [];
      return (await server.storage.list(storagePrefix(r, r.namespaced ? namespace : ''))).items.map((x) => x.object);
    },
  };
}

async function getStored(server: ServerContext, resource: 'pods' | 'nodes', namespace: string, name: string): Promise<KubeObject> {
  const r = server.resources.storageResource('', resource)!;
  const stored = await server.store.getStored(r, r.namespaced ? namespace : '', name);
  if (!stored) throw notFound({ group: '', resource }, name);
  return stored.object;
}

function byNamespaceAndName(a: KubeObject, b: KubeObject): number {
  const an = a.metadata?.namespace ?? '';
  const bn = b.metadata?.namespace ?? '';
  if (an !== bn) return an < bn ? -1 : 1;
  const a1 = a.metadata?.name ?? '';
  const b1 = b.metadata?.name ?? '';
  return a1 < b1 ? -1 : a1 > b1 ? 1 : 0;
}

function meta(obj: KubeObject, now: number): Record<string, unknown> {
  const m: Record<string, unknown> = { name: obj.metadata?.name ?? '' };
  if (obj.metadata?.namespace) m.namespace = obj.metadata.namespace;
  // metrics-server stamps the response time as creationTimestamp.
  m.creationTimestamp = rfc3339(now);
  if (obj.metadata?.labels && Object.keys(obj.metadata.labels).length > 0) m.labels = { ...obj.metadata.labels };
  return m;
}

async function podMetrics(server: ServerContext, source: ResourceMetricsSource, pods: Pod[]): Promise<PodMetrics[]> {
  const running = pods.filter((p) => p.status?.phase === 'Running');
  const samples = await source.podSamples(running, storageReader(server));
  const now = server.clock.now();
  const out: PodMetrics[] = [];
  running.forEach((p, i) => {
    const s = samples[i];
    if (!s) return;
    out.push({ metadata: meta(p as KubeObject, now), timestamp: s.timestamp, window: s.window, containers: s.containers.map((c) => ({ name: c.name, usage: { ...c.usage } })) } as PodMetrics);
  });
  return out;
}

async function nodeMetrics(server: ServerContext, source: ResourceMetricsSource, nodes: Node[]): Promise<NodeMetrics[]> {
  const samples = await source.nodeSamples(nodes, storageReader(server));
  const now = server.clock.now();
  const out: NodeMetrics[] = [];
  nodes.forEach((n, i) => {
    const s = samples[i];
    if (s) out.push({ metadata: meta(n as KubeObject, now), timestamp: s.timestamp, window: s.window, usage: { ...s.usage } } as NodeMetrics);
  });
  return out;
}

/** Serves one request to metrics.k8s.io (the router sends every verb here). */
export async function handleResourceMetrics(s: RequestScope, source: ResourceMetricsSource): Promise<void> {
  if (s.subresource) throw notFound({ group: METRICS_GROUP, resource: s.r.resource }, s.name);
  if (s.verb !== 'get' && s.verb !== 'list') throw methodNotAllowed(s.verb, s.r);
  const choice = negotiateMedia(s.req.headers.accept, { protobuf: false });
  if (!choice) throw new StatusError(newStatus(406, 'NotAcceptable', notAcceptableMessage(false)));
  const isPods = s.r.resource === 'pods';
  const kind = isPods ? 'PodMetrics' : 'NodeMetrics';
  let items: KubeObject[];
  if (s.verb === 'get') {
    const obj = await getStored(s.server, isPods ? 'pods' : 'nodes', s.namespace, s.name);
    items = isPods ? await podMetrics(s.server, source, [obj as Pod]) : await nodeMetrics(s.server, source, [obj as Node]);
    if (items.length === 0) throw notFound({ group: METRICS_GROUP, resource: isPods ? 'podmetrics' : 'nodemetrics' }, isPods ? `${s.namespace}/${s.name}` : s.name);
  } else {
    const sel = selectionFrom(s.r, s.query);
    const objs = (await storageReader(s.server).list('', isPods ? 'pods' : 'nodes', s.namespace)).filter((o) => sel.matches(o)).sort(byNamespaceAndName);
    items = isPods ? await podMetrics(s.server, source, objs as Pod[]) : await nodeMetrics(s.server, source, objs as Node[]);
  }
  const single = s.verb === 'get';
  switch (choice.rendering) {
    case 'table':
      return writeJson(s.res, 200, metricsTable(items, isPods, includeObjectParam(s.query)));
    case 'metadata':
      if (single) return writeJson(s.res, 200, partialObjectMetadata(items[0]!));
      return writeJson(s.res, 200, { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: {}, items: items.map(partialObjectMetadata) });
    case 'object':
      if (single) return writeJson(s.res, 200, { kind, apiVersion: METRICS_API_VERSION, ...items[0] });
      return writeJson(s.res, 200, { kind: `${kind}List`, apiVersion: METRICS_API_VERSION, metadata: {}, items });
  }
}

/** Sums quantities of one resource over containers (cpu in nanocores, memory in bytes) and formats the total. */
function sumUsage(values: string[]): string {
  let total = 0n;
  let binary = false;
  for (const v of values) {
    const q = parseQuantityLoose(v);
    total += q.nanos;
    binary ||= q.binary;
  }
  return formatNanos(total, binary);
}

function parseQuantityLoose(v: string): { nanos: bigint; binary: boolean } {
  try {
    const q = parseQuantity(v);
    return { nanos: q.nanos, binary: q.format === 'BinarySI' };
  } catch {
    return { nanos: 0n, binary: false };
  }
}

function formatNanos(nanos: bigint, binary: boolean): string {
  return quantityToString({ nanos, format: binary ? 'BinarySI' : 'DecimalSI' });
}

/** metrics-server's addPodMetricsToTable / addNodeMetricsToTable. */
export function metricsTable(items: KubeObject[], isPods: boolean, include: IncludeObject): KubeObject {
  const usageOf = (o: KubeObject): Record<string, string> => {
    if (!isPods) return (o as NodeMetrics).usage ?? {};
    const by = new Map<string, string[]>();
    for (const c of (o as PodMetrics).containers ?? []) for (const [k, v] of Object.entries(c.usage ?? {})) by.set(k, [...(by.get(k) ?? []), v]);
    return Object.fromEntries([...by].map(([k, vs]) => [k, sumUsage(vs)]));
  };
  let names: string[] | undefined;
  const columnDefinitions: Record<string, unknown>[] = [];
  const rows: Record<string, unknown>[] = [];
  for (const o of items) {
    const usage = usageOf(o);
    if (!names) {
      names = Object.keys(usage).sort();
      columnDefinitions.push({ name: 'Name', type: 'string', format: 'name', description: 'Name of the resource', priority: 0 });
      for (const n of names) columnDefinitions.push({ name: n, type: 'string', format: 'quantity', description: '', priority: 0 });
      columnDefinitions.push({ name: 'Window', type: 'string', format: 'duration', description: '', priority: 0 });
    }
    const row: Record<string, unknown> = { cells: [o.metadata?.name ?? '', ...names.map((n) => usage[n] ?? '0'), (o as PodMetrics).window] };
    const full = { kind: isPods ? 'PodMetrics' : 'NodeMetrics', apiVersion: METRICS_API_VERSION, ...o };
    if (include === 'Metadata') row.object = partialObjectMetadata(full);
    else if (include === 'Object') row.object = full;
    rows.push(row);
  }
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: {}, columnDefinitions, rows };
}
