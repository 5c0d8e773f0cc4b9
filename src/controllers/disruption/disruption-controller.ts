/**
 * The disruption controller (pkg/controller/disruption): keeps each
 * PodDisruptionBudget's status current so that the eviction API can decide.
 *
 * - currentHealthy: matching pods that are Ready, not being deleted and not
 *   listed in status.disruptedPods (pods the eviction API just let go, for
 *   up to 2 minutes);
 * - desiredHealthy / expectedPods: from minAvailable or maxUnavailable and
 *   the scale of the pods' controllers (expected-scale.ts);
 * - disruptionsAllowed = max(0, currentHealthy - desiredHealthy), and 0 while
 *   no pod is expected;
 * - condition DisruptionAllowed: True/SufficientPods, False/InsufficientPods,
 *   or False/SyncFailed with the error when the status cannot be computed
 *   (then disruptionsAllowed is 0: fail safe);
 * - disruptedPods entries older than 2 minutes are dropped (with a
 *   NotDeleted event on the pod), and the PDB is rechecked when the next
 *   entry expires.
 *
 * A pod triggers a sync of the first PDB (by name) whose selector matches it.
 *
 * Stale DisruptionTarget: a pod that got DisruptionTarget=True (from an
 * eviction, say) but is still not terminating 2 minutes later gets the
 * condition reset to False (syncStalePodDisruption).
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from 'kubernetes-types/policy/v1.js';
import type { Condition, LabelSelector } from 'kubernetes-types/meta/v1.js';
import { GVR } from '../../api/gvr.js';
import { selectorFromLabelSelector } from '../../api/labels.js';
import { findKind } from '../../api/registry.js';
import { splitKey, type GroupVersionResource } from '../../api/types.js';
import { isConflict, isNotFound } from '../../client/errors.js';
import { newRestMapper } from '../../client/rest-mapper.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import { isPodReady } from '../../controller/pod-util.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import { sprintf } from '../../tools/record/format.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import { parseTime, rfc3339 } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { getExpectedPodCount, newScaleLookup, type ScaleListers, type ScaleLookup } from './expected-scale.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const DISRUPTION_CONTROLLER_NAME = 'disruption-controller';
/** How long a pod in status.disruptedPods is expected to take to be deleted. */
export const DELETION_TIMEOUT_MS = 2 * 60_000;
export const DISRUPTION_ALLOWED_CONDITION = 'DisruptionAllowed';
export const SUFFICIENT_PODS_REASON = 'SufficientPods';
export const INSUFFICIENT_PODS_REASON = 'InsufficientPods';
export const SYNC_FAILED_REASON = 'SyncFailed';
/** After this long a DisruptionTarget=True condition on a pod that is not terminating is reset (stalePodDisruptionTimeout). */
export const STALE_POD_DISRUPTION_TIMEOUT_MS = 2 * 60_000;
export const DISRUPTION_TARGET_CONDITION = 'DisruptionTarget';
/** The reason of DisruptionTarget conditions the kubelet sets; never considered stale. */
const POD_REASON_TERMINATION_BY_KUBELET = 'TerminationByKubelet';

type PdbObj = Kube<PodDisruptionBudget>;
type PodObj = Kube<Pod>;

export interface DisruptionController extends Controller {
  /** Recomputes the status of PDB `ns/name` (the queue's sync). */
  sync(key: string): Promise<void>;
  /** Resets the stale DisruptionTarget condition of pod `ns/name`, if any (the second queue's sync). */
  syncStalePodDisruption(key: string): Promise<void>;
  hasSynced(): boolean;
}

export interface DisruptionControllerOptions {
  /** Finder for controllers of other kinds (scale subresource); default: through discovery, else the built-in registry. */
  scaleLookup?: ScaleLookup;
}

/** meta.SetStatusCondition: lastTransitionTime moves only when the status changes. */
function setStatusCondition(conditions: Condition[], c: Omit<Condition, 'lastTransitionTime'>, now: string): void {
  const i = conditions.findIndex((x) => x.type === c.type);
  if (i < 0) {
    conditions.push({ ...c, lastTransitionTime: now });
    return;
  }
  const old = conditions[i]!;
  conditions[i] = { ...old, ...c, lastTransitionTime: old.status !== c.status ? now : old.lastTransitionTime };
}

function conditionsUpToDate(pdb: PodDisruptionBudget): boolean {
  const c = pdb.status?.conditions?.find((x) => x.type === DISRUPTION_ALLOWED_CONDITION);
  if (!c) return false;
  if ((pdb.status?.observedGeneration ?? 0) !== (pdb.metadata?.generation ?? 0)) return false;
  if ((pdb.status?.disruptionsAllowed ?? 0) > 0) return c.status === 'True' && c.reason === SUFFICIENT_PODS_REASON;
  return c.status === 'False' && c.reason === INSUFFICIENT_PODS_REASON;
}

/**
 * A label selector as Go's `%v` prints upstream's *metav1.LabelSelector (its
 * generated String()): `&LabelSelector{MatchLabels:map[string]string{app: web,},MatchExpressions:[]LabelSelectorRequirement{},}`.
 */
export function goLabelSelectorString(sel: LabelSelector | undefined): string {
  if (!sel) return 'nil';
  const labels = sel.matchLabels ?? {};
  const keys = Object.keys(labels).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const matchLabels = `map[string]string{${keys.map((k) => `${k}: ${labels[k]},`).join('')}}`;
  const exprs = (sel.matchExpressions ?? [])
    .map((e) => `LabelSelectorRequirement{Key:${e.key},Operator:${e.operator},Values:[${(e.values ?? []).join(' ')}],},`)
    .join('');
  return `&LabelSelector{MatchLabels:${matchLabels},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

function sameTimes(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b).length && ka.every((k) => parseTime((a ?? {})[k]) === parseTime(b[k]));
}

class Disruption implements DisruptionController {
  readonly name = DISRUPTION_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly staleWorker: QueueWorker;
  private readonly pdbs: Lister<PdbObj>;
  private readonly pods: Lister<PodObj>;
  private readonly scaleListers: ScaleListers;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly lifecycle: ControllerLifecycle;

  constructor(
    private readonly ctx: ControllerContext,
    opts: DisruptionControllerOptions,
  ) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.recorder = ctx.recorder('controllermanager');
    this.worker = newQueueWorker({ name: 'disruption', clock: ctx.clock, logger: this.log, sync: (key) => this.sync(key) });
    this.staleWorker = newQueueWorker({
      name: 'stale_pod_disruption',
      clock: ctx.clock,
      logger: this.log,
      sync: (key) => this.syncStalePodDisruption(key),
    });
    const pdbInf = ctx.informers.podDisruptionBudgets();
    const podInf = ctx.informers.pods();
    const rsInf = ctx.informers.replicaSets();
    const dInf = ctx.informers.deployments();
    const rcInf = ctx.informers.replicationControllers();
    const ssInf = ctx.informers.statefulSets();
    this.pdbs = newLister(pdbInf.getIndexer());
    this.pods = newLister(podInf.getIndexer());
    this.scaleListers = {
      replicaSets: newLister(rsInf.getIndexer()),
      deployments: newLister(dInf.getIndexer()),
      replicationControllers: newLister(rcInf.getIndexer()),
      statefulSets: newLister(ssInf.getIndexer()),
      scale: opts.scaleLookup ?? this.defaultScaleLookup(),
    };
    const enqueue = (obj: Parameters<typeof keyFunc>[0]) => this.worker.enqueue(keyFunc(obj));
    const regs = [
      pdbInf.addEventHandler({ onAdd: enqueue, onUpdate: (_o, n) => enqueue(n), onDelete: enqueue }),
      podInf.addEventHandler({
        onAdd: (p) => {
          this.enqueuePdbForPod(p);
          this.enqueueIfStaleDisruption(p);
        },
        onUpdate: (_o, n) => {
          this.enqueuePdbForPod(n);
          this.enqueueIfStaleDisruption(n);
        },
        onDelete: (obj) => {
          const p = objectFromDeleted(obj);
          if (p) this.enqueuePdbForPod(p);
          else this.log.error({}, 'could not get pod from tombstone');
        },
      }),
      rsInf.addEventHandler({}),
      dInf.addEventHandler({}),
      rcInf.addEventHandler({}),
      ssInf.addEventHandler({}),
    ];
    this.synced = regs.map((r) => () => r.hasSynced());
  }

  private defaultScaleLookup(): ScaleLookup {
    const mapper = this.ctx.discovery ? newRestMapper(this.ctx.discovery) : undefined;
    return newScaleLookup(
      async (group, version, kind) => {
        if (mapper) {
          try {
            return (await mapper.restMapping(group, kind, version)).gvr;
          } catch (err) {
            this.log.v(4).info({ group, version, kind, err: (err as Error).message }, 'no REST mapping for controller kind');
            return undefined;
          }
        }
        const r = findKind(group, version, kind);
        return r ? ({ group: r.group, version: r.version, resource: r.resource } satisfies GroupVersionResource) : undefined;
      },
      async (gvr, namespace, name) => {
        try {
          return await this.ctx.client.resource(gvr).namespace(namespace).getSubresource(name, 'scale');
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      },
    );
  }

  /** The first PDB (by name) in the pod's namespace whose selector matches it. */
  private pdbForPod(pod: Pod): PdbObj | undefined {
    if (!pod.metadata?.labels) return undefined;
    const matching: PdbObj[] = [];
    for (const pdb of this.pdbs.namespace(pod.metadata.namespace ?? '').list()) {
      try {
        if (selectorFromLabelSelector(pdb.spec?.selector).matches(pod.metadata.labels)) matching.push(pdb);
      } catch (err) {
        this.log.v(4).info({ pdb: pdb.metadata?.name, err: (err as Error).message }, 'invalid PDB selector');
      }
    }
    matching.sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
    if (matching.length > 1) {
      const msg = sprintf('Pod %q/%q matches multiple PodDisruptionBudgets.  Chose %q arbitrarily.', pod.metadata.namespace, pod.metadata.name, matching[0]!.metadata?.name);
      this.log.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}` }, msg);
      this.recorder.event({ ...pod, apiVersion: 'v1', kind: 'Pod' } as PodObj, 'Warning', 'MultiplePodDisruptionBudgets', msg);
    }
    return matching[0];
  }

  private enqueuePdbForPod(pod: Pod): void {
    const pdb = this.pdbForPod(pod);
    if (pdb) this.worker.enqueue(keyFunc(pdb));
  }

  /**
   * Whether `pod` carries a DisruptionTarget=True condition that goes stale
   * (not terminating, not terminal, not set by the kubelet), and in how many
   * ms (nonTerminatingPodHasStaleDisruptionCondition).
   */
  private staleDisruption(pod: Pod): { has: boolean; afterMs: number } {
    if (pod.metadata?.deletionTimestamp) return { has: false, afterMs: 0 };
    const cond = pod.status?.conditions?.find((c) => c.type === DISRUPTION_TARGET_CONDITION);
    const phase = pod.status?.phase;
    if (!cond || cond.status !== 'True' || cond.reason === POD_REASON_TERMINATION_BY_KUBELET || phase === 'Succeeded' || phase === 'Failed') {
      return { has: false, afterMs: 0 };
    }
    const since = this.ctx.clock.now() - (parseTime(cond.lastTransitionTime) ?? 0);
    return { has: true, afterMs: Math.max(0, STALE_POD_DISRUPTION_TIMEOUT_MS - since) };
  }

  private enqueueIfStaleDisruption(pod: PodObj): void {
    const { has, afterMs } = this.staleDisruption(pod);
    if (has) this.staleWorker.enqueueAfter(keyFunc(pod), afterMs);
  }

  /** Resets a stale DisruptionTarget=True pod condition to False (syncStalePodDisruption). */
  async syncStalePodDisruption(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pod = this.pods.namespace(namespace).get(name);
    if (!pod) return;
    const { has, afterMs } = this.staleDisruption(pod);
    if (!has) return;
    if (afterMs > 0) {
      this.staleWorker.enqueueAfter(key, afterMs);
      return;
    }
    const now = rfc3339(this.ctx.clock.now());
    // apipod.UpdatePodCondition with {Type: DisruptionTarget, Status: False}: reason and message go.
    const next: PodObj = {
      ...deepCopy(pod),
      status: {
        ...deepCopy(pod.status ?? {}),
        conditions: (pod.status?.conditions ?? []).map((c) => (c.type === DISRUPTION_TARGET_CONDITION ? { type: c.type, status: 'False', lastTransitionTime: now } : deepCopy(c))),
      },
    };
    await this.ctx.client.resource<PodObj>(GVR.pods).namespace(namespace).updateStatus(next);
    this.log.v(2).info({ pod: key }, 'Reset stale DisruptionTarget condition to False');
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy() && this.staleWorker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => Promise.all([this.worker.run(workers, signal), this.staleWorker.run(1, signal)]));
  }

  async sync(key: string): Promise<void> {
    const start = this.ctx.clock.now();
    const { namespace, name } = splitKey(key);
    try {
      const pdb = this.pdbs.namespace(namespace).get(name);
      if (!pdb) return;
      try {
        await this.trySync(pdb);
      } catch (err) {
        // A conflict is retried as is; anything else first fails safe.
        if (isConflict(err)) throw err;
        this.log.error(err, { podDisruptionBudget: key }, 'Failed to sync PDB');
        await this.failSafe(pdb, err);
        throw err;
      }
    } finally {
      this.log.v(4).info({ key, duration: this.ctx.clock.since(start) }, 'Finished syncing PodDisruptionBudget');
    }
  }

  private target(pdb: PdbObj): PdbObj {
    return { ...pdb, apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' };
  }

  private async trySync(pdb: PdbObj): Promise<void> {
    let pods: PodObj[];
    try {
      pods = this.pods.namespace(pdb.metadata?.namespace ?? '').list(selectorFromLabelSelector(pdb.spec?.selector));
    } catch (err) {
      this.recorder.eventf(this.target(pdb), 'Warning', 'NoPods', 'Failed to get pods: %v', err);
      throw err;
    }
    if (pods.length === 0) this.recorder.event(this.target(pdb), 'Normal', 'NoPods', 'No matching pods found');
    let counts;
    try {
      counts = await getExpectedPodCount(this.scaleListers, pdb, pods);
    } catch (err) {
      this.recorder.eventf(this.target(pdb), 'Warning', 'CalculateExpectedPodCountFailed', 'Failed to calculate the number of expected pods: %v', err);
      throw err;
    }
    if (counts.unmanagedPods.length > 0) {
      this.log.v(4).info({ pods: counts.unmanagedPods }, 'Found unmanaged pods associated with this PDB');
      this.recorder.eventf(
        this.target(pdb),
        'Warning',
        'UnmanagedPods',
        'Pods selected by this PodDisruptionBudget (selector: %v) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.',
        goLabelSelectorString(pdb.spec?.selector),
      );
    }
    const now = this.ctx.clock.now();
    const { disrupted, recheckAt } = this.buildDisruptedPodMap(pods, pdb, now);
    const currentHealthy = countHealthyPods(pods, disrupted, now);
    await this.updateStatus(pdb, currentHealthy, counts.desiredHealthy, counts.expectedCount, disrupted);
    if (recheckAt !== undefined) this.worker.enqueueAfter(keyFunc(pdb), Math.max(0, recheckAt - now));
  }

  private buildDisruptedPodMap(pods: readonly PodObj[], pdb: PdbObj, now: number): { disrupted: Record<string, string>; recheckAt: number | undefined } {
    const listed = pdb.status?.disruptedPods;
    const disrupted: Record<string, string> = {};
    let recheckAt: number | undefined;
    if (!listed) return { disrupted, recheckAt };
    for (const pod of pods) {
      if (pod.metadata?.deletionTimestamp) continue;
      const at = listed[pod.metadata?.name ?? ''];
      if (at === undefined) continue;
      const expectedDeletion = (parseTime(at) ?? 0) + DELETION_TIMEOUT_MS;
      if (expectedDeletion < now) {
        this.log.v(1).info({ pod: pod.metadata?.name, podDisruptionBudget: pdb.metadata?.name }, 'pod was expected to be deleted but it wasn\'t, updating PDB');
        this.recorder.eventf(
          { ...pod, apiVersion: 'v1', kind: 'Pod' },
          'Warning',
          'NotDeleted',
          'Pod was expected by PDB %s/%s to be deleted but it wasn\'t',
          // Sic: upstream passes the PDB's namespace twice (pdb.Namespace, pdb.Namespace).
          pdb.metadata?.namespace,
          pdb.metadata?.namespace,
        );
      } else {
        if (recheckAt === undefined || expectedDeletion < recheckAt) recheckAt = expectedDeletion;
        disrupted[pod.metadata?.name ?? ''] = at;
      }
    }
    return { disrupted, recheckAt };
  }

  private async updateStatus(pdb: PdbObj, currentHealthy: number, desiredHealthy: number, expectedPods: number, disrupted: Record<string, string>): Promise<void> {
    let disruptionsAllowed = currentHealthy - desiredHealthy;
    // No pod expected yet: stay safe until the first pods are counted.
    if (expectedPods <= 0 || disruptionsAllowed <= 0) disruptionsAllowed = 0;
    const s = pdb.status ?? ({} as PodDisruptionBudgetStatus);
    const generation = pdb.metadata?.generation ?? 0;
    if (
      s.currentHealthy === currentHealthy &&
      s.desiredHealthy === desiredHealthy &&
      s.expectedPods === expectedPods &&
      s.disruptionsAllowed === disruptionsAllowed &&
      sameTimes(s.disruptedPods, disrupted) &&
      (s.observedGeneration ?? 0) === generation &&
      conditionsUpToDate(pdb)
    ) {
      return;
    }
    const next = deepCopy(pdb);
    const conditions = deepCopy(s.conditions ?? []);
    const status: PodDisruptionBudgetStatus = { currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed, observedGeneration: generation, conditions };
    if (Object.keys(disrupted).length) status.disruptedPods = disrupted;
    setStatusCondition(
      conditions,
      disruptionsAllowed > 0
        ? { type: DISRUPTION_ALLOWED_CONDITION, status: 'True', reason: SUFFICIENT_PODS_REASON, message: '', observedGeneration: generation }
        : { type: DISRUPTION_ALLOWED_CONDITION, status: 'False', reason: INSUFFICIENT_PODS_REASON, message: '', observedGeneration: generation },
      rfc3339(this.ctx.clock.now()),
    );
    next.status = status;
    await this.writeStatus(next);
  }

  private async failSafe(pdb: PdbObj, cause: unknown): Promise<void> {
    const next = deepCopy(pdb);
    const status = (next.status ??= {} as PodDisruptionBudgetStatus);
    status.disruptionsAllowed = 0;
    status.conditions ??= [];
    setStatusCondition(
      status.conditions,
      {
        type: DISRUPTION_ALLOWED_CONDITION,
        status: 'False',
        reason: SYNC_FAILED_REASON,
        message: cause instanceof Error ? cause.message : String(cause),
        observedGeneration: status.observedGeneration ?? 0,
      },
      rfc3339(this.ctx.clock.now()),
    );
    await this.writeStatus(next);
  }

  private async writeStatus(pdb: PdbObj): Promise<void> {
    await this.ctx.client.resource<PdbObj>(GVR.podDisruptionBudgets).namespace(pdb.metadata?.namespace ?? '').updateStatus(pdb);
  }
}

/** Ready pods not being deleted and not recently disrupted. */
export function countHealthyPods(pods: readonly Pod[], disrupted: Record<string, string>, now: number): number {
  let n = 0;
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    const at = disrupted[pod.metadata?.name ?? ''];
    if (at !== undefined && (parseTime(at) ?? 0) + DELETION_TIMEOUT_MS > now) continue;
    if (isPodReady(pod)) n++;
  }
  return n;
}

export function newDisruptionController(ctx: ControllerContext, opts: DisruptionControllerOptions = {}): DisruptionController {
  return new Disruption(ctx, opts);
}

/** kube-controller-manager runs the disruption controller with one worker. */
export const descriptor: ControllerDescriptor = {
  name: DISRUPTION_CONTROLLER_NAME,
  aliases: ['disruption'],
  requiredResources: [GVR.podDisruptionBudgets, GVR.pods],
  defaultWorkers: 1,
  create: (ctx) => newDisruptionController(ctx),
};
