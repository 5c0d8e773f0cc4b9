/**
 * One StatefulSet sync step (pkg/controller/statefulset/stateful_set_control.go):
 * revisions, then pods toward the spec, then status, then history pruning.
 *
 * OrderedReady (monotonic): create ordinals ascending, each only after every
 * lower one is Running, Ready and available; delete condemned ordinals
 * descending, one at a time; halt while a pod is unhealthy. Parallel: all at
 * once. Updates: RollingUpdate deletes the highest ordinal not at the update
 * revision (down to `partition`), one at a time or `maxUnavailable` at a
 * time when set; OnDelete only uses the new template for recreated pods.
 */
import type { StatefulSetStatus } from 'kubernetes-types/apps/v1.js';
import { GVR } from '../../api/gvr.js';
import { isConflict, isNotFound } from '../../client/errors.js';
import type { Client } from '../../client/interfaces.js';
import { canonicalJson } from '../../controller/hash.js';
import {
  equalRevision,
  findEqualRevisions,
  nextRevision,
  revisionsToPrune,
  sortControllerRevisions,
  type History,
  type Revision,
} from '../../controller/history/controller-history.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import { rfc3339, type Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import type { Selector } from '../../api/labels-selector.js';
import type { StatefulPodControl } from './stateful-pod-control.js';
import {
  allowsBurst,
  applyRevision,
  DEFAULT_REVISION_HISTORY_LIMIT,
  getEndOrdinal,
  getOrdinal,
  getPodRevision,
  getStartOrdinal,
  getStatefulSetMaxUnavailable,
  identityMatches,
  isCreated,
  isFailed,
  isHealthy,
  isPending,
  isRunningAndAvailable,
  isRunningAndReady,
  isSucceeded,
  isTerminating,
  newRevision,
  newVersionedStatefulSetPod,
  storageMatches,
  type KPod,
  type Set,
} from './stateful-set-utils.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export interface StatefulSetControlDeps {
  client: Client;
  history: History;
  podControl: StatefulPodControl;
  setLister: Lister<Set>;
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
}

/** The revisions of a sync: what pods are at now, and what they move to. */
interface Revisions {
  current: Revision;
  update: Revision;
  collisionCount: number;
}

export interface StatefulSetControl {
  /**
   * Moves `set` one step toward its spec given the pods it owns and the
   * revisions it may own (already adopted). Returns the status written.
   */
  updateStatefulSet(set: Set, pods: KPod[], selector: Selector): Promise<StatefulSetStatus>;
}

class Control implements StatefulSetControl {
  constructor(private readonly d: StatefulSetControlDeps) {}

  async updateStatefulSet(set: Set, pods: KPod[], selector: Selector): Promise<StatefulSetStatus> {
    set = deepCopy(set);
    const revisions = sortControllerRevisions(this.d.history.listControllerRevisions(set, selector));
    const revs = await this.getStatefulSetRevisions(set, revisions);
    const status = await this.updatePods(set, revs, pods);
    await this.updateStatus(set, status);
    await this.truncateHistory(set, pods, revisions, revs);
    return status;
  }

  /** getStatefulSetRevisions: the update revision (created, reused or rolled back to) and the current one. */
  private async getStatefulSetRevisions(set: Set, revisions: Revision[]): Promise<Revisions> {
    const cc = { value: set.status?.collisionCount ?? 0 };
    let update = newRevision(set, nextRevision(revisions), cc.value);
    const equal = findEqualRevisions(revisions, update);
    const last = revisions[revisions.length - 1];
    if (equal.length > 0 && equalRevision(last, equal[equal.length - 1])) {
      update = last!;
    } else if (equal.length > 0) {
      // Rolling back to an earlier template: reuse its revision with a new number.
      update = await this.d.history.updateControllerRevision(equal[equal.length - 1]!, update.revision);
    } else {
      update = await this.d.history.createControllerRevision(set, update, cc);
    }
    const current = revisions.find((r) => r.metadata?.name === set.status?.currentRevision) ?? update;
    return { current, update, collisionCount: cc.value };
  }

  private computeStatus(set: Set, revs: Revisions, pods: Array<KPod | undefined>): StatefulSetStatus {
    const now = this.d.clock.now();
    const minReady = set.spec?.minReadySeconds ?? 0;
    const status: StatefulSetStatus = {
      observedGeneration: set.metadata?.generation ?? 0,
      replicas: 0,
      readyReplicas: 0,
      availableReplicas: 0,
      currentReplicas: 0,
      updatedReplicas: 0,
      currentRevision: revs.current.metadata?.name ?? '',
      updateRevision: revs.update.metadata?.name ?? '',
      collisionCount: revs.collisionCount,
    };
    for (const pod of pods) {
      if (!pod) continue;
      if (isCreated(pod)) status.replicas++;
      if (isRunningAndReady(pod)) {
        status.readyReplicas!++;
        if (isRunningAndAvailable(pod, minReady, now)) status.availableReplicas!++;
      }
      if (isCreated(pod) && !isTerminating(pod)) {
        const r = getPodRevision(pod);
        if (r === status.currentRevision) status.currentReplicas!++;
        if (r === status.updateRevision) status.updatedReplicas!++;
      }
    }
    return status;
  }

  private async updatePods(set: Set, revs: Revisions, pods: KPod[]): Promise<StatefulSetStatus> {
    const { podControl, recorder } = this.d;
    const currentSet = applyRevision(set, revs.current);
    const updateSet = applyRevision(set, revs.update);
    const currentName = revs.current.metadata?.name ?? '';
    const updateName = revs.update.metadata?.name ?? '';
    const start = getStartOrdinal(set);
    const end = getEndOrdinal(set);
    const replicas: Array<KPod | undefined> = new Array(end - start).fill(undefined);
    const condemned: KPod[] = [];
    for (const pod of pods) {
      const o = getOrdinal(pod);
      if (o >= start && o < end) replicas[o - start] = pod;
      else if (o >= 0) condemned.push(pod);
    }
    for (let i = 0; i < replicas.length; i++) {
      replicas[i] ??= newVersionedStatefulSetPod(currentSet, updateSet, currentName, updateName, i + start);
    }
    condemned.sort((a, b) => getOrdinal(b) - getOrdinal(a));
    const monotonic = !allowsBurst(set);
    const minReady = set.spec?.minReadySeconds ?? 0;
    const now = this.d.clock.now();

    // The first unhealthy pod by ordinal: scale-down may delete it even while it is unhealthy.
    let firstUnhealthy: KPod | undefined = replicas.find((p) => !isHealthy(p!));
    for (const p of [...condemned].reverse()) {
      if (!isHealthy(p) && (!firstUnhealthy || getOrdinal(p) < getOrdinal(firstUnhealthy))) firstUnhealthy = p;
    }
    const status = () => this.computeStatus(set, revs, [...replicas, ...condemned]);
    if (set.metadata?.deletionTimestamp) return status();

    const errors: unknown[] = [];
    const setName = `${set.metadata?.namespace}/${set.metadata?.name}`;

    // Returns true when the sync must stop here (monotonic waiting).
    const processReplica = async (i: number): Promise<boolean> => {
      let pod = replicas[i]!;
      if (isFailed(pod) || isSucceeded(pod)) {
        if (!pod.metadata?.deletionTimestamp) {
          if (isFailed(pod)) recorder.event(set, 'Warning', 'RecreatingFailedPod', `StatefulSet ${setName} is recreating failed Pod ${pod.metadata?.name}`);
          else recorder.event(set, 'Normal', 'RecreatingTerminatedPod', `StatefulSet ${setName} is recreating terminated Pod ${pod.metadata?.name}`);
          await podControl.deleteStatefulPod(set, pod);
        }
        // The replacement is created once the old pod is gone (the delete event requeues the set).
        replicas[i] = markTerminating(pod, now);
        return true;
      }
      if (!isCreated(pod)) {
        if (podControl.podClaimIsStale(set, pod)) {
          this.d.logger.v(2).info({ set: setName, pod: pod.metadata?.name }, 'pod has a stale claim; waiting for it to go');
          return true;
        }
        replicas[i] = await podControl.createStatefulPod(set, pod);
        return monotonic;
      }
      if (isPending(pod)) await podControl.createMissingPersistentVolumeClaims(set, pod);
      if (isTerminating(pod) && monotonic) return true;
      if (!isRunningAndReady(pod) && monotonic) return true;
      if (!isRunningAndAvailable(pod, minReady, now) && monotonic) return true;
      if (identityMatches(set, pod) && storageMatches(set, pod) && podControl.claimsMatchRetentionPolicy(updateSet, pod)) return false;
      pod = deepCopy(pod);
      await podControl.updateStatefulPod(updateSet, pod);
      return false;
    };

    for (let i = 0; i < replicas.length; i++) {
      try {
        if (await processReplica(i)) {
          if (monotonic) return status();
        }
      } catch (err) {
        if (monotonic) throw err;
        errors.push(err);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, errors.map((e) => (e instanceof Error ? e.message : String(e))).join('; '));

    // Claims of condemned pods get the ownership the retention policy wants before the pods go.
    for (const pod of condemned) {
      if (!podControl.claimsMatchRetentionPolicy(updateSet, pod)) await podControl.updatePodClaimForRetentionPolicy(updateSet, pod);
    }

    for (let i = 0; i < condemned.length; i++) {
      const pod = condemned[i]!;
      if (isTerminating(pod)) {
        if (monotonic) return status();
        continue;
      }
      if (!isRunningAndReady(pod) && monotonic && pod !== firstUnhealthy) return status();
      if (!isRunningAndAvailable(pod, minReady, now) && monotonic && pod !== firstUnhealthy) return status();
      this.d.logger.v(2).info({ set: setName, pod: pod.metadata?.name }, 'terminating pod for scale down');
      await podControl.deleteStatefulPod(set, pod);
      condemned[i] = markTerminating(pod, now);
      if (monotonic) return status();
    }

    const strategy = set.spec?.updateStrategy?.type ?? 'RollingUpdate';
    if (strategy === 'OnDelete') return status();

    const updateMin = set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
    if (set.spec?.updateStrategy?.rollingUpdate?.maxUnavailable !== undefined) {
      const maxUnavailable = getStatefulSetMaxUnavailable(set);
      let unavailable = 0;
      for (const p of replicas) if (!isHealthy(p!) || !isRunningAndAvailable(p!, minReady, now)) unavailable++;
      if (unavailable >= maxUnavailable) return status();
      let toDelete = maxUnavailable - unavailable;
      for (let target = replicas.length - 1; target >= updateMin && toDelete > 0; target--) {
        const p = replicas[target]!;
        if (getPodRevision(p) !== updateName && !isTerminating(p)) {
          await podControl.deleteStatefulPod(set, p);
          replicas[target] = markTerminating(p, now);
          toDelete--;
        }
      }
      return status();
    }
    for (let target = replicas.length - 1; target >= updateMin; target--) {
      const p = replicas[target]!;
      if (getPodRevision(p) !== updateName && !isTerminating(p)) {
        this.d.logger.v(2).info({ set: setName, pod: p.metadata?.name }, 'terminating pod for update');
        await podControl.deleteStatefulPod(set, p);
        replicas[target] = markTerminating(p, now);
        return status();
      }
      if (!isHealthy(p)) return status();
    }
    return status();
  }

  /** Completes a finished rolling update, then writes the status when it changed (retrying conflicts). */
  private async updateStatus(set: Set, status: StatefulSetStatus): Promise<void> {
    if (
      (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' &&
      status.updatedReplicas === status.replicas &&
      status.readyReplicas === status.replicas
    ) {
      status.currentReplicas = status.updatedReplicas;
      status.currentRevision = status.updateRevision;
    }
    const old: StatefulSetStatus = set.status ?? { replicas: 0 };
    const next: StatefulSetStatus = { ...status, ...(old.conditions ? { conditions: old.conditions } : {}) };
    if (canonicalJson(next) === canonicalJson(old)) return;
    const api = this.d.client.resource<Set>(GVR.statefulSets).namespace(set.metadata?.namespace ?? '');
    let toWrite = deepCopy(set);
    for (let attempt = 0; ; attempt++) {
      const conditions = toWrite.status?.conditions;
      toWrite.status = { ...status, ...(conditions ? { conditions } : {}) };
      try {
        await api.updateStatus(toWrite);
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= 4) throw err;
        const fresh = this.d.setLister.namespace(set.metadata?.namespace ?? '').get(set.metadata?.name ?? '') ?? (await api.get(set.metadata?.name ?? ''));
        toWrite = deepCopy(fresh);
      }
    }
  }

  /** Deletes the oldest revisions beyond revisionHistoryLimit that neither the status nor a pod uses. */
  private async truncateHistory(set: Set, pods: KPod[], revisions: Revision[], revs: Revisions): Promise<void> {
    const live = new globalThis.Set<string>([revs.current.metadata?.name ?? '', revs.update.metadata?.name ?? '']);
    for (const p of pods) live.add(getPodRevision(p));
    const limit = set.spec?.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT;
    for (const r of revisionsToPrune(revisions, limit, (r) => live.has(r.metadata?.name ?? ''))) {
      try {
        await this.d.history.deleteControllerRevision(r);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
}

function markTerminating(pod: KPod, now: number): KPod {
  return { ...pod, metadata: { ...pod.metadata, deletionTimestamp: pod.metadata?.deletionTimestamp ?? rfc3339(now) } };
}

export function newStatefulSetControl(deps: StatefulSetControlDeps): StatefulSetControl {
  return new Control(deps);
}
