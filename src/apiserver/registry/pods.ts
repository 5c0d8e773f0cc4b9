/**
 * Pods (pkg/registry/core/pod/strategy.go): pod-only defaults, QoS class,
 * the few mutable pod-spec fields, the status split and graceful deletion.
 * Also the podtemplates resource.
 */
import type { Pod, PodSpec, PodTemplate, Toleration, Container } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../api/types.js';
import type { Strategy } from './strategy.js';
import { type FieldError, invalid, forbidden } from '../../api/validation.js';
import { newStrategy, child, dflt, meta, items, objAt } from './generic.js';
import { defaultPodSpec, validatePodSpec, validatePodTemplate, defaultPodTemplate } from './pod-spec.js';
import { deepEqual } from './meta-validation.js';
import { addQuantities, compareQuantities, isQuantity } from './quantities.js';
import { deepCopy } from '../../util/json/deep-copy.js';

type Obj = Record<string, unknown>;

/** The pod-update message of ValidatePodUpdate (without upstream's trailing diff). */
export const podUpdateForbiddenMessage =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,' +
  '`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),' +
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

function spec(obj: KubeObject): PodSpec {
  return (obj.spec ?? {}) as PodSpec;
}

/** SetDefaults_Pod: requests from limits, pod-level requests (and hugepage limits), enableServiceLinks, host-network ports; then the pod spec defaults. */
function defaultPod(obj: KubeObject): void {
  const s = child(obj, 'spec') as unknown as PodSpec;
  const o = s as unknown as Obj;
  for (const c of [...items(o, 'containers'), ...items(o, 'initContainers')]) {
    const res = objAt(c, 'resources');
    const limits = objAt(res, 'limits');
    if (!res || !limits) continue;
    const requests = (objAt(res, 'requests') ?? (res.requests = {})) as Obj;
    for (const [k, v] of Object.entries(limits)) if (requests[k] === undefined) requests[k] = v;
  }
  defaultHugePagePodLimits(s);
  defaultPodRequests(s);
  dflt(o, 'enableServiceLinks', true);
  if (s.hostNetwork === true) {
    for (const c of [...items(o, 'containers'), ...items(o, 'initContainers')]) {
      for (const p of items(c, 'ports')) if (!p.hostPort) p.hostPort = p.containerPort;
    }
  }
  defaultPodSpec(s);
}

// Pod-level resources (KEP-2837, PodLevelResources): cpu, memory and hugepages.
const isHugePages = (name: string) => name.startsWith('hugepages-');
const supportedPodLevel = (name: string) => name === 'cpu' || name === 'memory' || isHugePages(name);
/** IsOvercommitAllowed for the pod-level resources: cpu and memory. */
const overcommitAllowed = (name: string) => name === 'cpu' || name === 'memory';

function resourceList(c: Obj, kind: 'requests' | 'limits'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(objAt(objAt(c, 'resources'), kind) ?? {})) {
    if ((typeof v === 'string' || typeof v === 'number') && isQuantity(String(v))) out[k] = String(v);
  }
  return out;
}

function addInto(sum: Record<string, string>, list: Record<string, string>): void {
  for (const [k, v] of Object.entries(list)) sum[k] = sum[k] === undefined ? v : addQuantities(sum[k]!, v);
}

function maxInto(max: Record<string, string>, list: Record<string, string>): void {
  for (const [k, v] of Object.entries(list)) if (max[k] === undefined || compareQuantities(v, max[k]!) > 0) max[k] = v;
}

/**
 * resourcehelper.AggregateContainerRequests / AggregateContainerLimits: the
 * sum over containers and sidecars, at least the largest init container
 * (plus the sidecars started before it).
 */
function aggregateContainers(s: PodSpec, kind: 'requests' | 'limits'): Record<string, string> {
  const o = s as unknown as Obj;
  const total: Record<string, string> = {};
  for (const c of items(o, 'containers')) addInto(total, resourceList(c, kind));
  const sidecars: Record<string, string> = {};
  const initMax: Record<string, string> = {};
  for (const c of items(o, 'initContainers')) {
    const list = resourceList(c, kind);
    if (c.restartPolicy === 'Always') {
      addInto(total, list);
      addInto(sidecars, list);
      maxInto(initMax, sidecars);
    } else {
      const tmp: Record<string, string> = {};
      addInto(tmp, list);
      addInto(tmp, sidecars);
      maxInto(initMax, tmp);
    }
  }
  maxInto(total, initMax);
  return total;
}

function podResources(s: PodSpec): Obj | undefined {
  return objAt(s, 'resources');
}

/** defaultHugePagePodLimits: pod-level hugepage limits from the containers' when pod-level resources are partly set. */
function defaultHugePagePodLimits(s: PodSpec): void {
  const res = podResources(s);
  if (!res) return;
  const limits = objAt(res, 'limits');
  const requests = objAt(res, 'requests');
  if (Object.keys(limits ?? {}).length === 0 && Object.keys(requests ?? {}).length === 0) return;
  const podLims: Obj = { ...(limits ?? {}) };
  for (const [k, v] of Object.entries(aggregateContainers(s, 'limits'))) {
    if (!supportedPodLevel(k) || !isHugePages(k)) continue;
    if (requests?.[k] !== undefined) continue;
    if (podLims[k] === undefined) podLims[k] = v;
  }
  if (Object.keys(podLims).length > 0) res.limits = podLims;
}

/** defaultPodRequests: with pod-level limits, pod-level requests from the containers' requests, else from the limits. */
function defaultPodRequests(s: PodSpec): void {
  const res = podResources(s);
  const limits = objAt(res, 'limits');
  if (!res || !limits || Object.keys(limits).length === 0) return;
  const podReqs: Obj = { ...(objAt(res, 'requests') ?? {}) };
  for (const [k, v] of Object.entries(aggregateContainers(s, 'requests'))) {
    if (podReqs[k] === undefined && supportedPodLevel(k) && overcommitAllowed(k)) podReqs[k] = v;
  }
  for (const [k, v] of Object.entries(limits)) if (podReqs[k] === undefined && supportedPodLevel(k)) podReqs[k] = v;
  if (Object.keys(podReqs).length > 0) res.requests = podReqs;
}

const notReadyTaint = 'node.kubernetes.io/not-ready';
const unreachableTaint = 'node.kubernetes.io/unreachable';

/**
 * What the default admission chain adds on create: ServiceAccount (service
 * account name), Priority (priority, preemptionPolicy) and
 * DefaultTolerationSeconds (300s not-ready / unreachable tolerations).
 */
function admitPod(s: PodSpec): void {
  const o = s as unknown as Obj;
  if (!s.serviceAccountName) s.serviceAccountName = s.serviceAccount || 'default';
  s.serviceAccount = s.serviceAccountName;
  if (!s.priorityClassName) dflt(o, 'priority', 0);
  dflt(o, 'preemptionPolicy', 'PreemptLowerPriority');
  const tolerations = (s.tolerations ??= []);
  for (const key of [notReadyTaint, unreachableTaint]) {
    const covered = tolerations.some(
      (t) => (t.key === key || (!t.key && t.operator === 'Exists')) && (!t.effect || t.effect === 'NoExecute'),
    );
    if (!covered) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  }
}

const qosResources = ['cpu', 'memory'];

/** GetPodQOS: BestEffort, Burstable or Guaranteed from containers' cpu/memory requests and limits. */
export function podQOSClass(s: PodSpec): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  let guaranteed = true;
  const containers: Container[] = [...(s.initContainers ?? []), ...(s.containers ?? [])];
  for (const c of containers) {
    for (const [name, q] of Object.entries(c.resources?.requests ?? {})) {
      if (!qosResources.includes(name) || !isQuantity(String(q)) || compareQuantities(String(q), '0') <= 0) continue;
      requests[name] = requests[name] === undefined ? String(q) : addQuantities(requests[name], String(q));
    }
    const found = new Set<string>();
    for (const [name, q] of Object.entries(c.resources?.limits ?? {})) {
      if (!qosResources.includes(name) || !isQuantity(String(q)) || compareQuantities(String(q), '0') <= 0) continue;
      found.add(name);
      limits[name] = limits[name] === undefined ? String(q) : addQuantities(limits[name], String(q));
    }
    if (!qosResources.every((r) => found.has(r))) guaranteed = false;
  }
  if (Object.keys(requests).length === 0 && Object.keys(limits).length === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, q] of Object.entries(requests)) {
      if (limits[name] === undefined || compareQuantities(limits[name], q) !== 0) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && Object.keys(requests).length === Object.keys(limits).length ? 'Guaranteed' : 'Burstable';
}

function tolerationsOnlyAdded(newT: Toleration[] | undefined, oldT: Toleration[] | undefined): boolean {
  const remaining = [...(newT ?? [])];
  for (const o of oldT ?? []) {
    const i = remaining.findIndex((n) => {
      const { tolerationSeconds: ns, ...nRest } = n;
      const { tolerationSeconds: os, ...oRest } = o;
      if (!deepEqual(nRest, oRest)) return false;
      // An existing tolerationSeconds may only be shortened (or kept).
      if (os === undefined) return ns === undefined;
      return ns !== undefined && ns <= os;
    });
    if (i < 0) return false;
    remaining.splice(i, 1);
  }
  return true;
}

/** ValidatePodUpdate's spec rules: only images, activeDeadlineSeconds, added tolerations, removed scheduling gates. */
export function validatePodSpecUpdate(newPod: KubeObject, oldPod: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const n = spec(newPod);
  const o = spec(oldPod);
  if (o.activeDeadlineSeconds !== undefined) {
    if (n.activeDeadlineSeconds === undefined) {
      errs.push(invalid('spec.activeDeadlineSeconds', 'null', 'must not update from a positive integer to nil value'));
    } else if (n.activeDeadlineSeconds > o.activeDeadlineSeconds) {
      errs.push(invalid('spec.activeDeadlineSeconds', n.activeDeadlineSeconds, 'must be less than or equal to previous value'));
    }
  }
  if (o.schedulingGates?.length || n.schedulingGates?.length) {
    const oldNames = new Set((o.schedulingGates ?? []).map((g) => g.name));
    for (const [i, g] of (n.schedulingGates ?? []).entries()) {
      if (!oldNames.has(g.name)) errs.push(forbidden(`spec.schedulingGates[${i}]`, 'only deletion is allowed, but found new scheduling gate \'' + g.name + '\''));
    }
  }
  // Munge the allowed changes away, then any remaining difference is forbidden.
  const munged = deepCopy(n) as Obj & PodSpec;
  const sameShape = (a?: Container[], b?: Container[]) => (a?.length ?? 0) === (b?.length ?? 0);
  if (sameShape(munged.containers, o.containers)) munged.containers?.forEach((c, i) => (c.image = o.containers![i].image));
  if (sameShape(munged.initContainers, o.initContainers)) munged.initContainers?.forEach((c, i) => (c.image = o.initContainers![i].image));
  setKey(munged, 'activeDeadlineSeconds', o.activeDeadlineSeconds);
  if (tolerationsOnlyAdded(n.tolerations, o.tolerations)) setKey(munged, 'tolerations', o.tolerations);
  if ((o.terminationGracePeriodSeconds ?? 0) < 0 && n.terminationGracePeriodSeconds === 1) {
    setKey(munged, 'terminationGracePeriodSeconds', o.terminationGracePeriodSeconds);
  }
  setKey(munged, 'schedulingGates', o.schedulingGates);
  if (!deepEqual(munged, o)) {
    const changed = [...new Set([...Object.keys(munged), ...Object.keys(o)])]
      .filter((k) => !deepEqual((munged as Obj)[k], (o as unknown as Obj)[k]))
      .sort();
    errs.push(forbidden('spec', `${podUpdateForbiddenMessage}\n  changed: ${changed.join(', ')}`));
  }
  return errs;
}

function setKey(o: object, k: string, v: unknown): void {
  if (v === undefined) delete (o as Obj)[k];
  else (o as Obj)[k] = deepCopy(v);
}

/** CheckGracefulDelete: requested or spec grace; 0 for unscheduled or finished pods; negatives become 1. */
export function podGracePeriod(obj: KubeObject, requested?: number): number {
  const pod = obj as Pod;
  let period = requested ?? pod.spec?.terminationGracePeriodSeconds ?? 0;
  if (!pod.spec?.nodeName) period = 0;
  if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') period = 0;
  if (period < 0) period = 1;
  return period;
}

function podStatusUpdate(newObj: KubeObject, oldObj: KubeObject): void {
  const o = oldObj as Pod;
  newObj.status ??= {};
  const status = newObj.status as Obj & NonNullable<Pod['status']>;
  const ns = status as Obj;
  if (!status.qosClass && o.status?.qosClass) ns.qosClass = o.status.qosClass;
  const os = (o.status ?? {}) as Obj;
  if (!ns.observedGeneration && os.observedGeneration) ns.observedGeneration = os.observedGeneration;
  const oldGens = new Map<string, unknown[]>();
  for (const c of (o.status?.conditions ?? []) as unknown as Obj[]) {
    const list = oldGens.get(String(c.type)) ?? [];
    list.push(c.observedGeneration);
    oldGens.set(String(c.type), list);
  }
  for (const c of (status.conditions ?? []) as unknown as Obj[]) {
    const prev = oldGens.get(String(c.type))?.shift();
    if (!c.observedGeneration && prev) c.observedGeneration = prev;
  }
}

function podStrategy(): Strategy {
  return newStrategy({
    group: '',
    kind: 'Pod',
    resource: 'pods',
    namespaced: true,
    hasStatus: true,
    tracksGeneration: true,
    statusResets: ['spec'],
    statusMetaResets: ['deletionTimestamp', 'ownerReferences'],
    defaults: defaultPod,
    prepareForCreate(obj) {
      const s = child(obj, 'spec') as unknown as PodSpec;
      admitPod(s);
      meta(obj).generation = 1;
      const status: Obj = { phase: 'Pending', qosClass: podQOSClass(s) };
      if (s.schedulingGates?.length) {
        status.conditions = [
          { type: 'PodScheduled', status: 'False', reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' },
        ];
      }
      obj.status = status;
    },
    prepareForStatusUpdate: podStatusUpdate,
    validate: (obj) => validatePodSpec(obj.spec as PodSpec | undefined, 'spec'),
    validateUpdate: validatePodSpecUpdate,
    fields: {
      'spec.nodeName': (o) => spec(o).nodeName ?? '',
      'spec.restartPolicy': (o) => spec(o).restartPolicy ?? '',
      'spec.schedulerName': (o) => spec(o).schedulerName ?? '',
      'spec.serviceAccountName': (o) => spec(o).serviceAccountName ?? '',
      'spec.hostNetwork': (o) => String(spec(o).hostNetwork === true),
      'status.phase': (o) => (o as Pod).status?.phase ?? '',
      'status.podIP': (o) => (o as Pod).status?.podIPs?.[0]?.ip ?? (o as Pod).status?.podIP ?? '',
      'status.nominatedNodeName': (o) => (o as Pod).status?.nominatedNodeName ?? '',
    },
    gracePeriod: podGracePeriod,
  });
}

function podTemplateStrategy(): Strategy {
  return newStrategy({
    group: '',
    kind: 'PodTemplate',
    resource: 'podtemplates',
    namespaced: true,
    tracksGeneration: true,
    generationSource: (o) => o.template,
    defaults: (obj) => defaultPodTemplate((obj as PodTemplate).template),
    validate: (obj) => validatePodTemplate((obj as PodTemplate).template, 'template'),
  });
}

export function podStrategies(): Strategy[] {
  return [podStrategy(), podTemplateStrategy()];
}
