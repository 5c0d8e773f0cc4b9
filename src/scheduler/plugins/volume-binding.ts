/**
 * VolumeBinding (plugins/volumebinding with the scheduler's volume binder,
 * binder.go): a pod's PersistentVolumeClaims decide where it may run and get
 * bound on the way.
 *
 * - preFilter: every claim must exist (and not be Lost or being deleted);
 *   an unbound claim of an Immediate class keeps the pod pending until the
 *   PersistentVolume controller binds it.
 * - filter, per node: bound claims' volumes must accept the node (PV
 *   nodeAffinity); each unbound WaitForFirstConsumer claim needs an Available
 *   volume that fits the node (the smallest) or a class able to provision
 *   there (a provisioner, allowedTopologies matching the node).
 * - reserve: assumes the choice (claimRef on the chosen volumes, the
 *   selected-node annotation on claims to provision) in an assume cache, so
 *   the next pods do not pick the same volumes.
 * - preBind: writes the assumed volumes and claims, then polls (every
 *   second, up to the bind timeout, on the scheduler's clock) until the
 *   PersistentVolume controller (and the provisioner) have bound every claim.
 *   Fails when the selected-node annotation is removed (provisioning failed),
 *   a claimRef is reset, or the pod is deleted.
 * - unreserve: forgets what reserve assumed.
 */
import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { compare } from '../../api/quantity.js';
import {
  ANN_SELECTED_NODE,
  bindVolumeToClaim,
  claimClass,
  claimRequest,
  findMatchingVolumeForNode,
  isClaimFullyBound,
  NOT_SUPPORTED_PROVISIONER,
  topologySelectorTermsMatch,
  volumeClass,
  volumeNodeAffinityMatches,
} from '../../api/volume.js';
import type { KubeObject } from '../../api/types.js';
import type { Client } from '../../client/interfaces.js';
import { realClock, type Clock } from '../../util/clock/clock.js';
import { errorStatus, unresolvable, type ClusterLookups, type CycleContext, type FilterPlugin, type PreBindPlugin, type ReservePlugin, type Status } from '../framework.js';
import type { NodeInfo } from '../node-info.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const VOLUME_BINDING = 'VolumeBinding';

export const ERR_REASON_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';
export const ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
export const ERR_REASON_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const ERR_REASON_PV_NOT_EXIST = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';

/** VolumeBindingArgs.bindTimeoutSeconds' default (600 s). */
export const DEFAULT_BIND_TIMEOUT_MS = 600_000;
/** How often preBind checks the bindings (binder.go polls every second). */
export const BIND_POLL_INTERVAL_MS = 1_000;

interface StaticBinding {
  pv: PersistentVolume;
  claim: PersistentVolumeClaim;
}

/** What the pod needs on one node: volumes to bind to claims, claims to provision. */
export interface PodVolumes {
  staticBindings: StaticBinding[];
  dynamicProvisions: PersistentVolumeClaim[];
}

interface StateData {
  boundClaims: PersistentVolumeClaim[];
  unboundDelayBinding: PersistentVolumeClaim[];
  /** The volumes of each class the unbound claims ask for, as assumed at preFilter (unboundVolumesDelayBinding). */
  volumesByClass: Map<string, PersistentVolume[]>;
  byNode: Map<string, PodVolumes>;
  allBound: boolean;
}

function resourceVersion(obj: { metadata?: { resourceVersion?: string } } | undefined): number {
  const n = Number(obj?.metadata?.resourceVersion ?? 0);
  return Number.isFinite(n) ? n : 0;
}

/**
 * The binder's assume cache: an object changed by the scheduler but not yet
 * seen back from the informer hides the informer's copy until the informer
 * has a version at least as new.
 */
class AssumeCache<T extends { metadata?: { resourceVersion?: string } }> {
  private readonly assumed = new Map<string, T>();

  /** The assumed object if still newer than (or as new as) `api`, else `api`. */
  view(key: string, api: T | undefined): T | undefined {
    const a = this.assumed.get(key);
    if (!a) return api;
    if (!api || resourceVersion(api) > resourceVersion(a)) {
      this.assumed.delete(key);
      return api;
    }
    return a;
  }

  assume(key: string, obj: T): void {
    this.assumed.set(key, obj);
  }

  restore(key: string): void {
    this.assumed.delete(key);
  }

  size(): number {
    return this.assumed.size;
  }
}

/** The claims a pod uses: persistentVolumeClaim volumes and generic ephemeral volumes (`<pod>-<volume>`). */
function podClaims(pod: Pod): { name: string; ephemeral: boolean }[] {
  const out: { name: string; ephemeral: boolean }[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    if (v.persistentVolumeClaim) out.push({ name: v.persistentVolumeClaim.claimName, ephemeral: false });
    else if (v.ephemeral) out.push({ name: `${pod.metadata?.name ?? ''}-${v.name}`, ephemeral: true });
  }
  return out;
}

/** ephemeral.VolumeIsForPod: the pod must control the claim. */
function claimControlledBy(claim: PersistentVolumeClaim, pod: Pod): boolean {
  return (claim.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.uid === pod.metadata?.uid);
}

function claimKey(claim: PersistentVolumeClaim): string {
  return `${claim.metadata?.namespace ?? ''}/${claim.metadata?.name ?? ''}`;
}

export interface VolumeBindingOptions {
  /** Writes volumes and claims in preBind; without one, preBind fails when there is something to write. */
  client?: Client;
  clock?: Clock;
  /** How long preBind waits for the claims to be bound (default 600 s). */
  bindTimeoutMs?: number;
}

export type VolumeBindingPlugin = FilterPlugin & ReservePlugin & PreBindPlugin & {
  /** Objects currently assumed (volumes + claims); for tests. */
  assumedCount(): number;
};

class VolumeBinding implements FilterPlugin, ReservePlugin, PreBindPlugin {
  readonly name = VOLUME_BINDING;
  private readonly pvCache = new AssumeCache<PersistentVolume>();
  private readonly pvcCache = new AssumeCache<PersistentVolumeClaim>();
  private readonly client: Client | undefined;
  private readonly clock: Clock;
  private readonly bindTimeoutMs: number;

  constructor(opts: VolumeBindingOptions) {
    this.client = opts.client;
    this.clock = opts.clock ?? realClock;
    this.bindTimeoutMs = opts.bindTimeoutMs ?? DEFAULT_BIND_TIMEOUT_MS;
  }

  assumedCount(): number {
    return this.pvCache.size() + this.pvcCache.size();
  }

  private claim(lookups: ClusterLookups, ns: string, name: string): PersistentVolumeClaim | undefined {
    return this.pvcCache.view(`${ns}/${name}`, lookups.claim(ns, name));
  }

  private volume(lookups: ClusterLookups, name: string): PersistentVolume | undefined {
    return this.pvCache.view(name, lookups.persistentVolume(name));
  }

  /** The volumes of a class as the scheduler assumes them (pvCache.ListPVs). */
  private volumesOfClass(lookups: ClusterLookups, cls: string): PersistentVolume[] {
    const out: PersistentVolume[] = [];
    for (const pv of lookups.persistentVolumes()) {
      const v = this.pvCache.view(pv.metadata?.name ?? '', pv);
      if (v && volumeClass(v) === cls) out.push(v);
    }
    return out;
  }

  /** IsDelayBindingMode: the claim's class exists and is WaitForFirstConsumer. */
  private delayBinding(lookups: ClusterLookups, claim: PersistentVolumeClaim): boolean {
    const cls = claimClass(claim);
    if (!cls) return false;
    return lookups.storageClass(cls)?.volumeBindingMode === 'WaitForFirstConsumer';
  }

  preFilter(ctx: CycleContext): Status | undefined {
    const { pod, lookups } = ctx;
    const ns = pod.metadata?.namespace ?? 'default';
    const claims = podClaims(pod);
    if (claims.length === 0) return undefined;
    for (const { name, ephemeral } of claims) {
      const claim = lookups.claim(ns, name);
      if (!claim) {
        return unresolvable(
          ephemeral ? `waiting for ephemeral volume controller to create the persistentvolumeclaim ${JSON.stringify(name)}` : `persistentvolumeclaim ${JSON.stringify(name)} not found`,
        );
      }
      if (claim.status?.phase === 'Lost') {
        return unresolvable(`persistentvolumeclaim ${JSON.stringify(name)} bound to non-existent persistentvolume ${JSON.stringify(claim.spec?.volumeName ?? '')}`);
      }
      if (claim.metadata?.deletionTimestamp) return unresolvable(`persistentvolumeclaim ${JSON.stringify(name)} is being deleted`);
      if (ephemeral && !claimControlledBy(claim, pod)) {
        return unresolvable(`PVC ${ns}/${name} was not created for pod ${ns}/${pod.metadata?.name ?? ''} (pod is not owner)`);
      }
    }
    const state: StateData = { boundClaims: [], unboundDelayBinding: [], volumesByClass: new Map(), byNode: new Map(), allBound: false };
    let immediate = 0;
    for (const { name } of claims) {
      const claim = this.claim(lookups, ns, name)!;
      if (isClaimFullyBound(claim)) state.boundClaims.push(claim);
      else if (this.delayBinding(lookups, claim) && !claim.spec?.volumeName) state.unboundDelayBinding.push(claim);
      else immediate++; // Immediate binding (or pre-bound to a volume): the PersistentVolume controller binds it.
    }
    if (immediate > 0) return unresolvable(ERR_REASON_UNBOUND_IMMEDIATE);
    for (const claim of state.unboundDelayBinding) {
      const cls = claimClass(claim);
      if (!state.volumesByClass.has(cls)) state.volumesByClass.set(cls, this.volumesOfClass(lookups, cls));
    }
    ctx.state.set(VOLUME_BINDING, state);
    return undefined;
  }

  filter(ctx: CycleContext, info: NodeInfo): Status | undefined {
    const state = ctx.state.get(VOLUME_BINDING) as StateData | undefined;
    if (!state) return undefined;
    const node = info.node;
    const nodeName = node?.metadata?.name ?? '';
    const labels = node?.metadata?.labels ?? {};
    const { lookups } = ctx;

    let boundPVsFound = true;
    let boundSatisfied = true;
    let unboundSatisfied = true;
    const podVolumes: PodVolumes = { staticBindings: [], dynamicProvisions: [] };

    for (const claim of state.boundClaims) {
      const pv = this.volume(lookups, claim.spec?.volumeName ?? '');
      if (!pv) {
        boundPVsFound = false;
        break;
      }
      if (!volumeNodeAffinityMatches(pv, labels)) {
        boundSatisfied = false;
        break;
      }
    }

    if (state.unboundDelayBinding.length > 0) {
      const toMatch: PersistentVolumeClaim[] = [];
      const toProvision: PersistentVolumeClaim[] = [];
      let fastFail = false;
      for (const claim of state.unboundDelayBinding) {
        const selected = claim.metadata?.annotations?.[ANN_SELECTED_NODE];
        if (selected !== undefined) {
          if (selected !== nodeName) {
            fastFail = true;
            break;
          }
          toProvision.push(claim);
        } else toMatch.push(claim);
      }
      if (fastFail) unboundSatisfied = false;
      else {
        if (toMatch.length > 0) {
          // Smallest requests first, so the big volumes stay for the big claims.
          const sorted = [...toMatch].sort((a, b) => compare(claimRequest(a), claimRequest(b)));
          const chosen = new Set<string>();
          for (const claim of sorted) {
            let pv: PersistentVolume | undefined;
            try {
              pv = findMatchingVolumeForNode(claim, state.volumesByClass.get(claimClass(claim)) ?? [], labels, chosen);
            } catch (err) {
              return errorStatus(String((err as Error)?.message ?? err));
            }
            if (!pv) {
              toProvision.push(claim);
              unboundSatisfied = false;
              continue;
            }
            chosen.add(pv.metadata?.name ?? '');
            podVolumes.staticBindings.push({ pv, claim });
          }
        }
        if (toProvision.length > 0) {
          const r = this.checkProvisions(lookups, toProvision, labels);
          if (typeof r === 'string') return errorStatus(r);
          unboundSatisfied = r.satisfied;
          podVolumes.dynamicProvisions = r.satisfied ? toProvision : [];
        }
      }
    }

    const reasons: string[] = [];
    if (!boundPVsFound) reasons.push(ERR_REASON_PV_NOT_EXIST);
    if (!boundSatisfied) reasons.push(ERR_REASON_NODE_CONFLICT);
    if (!unboundSatisfied) reasons.push(ERR_REASON_BIND_CONFLICT);
    if (reasons.length > 0) return unresolvable(...reasons);
    state.byNode.set(nodeName, podVolumes);
    return undefined;
  }

  /** checkVolumeProvisions: each claim's class can provision on this node. A string is an internal error. */
  private checkProvisions(lookups: ClusterLookups, claims: readonly PersistentVolumeClaim[], labels: Readonly<Record<string, string>>): { satisfied: boolean } | string {
    for (const claim of claims) {
      const cls = claimClass(claim);
      if (!cls) return `no class for claim ${JSON.stringify(claimKey(claim))}`;
      const sc = lookups.storageClass(cls);
      if (!sc) return `failed to find storage class ${JSON.stringify(cls)}`;
      if (!sc.provisioner || sc.provisioner === NOT_SUPPORTED_PROVISIONER) return { satisfied: false };
      if (!topologySelectorTermsMatch(sc.allowedTopologies, labels)) return { satisfied: false };
    }
    return { satisfied: true };
  }

  /** Whether every claim of the pod is bound (arePodVolumesBound, through the assume cache). */
  private podVolumesBound(ctx: CycleContext): boolean {
    const ns = ctx.pod.metadata?.namespace ?? 'default';
    return podClaims(ctx.pod).every(({ name }) => {
      const c = this.claim(ctx.lookups, ns, name);
      return !!c && isClaimFullyBound(c);
    });
  }

  reserve(ctx: CycleContext, node: string): Status | undefined {
    const state = ctx.state.get(VOLUME_BINDING) as StateData | undefined;
    const podVolumes = state?.byNode.get(node);
    if (!state || !podVolumes) {
      if (state) state.allBound = true;
      return undefined;
    }
    if (this.podVolumesBound(ctx)) {
      state.allBound = true;
      return undefined;
    }
    const bindings: StaticBinding[] = [];
    for (const b of podVolumes.staticBindings) {
      const { volume, dirty } = bindVolumeToClaim(b.pv, b.claim);
      if (dirty) this.pvCache.assume(volume.metadata?.name ?? '', volume);
      bindings.push({ pv: volume, claim: b.claim });
    }
    const provisions: PersistentVolumeClaim[] = [];
    for (const c of podVolumes.dynamicProvisions) {
      const clone = deepCopy(c);
      clone.metadata = { ...clone.metadata, annotations: { ...clone.metadata?.annotations, [ANN_SELECTED_NODE]: node } };
      this.pvcCache.assume(claimKey(clone), clone);
      provisions.push(clone);
    }
    podVolumes.staticBindings = bindings;
    podVolumes.dynamicProvisions = provisions;
    state.allBound = false;
    return undefined;
  }

  unreserve(ctx: CycleContext, node: string): void {
    const state = ctx.state.get(VOLUME_BINDING) as StateData | undefined;
    const podVolumes = state?.byNode.get(node);
    if (!podVolumes) return;
    for (const b of podVolumes.staticBindings) this.pvCache.restore(b.pv.metadata?.name ?? '');
    for (const c of podVolumes.dynamicProvisions) this.pvcCache.restore(claimKey(c));
  }

  async preBind(ctx: CycleContext, node: string, signal: AbortSignal): Promise<Status | undefined> {
    const state = ctx.state.get(VOLUME_BINDING) as StateData | undefined;
    if (!state || state.allBound) return undefined;
    const podVolumes = state.byNode.get(node);
    if (!podVolumes) return errorStatus(`no pod volumes found for node ${JSON.stringify(node)}`);
    if (!this.client) return errorStatus('no client to bind volumes with');

    // bindAPIUpdate: volumes first, then the claims to provision; keep what the server returned.
    try {
      for (const b of podVolumes.staticBindings) {
        const updated = (await this.client.resource(GVR.persistentVolumes).update(b.pv as PersistentVolume & KubeObject)) as PersistentVolume;
        b.pv = updated;
        this.pvCache.assume(updated.metadata?.name ?? '', updated);
      }
      for (let i = 0; i < podVolumes.dynamicProvisions.length; i++) {
        const c = podVolumes.dynamicProvisions[i]!;
        const updated = (await this.client
          .resource(GVR.persistentVolumeClaims)
          .namespace(c.metadata?.namespace ?? 'default')
          .update(c as PersistentVolumeClaim & KubeObject)) as PersistentVolumeClaim;
        podVolumes.dynamicProvisions[i] = updated;
        this.pvcCache.assume(claimKey(updated), updated);
      }
    } catch (err) {
      return errorStatus(String((err as Error)?.message ?? err));
    }

    const deadline = this.clock.now() + this.bindTimeoutMs;
    for (;;) {
      try {
        await this.clock.sleep(BIND_POLL_INTERVAL_MS, signal);
      } catch {
        return errorStatus('binding volumes: context canceled');
      }
      const r = this.checkBindings(ctx, node, podVolumes);
      if (r === true) return undefined;
      if (typeof r === 'string') return errorStatus(`binding volumes: ${r}`);
      if (this.clock.now() >= deadline) return errorStatus('binding volumes: context deadline exceeded');
    }
  }

  /** checkBindings: true when all are bound, false to keep waiting, a string to give up. */
  private checkBindings(ctx: CycleContext, node: string, podVolumes: PodVolumes): boolean | string {
    const { lookups, pod } = ctx;
    const ns = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    if (!lookups.pod(ns, name)) return `pod does not exist any more: pods ${JSON.stringify(name)} not found`;
    const labels = ctx.snapshot.get(node)?.node?.metadata?.labels ?? {};
    const affinityError = (pv: PersistentVolume) => `pv ${JSON.stringify(pv.metadata?.name ?? '')} node affinity doesn't match node ${JSON.stringify(node)}: no matching NodeSelectorTerms`;

    for (const b of podVolumes.staticBindings) {
      const pvName = b.pv.metadata?.name ?? '';
      const pv = lookups.persistentVolume(pvName);
      if (!pv) return `failed to check binding: could not find v1.PersistentVolume ${JSON.stringify(pvName)}`;
      const claim = lookups.claim(b.claim.metadata?.namespace ?? '', b.claim.metadata?.name ?? '');
      if (!claim) return `failed to check binding: could not find v1.PersistentVolumeClaim ${JSON.stringify(claimKey(b.claim))}`;
      // The informer has not caught up with our own write yet.
      if (resourceVersion(b.pv) > resourceVersion(pv)) return false;
      if (!volumeNodeAffinityMatches(pv, labels)) return affinityError(pv);
      if (!pv.spec?.claimRef?.uid) return `ClaimRef got reset for pv ${JSON.stringify(pvName)}`;
      if (!isClaimFullyBound(claim)) return false;
    }
    for (const c of podVolumes.dynamicProvisions) {
      const claim = lookups.claim(c.metadata?.namespace ?? '', c.metadata?.name ?? '');
      if (!claim) return `failed to check provisioning pvc: could not find v1.PersistentVolumeClaim ${JSON.stringify(claimKey(c))}`;
      if (resourceVersion(c) > resourceVersion(claim)) return false;
      const annotations = claim.metadata?.annotations;
      // The API server drops an empty map (omitempty): no annotations at all.
      if (!annotations || Object.keys(annotations).length === 0) return `selectedNode annotation reset for PVC ${JSON.stringify(claim.metadata?.name ?? '')}`;
      // A provisioner that failed removes the annotation to ask for another node.
      if (annotations[ANN_SELECTED_NODE] !== node) return `provisioning failed for PVC ${JSON.stringify(claim.metadata?.name ?? '')}`;
      if (claim.spec?.volumeName) {
        const pv = lookups.persistentVolume(claim.spec.volumeName);
        if (!pv) return false;
        if (!volumeNodeAffinityMatches(pv, labels)) return affinityError(pv);
      }
      if (!isClaimFullyBound(claim)) return false;
    }
    return true;
  }
}

/** A VolumeBinding plugin with its own assume cache; one per scheduler. */
export function newVolumeBinding(opts: VolumeBindingOptions = {}): VolumeBindingPlugin {
  return new VolumeBinding(opts);
}
