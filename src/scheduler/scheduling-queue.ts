/**
 * The scheduling queue (internal/queue PriorityQueue): three parts.
 *
 * - activeQ: pods to try now, highest spec.priority first, then the earliest
 *   queued.
 * - backoffQ: pods that failed recently and wait out their backoff (1 s
 *   doubling per attempt, at most 10 s); flushed to activeQ every second.
 * - unschedulable: pods that fit nowhere. A cluster change (node added or
 *   updated, pod deleted, an assigned pod changed) moves them back to activeQ
 *   or backoffQ; pods left there for 5 minutes are moved anyway (checked
 *   every 30 s).
 *
 * invariant: a pod key is in at most one of activeQ, backoffQ, unschedulable
 * and inFlight (popped, being scheduled).
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Clock, Timer } from '../util/clock/clock.js';
import { podPriority } from './node-info.js';

export const INITIAL_BACKOFF_MS = 1_000;
export const MAX_BACKOFF_MS = 10_000;
export const POD_MAX_IN_UNSCHEDULABLE_MS = 5 * 60_000;
const BACKOFF_FLUSH_MS = 1_000;
const UNSCHEDULABLE_FLUSH_MS = 30_000;

export interface QueuedPod {
  pod: Pod;
  readonly key: string;
  /** When the pod last entered a queue (orders equal priorities; starts the backoff). */
  timestamp: number;
  /** When the pod was first queued. */
  readonly initialAttemptTimestamp: number;
  /** Scheduling attempts so far (counted at pop). */
  attempts: number;
  /** The filter plugins that rejected the pod in its last attempt. */
  unschedulablePlugins: Set<string>;
}

export interface QueueCounts {
  active: number;
  backoff: number;
  unschedulable: number;
}

export interface SchedulingQueue {
  /** A new pending pod (or one to retry at once). */
  add(pod: Pod): void;
  /** A pending pod changed; an unschedulable pod whose spec or labels changed is retried. */
  update(oldPod: Pod | undefined, newPod: Pod): void;
  /** The pod is gone, bound elsewhere or no longer ours. */
  delete(pod: Pod): void;
  /** The next pod to schedule; waits for one. Undefined once closed or the signal aborts. */
  pop(signal?: AbortSignal): Promise<QueuedPod | undefined>;
  /** The number of pops so far: the id of the latest scheduling cycle. */
  schedulingCycle(): number;
  /**
   * The popped pod fits nowhere. `cycle` is the cycle it was popped in: if a
   * cluster change happened since, the pod goes to backoffQ instead, so the
   * change is not missed.
   */
  addUnschedulable(qp: QueuedPod, cycle: number): void;
  /** The popped pod failed for another reason (API error, binding conflict): retry after its backoff. */
  addBackoff(qp: QueuedPod): void;
  /** The popped pod was handled (bound or given up): forget it. */
  done(qp: QueuedPod): void;
  /**
   * A cluster change that may make unschedulable pods fit. `event` names it;
   * with `onlyPlugins`, only pods rejected by one of those plugins move.
   */
  moveAllToActiveOrBackoff(event: string, onlyPlugins?: readonly string[]): void;
  /** When the pod's backoff ends (epoch ms). */
  backoffExpiry(qp: QueuedPod): number;
  counts(): QueueCounts;
  /** Runs the periodic flushes until the signal aborts; then wakes every pop with undefined. */
  run(signal: AbortSignal): void;
  close(): void;
}

export function podQueueKey(pod: Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/** Backoff before attempt n+1 after n attempts: 1 s, 2 s, 4 s, 8 s, then 10 s. */
export function backoffDuration(attempts: number, initialMs = INITIAL_BACKOFF_MS, maxMs = MAX_BACKOFF_MS): number {
  let d = initialMs;
  for (let i = 1; i < attempts; i++) {
    d *= 2;
    if (d > maxMs) return maxMs;
  }
  return Math.min(d, maxMs);
}

function priority(p: QueuedPod): number {
  return podPriority(p.pod);
}

/** activeQ order: higher priority first, then earlier timestamp. */
function before(a: QueuedPod, b: QueuedPod): boolean {
  const pa = priority(a);
  const pb = priority(b);
  if (pa !== pb) return pa > pb;
  return a.timestamp < b.timestamp;
}

/** A binary heap with removal by key. */
class Heap {
  private items: QueuedPod[] = [];
  private index = new Map<string, number>();
  constructor(private readonly less: (a: QueuedPod, b: QueuedPod) => boolean) {}
  get size(): number {
    return this.items.length;
  }
  has(key: string): boolean {
    return this.index.has(key);
  }
  get(key: string): QueuedPod | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.items[i];
  }
  peek(): QueuedPod | undefined {
    return this.items[0];
  }
  push(p: QueuedPod): void {
    const existing = this.index.get(p.key);
    if (existing !== undefined) {
      this.items[existing] = p;
      this.fix(existing);
      return;
    }
    this.items.push(p);
    this.index.set(p.key, this.items.length - 1);
    this.up(this.items.length - 1);
  }
  pop(): QueuedPod | undefined {
    if (this.items.length === 0) return undefined;
    const top = this.items[0]!;
    this.removeAt(0);
    return top;
  }
  remove(key: string): QueuedPod | undefined {
    const i = this.index.get(key);
    if (i === undefined) return undefined;
    const p = this.items[i]!;
    this.removeAt(i);
    return p;
  }
  values(): QueuedPod[] {
    return [...this.items];
  }
  private removeAt(i: number): void {
    const last = this.items.length - 1;
    this.index.delete(this.items[i]!.key);
    if (i !== last) {
      this.items[i] = this.items[last]!;
      this.index.set(this.items[i]!.key, i);
    }
    this.items.pop();
    if (i < this.items.length) this.fix(i);
  }
  private fix(i: number): void {
    this.up(i);
    this.down(i);
  }
  private swap(i: number, j: number): void {
    const a = this.items[i]!;
    const b = this.items[j]!;
    this.items[i] = b;
    this.items[j] = a;
    this.index.set(b.key, i);
    this.index.set(a.key, j);
  }
  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.items[i]!, this.items[parent]!)) break;
      this.swap(i, parent);
      i = parent;
    }
  }
  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.less(this.items[l]!, this.items[m]!)) m = l;
      if (r < n && this.less(this.items[r]!, this.items[m]!)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }
}

/** Whether an update could change the scheduling result (spec, labels or annotations changed). */
function isSchedulingRelevantUpdate(oldPod: Pod | undefined, newPod: Pod): boolean {
  if (!oldPod) return true;
  return (
    JSON.stringify(oldPod.spec) !== JSON.stringify(newPod.spec) ||
    JSON.stringify(oldPod.metadata?.labels ?? {}) !== JSON.stringify(newPod.metadata?.labels ?? {}) ||
    JSON.stringify(oldPod.metadata?.annotations ?? {}) !== JSON.stringify(newPod.metadata?.annotations ?? {})
  );
}

export interface SchedulingQueueOptions {
  clock: Clock;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  podMaxInUnschedulableMs?: number;
}

class PriorityQueue implements SchedulingQueue {
  private readonly clock: Clock;
  private readonly initialBackoff: number;
  private readonly maxBackoff: number;
  private readonly maxInUnschedulable: number;
  private readonly active = new Heap(before);
  private readonly backoff = new Heap((a, b) => this.backoffExpiry(a) < this.backoffExpiry(b));
  private readonly unschedulable = new Map<string, QueuedPod>();
  /** Popped pods; `deleted` marks a pod removed while being scheduled. */
  private readonly inFlight = new Map<string, { deleted: boolean }>();
  private readonly waiters: Array<() => void> = [];
  private cycle = 0;
  private moveRequestCycle = -1;
  private closed = false;
  private timers: Timer[] = [];

  constructor(opts: SchedulingQueueOptions) {
    this.clock = opts.clock;
    this.initialBackoff = opts.initialBackoffMs ?? INITIAL_BACKOFF_MS;
    this.maxBackoff = opts.maxBackoffMs ?? MAX_BACKOFF_MS;
    this.maxInUnschedulable = opts.podMaxInUnschedulableMs ?? POD_MAX_IN_UNSCHEDULABLE_MS;
  }

  private newQueued(pod: Pod): QueuedPod {
    const now = this.clock.now();
    return { pod, key: podQueueKey(pod), timestamp: now, initialAttemptTimestamp: now, attempts: 0, unschedulablePlugins: new Set() };
  }

  private wake(): void {
    const ws = this.waiters.splice(0);
    for (const w of ws) w();
  }

  private pushActive(qp: QueuedPod): void {
    this.active.push(qp);
    this.wake();
  }

  add(pod: Pod): void {
    const key = podQueueKey(pod);
    if (this.inFlight.has(key)) return;
    const existing = this.active.get(key) ?? this.backoff.remove(key) ?? this.unschedulable.get(key);
    this.unschedulable.delete(key);
    if (existing) {
      existing.pod = pod;
      this.pushActive(existing);
      return;
    }
    this.pushActive(this.newQueued(pod));
  }

  update(oldPod: Pod | undefined, newPod: Pod): void {
    const key = podQueueKey(newPod);
    if (this.inFlight.has(key)) return; // the next attempt reads the informer's latest copy
    const inActive = this.active.get(key);
    if (inActive) {
      inActive.pod = newPod;
      this.active.push(inActive);
      return;
    }
    const inBackoff = this.backoff.get(key);
    if (inBackoff) {
      inBackoff.pod = newPod;
      this.backoff.push(inBackoff);
      return;
    }
    const inUnsched = this.unschedulable.get(key);
    if (inUnsched) {
      inUnsched.pod = newPod;
      if (isSchedulingRelevantUpdate(oldPod, newPod)) {
        this.unschedulable.delete(key);
        this.moveOne(inUnsched);
      }
      return;
    }
    this.add(newPod);
  }

  delete(pod: Pod): void {
    const key = podQueueKey(pod);
    this.active.remove(key);
    this.backoff.remove(key);
    this.unschedulable.delete(key);
    const f = this.inFlight.get(key);
    if (f) f.deleted = true;
  }

  async pop(signal?: AbortSignal): Promise<QueuedPod | undefined> {
    for (;;) {
      if (this.closed || signal?.aborted) return undefined;
      const qp = this.active.pop();
      if (qp) {
        this.cycle++;
        qp.attempts++;
        this.inFlight.set(qp.key, { deleted: false });
        return qp;
      }
      await new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiters.push(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    }
  }

  schedulingCycle(): number {
    return this.cycle;
  }

  /** Returns false (and forgets the pod) when it was deleted while in flight. */
  private finish(qp: QueuedPod): boolean {
    const f = this.inFlight.get(qp.key);
    this.inFlight.delete(qp.key);
    return !f?.deleted;
  }

  addUnschedulable(qp: QueuedPod, cycle: number): void {
    if (!this.finish(qp) || this.closed) return;
    qp.timestamp = this.clock.now();
    if (this.moveRequestCycle >= cycle) this.backoff.push(qp);
    else this.unschedulable.set(qp.key, qp);
  }

  addBackoff(qp: QueuedPod): void {
    if (!this.finish(qp) || this.closed) return;
    qp.timestamp = this.clock.now();
    this.backoff.push(qp);
  }

  done(qp: QueuedPod): void {
    this.inFlight.delete(qp.key);
  }

  backoffExpiry(qp: QueuedPod): number {
    return qp.timestamp + backoffDuration(qp.attempts, this.initialBackoff, this.maxBackoff);
  }

  private moveOne(qp: QueuedPod): void {
    if (this.backoffExpiry(qp) > this.clock.now()) this.backoff.push(qp);
    else this.pushActive(qp);
  }

  moveAllToActiveOrBackoff(_event: string, onlyPlugins?: readonly string[]): void {
    for (const [key, qp] of this.unschedulable) {
      if (onlyPlugins && ![...qp.unschedulablePlugins].some((p) => onlyPlugins.includes(p))) continue;
      this.unschedulable.delete(key);
      this.moveOne(qp);
    }
    this.moveRequestCycle = this.cycle;
  }

  /** Moves pods whose backoff ended to activeQ. */
  flushBackoffCompleted(): void {
    const now = this.clock.now();
    for (;;) {
      const top = this.backoff.peek();
      if (!top || this.backoffExpiry(top) > now) return;
      this.backoff.pop();
      this.pushActive(top);
    }
  }

  /** Moves pods unschedulable for longer than the limit back to the queues. */
  flushUnschedulableLeftover(): void {
    const now = this.clock.now();
    for (const [key, qp] of this.unschedulable) {
      if (now - qp.timestamp > this.maxInUnschedulable) {
        this.unschedulable.delete(key);
        this.moveOne(qp);
      }
    }
  }

  counts(): QueueCounts {
    return { active: this.active.size, backoff: this.backoff.size, unschedulable: this.unschedulable.size };
  }

  run(signal: AbortSignal): void {
    const every = (slot: number, ms: number, fn: () => void) => {
      const tick = () => {
        if (this.closed || signal.aborted) return;
        fn();
        this.timers[slot] = this.clock.setTimer(tick, ms);
      };
      this.timers[slot] = this.clock.setTimer(tick, ms);
    };
    every(0, BACKOFF_FLUSH_MS, () => this.flushBackoffCompleted());
    every(1, UNSCHEDULABLE_FLUSH_MS, () => this.flushUnschedulableLeftover());
    signal.addEventListener('abort', () => this.close(), { once: true });
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) t.stop();
    this.timers = [];
    this.wake();
  }
}

export function newSchedulingQueue(opts: SchedulingQueueOptions): SchedulingQueue {
  return new PriorityQueue(opts);
}
