/**
 * What this controller last wrote to each EndpointSlice, by service
 * (endpointslice EndpointSliceTracker): the generation it expects per slice
 * UID, or "deletion expected". Used to tell a stale informer cache (a slice
 * older than what we wrote, or one we deleted still present) from changes by
 * someone else (a newer generation, an unexpected deletion), which trigger a
 * resync.
 */
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { LABEL_SERVICE_NAME } from './endpoint-util.js';

const DELETION_EXPECTED = -1;

export interface EndpointSliceTracker {
  /** Whether the slice's UID is tracked. */
  has(slice: EndpointSlice): boolean;
  /** True when the slice is untracked or newer than what we wrote (someone else changed it). */
  shouldSync(slice: EndpointSlice): boolean;
  /** True when `slices` (from the cache, for `service`) are older than what we wrote, or include one we deleted. */
  staleSlices(namespace: string, serviceName: string, slices: readonly EndpointSlice[]): boolean;
  /** Records a slice as written by us (its returned generation). */
  update(slice: EndpointSlice): void;
  /** Records that we deleted the slice. */
  expectDeletion(slice: EndpointSlice): void;
  /** Forgets a deleted slice; false when the deletion was not ours (resync the service). */
  handleDeletion(slice: EndpointSlice): boolean;
  deleteService(namespace: string, name: string): void;
}

function serviceKey(slice: EndpointSlice): string {
  return `${slice.metadata?.namespace ?? ''}/${slice.metadata?.labels?.[LABEL_SERVICE_NAME] ?? ''}`;
}

class Tracker implements EndpointSliceTracker {
  private readonly byService = new Map<string, Map<string, number>>();

  private gens(slice: EndpointSlice): Map<string, number> | undefined {
    return this.byService.get(serviceKey(slice));
  }

  has(slice: EndpointSlice): boolean {
    return this.gens(slice)?.has(slice.metadata?.uid ?? '') ?? false;
  }

  shouldSync(slice: EndpointSlice): boolean {
    const g = this.gens(slice)?.get(slice.metadata?.uid ?? '');
    if (g === undefined) return true;
    return (slice.metadata?.generation ?? 0) > g;
  }

  staleSlices(namespace: string, serviceName: string, slices: readonly EndpointSlice[]): boolean {
    const gens = this.byService.get(`${namespace}/${serviceName}`);
    if (!gens) return false;
    const provided = new Map<string, number>();
    for (const s of slices) provided.set(s.metadata?.uid ?? '', s.metadata?.generation ?? 0);
    for (const [uid, g] of gens) {
      if (g === DELETION_EXPECTED) {
        if (provided.has(uid)) return true;
        continue;
      }
      if ((provided.get(uid) ?? -Infinity) < g) return true;
    }
    return false;
  }

  update(slice: EndpointSlice): void {
    const key = serviceKey(slice);
    let gens = this.byService.get(key);
    if (!gens) this.byService.set(key, (gens = new Map()));
    gens.set(slice.metadata?.uid ?? '', slice.metadata?.generation ?? 0);
  }

  expectDeletion(slice: EndpointSlice): void {
    const key = serviceKey(slice);
    let gens = this.byService.get(key);
    if (!gens) this.byService.set(key, (gens = new Map()));
    gens.set(slice.metadata?.uid ?? '', DELETION_EXPECTED);
  }

  handleDeletion(slice: EndpointSlice): boolean {
    const gens = this.gens(slice);
    const uid = slice.metadata?.uid ?? '';
    if (gens?.has(uid)) {
      const g = gens.get(uid);
      gens.delete(uid);
      if (g !== DELETION_EXPECTED) return false;
    }
    return true;
  }

  deleteService(namespace: string, name: string): void {
    this.byService.delete(`${namespace}/${name}`);
  }
}

export function newEndpointSliceTracker(): EndpointSliceTracker {
  return new Tracker();
}
