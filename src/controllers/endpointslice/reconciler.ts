/**
 * The EndpointSlice reconciler (pkg/controller/endpointslice reconciler.go):
 * turns a Service's pods into the EndpointSlices it should have, changing as
 * few slices as possible.
 *
 * - One group of slices per address type the service serves (ipFamilies,
 *   else the clusterIP's family, else IPv4); slices of another type go.
 * - Within a type, endpoints are grouped by their resolved port set; slices
 *   of a port set no longer wanted go.
 * - Per port set: existing slices keep endpoints still desired (updated in
 *   place when their conditions/node/zone changed); slices left empty are
 *   deleted; leftovers first fill slices already being updated (fullest
 *   first), then the unchanged slice that fits them most closely, then new
 *   slices of at most maxEndpointsPerSlice.
 * - A service with no endpoints keeps one empty placeholder slice.
 * - Creates that would pair with deletes become updates of the doomed slices.
 * - Nothing is created for a service being deleted.
 */
import type { Node, Pod, Service } from 'kubernetes-types/core/v1.js';
import type { Endpoint, EndpointPort, EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { GVR } from '../../api/gvr.js';
import { newControllerRef } from '../../api/meta.js';
import type { Client } from '../../client/interfaces.js';
import { isPodReady } from '../../controller/pod-util.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Logger } from '../../util/log/logger.js';
import { stableStringify } from '../endpoints/subsets.js';
import type { EndpointSliceTracker } from './endpoint-slice-tracker.js';
import {
  HEADLESS_SERVICE_LABEL,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_TOPOLOGY_ZONE,
  LAST_CHANGE_TRIGGER_TIME_ANNOTATION,
  NAMESPACE_TERMINATING_CAUSE,
  findPort,
  hasStatusCause,
  isServiceIPSet,
  rfc3339Nano,
  shouldPodBeInEndpoints,
  shouldSetHostname,
} from './endpoint-util.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export type SliceObj = Kube<EndpointSlice>;
type AddressType = 'IPv4' | 'IPv6';

export interface ReconcilerOptions {
  client: Client;
  tracker: EndpointSliceTracker;
  maxEndpointsPerSlice: number;
  /** Value of the managed-by label (`endpointslice-controller.k8s.io`). */
  controllerName: string;
  logger: Logger;
}

export interface Reconciler {
  /**
   * Creates, updates and deletes `existing` slices (those managed by us for
   * this service) so that they list `pods`. `node(name)` reads the node
   * cache. Rejects with every problem met (pods on unknown nodes are left out
   * and reported, so the service is retried).
   */
  reconcile(service: Service, pods: readonly Pod[], existing: readonly SliceObj[], triggerTime: number | undefined, node: (name: string) => Node | undefined): Promise<void>;
}

/** The address types a service serves. */
export function addressTypesForService(svc: Service): AddressType[] {
  const fams = svc.spec?.ipFamilies ?? [];
  if (fams.length) return fams.filter((f): f is AddressType => f === 'IPv4' || f === 'IPv6');
  if (isServiceIPSet(svc)) return [svc.spec!.clusterIP!.includes(':') ? 'IPv6' : 'IPv4'];
  return ['IPv4'];
}

function normalizePorts(ports: readonly EndpointPort[] | undefined): EndpointPort[] {
  return (ports ?? []).map((p) => ({ name: p.name ?? '', protocol: p.protocol ?? 'TCP', port: p.port, ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}) }));
}

/** Identity of a port set, independent of order and of defaulted fields. */
export function portMapKey(ports: readonly EndpointPort[] | undefined): string {
  return normalizePorts(ports)
    .map((p) => stableStringify(p))
    .sort()
    .join(';');
}

/** Identity of an endpoint within a port set: its addresses, hostname and target pod. */
export function endpointKey(ep: Endpoint): string {
  return stableStringify([[...ep.addresses].sort(), ep.hostname ?? '', ep.targetRef?.namespace ?? '', ep.targetRef?.name ?? '']);
}

/** Equal beyond what endpointKey covers: node, zone, conditions, targetRef (ignoring its resourceVersion). */
export function endpointsEqualBeyondKey(a: Endpoint, b: Endpoint): boolean {
  if ((a.nodeName ?? null) !== (b.nodeName ?? null) || (a.zone ?? null) !== (b.zone ?? null)) return false;
  const ca = a.conditions ?? {};
  const cb = b.conditions ?? {};
  if ((ca.ready ?? null) !== (cb.ready ?? null) || (ca.serving ?? null) !== (cb.serving ?? null) || (ca.terminating ?? null) !== (cb.terminating ?? null)) return false;
  const ref = (e: Endpoint) => (e.targetRef ? stableStringify({ ...e.targetRef, resourceVersion: undefined }) : '');
  return ref(a) === ref(b);
}

/** The endpoint for `pod` (podToEndpoint): ready = publishNotReady or (serving and not terminating). */
export function podToEndpoint(pod: Pod, node: Node | undefined, svc: Service, addressType: AddressType): Endpoint {
  const serving = isPodReady(pod);
  const terminating = !!pod.metadata?.deletionTimestamp;
  const ready = svc.spec?.publishNotReadyAddresses === true || (serving && !terminating);
  const ips = pod.status?.podIPs?.length ? pod.status.podIPs.map((p) => p.ip ?? '') : pod.status?.podIP ? [pod.status.podIP] : [];
  const addresses = ips.filter((ip) => ip && (addressType === 'IPv6') === ip.includes(':')).slice(0, 1);
  const ep: Endpoint = {
    addresses,
    conditions: { ready, serving, terminating },
    targetRef: { kind: 'Pod', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' },
  };
  if (pod.spec?.nodeName) ep.nodeName = pod.spec.nodeName;
  const zone = node?.metadata?.labels?.[LABEL_TOPOLOGY_ZONE];
  if (zone) ep.zone = zone;
  if (shouldSetHostname(pod, svc)) ep.hostname = pod.spec!.hostname!;
  return ep;
}

/** The ports of `svc` resolved on `pod`; a headless service may have none. */
export function endpointPorts(svc: Service, pod: Pod): EndpointPort[] {
  const out: EndpointPort[] = [];
  if (!svc.spec?.ports?.length && svc.spec?.clusterIP === 'None') return out;
  for (const sp of svc.spec?.ports ?? []) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    out.push({ name: sp.name ?? '', protocol: sp.protocol ?? 'TCP', port, ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
  }
  return out;
}

/**
 * The labels a slice of `svc` should carry (setEndpointSliceLabels): the
 * service's labels (reserved keys excepted), the headless label when the
 * service has no cluster IP, service-name and managed-by; `changed` when
 * the slice's own non-reserved labels differ from the service's.
 */
export function sliceLabels(slice: EndpointSlice, svc: Service, controllerName: string): { labels: Record<string, string>; changed: boolean } {
  const reserved = (k: string) => k === LABEL_SERVICE_NAME || k === LABEL_MANAGED_BY || k === HEADLESS_SERVICE_LABEL;
  const mine = Object.entries(slice.metadata?.labels ?? {}).filter(([k]) => !reserved(k));
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(svc.metadata?.labels ?? {})) if (!reserved(k)) labels[k] = v;
  const changed = mine.length !== Object.keys(labels).length || mine.some(([k, v]) => labels[k] !== v);
  if (!isServiceIPSet(svc)) labels[HEADLESS_SERVICE_LABEL] = '';
  labels[LABEL_SERVICE_NAME] = svc.metadata?.name ?? '';
  labels[LABEL_MANAGED_BY] = controllerName;
  return { labels, changed };
}

/** `<svc>-` as generateName (the API server appends 5 random characters). */
export function slicePrefix(serviceName: string): string {
  const prefix = `${serviceName}-`;
  return /^[a-z0-9]([-a-z0-9.]*)?$/.test(prefix) && prefix.length <= 253 ? prefix : serviceName;
}

function newSlice(svc: Service, ports: EndpointPort[], addressType: AddressType, controllerName: string): SliceObj {
  const slice: SliceObj = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      generateName: slicePrefix(svc.metadata?.name ?? ''),
      namespace: svc.metadata?.namespace ?? '',
      ownerReferences: [newControllerRef(svc as Kube<Service>, { group: '', version: 'v1', kind: 'Service' })],
    },
    addressType,
    endpoints: [],
    ports,
  };
  slice.metadata = { ...slice.metadata, labels: sliceLabels(slice, svc, controllerName).labels };
  return slice;
}

function ownedBy(slice: EndpointSlice, svc: Service): boolean {
  return (slice.metadata?.ownerReferences ?? []).some((r) => r.kind === 'Service' && r.uid === svc.metadata?.uid);
}

function isPlaceholder(slice: EndpointSlice, svc: Service, addressType: AddressType, controllerName: string): boolean {
  if (slice.addressType !== addressType || (slice.endpoints ?? []).length || (slice.ports ?? []).length || !ownedBy(slice, svc)) return false;
  return stableStringify(slice.metadata?.labels ?? {}) === stableStringify(sliceLabels(slice, svc, controllerName).labels);
}

interface Plan {
  create: SliceObj[];
  update: SliceObj[];
  delete: SliceObj[];
}

class SliceReconciler implements Reconciler {
  constructor(private readonly o: ReconcilerOptions) {}

  async reconcile(svc: Service, pods: readonly Pod[], existing: readonly SliceObj[], triggerTime: number | undefined, node: (name: string) => Node | undefined): Promise<void> {
    const errors: unknown[] = [];
    const types = addressTypesForService(svc);
    const byType = new Map<string, SliceObj[]>();
    const wrongType: SliceObj[] = [];
    for (const s of existing) {
      if (!types.includes(s.addressType as AddressType)) wrongType.push(s);
      else byType.set(s.addressType, [...(byType.get(s.addressType) ?? []), s]);
    }
    for (const t of types) {
      try {
        await this.reconcileByAddressType(svc, pods, byType.get(t) ?? [], triggerTime, t, node, errors);
      } catch (err) {
        errors.push(err);
      }
    }
    const api = this.o.client.resource<SliceObj>(GVR.endpointSlices).namespace(svc.metadata?.namespace ?? '');
    for (const s of wrongType) {
      try {
        await api.delete(s.metadata?.name ?? '');
        this.o.tracker.expectDeletion(s);
      } catch (err) {
        errors.push(new Error(`error deleting ${s.metadata?.name} EndpointSlice for Service ${svc.metadata?.namespace}/${svc.metadata?.name}: ${(err as Error).message}`, { cause: err }));
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, errors.map((e) => (e as Error)?.message ?? String(e)).join(', '));
  }

  private async reconcileByAddressType(
    svc: Service,
    pods: readonly Pod[],
    existing: readonly SliceObj[],
    triggerTime: number | undefined,
    addressType: AddressType,
    node: (name: string) => Node | undefined,
    errors: unknown[],
  ): Promise<void> {
    const desired = new Map<string, { ports: EndpointPort[]; endpoints: Map<string, Endpoint> }>();
    for (const pod of pods) {
      if (!shouldPodBeInEndpoints(pod, true)) continue;
      const ports = endpointPorts(svc, pod);
      const key = portMapKey(ports);
      let group = desired.get(key);
      if (!group) desired.set(key, (group = { ports, endpoints: new Map() }));
      const nodeName = pod.spec?.nodeName ?? '';
      const n = nodeName ? node(nodeName) : undefined;
      if (!n && svc.spec?.publishNotReadyAddresses !== true) {
        // A pod pointing at a node we do not know is left out, and the service retried.
        this.o.logger.info({ pod: pod.metadata?.name, service: `${svc.metadata?.namespace}/${svc.metadata?.name}`, node: nodeName }, 'skipping Pod for Service, Node not found');
        errors.push(new Error(`skipping Pod ${pod.metadata?.name} for Service ${svc.metadata?.namespace}/${svc.metadata?.name}: Node ${nodeName} Not Found`));
        continue;
      }
      const ep = podToEndpoint(pod, n, svc, addressType);
      if (ep.addresses.length) group.endpoints.set(endpointKey(ep), ep);
    }

    const existingByPorts = new Map<string, SliceObj[]>();
    for (const s of existing) {
      const k = portMapKey(s.ports);
      existingByPorts.set(k, [...(existingByPorts.get(k) ?? []), s]);
    }
    const plan: Plan = { create: [], update: [], delete: [] };
    for (const [key, group] of desired) {
      const p = this.reconcileByPortMapping(svc, existingByPorts.get(key) ?? [], group.endpoints, group.ports, addressType);
      plan.create.push(...p.create);
      plan.update.push(...p.update);
      plan.delete.push(...p.delete);
    }
    for (const [key, slices] of existingByPorts) if (!desired.has(key)) plan.delete.push(...slices);

    // A service with no endpoints keeps one empty placeholder slice.
    if (existing.length === plan.delete.length && plan.create.length < 1) {
      if (plan.delete.length === 1 && isPlaceholder(plan.delete[0]!, svc, addressType, this.o.controllerName)) plan.delete = [];
      else plan.create.push(newSlice(svc, [], addressType, this.o.controllerName));
    }
    await this.finalize(svc, plan, triggerTime);
  }

  private reconcileByPortMapping(svc: Service, existing: readonly SliceObj[], desired: Map<string, Endpoint>, ports: EndpointPort[], addressType: AddressType): Plan {
    const max = this.o.maxEndpointsPerSlice;
    const byName = new Map<string, SliceObj>();
    const unchanged = new Set<string>();
    const toUpdate = new Set<string>();
    const toDelete = new Set<string>();

    // 1. Keep endpoints still desired in existing slices; note changed ones.
    for (const slice of existing) {
      const name = slice.metadata?.name ?? '';
      byName.set(name, slice);
      const kept: Endpoint[] = [];
      let endpointUpdated = false;
      for (const ep of slice.endpoints ?? []) {
        const k = endpointKey(ep);
        const want = desired.get(k);
        if (!want) continue;
        kept.push(want);
        if (!endpointsEqualBeyondKey(want, ep)) endpointUpdated = true;
        desired.delete(k);
      }
      const { labels, changed } = sliceLabels(slice, svc, this.o.controllerName);
      if (endpointUpdated || kept.length !== (slice.endpoints ?? []).length) {
        if (kept.length === 0) toDelete.add(name);
        else {
          const copy = deepCopy(slice);
          copy.endpoints = kept;
          copy.metadata = { ...copy.metadata, labels };
          byName.set(name, copy);
          toUpdate.add(name);
        }
      } else if (changed) {
        const copy = deepCopy(slice);
        copy.metadata = { ...copy.metadata, labels };
        byName.set(name, copy);
        toUpdate.add(name);
      } else {
        unchanged.add(name);
      }
    }

    const pop = (): Endpoint => {
      const [k, ep] = desired.entries().next().value as [string, Endpoint];
      desired.delete(k);
      return ep;
    };

    // 2. Fill slices already being updated, fullest first.
    if (desired.size > 0 && toUpdate.size > 0) {
      const slices = [...toUpdate].map((n) => byName.get(n)!).sort((a, b) => (b.endpoints?.length ?? 0) - (a.endpoints?.length ?? 0));
      for (const s of slices) {
        s.endpoints ??= [];
        while (desired.size > 0 && s.endpoints.length < max) s.endpoints.push(pop());
      }
    }

    // 3. Fit what is left into the closest unchanged slice, else new slices.
    const create: SliceObj[] = [];
    while (desired.size > 0) {
      let fill: SliceObj | undefined;
      if (desired.size < max && unchanged.size > 0) {
        let closest = max;
        for (const n of unchanged) {
          const s = byName.get(n)!;
          const diff = max - (desired.size + (s.endpoints?.length ?? 0));
          if (diff >= 0 && diff < closest) {
            closest = diff;
            fill = s;
            if (diff === 0) break;
          }
        }
      }
      if (!fill) fill = newSlice(svc, ports, addressType, this.o.controllerName);
      else {
        fill = deepCopy(fill);
        byName.set(fill.metadata?.name ?? '', fill);
      }
      fill.endpoints ??= [];
      while (desired.size > 0 && fill.endpoints.length < max) fill.endpoints.push(pop());
      const name = fill.metadata?.name;
      if (name) {
        toUpdate.add(name);
        unchanged.delete(name);
      } else create.push(fill);
    }
    return { create, update: [...toUpdate].map((n) => byName.get(n)!), delete: [...toDelete].map((n) => byName.get(n)!) };
  }

  private async finalize(svc: Service, plan: Plan, triggerTime: number | undefined): Promise<void> {
    // Turn create+delete pairs into updates of the slices about to go.
    for (let i = 0; i < plan.delete.length && plan.create.length > 0; ) {
      const doomed = plan.delete[i]!;
      const slice = plan.create[plan.create.length - 1]!;
      if (doomed.addressType === slice.addressType && ownedBy(doomed, svc)) {
        const { generateName: _g, ...meta } = slice.metadata ?? {};
        slice.metadata = { ...doomed.metadata, ...meta, name: doomed.metadata?.name ?? '' };
        plan.create.pop();
        plan.update.push(slice);
        plan.delete.splice(i, 1);
      } else i++;
    }
    const ns = svc.metadata?.namespace ?? '';
    const api = this.o.client.resource<SliceObj>(GVR.endpointSlices).namespace(ns);
    const svcName = `${ns}/${svc.metadata?.name}`;
    const stamp = (s: SliceObj) => {
      const annotations = { ...(s.metadata?.annotations ?? {}) };
      if (triggerTime !== undefined) annotations[LAST_CHANGE_TRIGGER_TIME_ANNOTATION] = rfc3339Nano(triggerTime);
      else delete annotations[LAST_CHANGE_TRIGGER_TIME_ANNOTATION];
      s.metadata = { ...s.metadata, annotations };
    };
    // Creating while the service is being deleted would race the garbage collector.
    if (!svc.metadata?.deletionTimestamp) {
      for (const s of plan.create) {
        stamp(s);
        try {
          this.o.tracker.update(await api.create(s));
        } catch (err) {
          if (hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) return;
          throw new Error(`failed to create EndpointSlice for Service ${svcName}: ${(err as Error).message}`, { cause: err });
        }
      }
    }
    for (const s of plan.update) {
      stamp(s);
      try {
        this.o.tracker.update(await api.update(s));
      } catch (err) {
        throw new Error(`failed to update ${s.metadata?.name} EndpointSlice for Service ${svcName}: ${(err as Error).message}`, { cause: err });
      }
    }
    for (const s of plan.delete) {
      try {
        await api.delete(s.metadata?.name ?? '');
        this.o.tracker.expectDeletion(s);
      } catch (err) {
        throw new Error(`failed to delete ${s.metadata?.name} EndpointSlice for Service ${svcName}: ${(err as Error).message}`, { cause: err });
      }
    }
  }
}

export function newReconciler(opts: ReconcilerOptions): Reconciler {
  return new SliceReconciler(opts);
}
