/**
 * Expectations (pkg/controller/controller_utils.go): a controller records how
 * many creations and deletions it has issued for a key, and does not act on
 * that key again until its informers have observed them all, or until the
 * expectations are older than EXPECTATIONS_TIMEOUT_MS (a lost watch event
 * must not put a controller to sleep forever).
 */
import type { Clock } from '../util/clock/clock.js';
import { newLogger, type Logger } from '../util/log/logger.js';

/** Expectations older than this count as satisfied (upstream ExpectationsTimeout, 5 minutes). */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60 * 1000;

/** The pending counts of one controller key. */
export interface ControlleeExpectations {
  readonly add: number;
  readonly del: number;
  /** When the expectations were set (epoch ms on the clock). */
  readonly timestamp: number;
}

export interface ControllerExpectations {
  /** The current expectations for `key`, or undefined when none are recorded. */
  getExpectations(key: string): ControlleeExpectations | undefined;
  /**
   * True when the key has no expectations, all were observed (counts <= 0),
   * or they expired. A controller syncs a key only when this is true.
   */
  satisfiedExpectations(key: string): boolean;
  deleteExpectations(key: string): void;
  /** Replaces any expectations of `key` and restarts its TTL. */
  setExpectations(key: string, add: number, del: number): void;
  expectCreations(key: string, adds: number): void;
  expectDeletions(key: string, dels: number): void;
  /** One expected creation was seen (lowers add by 1). */
  creationObserved(key: string): void;
  /** One expected deletion was seen (lowers del by 1). */
  deletionObserved(key: string): void;
  /** Adds to existing expectations (no-op when none); keeps the timestamp. */
  raiseExpectations(key: string, add: number, del: number): void;
  /** Subtracts from existing expectations (no-op when none); keeps the timestamp. */
  lowerExpectations(key: string, add: number, del: number): void;
}

export interface ExpectationsOptions {
  clock: Clock;
  logger?: Logger;
  /** Defaults to EXPECTATIONS_TIMEOUT_MS. */
  timeoutMs?: number;
}

interface Entry {
  add: number;
  del: number;
  timestamp: number;
}

class Expectations implements ControllerExpectations {
  private readonly entries = new Map<string, Entry>();
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly timeoutMs: number;

  constructor(opts: ExpectationsOptions) {
    this.clock = opts.clock;
    this.log = opts.logger ?? newLogger('expectations');
    this.timeoutMs = opts.timeoutMs ?? EXPECTATIONS_TIMEOUT_MS;
  }

  getExpectations(key: string): ControlleeExpectations | undefined {
    const e = this.entries.get(key);
    return e ? { ...e } : undefined;
  }

  satisfiedExpectations(key: string): boolean {
    const e = this.entries.get(key);
    if (!e) {
      this.log.v(4).info({ key }, 'controller either never recorded expectations, or the ttl expired');
      return true;
    }
    if (e.add <= 0 && e.del <= 0) return true;
    if (this.clock.since(e.timestamp) > this.timeoutMs) {
      this.log.v(4).info({ key, add: e.add, del: e.del }, 'controller expectations expired');
      return true;
    }
    this.log.v(4).info({ key, add: e.add, del: e.del }, 'controller still waiting on expectations');
    return false;
  }

  deleteExpectations(key: string): void {
    this.entries.delete(key);
  }

  setExpectations(key: string, add: number, del: number): void {
    this.log.v(4).info({ key, add, del }, 'setting expectations');
    this.entries.set(key, { add, del, timestamp: this.clock.now() });
  }

  expectCreations(key: string, adds: number): void {
    this.setExpectations(key, adds, 0);
  }

  expectDeletions(key: string, dels: number): void {
    this.setExpectations(key, 0, dels);
  }

  creationObserved(key: string): void {
    this.lowerExpectations(key, 1, 0);
  }

  deletionObserved(key: string): void {
    this.lowerExpectations(key, 0, 1);
  }

  raiseExpectations(key: string, add: number, del: number): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.add += add;
    e.del += del;
    this.log.v(4).info({ key, add: e.add, del: e.del }, 'raised expectations');
  }

  lowerExpectations(key: string, add: number, del: number): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.add -= add;
    e.del -= del;
    this.log.v(4).info({ key, add: e.add, del: e.del }, 'lowered expectations');
  }
}

export function newControllerExpectations(opts: ExpectationsOptions): ControllerExpectations {
  return new Expectations(opts);
}

/**
 * Expectations that remember which pods (by `namespace/name` key) a
 * controller deleted, so a pod that is first marked for deletion and later
 * removed is counted once (graceful deletion).
 */
export interface UIDTrackingControllerExpectations extends Omit<ControllerExpectations, 'expectDeletions' | 'deletionObserved'> {
  /** Expects the deletion of exactly these pods; replaces earlier deletion expectations of `key`. */
  expectDeletions(key: string, deletedKeys: readonly string[]): void;
  /** Counts the deletion of `podKey` when it was expected and not counted before. */
  deletionObserved(key: string, podKey: string): void;
  /** The pod keys whose deletion is still expected (undefined when none recorded). */
  getUIDs(key: string): ReadonlySet<string> | undefined;
}

class UIDTracking implements UIDTrackingControllerExpectations {
  private readonly uids = new Map<string, Set<string>>();
  private readonly log: Logger;

  constructor(
    private readonly inner: ControllerExpectations,
    logger: Logger | undefined,
  ) {
    this.log = logger ?? newLogger('expectations');
  }

  getExpectations(key: string): ControlleeExpectations | undefined {
    return this.inner.getExpectations(key);
  }
  satisfiedExpectations(key: string): boolean {
    return this.inner.satisfiedExpectations(key);
  }
  setExpectations(key: string, add: number, del: number): void {
    this.inner.setExpectations(key, add, del);
  }
  expectCreations(key: string, adds: number): void {
    this.inner.expectCreations(key, adds);
  }
  creationObserved(key: string): void {
    this.inner.creationObserved(key);
  }
  raiseExpectations(key: string, add: number, del: number): void {
    this.inner.raiseExpectations(key, add, del);
  }
  lowerExpectations(key: string, add: number, del: number): void {
    this.inner.lowerExpectations(key, add, del);
  }

  getUIDs(key: string): ReadonlySet<string> | undefined {
    return this.uids.get(key);
  }

  expectDeletions(key: string, deletedKeys: readonly string[]): void {
    const existing = this.uids.get(key);
    if (existing && existing.size > 0) {
      this.log.error({ key, keys: [...existing] }, 'clobbering existing delete keys');
    }
    const set = new Set(deletedKeys);
    this.uids.set(key, set);
    this.log.v(4).info({ key, keys: deletedKeys }, 'controller waiting on deletions');
    this.inner.expectDeletions(key, set.size);
  }

  deletionObserved(key: string, podKey: string): void {
    const set = this.uids.get(key);
    if (set?.has(podKey)) {
      this.log.v(4).info({ key, pod: podKey }, 'controller received delete for pod');
      this.inner.deletionObserved(key);
      set.delete(podKey);
    }
  }

  deleteExpectations(key: string): void {
    this.inner.deleteExpectations(key);
    this.uids.delete(key);
  }
}

export function newUIDTrackingControllerExpectations(
  inner: ControllerExpectations,
  opts: { logger?: Logger } = {},
): UIDTrackingControllerExpectations {
  return new UIDTracking(inner, opts.logger);
}
