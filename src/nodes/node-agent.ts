/**
 * One simulated node's kubelet side of the control loop: registration, the
 * heartbeat Lease (renewed every 10 s) and the node status (checked every
 * 10 s, posted when the server's conditions differ from ours or 5 minutes
 * after the last post, as the kubelet's nodeStatusUpdateFrequency and
 * nodeStatusReportFrequency).
 *
 * While the node carries the annotation `kcm.dev/heartbeat: paused` the agent
 * renews nothing; removing the annotation resumes at once.
 *
 * `kcm.dev/pressure: memory,disk,pid` (any subset) makes the agent report
 * MemoryPressure / DiskPressure / PIDPressure True with the kubelet's
 * reasons and events; a change of the annotation is posted at once.
 */
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { KubeObject } from '../api/types.js';
import type { Node } from 'kubernetes-types/core/v1.js';
import { isAlreadyExists, isConflict, isNotFound } from '../client/errors.js';
import type { Client } from '../client/interfaces.js';
import { typed, type TypedClient } from '../client/typed.js';
import { rfc3339Micro, type Clock } from '../util/clock/clock.js';
import type { Logger } from '../util/log/logger.js';
import type { EventRecorder } from '../tools/record/index.js';
import {
  HEARTBEAT_ANNOTATION,
  isInstanceDown,
  NODE_LEASE_NAMESPACE,
  buildNodeStatus,
  conditionEvents,
  conditionsDiffer,
  resourcesDiffer,
  pressureOf,
  type PressureKind,
  newLeaseObject,
  newNodeObject,
  type NodeIdentity,
  type NodeTemplate,
} from './node-object.js';
import { deepCopy } from '../util/json/deep-copy.js';

export const LEASE_RENEW_INTERVAL_MS = 10_000;
export const NODE_STATUS_UPDATE_INTERVAL_MS = 10_000;
export const NODE_STATUS_REPORT_INTERVAL_MS = 300_000;

export interface NodeAgentOptions {
  client: Client;
  clock: Clock;
  logger: Logger;
  identity: NodeIdentity;
  template: NodeTemplate;
  /** The node as the informer last saw it (undefined when not known or deleted). */
  cached: () => Node | undefined;
  /**
   * Where the kubelet's node events go (Starting, NodeAllocatableEnforced, and
   * NodeHasSufficientMemory ... NodeReady when a condition's status changes).
   */
  recorder?: EventRecorder;
  /**
   * The unique names of the attachable volumes the node's pods use, sorted
   * (the volume manager's GetVolumesInUse), posted as `status.volumesInUse`.
   */
  volumesInUse?: () => string[];
  /**
   * Pressure the eviction manager observed (from simulated usage), reported
   * besides what `kcm.dev/pressure` forces.
   */
  observedPressure?: () => readonly PressureKind[];
}

/** True when the node carries `kcm.dev/heartbeat: paused` (or `kcm.dev/instance: deleted|shutdown`). */
export function isPaused(node: Node | undefined): boolean {
  // A deleted or shut-down instance of the local cloud runs no kubelet either.
  return node?.metadata?.annotations?.[HEARTBEAT_ANNOTATION] === 'paused' || isInstanceDown(node);
}

export class NodeAgent {
  readonly name: string;
  readonly internalIP: string;
  paused = false;
  uid: string | undefined;
  private readonly api: TypedClient;
  private lease: (Lease & KubeObject) | undefined;
  private lastStatusPost: number | undefined;
  /** The pressure (`kcm.dev/pressure`) last observed, joined; undefined before the first observation. */
  private pressure: string | undefined;
  private readonly log: Logger;

  constructor(private readonly opts: NodeAgentOptions) {
    this.name = opts.identity.name;
    this.internalIP = opts.identity.internalIP;
    this.api = typed(opts.client);
    this.log = opts.logger.child({ node: this.name });
  }

  /** Creates the node when missing (else adopts it), posts its status and its lease. */
  async register(): Promise<void> {
    let node: Node;
    try {
      node = await this.api.nodes().create(newNodeObject(this.opts.identity, this.opts.template));
      this.log.info('registered node');
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      node = await this.api.nodes().get(this.name);
      this.log.v(2).info('node already registered');
      // Annotations that describe this kubelet instance (its endpoint) follow it across restarts.
      const want = this.opts.template.annotations ?? {};
      const have = node.metadata?.annotations ?? {};
      const stale = Object.fromEntries(Object.entries(want).filter(([k, v]) => k.startsWith('kcm.dev/kubelet-') && have[k] !== v));
      if (Object.keys(stale).length > 0) node = await this.api.nodes().patch(this.name, 'merge', { metadata: { annotations: stale } });
    }
    this.uid = node.metadata?.uid;
    this.paused = isPaused(node);
    this.lease = undefined;
    if (this.paused) {
      this.log.info('heartbeat paused by annotation');
      return;
    }
    this.event('Starting', 'Starting kubelet.');
    await this.postStatus(node, () => this.event('NodeAllocatableEnforced', 'Updated Node Allocatable limit across pods'));
    await this.renewLease();
  }

  /** A Normal event on this node, referenced as the kubelet does (uid = node name). */
  private event(reason: string, message: string): void {
    this.opts.recorder?.event({ apiVersion: 'v1', kind: 'Node', name: this.name, uid: this.name, namespace: '' }, 'Normal', reason, message);
  }

  /** One heartbeat: lease renewal and, when due, a status post. Does nothing while paused. */
  async heartbeat(): Promise<void> {
    if (this.paused) return;
    await this.renewLease();
    const cached = this.opts.cached();
    const due =
      this.lastStatusPost === undefined ||
      this.opts.clock.now() - this.lastStatusPost >= NODE_STATUS_REPORT_INTERVAL_MS ||
      conditionsDiffer(cached?.status, this.pressureNow(cached)) ||
      resourcesDiffer(cached?.status, this.opts.template) ||
      this.volumesInUseDiffer(cached);
    if (due) await this.postStatus(cached);
  }

  private volumesInUseDiffer(node: Node | undefined): boolean {
    const want = this.opts.volumesInUse?.() ?? [];
    return want.join('\n') !== [...(node?.status?.volumesInUse ?? [])].sort().join('\n');
  }

  /**
   * Posts `status.volumesInUse` alone when it differs from what `current`
   * shows (the kubelet reports it with its next status update; the simulator
   * posts at once when a pod starts or stops using an attachable volume).
   */
  async postVolumesInUse(current: Node | undefined): Promise<void> {
    if (this.paused || !this.volumesInUseDiffer(current)) return;
    const want = this.opts.volumesInUse?.() ?? [];
    const patch: Record<string, unknown> = { status: { volumesInUse: want.length > 0 ? want : null } };
    if (this.uid) patch.metadata = { uid: this.uid };
    await this.api.nodes().patch(this.name, 'merge', patch, { subresource: 'status' });
    this.log.v(4).info({ volumesInUse: want }, 'posted volumesInUse');
  }

  /**
   * Posts the node status now (nodestatus setters' view), with the uid as
   * precondition; records the condition changes' events, calling `beforeReady`
   * before a NodeReady one (the kubelet's start-up order).
   */
  async postStatus(current?: Node, beforeReady?: () => void): Promise<void> {
    const now = this.opts.clock.now();
    const pressure = this.pressureNow(current ?? this.opts.cached());
    this.pressure = pressureOf(current ?? this.opts.cached()).join(',');
    const status = buildNodeStatus(this.opts.identity, this.opts.template, current?.status, now, pressure);
    const events = conditionEvents(current?.status, status);
    for (const reason of events) {
      if (reason === 'NodeReady') beforeReady?.();
      this.event(reason, `Node ${this.name} status is now: ${reason}`);
    }
    if (!events.includes('NodeReady')) beforeReady?.();
    const patch: Record<string, unknown> = { status };
    const inUse = this.opts.volumesInUse?.() ?? [];
    if (inUse.length > 0) (status as Record<string, unknown>).volumesInUse = inUse;
    else if ((current?.status?.volumesInUse ?? []).length > 0) (status as Record<string, unknown>).volumesInUse = null;
    if (this.uid) patch.metadata = { uid: this.uid };
    const out = await this.api.nodes().patch(this.name, 'merge', patch, { subresource: 'status' });
    this.lastStatusPost = now;
    this.log.v(4).info({ resourceVersion: out.metadata?.resourceVersion }, 'posted node status');
  }

  /** Renews (or creates) the lease: holder = node name, duration 40 s, renewTime = now. */
  async renewLease(): Promise<void> {
    const leases = this.api.leases(NODE_LEASE_NAMESPACE);
    const now = this.opts.clock.now();
    if (this.lease) {
      const next = deepCopy(this.lease);
      next.spec = { ...(next.spec ?? {}), holderIdentity: this.name, renewTime: rfc3339Micro(now) };
      try {
        this.lease = await leases.update(next as Lease & KubeObject);
        return;
      } catch (err) {
        if (!isConflict(err) && !isNotFound(err)) throw err;
        this.log.v(2).info({ err: String(err) }, 'lease update failed; reading it again');
        this.lease = undefined;
      }
    }
    try {
      const got = await leases.get(this.name);
      const next = deepCopy(got);
      next.spec = { ...(next.spec ?? {}), holderIdentity: this.name, leaseDurationSeconds: next.spec?.leaseDurationSeconds ?? 40, renewTime: rfc3339Micro(now) };
      this.lease = await leases.update(next);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.lease = await leases.create(newLeaseObject({ name: this.name, uid: this.uid }, now));
      this.log.v(2).info('created node lease');
    }
  }

  /** The pressures to report: forced by `kcm.dev/pressure`, and observed from usage. */
  pressureNow(node: Node | undefined): PressureKind[] {
    const all = new Set<PressureKind>([...pressureOf(node), ...(this.opts.observedPressure?.() ?? [])]);
    return (['memory', 'disk', 'pid'] as const).filter((k) => all.has(k));
  }

  /**
   * Applies the node as the informer now sees it; returns 'paused' /
   * 'resumed' on a change. A changed `kcm.dev/pressure` is posted at once
   * (in the background; a failure waits for the next heartbeat).
   */
  observe(node: Node): 'paused' | 'resumed' | undefined {
    this.uid = node.metadata?.uid ?? this.uid;
    const pressure = pressureOf(node).join(',');
    if (this.pressure !== undefined && pressure !== this.pressure && !isPaused(node) && !this.paused && this.lastStatusPost !== undefined) {
      this.pressure = pressure;
      this.log.info({ pressure: pressure || 'none' }, 'node pressure changed by annotation');
      void this.postStatus(node).catch((err: unknown) => this.log.error(err, 'posting node status after a pressure change failed'));
    }
    const p = isPaused(node);
    if (p === this.paused) return undefined;
    this.paused = p;
    this.log.info(p ? 'heartbeat paused by annotation' : 'heartbeat resumed');
    if (!p) this.lastStatusPost = undefined;
    return p ? 'paused' : 'resumed';
  }
}
