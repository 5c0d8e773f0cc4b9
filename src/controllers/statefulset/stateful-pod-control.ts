/**
 * Pod and claim writes of the StatefulSet controller, with the events
 * upstream's StatefulPodControl records on the set
 * (pkg/controller/statefulset/stateful_pod_control.go).
 */
import { GVR } from '../../api/gvr.js';
import { aggregateMessage } from '../../api/validation.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../client/errors.js';
import type { Client } from '../../client/interfaces.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import {
  claimOwnerMatchesSetAndPod,
  getPersistentVolumeClaims,
  identityMatches,
  storageMatches,
  updateClaimOwnerRefForSetAndPod,
  updateIdentity,
  updateStorage,
  type Claim,
  type KPod,
  type Set,
} from './stateful-set-utils.js';
import { deepCopy } from '../../util/json/deep-copy.js';

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export interface StatefulPodControl {
  /** Creates the pod's missing claims, then the pod, then sets claim ownership for the retention policy. */
  createStatefulPod(set: Set, pod: KPod): Promise<KPod>;
  /** Restores identity, storage and claim ownership of an existing pod (a copy). */
  updateStatefulPod(set: Set, pod: KPod): Promise<void>;
  deleteStatefulPod(set: Set, pod: KPod): Promise<void>;
  /** Creates the claims of the pod that do not exist yet; throws when one is being deleted. */
  createMissingPersistentVolumeClaims(set: Set, pod: KPod): Promise<void>;
  /** The pod's claims have the ownerReferences the retention policy wants. */
  claimsMatchRetentionPolicy(set: Set, pod: KPod): boolean;
  /** Sets the ownerReferences of the pod's existing claims as the retention policy wants. */
  updatePodClaimForRetentionPolicy(set: Set, pod: KPod): Promise<void>;
  /** A claim of the pod is being deleted or still belongs to a previous pod of that name. */
  podClaimIsStale(set: Set, pod: KPod): boolean;
}

class PodControl implements StatefulPodControl {
  constructor(
    private readonly client: Client,
    private readonly claimLister: Lister<Claim>,
    private readonly podLister: Lister<KPod>,
    private readonly recorder: EventRecorder,
  ) {}

  private pods(ns: string) {
    return this.client.resource<KPod>(GVR.pods).namespace(ns);
  }
  private claims(ns: string) {
    return this.client.resource<Claim>(GVR.persistentVolumeClaims).namespace(ns);
  }

  private podEvent(verb: string, set: Set, pod: KPod, err?: unknown): void {
    const name = pod.metadata?.name ?? '';
    const setName = set.metadata?.name ?? '';
    if (err === undefined) {
      const reason = `Successful${verb[0]!.toUpperCase()}${verb.slice(1)}`;
      this.recorder.event(set, 'Normal', reason, `${verb} Pod ${name} in StatefulSet ${setName} successful`);
    } else {
      const reason = `Failed${verb[0]!.toUpperCase()}${verb.slice(1)}`;
      this.recorder.event(set, 'Warning', reason, `${verb} Pod ${name} in StatefulSet ${setName} failed error: ${errText(err)}`);
    }
  }

  private claimEvent(verb: string, set: Set, pod: KPod, claim: Claim, err?: unknown): void {
    const c = claim.metadata?.name ?? '';
    const p = pod.metadata?.name ?? '';
    const s = set.metadata?.name ?? '';
    const cap = verb[0]!.toUpperCase() + verb.slice(1);
    if (err === undefined) this.recorder.event(set, 'Normal', `Successful${cap}`, `${verb} Claim ${c} Pod ${p} in StatefulSet ${s} success`);
    else this.recorder.event(set, 'Warning', `Failed${cap}`, `${verb} Claim ${c} for Pod ${p} in StatefulSet ${s} failed error: ${errText(err)}`);
  }

  async createMissingPersistentVolumeClaims(set: Set, pod: KPod): Promise<void> {
    const errors: Error[] = [];
    for (const claim of getPersistentVolumeClaims(set, pod).values()) {
      const ns = claim.metadata!.namespace!;
      const existing = this.claimLister.namespace(ns).get(claim.metadata!.name!);
      if (existing) {
        if (existing.metadata?.deletionTimestamp) errors.push(new Error(`pvc ${claim.metadata!.name} is being deleted`));
        continue;
      }
      try {
        await this.claims(ns).create(claim);
        this.claimEvent('create', set, pod, claim);
      } catch (err) {
        if (isAlreadyExists(err)) continue;
        this.claimEvent('create', set, pod, claim, err);
        errors.push(new Error(`failed to create PVC ${claim.metadata!.name}: ${errText(err)}`, { cause: err }));
      }
    }
    // The text of utilerrors.NewAggregate: it ends up in the pod's FailedCreate event.
    if (errors.length > 0) throw new AggregateError(errors, aggregateMessage(errors));
  }

  async createStatefulPod(set: Set, pod: KPod): Promise<KPod> {
    try {
      await this.createMissingPersistentVolumeClaims(set, pod);
    } catch (err) {
      this.podEvent('create', set, pod, err);
      throw err;
    }
    let created: KPod;
    try {
      created = await this.pods(pod.metadata?.namespace ?? '').create(pod);
    } catch (err) {
      // AlreadyExists: the cache is behind; the next sync sees the pod.
      if (!isAlreadyExists(err)) this.podEvent('create', set, pod, err);
      throw err;
    }
    // As upstream: the claims' retention ownerReferences are set before the create is reported;
    // a failure there is a FailedUpdate instead.
    try {
      await this.updatePodClaimForRetentionPolicy(set, created);
    } catch (err) {
      this.podEvent('update', set, pod, err);
      throw err;
    }
    this.podEvent('create', set, pod);
    return created;
  }

  claimsMatchRetentionPolicy(set: Set, pod: KPod): boolean {
    for (const claim of getPersistentVolumeClaims(set, pod).values()) {
      const existing = this.claimLister.namespace(claim.metadata!.namespace!).get(claim.metadata!.name!);
      if (existing && !claimOwnerMatchesSetAndPod(existing, set, pod)) return false;
    }
    return true;
  }

  async updatePodClaimForRetentionPolicy(set: Set, pod: KPod): Promise<void> {
    for (const claim of getPersistentVolumeClaims(set, pod).values()) {
      const ns = claim.metadata!.namespace!;
      const name = claim.metadata!.name!;
      const existing = this.claimLister.namespace(ns).get(name);
      if (!existing) continue;
      const copy = deepCopy(existing);
      if (!updateClaimOwnerRefForSetAndPod(copy, set, pod)) continue;
      try {
        await this.claims(ns).update(copy);
      } catch (err) {
        if (isNotFound(err)) continue;
        throw new Error(`could not update claim ${name} for delete policy ownerRefs: ${errText(err)}`, { cause: err });
      }
    }
  }

  podClaimIsStale(set: Set, pod: KPod): boolean {
    for (const claim of getPersistentVolumeClaims(set, pod).values()) {
      const existing = this.claimLister.namespace(claim.metadata!.namespace!).get(claim.metadata!.name!);
      if (!existing) continue;
      if (existing.metadata?.deletionTimestamp) return true;
      const podRefs = (existing.metadata?.ownerReferences ?? []).filter((r) => r.kind === 'Pod');
      if (podRefs.some((r) => r.uid !== pod.metadata?.uid)) return true;
    }
    return false;
  }

  async updateStatefulPod(set: Set, pod: KPod): Promise<void> {
    let current = deepCopy(pod);
    for (let attempt = 0; ; attempt++) {
      let consistent = true;
      if (!identityMatches(set, current)) {
        updateIdentity(set, current);
        consistent = false;
      }
      if (!storageMatches(set, current)) {
        updateStorage(set, current);
        consistent = false;
        await this.createMissingPersistentVolumeClaims(set, current);
      }
      if (!this.claimsMatchRetentionPolicy(set, current)) {
        await this.updatePodClaimForRetentionPolicy(set, current);
      }
      if (consistent) return;
      try {
        await this.pods(current.metadata?.namespace ?? '').update(current);
        this.podEvent('update', set, current);
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= 4) {
          this.podEvent('update', set, current, err);
          throw err;
        }
        const fresh = this.podLister.namespace(current.metadata?.namespace ?? '').get(current.metadata?.name ?? '');
        if (!fresh) throw err;
        current = deepCopy(fresh);
      }
    }
  }

  async deleteStatefulPod(set: Set, pod: KPod): Promise<void> {
    try {
      await this.pods(pod.metadata?.namespace ?? '').delete(pod.metadata?.name ?? '');
    } catch (err) {
      if (isNotFound(err)) return;
      this.podEvent('delete', set, pod, err);
      throw err;
    }
    this.podEvent('delete', set, pod);
  }
}

export function newStatefulPodControl(client: Client, claimLister: Lister<Claim>, podLister: Lister<KPod>, recorder: EventRecorder): StatefulPodControl {
  return new PodControl(client, claimLister, podLister, recorder);
}
