/**
 * Quota evaluators (pkg/quota/v1/evaluator/core and generic): for one kind of
 * object, which quota resource names it is charged against, what one object
 * uses, which scopes it matches, and which fields a quota requires of it.
 * Shared by the ResourceQuota admission plugin and the resourcequota
 * controller, so both count the same way.
 */
import type { Container, PersistentVolumeClaim, Pod, ScopedResourceSelectorRequirement, Service } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../types.js';
import { add, compare, newQuantity, toQuantity, type Quantity } from '../quantity.js';
import { parseResourceList, type ResourceList } from './resource-list.js';

export type QuotaOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface QuotaEvaluator {
  readonly group: string;
  readonly resource: string;
  /** Whether admission charges this operation (pods: CREATE only; services, PVCs: CREATE and UPDATE). */
  handles(operation: QuotaOperation, subresource: string): boolean;
  /** The subset of `names` this evaluator accounts for. */
  matchingResources(names: readonly string[]): string[];
  /** Usage of one object; `nowMs` (epoch ms) decides whether a deleting pod still counts. */
  usage(obj: KubeObject, nowMs: number): ResourceList;
  /** Whether the object falls under one scope requirement of a quota. */
  matchesScope(scope: ScopedResourceSelectorRequirement, obj: KubeObject): boolean;
  /** An error message when the object lacks what `required` quota resources demand (`must specify limits.cpu for: c`). */
  constraints(required: readonly string[], obj: KubeObject): string | undefined;
}

/** `count/pods`, `count/deployments.apps`. */
export function objectCountName(group: string, resource: string): string {
  return group ? `count/${resource}.${group}` : `count/${resource}`;
}

const one = (): Quantity => newQuantity(1);

/**
 * Resources quota never tracks (pkg/quota/v1/install DefaultIgnoredResources):
 * virtual ones that are never stored, and events.
 */
export const IGNORED_QUOTA_RESOURCES: ReadonlyArray<{ group: string; resource: string }> = [
  { group: '', resource: 'bindings' },
  { group: '', resource: 'componentstatuses' },
  { group: 'authentication.k8s.io', resource: 'tokenreviews' },
  { group: 'authentication.k8s.io', resource: 'selfsubjectreviews' },
  { group: 'authorization.k8s.io', resource: 'subjectaccessreviews' },
  { group: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' },
  { group: 'authorization.k8s.io', resource: 'localsubjectaccessreviews' },
  { group: 'authorization.k8s.io', resource: 'selfsubjectrulesreviews' },
  { group: '', resource: 'events' },
  { group: 'events.k8s.io', resource: 'events' },
];

/** Whether quota ignores the resource altogether (neither admission nor the controller count it). */
export function isIgnoredQuotaResource(group: string, resource: string): boolean {
  return IGNORED_QUOTA_RESOURCES.some((r) => r.group === group && r.resource === resource);
}

/**
 * Object-count evaluator (generic.NewObjectCountEvaluator), made for any
 * resource without a specific one: `count/<resource>.<group>` and, for some
 * core kinds, a legacy name (`secrets`). Charged on create of the object
 * itself, never of a subresource (`serviceaccounts/token`).
 */
function objectCountEvaluator(group: string, resource: string, legacyName?: string): QuotaEvaluator {
  const names = [objectCountName(group, resource), ...(legacyName ? [legacyName] : [])];
  return {
    group,
    resource,
    handles: (op, sub) => op === 'CREATE' && sub === '',
    matchingResources: (input) => input.filter((n) => names.includes(n)),
    usage: () => new Map(names.map((n) => [n, one()])),
    matchesScope: () => false,
    constraints: () => undefined,
  };
}

// ---- pods ----

/** Names whose presence on a quota makes every container declare them (upstream's backward-compatibility validationSet). */
const podValidationSet = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);
const podResources = new Set(['count/pods', 'pods', 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage']);
const hugepagesPrefixes = ['hugepages-', 'requests.hugepages-'];

function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

/** What a pod's requests/limits lists amount to in quota names (podComputeUsageHelper). */
export function podComputeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = new Map([['pods', one()]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req !== undefined) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
    const lim = limits.get(r);
    if (lim !== undefined) out.set(`limits.${r}`, lim);
  }
  for (const [k, v] of requests) {
    if (k.startsWith('hugepages-')) {
      out.set(k, v);
      out.set(`requests.${k}`, v);
    } else if (!isNativeResource(k) && !k.startsWith('requests.')) {
      out.set(`requests.${k}`, v);
    }
  }
  return out;
}

function maxInto(acc: ResourceList, rl: ResourceList): void {
  for (const [k, v] of rl) {
    const cur = acc.get(k);
    if (cur === undefined || compare(v, cur) > 0) acc.set(k, v);
  }
}

function sumInto(acc: ResourceList, rl: ResourceList): void {
  for (const [k, v] of rl) acc.set(k, acc.has(k) ? add(acc.get(k)!, v) : v);
}

/**
 * The pod's effective requests or limits (resourcehelper.PodRequests/PodLimits):
 * the sum over app containers and restartable (sidecar) init containers, at
 * least the largest one-shot init container (plus the sidecars before it),
 * plus overhead.
 */
export function podResourceTotals(pod: Pod, which: 'requests' | 'limits'): ResourceList {
  const spec = pod.spec;
  const of = (c: Container) => parseResourceList(c.resources?.[which] as Record<string, string> | undefined);
  const total: ResourceList = new Map();
  for (const c of spec?.containers ?? []) sumInto(total, of(c));
  const sidecars: ResourceList = new Map();
  const initMax: ResourceList = new Map();
  for (const c of spec?.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      sumInto(sidecars, of(c));
      sumInto(total, of(c));
    } else {
      const need: ResourceList = new Map(sidecars);
      sumInto(need, of(c));
      maxInto(initMax, need);
    }
  }
  maxInto(total, initMax);
  if (spec?.overhead) sumInto(total, parseResourceList(spec.overhead as Record<string, string>));
  return total;
}

/** QuotaV1Pod: terminal pods, and deleting pods past their grace period, no longer count. */
export function podCountsForQuota(pod: Pod, nowMs: number): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const ts = pod.metadata?.deletionTimestamp;
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  if (ts && grace !== undefined && grace !== null) {
    if (nowMs > Date.parse(ts) + grace * 1000) return false;
  }
  return true;
}

/** BestEffort QoS: no container asks for or limits cpu or memory. */
export function isBestEffort(pod: Pod): boolean {
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  for (const c of all) {
    for (const list of [c.resources?.requests, c.resources?.limits]) {
      for (const [k, v] of Object.entries(list ?? {})) {
        if ((k === 'cpu' || k === 'memory') && toQuantity(v as string).nanos !== 0n) return false;
      }
    }
  }
  return true;
}

function isTerminating(pod: Pod): boolean {
  const ads = pod.spec?.activeDeadlineSeconds;
  return ads !== undefined && ads !== null && ads >= 0;
}

function crossNamespaceAffinity(pod: Pod): boolean {
  const a = pod.spec?.affinity;
  const terms = [
    ...(a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
    ...(a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
    ...(a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((w) => w.podAffinityTerm),
    ...(a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((w) => w.podAffinityTerm),
  ];
  return terms.some((t) => (t.namespaces ?? []).length > 0 || !!t.namespaceSelector);
}

/** A scope selector requirement evaluated against a single optional value, as a label selector on key = scopeName. */
function requirementMatches(s: ScopedResourceSelectorRequirement, value: string | undefined): boolean {
  const values = s.values ?? [];
  switch (s.operator) {
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    default:
      return false;
  }
}

function podMatchesScope(s: ScopedResourceSelectorRequirement, pod: Pod): boolean {
  switch (s.scopeName) {
    case 'Terminating':
      return isTerminating(pod);
    case 'NotTerminating':
      return !isTerminating(pod);
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass':
      return requirementMatches(s, pod.spec?.priorityClassName || undefined);
    case 'CrossNamespacePodAffinity':
      return crossNamespaceAffinity(pod);
    default:
      return false;
  }
}

const podEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'pods',
  handles: (op, sub) => (op === 'CREATE' && sub === '') || (op === 'UPDATE' && sub === 'resize'),
  matchingResources: (input) =>
    input.filter((n) => podResources.has(n) || hugepagesPrefixes.some((p) => n.startsWith(p)) || (!isNativeResource(n) && n.startsWith('requests.'))),
  usage(obj, now) {
    const pod = obj as Pod;
    const out: ResourceList = new Map([['count/pods', one()]]);
    if (!podCountsForQuota(pod, now)) return out;
    for (const [k, v] of podComputeUsage(podResourceTotals(pod, 'requests'), podResourceTotals(pod, 'limits'))) out.set(k, v);
    return out;
  },
  matchesScope: (s, obj) => podMatchesScope(s, obj as Pod),
  constraints(required, obj) {
    const pod = obj as Pod;
    const req = required.filter((r) => podValidationSet.has(r));
    if (!req.length) return undefined;
    const missing = new Map<string, Set<string>>();
    for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
      const have = podComputeUsage(
        parseResourceList(c.resources?.requests as Record<string, string> | undefined),
        parseResourceList(c.resources?.limits as Record<string, string> | undefined),
      );
      for (const r of req) {
        if (have.has(r)) continue;
        if (!missing.has(r)) missing.set(r, new Set());
        missing.get(r)!.add(c.name);
      }
    }
    if (!missing.size) return undefined;
    const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
    return `must specify ${parts.join('; ')}`;
  },
};

// ---- services ----

const serviceEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'services',
  handles: (op, sub) => sub === '' && (op === 'CREATE' || op === 'UPDATE'),
  matchingResources: (input) => input.filter((n) => ['count/services', 'services', 'services.nodeports', 'services.loadbalancers'].includes(n)),
  usage(obj) {
    const svc = obj as Service;
    const out: ResourceList = new Map([
      ['count/services', one()],
      ['services', one()],
    ]);
    const ports = svc.spec?.ports ?? [];
    // A NodePort is one per (port number) even when two protocols share it, as upstream counts distinct node ports.
    const distinct = (list: typeof ports) => new Set(list.map((p) => p.nodePort || `${p.port}`)).size;
    switch (svc.spec?.type) {
      case 'NodePort':
        out.set('services.nodeports', newQuantity(distinct(ports)));
        break;
      case 'LoadBalancer':
        out.set('services.nodeports', newQuantity(svc.spec.allocateLoadBalancerNodePorts === false ? distinct(ports.filter((p) => p.nodePort)) : distinct(ports)));
        out.set('services.loadbalancers', one());
        break;
    }
    return out;
  },
  matchesScope: () => false,
  constraints: () => undefined,
};

// ---- persistent volume claims ----

const storageClassSuffix = '.storageclass.storage.k8s.io/';

const pvcEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'persistentvolumeclaims',
  handles: (op, sub) => sub === '' && (op === 'CREATE' || op === 'UPDATE'),
  matchingResources: (input) =>
    input.filter(
      (n) =>
        ['count/persistentvolumeclaims', 'persistentvolumeclaims', 'requests.storage'].includes(n) ||
        (n.includes(storageClassSuffix) && (n.endsWith('/persistentvolumeclaims') || n.endsWith('/requests.storage'))),
    ),
  usage(obj) {
    const pvc = obj as PersistentVolumeClaim;
    const out: ResourceList = new Map([
      ['count/persistentvolumeclaims', one()],
      ['persistentvolumeclaims', one()],
    ]);
    const cls = pvc.spec?.storageClassName;
    if (cls) out.set(`${cls}${storageClassSuffix}persistentvolumeclaims`, one());
    const reqStr = pvc.spec?.resources?.requests?.storage as string | undefined;
    const allocStr = (pvc.status?.allocatedResources as Record<string, string> | undefined)?.storage;
    let storage = reqStr !== undefined ? toQuantity(reqStr) : undefined;
    // Expansion in progress: charge the larger of the request and what is allocated.
    if (allocStr !== undefined && (storage === undefined || compare(allocStr, storage) > 0)) storage = toQuantity(allocStr);
    if (storage !== undefined) {
      out.set('requests.storage', storage);
      if (cls) out.set(`${cls}${storageClassSuffix}requests.storage`, storage);
    }
    return out;
  },
  matchesScope: () => false,
  constraints: () => undefined,
};

const legacyCountNames: Record<string, string> = {
  secrets: 'secrets',
  configmaps: 'configmaps',
  replicationcontrollers: 'replicationcontrollers',
  resourcequotas: 'resourcequotas',
};

/**
 * The evaluator for a group/resource: the specific ones for pods, services
 * and PVCs, else an object counter (for every resource, custom ones
 * included, as upstream creates one on demand).
 */
export function quotaEvaluatorFor(group: string, resource: string): QuotaEvaluator {
  if (group === '') {
    if (resource === 'pods') return podEvaluator;
    if (resource === 'services') return serviceEvaluator;
    if (resource === 'persistentvolumeclaims') return pvcEvaluator;
  }
  // Object-count evaluators hold nothing but their names: one per resource (admission asks on every write).
  const key = `${resource}.${group}`;
  let ev = countEvaluators.get(key);
  if (!ev) countEvaluators.set(key, (ev = group === '' ? objectCountEvaluator('', resource, legacyCountNames[resource]) : objectCountEvaluator(group, resource)));
  return ev;
}

const countEvaluators = new Map<string, QuotaEvaluator>();

/**
 * Which group/resources a set of quota resource names concerns: the
 * evaluators whose usage the quota needs. `count/x.y` names any resource
 * (`count/<resource>` a core one); unknown names are ignored.
 */
export function groupResourcesForQuotaNames(names: readonly string[]): { group: string; resource: string }[] {
  const out = new Map<string, { group: string; resource: string }>();
  const put = (group: string, resource: string) => {
    if (resource && !isIgnoredQuotaResource(group, resource)) out.set(`${resource}.${group}`, { group, resource });
  };
  for (const n of names) {
    if (n.startsWith('count/')) {
      const rest = n.slice('count/'.length);
      const dot = rest.indexOf('.');
      if (dot < 0) put('', rest);
      else put(rest.slice(dot + 1), rest.slice(0, dot));
      continue;
    }
    for (const ev of [podEvaluator, serviceEvaluator, pvcEvaluator]) if (ev.matchingResources([n]).length) put(ev.group, ev.resource);
    const legacy = Object.keys(legacyCountNames).find((r) => legacyCountNames[r] === n);
    if (legacy) put('', legacy);
  }
  return [...out.values()];
}
