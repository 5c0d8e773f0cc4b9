/**
 * Pod resource requests as the scheduler counts them (k8s.io/component-helpers
 * resource.PodRequests): the sum of the app containers, sidecars (restartable
 * init containers) added on top, the largest init-container step as a floor,
 * then the pod overhead.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { milliValue, value, type QuantityLike } from '../api/quantity.js';

/** Requests in scheduler units: cpu in millicores, everything else in whole units (bytes, counts). */
export interface Resource {
  milliCPU: number;
  memory: number;
  ephemeralStorage: number;
  /** Extended resources, hugepages-*, attachable-volumes-* and any other named resource. */
  scalar: Map<string, number>;
}

/** Default requests the scoring plugins assume for a container without one (100m cpu, 200Mi memory). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

export function emptyResource(): Resource {
  return { milliCPU: 0, memory: 0, ephemeralStorage: 0, scalar: new Map() };
}

export function cloneResource(r: Resource): Resource {
  return { milliCPU: r.milliCPU, memory: r.memory, ephemeralStorage: r.ephemeralStorage, scalar: new Map(r.scalar) };
}

function safe(fn: () => number): number {
  try {
    return fn();
  } catch {
    // An unparsable quantity was rejected by the API server's validation; count it as zero.
    return 0;
  }
}

/** Converts a ResourceList into scheduler units. `pods` is not a request and is skipped. */
export function resourceFromList(list: Record<string, QuantityLike> | undefined): Resource {
  const r = emptyResource();
  if (!list) return r;
  for (const [name, q] of Object.entries(list)) {
    switch (name) {
      case 'cpu':
        r.milliCPU += safe(() => milliValue(q));
        break;
      case 'memory':
        r.memory += safe(() => value(q));
        break;
      case 'ephemeral-storage':
        r.ephemeralStorage += safe(() => value(q));
        break;
      case 'pods':
        break;
      default:
        r.scalar.set(name, (r.scalar.get(name) ?? 0) + safe(() => value(q)));
    }
  }
  return r;
}

/** a += b */
export function addResource(a: Resource, b: Resource): void {
  a.milliCPU += b.milliCPU;
  a.memory += b.memory;
  a.ephemeralStorage += b.ephemeralStorage;
  for (const [k, v] of b.scalar) a.scalar.set(k, (a.scalar.get(k) ?? 0) + v);
}

/** a -= b */
export function subtractResource(a: Resource, b: Resource): void {
  a.milliCPU -= b.milliCPU;
  a.memory -= b.memory;
  a.ephemeralStorage -= b.ephemeralStorage;
  for (const [k, v] of b.scalar) a.scalar.set(k, (a.scalar.get(k) ?? 0) - v);
}

/** a = max(a, b) per resource */
function maxResource(a: Resource, b: Resource): void {
  a.milliCPU = Math.max(a.milliCPU, b.milliCPU);
  a.memory = Math.max(a.memory, b.memory);
  a.ephemeralStorage = Math.max(a.ephemeralStorage, b.ephemeralStorage);
  for (const [k, v] of b.scalar) a.scalar.set(k, Math.max(a.scalar.get(k) ?? 0, v));
}

function containerRequests(c: Container, nonZero: boolean): Resource {
  const requests = (c.resources?.requests ?? {}) as Record<string, QuantityLike>;
  const r = resourceFromList(requests);
  if (nonZero) {
    // Only a missing request is replaced, as GetNonzeroRequests does; an explicit 0 stays 0.
    if (!('cpu' in requests)) r.milliCPU = DEFAULT_MILLI_CPU_REQUEST;
    if (!('memory' in requests)) r.memory = DEFAULT_MEMORY_REQUEST;
  }
  return r;
}

/**
 * The pod's effective request. With `nonZero`, a container missing a cpu or
 * memory request counts as the scoring defaults (the "non-zero" request).
 */
export function podRequests(pod: Pod, nonZero = false): Resource {
  const reqs = emptyResource();
  for (const c of pod.spec?.containers ?? []) addResource(reqs, containerRequests(c, nonZero));
  const sidecars = emptyResource();
  const initMax = emptyResource();
  for (const c of pod.spec?.initContainers ?? []) {
    const cr = containerRequests(c, nonZero);
    if (c.restartPolicy === 'Always') {
      // A sidecar runs for the pod's lifetime: it adds to the app containers
      // and to every later init step.
      addResource(reqs, cr);
      addResource(sidecars, cr);
      maxResource(initMax, sidecars);
    } else {
      const step = cloneResource(cr);
      addResource(step, sidecars);
      maxResource(initMax, step);
    }
  }
  maxResource(reqs, initMax);
  if (pod.spec?.overhead) addResource(reqs, resourceFromList(pod.spec.overhead as Record<string, QuantityLike>));
  return reqs;
}

/** A node's allocatable resources and allowed pod count (status.allocatable, falling back to capacity). */
export function nodeAllocatable(node: { status?: { allocatable?: Record<string, QuantityLike>; capacity?: Record<string, QuantityLike> } }): {
  resource: Resource;
  allowedPods: number;
} {
  const list = node.status?.allocatable ?? node.status?.capacity ?? {};
  const pods = list['pods'];
  return { resource: resourceFromList(list), allowedPods: pods === undefined ? 0 : safe(() => value(pods)) };
}

/** The amount of one named resource in `r` (cpu in millicores). */
export function resourceAmount(r: Resource, name: string): number {
  switch (name) {
    case 'cpu':
      return r.milliCPU;
    case 'memory':
      return r.memory;
    case 'ephemeral-storage':
      return r.ephemeralStorage;
    default:
      return r.scalar.get(name) ?? 0;
  }
}
