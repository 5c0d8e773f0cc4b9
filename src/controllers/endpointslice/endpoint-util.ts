/**
 * Pod/Service helpers shared by the endpoints, endpointslice and
 * endpointslice-mirroring controllers (staging/src/k8s.io/endpointslice/util
 * and pkg/api/v1/pod FindPort upstream).
 */
import type { Pod, Service, ServicePort } from 'kubernetes-types/core/v1.js';
import { namespacedKey } from '../../api/types.js';
import { isStatusError } from '../../client/errors.js';
import { selectorFromSet } from '../../api/labels.js';
import { isPodReady, isPodTerminal } from '../../controller/pod-util.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import type { Kube } from '../../tools/cache/factory.js';

/** Annotation with the time of the change that triggered the last Endpoints/EndpointSlice write. */
export const LAST_CHANGE_TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';
/** Label set on Endpoints and EndpointSlices of headless services (v1.IsHeadlessService). */
export const HEADLESS_SERVICE_LABEL = 'service.kubernetes.io/headless';
/** Label naming the service of an EndpointSlice. */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
/** Label naming the controller managing an EndpointSlice. */
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
/** Node label giving the zone of an endpoint. */
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';

/**
 * Whether a pod belongs in Endpoints/EndpointSlices: not terminal, has an IP,
 * and (unless `includeTerminating`) not being deleted.
 */
export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  if (isPodTerminal(pod)) return false;
  if (!pod.status?.podIP && !(pod.status?.podIPs ?? []).length) return false;
  if (!includeTerminating && pod.metadata?.deletionTimestamp) return false;
  return true;
}

/** The hostname is published when the pod's subdomain is the service's name (same namespace). */
export function shouldSetHostname(pod: Pod, svc: Service): boolean {
  return !!pod.spec?.hostname && pod.spec?.subdomain === svc.metadata?.name && svc.metadata?.namespace === pod.metadata?.namespace;
}

/** clusterIP set and not `None` (helper.IsServiceIPSet). */
export function isServiceIPSet(svc: Service): boolean {
  const ip = svc.spec?.clusterIP;
  return !!ip && ip !== 'None';
}

/**
 * The container port a service port targets on `pod` (podutil.FindPort): a
 * numeric targetPort as is (the port itself when unset), a named one looked up
 * among the containers' (and restartable init containers') ports with the same
 * protocol. Undefined when no port matches.
 */
export function findPort(pod: Pod, svcPort: ServicePort): number | undefined {
  const target = svcPort.targetPort ?? svcPort.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  const protocol = svcPort.protocol ?? 'TCP';
  const containers = [
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always'),
  ];
  for (const c of containers) {
    for (const p of c.ports ?? []) {
      if (p.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
    }
  }
  return undefined;
}

function sameLabels(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  const kb = Object.keys(b ?? {});
  if (ka.length !== kb.length) return false;
  return ka.every((k) => (b ?? {})[k] === (a ?? {})[k]);
}

/**
 * How an update of a pod may change endpoints: `podChanged` when its
 * readiness, deletion or IPs changed; `labelsChanged` when its labels,
 * hostname or subdomain changed (service membership may change).
 */
export function podEndpointsChanged(oldPod: Pod, newPod: Pod): { podChanged: boolean; labelsChanged: boolean } {
  const labelsChanged =
    !sameLabels(oldPod.metadata?.labels, newPod.metadata?.labels) ||
    oldPod.spec?.hostname !== newPod.spec?.hostname ||
    oldPod.spec?.subdomain !== newPod.spec?.subdomain;
  if ((oldPod.metadata?.deletionTimestamp ?? undefined) !== (newPod.metadata?.deletionTimestamp ?? undefined)) return { podChanged: true, labelsChanged };
  if (isPodReady(oldPod) !== isPodReady(newPod)) return { podChanged: true, labelsChanged };
  const a = oldPod.status?.podIPs ?? [];
  const b = newPod.status?.podIPs ?? [];
  if (a.length !== b.length || a.some((ip, i) => ip.ip !== b[i]!.ip)) return { podChanged: true, labelsChanged };
  return { podChanged: false, labelsChanged };
}

/** Keys (`ns/name`) of the services in `namespace` whose selector matches `labels`; services without a selector match nothing. */
export function servicesForLabels(services: Lister<Kube<Service>>, namespace: string, labels: Record<string, string> | undefined): Set<string> {
  const out = new Set<string>();
  for (const svc of services.namespace(namespace).list()) {
    const sel = svc.spec?.selector;
    if (!sel) continue;
    if (selectorFromSet(sel).matches(labels ?? {})) out.add(namespacedKey(svc));
  }
  return out;
}

/** Services a pod belongs to (GetPodServiceMemberships). */
export function podServiceMemberships(services: Lister<Kube<Service>>, pod: Pod): Set<string> {
  return servicesForLabels(services, pod.metadata?.namespace ?? '', pod.metadata?.labels);
}

/**
 * Services to resync after a pod update (GetServicesToUpdateOnPodChange):
 * none for a resync or an irrelevant change; the new memberships when only
 * the pod changed; with a label change, the union of old and new memberships
 * when the pod changed too, otherwise their symmetric difference.
 */
export function servicesToUpdateOnPodChange(services: Lister<Kube<Service>>, oldPod: Pod, newPod: Pod): Set<string> {
  if (oldPod.metadata?.resourceVersion === newPod.metadata?.resourceVersion) return new Set();
  const { podChanged, labelsChanged } = podEndpointsChanged(oldPod, newPod);
  if (!podChanged && !labelsChanged) return new Set();
  const now = podServiceMemberships(services, newPod);
  if (!labelsChanged) return now;
  const before = podServiceMemberships(services, oldPod);
  if (podChanged) return new Set([...now, ...before]);
  const out = new Set<string>();
  for (const k of now) if (!before.has(k)) out.add(k);
  for (const k of before) if (!now.has(k)) out.add(k);
  return out;
}

/** Go's time.RFC3339Nano rendering of epoch ms (fraction without trailing zeros). */
export function rfc3339Nano(ms: number): string {
  return new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z').replace(/\.Z$/, 'Z');
}

/** Status cause the API server sets when refusing a create in a terminating namespace. */
export const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

/** True when `err` is a StatusError carrying a cause of type `cause` (apierrors.HasStatusCause). */
export function hasStatusCause(err: unknown, cause: string): boolean {
  if (!isStatusError(err)) return false;
  return (err.status.details?.causes ?? []).some((c) => c.reason === cause);
}
