/**
 * The DaemonSet controller (pkg/controller/daemon/daemon_controller.go,
 * update.go): one pod per eligible node, bound by a required
 * `metadata.name` node-affinity term and placed by the scheduler; pods on
 * nodes that no longer qualify are deleted; failed pods are replaced with
 * per-node backoff; RollingUpdate (maxUnavailable / maxSurge) or OnDelete
 * over ControllerRevisions.
 *
 * A sync: construct history (current revision + old ones), then, unless
 * creations or deletions are still expected, manage pods per node and roll
 * the update; finally write the status.
 */
import type { DaemonSet, DaemonSetStatus } from 'kubernetes-types/apps/v1.js';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { getScaledValueFromIntOrPercent } from '../../api/intstr.js';
import { labelSelectorIsEmpty, selectorFromLabelSelector } from '../../api/labels.js';
import { splitKey, type KubeObject } from '../../api/types.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { getControllerOf, newControllerRef, newControllerRefManager, patchWith, recheckDeletionTimestamp, resolveControllerRef, controllersSelecting } from '../../controller/controller-ref-manager.js';
import { newControllerExpectations, type ControllerExpectations } from '../../controller/expectations.js';
import { canonicalJson, computeHash } from '../../controller/hash.js';
import {
  CONTROLLER_REVISION_HASH_LABEL,
  revisionsToPrune,
  sortControllerRevisions,
  templatePatch,
  type Revision,
} from '../../controller/history/controller-history.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import { newPodControl, type PodControl } from '../../controller/pod-control.js';
import { isPodAvailable, isPodReady } from '../../controller/pod-util.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { DeletedFinalStateUnknown, Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { EventRecorder } from '../../tools/record/interfaces.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import {
  createPodTemplate,
  getTargetNodeName,
  isPodUpdated,
  nodeShouldRunDaemonPod,
  replaceNodeNameAffinity,
  templateGeneration,
} from './eligibility.js';
import { newKeyedBackoff, type KeyedBackoff } from './failed-pod-backoff.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const DAEMONSET_CONTROLLER_NAME = 'daemonset-controller';
export const DAEMON_SET_KIND = { group: 'apps', version: 'v1', kind: 'DaemonSet' };
export const FAILED_DAEMON_POD_REASON = 'FailedDaemonPod';
export const SELECTING_ALL_REASON = 'SelectingAll';
/** Most creations per sync (BurstReplicas). */
export const BURST_REPLICAS = 250;
const DEFAULT_REVISION_HISTORY_LIMIT = 10;

type DS = Kube<DaemonSet>;
type KPod = Kube<Pod>;
type KNode = Kube<Node>;

export interface DaemonSetsController extends Controller {
  /** Syncs one DaemonSet by `namespace/name` (the queue's sync). */
  sync(key: string): Promise<void>;
  hasSynced(): boolean;
}

/** Scheduled pods first, then oldest, then by name (podByCreationTimestampAndPhase). */
function byCreationAndPhase(a: Pod, b: Pod): number {
  const sa = !!a.spec?.nodeName;
  const sb = !!b.spec?.nodeName;
  if (sa !== sb) return sa ? -1 : 1;
  const ta = a.metadata?.creationTimestamp ?? '';
  const tb = b.metadata?.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1;
}

class DaemonSets implements DaemonSetsController {
  readonly name = DAEMONSET_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly dsLister: Lister<DS>;
  private readonly podLister: Lister<KPod>;
  private readonly nodeLister: Lister<KNode>;
  private readonly revLister: Lister<Revision>;
  private readonly expectations: ControllerExpectations;
  private readonly podControl: PodControl;
  private readonly recorder: EventRecorder;
  private readonly backoff: KeyedBackoff;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting daemon sets controller', stopping: 'Shutting down daemon sets controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.recorder = ctx.recorder(this.name);
    this.worker = newQueueWorker({ name: 'daemonset', clock: ctx.clock, logger: this.log, sync: (key) => this.sync(key) });
    this.expectations = newControllerExpectations({ clock: ctx.clock, logger: this.log });
    this.podControl = newPodControl({ client: ctx.client, recorder: this.recorder, logger: this.log });
    this.backoff = newKeyedBackoff(ctx.clock);
    const dsInf = ctx.informers.daemonSets();
    const podInf = ctx.informers.pods();
    const nodeInf = ctx.informers.nodes();
    const revInf = ctx.informers.controllerRevisions();
    this.dsLister = newLister(dsInf.getIndexer());
    this.podLister = newLister(podInf.getIndexer());
    this.nodeLister = newLister(nodeInf.getIndexer());
    this.revLister = newLister(revInf.getIndexer()) as Lister<Revision>;
    const regs = [
      dsInf.addEventHandler({
        onAdd: (ds) => this.enqueue(ds),
        onUpdate: (_o, ds) => this.enqueue(ds),
        onDelete: (obj) => {
          const ds = objectFromDeleted(obj);
          if (ds) this.expectations.deleteExpectations(keyFunc(ds));
          this.worker.enqueue(keyFunc(obj));
        },
      }),
      podInf.addEventHandler({
        onAdd: (p) => this.onPodAdd(p),
        onUpdate: (o, p) => this.onPodUpdate(o, p),
        onDelete: (p) => this.onPodDelete(p),
      }),
      nodeInf.addEventHandler({
        onAdd: (n) => this.onNodeAdd(n),
        onUpdate: (o, n) => this.onNodeUpdate(o, n),
        onDelete: () => this.enqueueAll(),
      }),
      revInf.addEventHandler({
        onAdd: (r) => this.onRevision(r),
        onUpdate: (_o, r) => this.onRevision(r),
        onDelete: (r) => {
          const o = objectFromDeleted(r);
          if (o) this.onRevision(o);
        },
      }),
    ];
    this.synced = regs.map((r) => () => r.hasSynced());
  }

  private enqueue(ds: DS): void {
    this.worker.enqueue(keyFunc(ds));
  }
  private enqueueAll(): void {
    for (const ds of this.dsLister.list()) this.enqueue(ds);
  }

  private resolveControllerRef(namespace: string, obj: KubeObject): DS | undefined {
    return resolveControllerRef(this.dsLister, namespace, getControllerOf(obj), 'DaemonSet');
  }

  private daemonSetsForPod(pod: Pod): DS[] {
    const labels = pod.metadata?.labels;
    if (!labels || Object.keys(labels).length === 0) return [];
    return controllersSelecting(this.dsLister, pod.metadata?.namespace ?? '', labels);
  }

  private onPodAdd(pod: KPod): void {
    if (pod.metadata?.deletionTimestamp) {
      this.onPodDelete(pod);
      return;
    }
    const ds = this.resolveControllerRef(pod.metadata?.namespace ?? '', pod);
    if (ds) {
      this.expectations.creationObserved(keyFunc(ds));
      this.enqueue(ds);
      return;
    }
    if (getControllerOf(pod)) return;
    for (const d of this.daemonSetsForPod(pod)) this.enqueue(d);
  }

  private onPodUpdate(old: KPod, cur: KPod): void {
    if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
    if (cur.metadata?.deletionTimestamp && !old.metadata?.deletionTimestamp) {
      this.onPodDelete(cur);
      return;
    }
    const oldRef = getControllerOf(old);
    const curRef = getControllerOf(cur);
    if (oldRef && oldRef.uid !== curRef?.uid) {
      const o = this.resolveControllerRef(old.metadata?.namespace ?? '', old);
      if (o) this.enqueue(o);
    }
    const ds = this.resolveControllerRef(cur.metadata?.namespace ?? '', cur);
    if (ds) {
      this.enqueue(ds);
      const minReady = ds.spec?.minReadySeconds ?? 0;
      if (!isPodReady(old) && isPodReady(cur) && minReady > 0) this.worker.enqueueAfter(keyFunc(ds), minReady * 1000 + 1000);
      return;
    }
    const labelsChanged = canonicalJson(old.metadata?.labels ?? {}) !== canonicalJson(cur.metadata?.labels ?? {});
    if (!curRef && (labelsChanged || oldRef)) for (const d of this.daemonSetsForPod(cur)) this.enqueue(d);
  }

  private onPodDelete(obj: KPod | DeletedFinalStateUnknown<KPod>): void {
    const pod = objectFromDeleted(obj);
    if (!pod) {
      this.log.error({}, "couldn't get object from tombstone");
      return;
    }
    const ds = this.resolveControllerRef(pod.metadata?.namespace ?? '', pod);
    if (!ds) return;
    this.expectations.deletionObserved(keyFunc(ds));
    this.enqueue(ds);
  }

  private onNodeAdd(node: KNode): void {
    for (const ds of this.dsLister.list()) {
      if (nodeShouldRunDaemonPod(node, ds).shouldRun) this.enqueue(ds);
    }
  }

  private onNodeUpdate(old: KNode, cur: KNode): void {
    // Only what eligibility reads matters: labels, taints, spec.
    if (canonicalJson([old.metadata?.labels, old.spec]) === canonicalJson([cur.metadata?.labels, cur.spec])) return;
    for (const ds of this.dsLister.list()) {
      const a = nodeShouldRunDaemonPod(old, ds);
      const b = nodeShouldRunDaemonPod(cur, ds);
      if (a.shouldRun !== b.shouldRun || a.shouldContinueRunning !== b.shouldContinueRunning) this.enqueue(ds);
    }
  }

  private onRevision(rev: Kube<Revision>): void {
    const ds = this.resolveControllerRef(rev.metadata?.namespace ?? '', rev);
    if (ds) this.enqueue(ds);
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }

  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    const gc = () => {
      if (signal.aborted) return;
      this.backoff.gc();
      this.ctx.clock.setTimer(gc, 60_000);
    };
    return this.lifecycle.run(signal, this.synced, async () => {
      gc();
      await this.worker.run(workers, signal);
    });
  }

  async sync(key: string): Promise<void> {
    const start = this.ctx.clock.now();
    try {
      const { namespace, name } = splitKey(key);
      const found = this.dsLister.namespace(namespace).get(name);
      if (!found) {
        this.log.v(3).info({ key }, 'daemon set has been deleted');
        this.expectations.deleteExpectations(key);
        return;
      }
      const ds = deepCopy(found);
      const sel = ds.spec?.selector;
      if (labelSelectorIsEmpty(sel)) {
        this.recorder.event(ds, 'Warning', SELECTING_ALL_REASON, 'This daemon set is selecting all pods. A non-empty selector is required.');
        return;
      }
      if (ds.metadata?.deletionTimestamp) return;
      const nodes = this.nodeLister.list();
      const { cur, old } = await this.constructHistory(ds);
      const hash = cur.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
      if (!this.expectations.satisfiedExpectations(key)) {
        await this.updateStatus(ds, nodes, hash, false);
        return;
      }
      let syncErr: unknown;
      try {
        await this.manage(ds, nodes, hash);
        if (this.expectations.satisfiedExpectations(key) && (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
          await this.rollingUpdate(ds, nodes, hash);
        }
        await this.cleanupHistory(ds, old);
      } catch (err) {
        syncErr = err;
      }
      await this.updateStatus(ds, nodes, hash, true);
      if (syncErr !== undefined) throw syncErr;
    } finally {
      this.log.v(4).info({ key, duration: this.ctx.clock.since(start) }, 'Finished syncing daemon set');
    }
  }

  // ---- history ----

  /** Claims revisions, splits them into the one matching the template (cur) and the rest (old). */
  private async constructHistory(ds: DS): Promise<{ cur: Revision; old: Revision[] }> {
    const histories = await this.controlledHistories(ds);
    const want = canonicalJson(templatePatch(ds.spec?.template));
    const api = this.ctx.client.resource<Revision>(GVR.controllerRevisions).namespace(ds.metadata?.namespace ?? '');
    const current: Revision[] = [];
    const old: Revision[] = [];
    for (let h of histories) {
      if (!h.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL]) {
        const u = deepCopy(h);
        u.metadata = { ...u.metadata, labels: { ...(u.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: u.metadata?.name ?? '' } };
        h = await api.update(u);
      }
      (canonicalJson(h.data) === want ? current : old).push(h);
    }
    let maxOld = 0;
    for (const h of old) maxOld = Math.max(maxOld, h.revision ?? 0);
    const currRevision = maxOld + 1;
    let cur: Revision;
    if (current.length === 0) {
      cur = await this.snapshot(ds, currRevision);
    } else {
      cur = await this.dedupCurHistories(ds, current);
      if ((cur.revision ?? 0) < currRevision) {
        // Rolling back to an earlier template: the revision moves to the top.
        cur = await api.update({ ...deepCopy(cur), revision: currRevision });
      }
    }
    return { cur, old };
  }

  private async controlledHistories(ds: DS): Promise<Revision[]> {
    const selector = selectorFromLabelSelector(ds.spec?.selector);
    const all = this.revLister.namespace(ds.metadata?.namespace ?? '').list();
    const manager = newControllerRefManager<Revision>({
      controller: ds,
      controllerKind: DAEMON_SET_KIND,
      selector,
      canAdopt: this.canAdopt(ds),
      patch: patchWith(this.ctx.client.resource<Revision>(GVR.controllerRevisions)),
      logger: this.log,
    });
    return manager.claim(all);
  }

  private canAdopt(ds: DS): () => Promise<void> {
    return recheckDeletionTimestamp(ds, () =>
      this.ctx.client.resource<DS>(GVR.daemonSets).namespace(ds.metadata?.namespace ?? '').get(ds.metadata?.name ?? ''),
    );
  }

  /** Keeps the highest-numbered equal revision, relabels pods of the others to it, deletes the others. */
  private async dedupCurHistories(ds: DS, histories: Revision[]): Promise<Revision> {
    if (histories.length === 1) return histories[0]!;
    const sorted = sortControllerRevisions([...histories]);
    const keep = sorted[sorted.length - 1]!;
    const keepHash = keep.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
    const pods = await this.getDaemonPods(ds);
    for (const h of sorted.slice(0, -1)) {
      const hHash = h.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL];
      for (const p of pods) {
        if (p.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL] === hHash) {
          await this.podControl.patchPod(p.metadata?.namespace ?? '', p.metadata?.name ?? '', {
            metadata: { labels: { [CONTROLLER_REVISION_HASH_LABEL]: keepHash } },
          });
        }
      }
      try {
        await this.ctx.client.resource<Revision>(GVR.controllerRevisions).namespace(h.metadata?.namespace ?? '').delete(h.metadata?.name ?? '');
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return keep;
  }

  /** Creates the revision of the current template, `<ds>-<hash>`; on a clash with a different revision bumps collisionCount. */
  private async snapshot(ds: DS, revision: number): Promise<Revision> {
    const hash = computeHash(ds.spec?.template, ds.status?.collisionCount);
    const name = `${ds.metadata?.name}-${hash}`;
    const ns = ds.metadata?.namespace ?? '';
    const history: Revision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        namespace: ns,
        labels: { ...(ds.spec?.template?.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash },
        ...(ds.metadata?.annotations ? { annotations: { ...ds.metadata.annotations } } : {}),
        ownerReferences: [newControllerRef(ds, DAEMON_SET_KIND)],
      },
      data: templatePatch(ds.spec?.template) as Revision['data'],
      revision,
    };
    const api = this.ctx.client.resource<Revision>(GVR.controllerRevisions).namespace(ns);
    try {
      return await api.create(history);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await api.get(name);
      if (canonicalJson(existing.data) === canonicalJson(history.data)) return existing;
      const dsApi = this.ctx.client.resource<DS>(GVR.daemonSets).namespace(ns);
      const fresh = await dsApi.get(ds.metadata?.name ?? '');
      if ((fresh.status?.collisionCount ?? 0) !== (ds.status?.collisionCount ?? 0)) {
        throw new Error(`found a stale collision count (${ds.status?.collisionCount ?? 0}, expected ${fresh.status?.collisionCount ?? 0}) of DaemonSet ${ns}/${ds.metadata?.name} while processing; will retry until it is updated`, { cause: err });
      }
      const base = fresh.status ?? { currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 };
      await dsApi.updateStatus({ ...fresh, status: { ...base, collisionCount: (base.collisionCount ?? 0) + 1 } });
      throw err;
    }
  }

  private async cleanupHistory(ds: DS, old: Revision[]): Promise<void> {
    const limit = ds.spec?.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT;
    if (old.length <= limit) return;
    const live = new Set<string>();
    for (const pods of (await this.nodesToDaemonPods(ds)).values()) {
      for (const p of pods) {
        const h = p.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL];
        if (h) live.add(h);
      }
    }
    for (const r of revisionsToPrune(old, limit, (r) => live.has(r.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? ''))) {
      try {
        await this.ctx.client.resource<Revision>(GVR.controllerRevisions).namespace(r.metadata?.namespace ?? '').delete(r.metadata?.name ?? '');
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  // ---- pods ----

  private async getDaemonPods(ds: DS): Promise<KPod[]> {
    const selector = selectorFromLabelSelector(ds.spec?.selector);
    const all = this.podLister.namespace(ds.metadata?.namespace ?? '').list();
    const manager = newControllerRefManager<KPod>({
      controller: ds,
      controllerKind: DAEMON_SET_KIND,
      selector,
      canAdopt: this.canAdopt(ds),
      patch: patchWith(this.ctx.client.resource<KPod>(GVR.pods)),
      logger: this.log,
    });
    return manager.claim(all);
  }

  /** The DaemonSet's pods by target node (pods without one are left out). */
  private async nodesToDaemonPods(ds: DS): Promise<Map<string, KPod[]>> {
    const out = new Map<string, KPod[]>();
    for (const p of await this.getDaemonPods(ds)) {
      const node = getTargetNodeName(p);
      if (!node) {
        this.log.v(2).info({ pod: `${p.metadata?.namespace}/${p.metadata?.name}` }, 'failed to get target node name of pod in DaemonSet');
        continue;
      }
      const list = out.get(node) ?? [];
      list.push(p);
      out.set(node, list);
    }
    return out;
  }

  private async manage(ds: DS, nodes: KNode[], hash: string): Promise<void> {
    const byNode = await this.nodesToDaemonPods(ds);
    const nodesNeeding: string[] = [];
    const toDelete: string[] = [];
    for (const node of nodes) {
      const r = this.podsShouldBeOnNode(node, byNode, ds, hash);
      nodesNeeding.push(...r.create);
      toDelete.push(...r.del);
    }
    // Unscheduled pods aimed at nodes that no longer exist.
    const names = new Set(nodes.map((n) => n.metadata?.name));
    for (const [node, pods] of byNode) {
      if (names.has(node)) continue;
      for (const p of pods) if (!p.spec?.nodeName && !p.metadata?.deletionTimestamp) toDelete.push(p.metadata?.name ?? '');
    }
    await this.syncNodes(ds, toDelete, nodesNeeding, hash);
  }

  private podsShouldBeOnNode(node: KNode, byNode: Map<string, KPod[]>, ds: DS, hash: string): { create: string[]; del: string[] } {
    const nodeName = node.metadata?.name ?? '';
    const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds);
    const pods = byNode.get(nodeName);
    const create: string[] = [];
    const del: string[] = [];
    if (shouldRun && !pods) {
      create.push(nodeName);
    } else if (shouldContinueRunning && pods) {
      const running: KPod[] = [];
      for (const pod of pods) {
        if (pod.metadata?.deletionTimestamp) continue;
        if (pod.status?.phase === 'Failed') {
          // Kubelets may keep rejecting the pod: replace it with backoff, not in a hot loop.
          const bkey = `${ds.metadata?.uid}/${nodeName}`;
          if (this.backoff.isInBackOffSinceUpdate(bkey)) {
            this.worker.enqueueAfter(keyFunc(ds), this.backoff.get(bkey));
            continue;
          }
          this.backoff.next(bkey);
          this.recorder.event(ds, 'Warning', FAILED_DAEMON_POD_REASON, `Found failed daemon pod ${pod.metadata?.namespace}/${pod.metadata?.name} on node ${nodeName}, will try to kill it`);
          del.push(pod.metadata?.name ?? '');
        } else if (pod.status?.phase === 'Succeeded') {
          del.push(pod.metadata?.name ?? '');
        } else {
          running.push(pod);
        }
      }
      running.sort(byCreationAndPhase);
      if (!allowsSurge(ds)) {
        for (const p of running.slice(1)) del.push(p.metadata?.name ?? '');
      } else if (running.length === 0) {
        if (shouldRun) create.push(nodeName);
      } else if (running.length > 1) {
        // Surging: keep the oldest new pod, and the oldest old pod only while the new one is not yet available.
        let oldestNew: KPod | undefined;
        let oldestOld: KPod | undefined;
        for (const p of running) {
          if (p.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL] === hash) {
            if (!oldestNew) {
              oldestNew = p;
              continue;
            }
          } else if (!oldestOld) {
            oldestOld = p;
            continue;
          }
          del.push(p.metadata?.name ?? '');
        }
        if (oldestNew && oldestOld) {
          if (!isPodReady(oldestOld) || isPodAvailable(oldestNew, ds.spec?.minReadySeconds ?? 0, this.ctx.clock.now())) {
            del.push(oldestOld.metadata?.name ?? '');
          }
        }
      }
    } else if (!shouldContinueRunning && pods) {
      for (const p of pods) if (!p.metadata?.deletionTimestamp) del.push(p.metadata?.name ?? '');
    }
    return { create, del };
  }

  /** Creates pods for `nodesNeeding` (slow-start batches, at most BURST_REPLICAS) and deletes `podsToDelete`. */
  private async syncNodes(ds: DS, podsToDelete: string[], nodesNeeding: string[], hash: string): Promise<void> {
    const key = keyFunc(ds);
    const ns = ds.metadata?.namespace ?? '';
    const createDiff = Math.min(nodesNeeding.length, BURST_REPLICAS);
    const deleteDiff = podsToDelete.length;
    if (createDiff === 0 && deleteDiff === 0) return;
    this.expectations.setExpectations(key, createDiff, deleteDiff);
    const template = createPodTemplate(ds.spec?.template ?? { spec: { containers: [] } }, templateGeneration(ds), hash);
    const ref = newControllerRef(ds, DAEMON_SET_KIND);
    const errors: unknown[] = [];
    let pos = 0;
    for (let batch = 1; pos < createDiff; batch = Math.min(batch * 2, createDiff - pos)) {
      const size = Math.min(batch, createDiff - pos);
      const nodes = nodesNeeding.slice(pos, pos + size);
      pos += size;
      const results = await Promise.allSettled(
        nodes.map((nodeName) => {
          const t = deepCopy(template);
          t.spec!.affinity = replaceNodeNameAffinity(t.spec?.affinity, nodeName);
          return this.podControl.createPods(ns, t, ds, ref);
        }),
      );
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      for (const f of failed) {
        this.expectations.creationObserved(key);
        errors.push(f.reason);
      }
      if (failed.length > 0) {
        // Skip the rest: lower expectations for creations never attempted.
        for (let i = pos; i < createDiff; i++) this.expectations.creationObserved(key);
        break;
      }
    }
    for (const name of podsToDelete) {
      try {
        await this.podControl.deletePod(ns, name, ds);
      } catch (err) {
        this.expectations.deletionObserved(key);
        if (!isNotFound(err)) errors.push(err);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, errors.map((e) => (e instanceof Error ? e.message : String(e))).join('; '));
  }

  // ---- rolling update ----

  private async rollingUpdate(ds: DS, nodes: KNode[], hash: string): Promise<void> {
    const byNode = await this.nodesToDaemonPods(ds);
    let desired = 0;
    for (const node of nodes) {
      if (!nodeShouldRunDaemonPod(node, ds).shouldRun) continue;
      desired++;
      const n = node.metadata?.name ?? '';
      if (!byNode.has(n)) byNode.set(n, []);
    }
    const ru = ds.spec?.updateStrategy?.rollingUpdate;
    let maxUnavailable = getScaledValueFromIntOrPercent(ru?.maxUnavailable ?? 1, desired, true);
    const maxSurge = getScaledValueFromIntOrPercent(ru?.maxSurge ?? 0, desired, true);
    if (desired > 0 && maxUnavailable === 0 && maxSurge === 0) maxUnavailable = 1;
    const now = this.ctx.clock.now();
    const minReady = ds.spec?.minReadySeconds ?? 0;
    const generation = templateGeneration(ds);
    const available = (p: Pod) => isPodAvailable(p, minReady, now);

    if (maxSurge === 0) {
      let numUnavailable = 0;
      const allowed: string[] = [];
      const candidates: string[] = [];
      for (const pods of byNode.values()) {
        const r = findUpdatedPodsOnNode(pods, hash, generation);
        if (!r) {
          numUnavailable++;
          continue;
        }
        const { newPod, oldPod } = r;
        if ((!oldPod && !newPod) || (oldPod && newPod)) numUnavailable++;
        else if (newPod) {
          if (!available(newPod)) numUnavailable++;
        } else if (!available(oldPod!)) allowed.push(oldPod!.metadata?.name ?? '');
        else if (numUnavailable >= maxUnavailable) continue;
        else candidates.push(oldPod!.metadata?.name ?? '');
      }
      const remaining = Math.min(Math.max(0, maxUnavailable - numUnavailable), candidates.length);
      await this.syncNodes(ds, [...allowed, ...candidates.slice(0, remaining)], [], hash);
      return;
    }

    const oldToDelete: string[] = [];
    const candidateNodes: string[] = [];
    const allowedNodes: string[] = [];
    let numSurge = 0;
    for (const [nodeName, pods] of byNode) {
      const r = findUpdatedPodsOnNode(pods, hash, generation);
      if (!r) {
        numSurge++;
        continue;
      }
      const { newPod, oldPod } = r;
      if (!oldPod) continue;
      if (!newPod) {
        if (!available(oldPod)) allowedNodes.push(nodeName);
        else if (numSurge >= maxSurge) continue;
        else candidateNodes.push(nodeName);
      } else if (!available(newPod)) {
        numSurge++;
      } else {
        oldToDelete.push(oldPod.metadata?.name ?? '');
      }
    }
    const remaining = Math.min(Math.max(0, maxSurge - numSurge), candidateNodes.length);
    await this.syncNodes(ds, oldToDelete, [...allowedNodes, ...candidateNodes.slice(0, remaining)], hash);
  }

  // ---- status ----

  private async updateStatus(ds: DS, nodes: KNode[], hash: string, updateObservedGen: boolean): Promise<void> {
    const byNode = await this.nodesToDaemonPods(ds);
    const now = this.ctx.clock.now();
    const minReady = ds.spec?.minReadySeconds ?? 0;
    const generation = templateGeneration(ds);
    const s = { desired: 0, current: 0, mis: 0, ready: 0, updated: 0, available: 0 };
    for (const node of nodes) {
      const { shouldRun } = nodeShouldRunDaemonPod(node, ds);
      const pods = byNode.get(node.metadata?.name ?? '') ?? [];
      const scheduled = pods.length > 0;
      if (!shouldRun) {
        if (scheduled) s.mis++;
        continue;
      }
      s.desired++;
      if (!scheduled) continue;
      s.current++;
      const pod = [...pods].sort(byCreationAndPhase)[0]!;
      if (isPodReady(pod)) {
        s.ready++;
        if (isPodAvailable(pod, minReady, now)) s.available++;
      }
      if (isPodUpdated(pod, hash, generation)) s.updated++;
    }
    const status: DaemonSetStatus = {
      ...(ds.status ?? {}),
      desiredNumberScheduled: s.desired,
      currentNumberScheduled: s.current,
      numberMisscheduled: s.mis,
      numberReady: s.ready,
      updatedNumberScheduled: s.updated,
      numberAvailable: s.available,
      numberUnavailable: s.desired - s.available,
      observedGeneration: updateObservedGen ? ds.metadata?.generation ?? 0 : ds.status?.observedGeneration ?? 0,
    };
    if (status.numberUnavailable === 0) delete status.numberUnavailable;
    if (status.numberAvailable === 0) delete status.numberAvailable;
    if (status.updatedNumberScheduled === 0) delete status.updatedNumberScheduled;
    if (canonicalJson(status) !== canonicalJson(ds.status ?? {})) await this.storeStatus(ds, status);
    if (minReady > 0 && s.ready !== s.available) this.worker.enqueueAfter(keyFunc(ds), minReady * 1000);
  }

  private async storeStatus(ds: DS, status: DaemonSetStatus): Promise<void> {
    const api = this.ctx.client.resource<DS>(GVR.daemonSets).namespace(ds.metadata?.namespace ?? '');
    let latest: DS = ds;
    for (let attempt = 0; ; attempt++) {
      const cc = latest.status?.collisionCount;
      const toWrite: DS = { ...deepCopy(latest), status: { ...status, ...(cc !== undefined ? { collisionCount: cc } : {}) } };
      try {
        await api.updateStatus(toWrite);
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= 9) throw err;
        latest = await api.get(ds.metadata?.name ?? '');
      }
    }
  }
}

function allowsSurge(ds: DaemonSet): boolean {
  const ru = ds.spec?.updateStrategy?.rollingUpdate;
  if ((ds.spec?.updateStrategy?.type ?? 'RollingUpdate') !== 'RollingUpdate' || ru?.maxSurge === undefined) return false;
  return getScaledValueFromIntOrPercent(ru.maxSurge, 1, true) > 0;
}

/** The one new and one old pod on a node; undefined when there are more of either (findUpdatedPodsOnNode). */
function findUpdatedPodsOnNode(pods: readonly KPod[], hash: string, generation: number | undefined): { newPod?: KPod; oldPod?: KPod } | undefined {
  let newPod: KPod | undefined;
  let oldPod: KPod | undefined;
  for (const p of pods) {
    if (p.metadata?.deletionTimestamp) continue;
    if (isPodUpdated(p, hash, generation)) {
      if (newPod) return undefined;
      newPod = p;
    } else {
      if (oldPod) return undefined;
      oldPod = p;
    }
  }
  return { ...(newPod ? { newPod } : {}), ...(oldPod ? { oldPod } : {}) };
}

export function newDaemonSetsController(ctx: ControllerContext): DaemonSetsController {
  return new DaemonSets(ctx);
}

/** kube-controller-manager runs 2 workers (--concurrent-daemonset-syncs). */
export const descriptor: ControllerDescriptor = {
  name: DAEMONSET_CONTROLLER_NAME,
  aliases: ['daemonset'],
  requiredResources: [GVR.daemonSets, GVR.pods, GVR.nodes, GVR.controllerRevisions],
  defaultWorkers: 2,
  create: (ctx) => newDaemonSetsController(ctx),
};
