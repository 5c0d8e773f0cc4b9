/**
 * The EndpointSlice mirroring reconciler (pkg/controller/endpointslicemirroring
 * reconciler.go): turns an Endpoints object into the EndpointSlices that
 * mirror it.
 *
 * - Subsets are repacked first; each (port set, address type) gets one slice.
 * - At most maxEndpointsPerSubset addresses per subset are mirrored (ready
 *   ones first); invalid IPs are skipped. Both are reported as Warning events
 *   on the Endpoints (InvalidIPAddress, TooManyAddressesToMirror).
 * - Slices copy the Endpoints' labels (plus service-name and managed-by) and
 *   annotations (except last-change-trigger-time and last-applied-configuration),
 *   and are owned by the Endpoints.
 * - A port set keeps its first existing slice (rewritten only when endpoints,
 *   labels or annotations differ) and loses the others; slices of port sets
 *   no longer present are deleted; creates paired with deletes of the same
 *   address type become updates.
 */
import { isIP } from 'node:net';
import type { EndpointAddress, Endpoints } from 'kubernetes-types/core/v1.js';
import type { Endpoint, EndpointPort, EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { GVR } from '../../api/gvr.js';
import { newControllerRef } from '../../api/meta.js';
import type { Client } from '../../client/interfaces.js';
import { isNotFound } from '../../client/errors.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import { repackSubsets } from '../endpoints/subsets.js';
import type { EndpointSliceTracker } from '../endpointslice/endpoint-slice-tracker.js';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, LAST_CHANGE_TRIGGER_TIME_ANNOTATION, NAMESPACE_TERMINATING_CAUSE, hasStatusCause } from '../endpointslice/endpoint-util.js';
import { endpointKey, endpointsEqualBeyondKey, portMapKey, slicePrefix } from '../endpointslice/reconciler.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export type SliceObj = Kube<EndpointSlice>;
type AddressType = 'IPv4' | 'IPv6';

/** managed-by label value of mirrored slices. */
export const MIRRORING_MANAGED_BY = 'endpointslicemirroring-controller.k8s.io';
export const LAST_APPLIED_CONFIG_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

export interface MirroringReconcilerOptions {
  client: Client;
  tracker: EndpointSliceTracker;
  recorder: EventRecorder;
  /** --mirroring-max-endpoints-per-subset (default 1000). */
  maxEndpointsPerSubset: number;
}

export interface MirroringReconciler {
  /** Creates, updates and deletes `existing` (the slices mirrored for these Endpoints) to mirror `endpoints`. */
  reconcile(endpoints: Kube<Endpoints>, existing: readonly SliceObj[]): Promise<void>;
  /** Deletes every slice in `slices` (the Endpoints is gone or no longer mirrored). */
  deleteSlices(slices: readonly SliceObj[]): Promise<void>;
}

/** IPv4 or IPv6 for a valid IP (IPv4-mapped IPv6 counts as IPv4, as Go's To4), undefined otherwise. */
export function addressTypeOf(ip: string): AddressType | undefined {
  const v = isIP(ip);
  if (v === 4) return 'IPv4';
  if (v === 6) return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) ? 'IPv4' : 'IPv6';
  return undefined;
}

function addressToEndpoint(a: EndpointAddress, ready: boolean): Endpoint {
  return {
    addresses: [a.ip],
    conditions: { ready },
    ...(a.targetRef ? { targetRef: deepCopy(a.targetRef) } : {}),
    ...(a.nodeName ? { nodeName: a.nodeName } : {}),
    ...(a.hostname ? { hostname: a.hostname } : {}),
  };
}

function withoutKeys(m: Record<string, string> | undefined, ...keys: string[]): Record<string, string> {
  const out: Record<string, string> = { ...m };
  for (const k of keys) delete out[k];
  return out;
}

function sameMap(a: Record<string, string>, b: Record<string, string> | undefined): boolean {
  const bb = b ?? {};
  const ka = Object.keys(a);
  return ka.length === Object.keys(bb).length && ka.every((k) => bb[k] === a[k]);
}

interface Desired {
  ports: EndpointPort[];
  addressType: AddressType;
  endpoints: Map<string, Endpoint>;
}

interface Plan {
  create: SliceObj[];
  update: SliceObj[];
  delete: SliceObj[];
}

class Reconciler implements MirroringReconciler {
  constructor(private readonly o: MirroringReconcilerOptions) {}

  async reconcile(endpoints: Kube<Endpoints>, existing: readonly SliceObj[]): Promise<void> {
    const desired = new Map<string, Desired>();
    let invalid = 0;
    let skipped = 0;
    for (const subset of repackSubsets(endpoints.subsets ?? [])) {
      const ports: EndpointPort[] = (subset.ports ?? []).map((p) => ({ name: p.name ?? '', port: p.port, protocol: p.protocol ?? 'TCP', ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}) }));
      const total = (subset.addresses?.length ?? 0) + (subset.notReadyAddresses?.length ?? 0);
      let added = 0;
      const add = (a: EndpointAddress, ready: boolean) => {
        const type = addressTypeOf(a.ip);
        if (!type) {
          invalid++;
          return;
        }
        const key = `${portMapKey(ports)}|${type}`;
        let d = desired.get(key);
        if (!d) desired.set(key, (d = { ports, addressType: type, endpoints: new Map() }));
        const ep = addressToEndpoint(a, ready);
        d.endpoints.set(endpointKey(ep), ep);
        added++;
      };
      for (const a of subset.addresses ?? []) {
        if (added >= this.o.maxEndpointsPerSubset) break;
        add(a, true);
      }
      for (const a of subset.notReadyAddresses ?? []) {
        if (added >= this.o.maxEndpointsPerSubset) break;
        add(a, false);
      }
      skipped += total - added;
    }
    if (invalid > 0) this.o.recorder.eventf(endpoints, 'Warning', 'InvalidIPAddress', 'Skipped %d invalid IP addresses when mirroring to EndpointSlices', invalid);
    if (skipped > invalid) {
      this.o.recorder.eventf(
        endpoints,
        'Warning',
        'TooManyAddressesToMirror',
        'A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped',
        this.o.maxEndpointsPerSubset,
        // As upstream: the count includes the invalid addresses.
        skipped,
      );
    }

    const existingByKey = new Map<string, SliceObj[]>();
    for (const s of existing) {
      const key = `${portMapKey(s.ports ?? [])}|${s.addressType}`;
      existingByKey.set(key, [...(existingByKey.get(key) ?? []), s]);
    }
    const plan: Plan = { create: [], update: [], delete: [] };
    for (const [key, d] of desired) this.reconcilePortMapping(endpoints, existingByKey.get(key) ?? [], d, plan);
    for (const [key, slices] of existingByKey) if (!desired.has(key)) plan.delete.push(...slices);
    await this.finalize(endpoints, plan);
  }

  private reconcilePortMapping(endpoints: Kube<Endpoints>, existing: readonly SliceObj[], d: Desired, plan: Plan): void {
    if (d.endpoints.size === 0) {
      plan.delete.push(...existing);
      return;
    }
    const first = existing[0];
    if (first) {
      plan.delete.push(...existing.slice(1));
      const wantAnnotations = withoutKeys(endpoints.metadata?.annotations, LAST_CHANGE_TRIGGER_TIME_ANNOTATION, LAST_APPLIED_CONFIG_ANNOTATION);
      const haveLabels = withoutKeys(first.metadata?.labels, LABEL_MANAGED_BY, LABEL_SERVICE_NAME);
      if (this.sameEndpoints(first, d) && sameMap(withoutKeys(endpoints.metadata?.labels), haveLabels) && sameMap(wantAnnotations, first.metadata?.annotations) && !this.ownerChanged(endpoints, first)) {
        if (!this.o.tracker.has(first)) this.o.tracker.update(first);
        return;
      }
    }
    const slice = newSlice(endpoints, d.ports, d.addressType, first?.metadata?.name);
    for (const ep of d.endpoints.values()) {
      if (slice.endpoints.length >= this.o.maxEndpointsPerSubset) break;
      slice.endpoints.push(ep);
    }
    if (first) {
      slice.metadata = { ...slice.metadata, resourceVersion: first.metadata?.resourceVersion ?? '' };
      plan.update.push(slice);
    } else plan.create.push(slice);
  }

  /** No endpoint added, removed or changed (totalChanges). */
  private sameEndpoints(slice: SliceObj, d: Desired): boolean {
    const have = slice.endpoints ?? [];
    if (have.length !== d.endpoints.size) return false;
    return have.every((ep) => {
      const want = d.endpoints.get(endpointKey(ep));
      return !!want && endpointsEqualBeyondKey(want, ep);
    });
  }

  /** The slice is owned by an earlier Endpoints of the same name (needRebuildExistingSlices). */
  private ownerChanged(endpoints: Kube<Endpoints>, slice: SliceObj): boolean {
    return (slice.metadata?.ownerReferences ?? []).some((r) => r.kind === 'Endpoints' && r.name === endpoints.metadata?.name && r.uid !== endpoints.metadata?.uid);
  }

  private async finalize(endpoints: Kube<Endpoints>, plan: Plan): Promise<void> {
    // Recycle slices about to be deleted for creates of the same address type.
    for (let i = 0; i < plan.delete.length && plan.create.length > 0; ) {
      const doomed = plan.delete[i]!;
      const idx = plan.create.findIndex((s) => s.addressType === doomed.addressType);
      if (idx < 0) {
        i++;
        continue;
      }
      const [slice] = plan.create.splice(idx, 1);
      const { generateName: _g, ...meta } = slice!.metadata ?? {};
      slice!.metadata = { ...meta, name: doomed.metadata?.name ?? '', resourceVersion: doomed.metadata?.resourceVersion ?? '' };
      plan.update.push(slice!);
      plan.delete.splice(i, 1);
    }
    const ns = endpoints.metadata?.namespace ?? '';
    const key = `${ns}/${endpoints.metadata?.name ?? ''}`;
    const api = this.o.client.resource<SliceObj>(GVR.endpointSlices).namespace(ns);
    if (!endpoints.metadata?.deletionTimestamp) {
      for (const s of plan.create) {
        try {
          this.o.tracker.update(await api.create(s));
        } catch (err) {
          // Creates keep failing in a terminating namespace: drop the work.
          if (hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) return;
          throw new Error(`failed to create EndpointSlice for Endpoints ${key}: ${(err as Error).message}`, { cause: err });
        }
      }
    }
    for (const s of plan.update) {
      try {
        this.o.tracker.update(await api.update(s));
      } catch (err) {
        throw new Error(`failed to update ${s.metadata?.name ?? ''} EndpointSlice for Endpoints ${key}: ${(err as Error).message}`, { cause: err });
      }
    }
    await this.deleteSlices(plan.delete);
  }

  async deleteSlices(slices: readonly SliceObj[]): Promise<void> {
    const errors: unknown[] = [];
    for (const s of slices) {
      try {
        await this.o.client.resource<SliceObj>(GVR.endpointSlices).namespace(s.metadata?.namespace ?? '').delete(s.metadata?.name ?? '');
        this.o.tracker.expectDeletion(s);
      } catch (err) {
        if (isNotFound(err)) continue;
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `failed to delete ${errors.length} EndpointSlices`);
  }
}

function newSlice(endpoints: Kube<Endpoints>, ports: EndpointPort[], addressType: AddressType, name: string | undefined): SliceObj & { endpoints: Endpoint[] } {
  const svcName = endpoints.metadata?.name ?? '';
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      ...(name ? { name } : { generateName: slicePrefix(svcName) }),
      namespace: endpoints.metadata?.namespace ?? '',
      labels: { ...endpoints.metadata?.labels, [LABEL_SERVICE_NAME]: svcName, [LABEL_MANAGED_BY]: MIRRORING_MANAGED_BY },
      annotations: withoutKeys(endpoints.metadata?.annotations, LAST_CHANGE_TRIGGER_TIME_ANNOTATION, LAST_APPLIED_CONFIG_ANNOTATION),
      ownerReferences: [newControllerRef(endpoints, { group: '', version: 'v1', kind: 'Endpoints' })],
    },
    addressType,
    ports: deepCopy(ports),
    endpoints: [],
  };
}

export function newMirroringReconciler(opts: MirroringReconcilerOptions): MirroringReconciler {
  return new Reconciler(opts);
}
