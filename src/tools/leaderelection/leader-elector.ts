/**
 * Lease-based leader election (client-go tools/leaderelection).
 *
 * Candidates race for one coordination.k8s.io/v1 Lease. A lease held by
 * another candidate is respected until `leaseDuration` has passed on OUR
 * clock since we last saw its record change (the observed-record rule: remote
 * timestamps are never compared with local time, so clock skew between
 * machines does not matter). The leader renews every retryPeriod; when a
 * round of renewals keeps failing for renewDeadline from its start, as
 * client-go's renew() counts it, it stops leading: the signal given to
 * onStartedLeading aborts. Because leaseDuration > retryPeriod +
 * renewDeadline, a leader whose loop runs on time stops before anyone else
 * may take over. A round that starts late (a process that was busy or
 * suspended for longer than the deadline) still gets its whole deadline: the
 * renewal is an update with the resourceVersion we last saw, so it fails if
 * someone else took the lease meanwhile, and succeeds if nobody did, rather
 * than giving up a lease nobody contests.
 *
 * Deliberate differences from client-go: isLeader() is false once
 * retryPeriod + renewDeadline have passed since the last successful renewal
 * (client-go's only looks at the observed holder). release() writes only
 * when the server still names us holder (client-go trusts its observed record).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import { isNotFound } from '../../client/errors.js';
import type { Client } from '../../client/interfaces.js';
import type { Clock } from '../../util/clock/clock.js';
import { jitter } from '../../util/wait/backoff.js';
import { newLogger, type Logger } from '../../util/log/logger.js';
import { newLeaseLock, type LeaderElectionRecord, type LeaseLockConfig, type ResourceLock } from './lease-lock.js';
import { masterStatusGauge } from './metrics.js';

export const JITTER_FACTOR = 1.2;

export interface LeaderCallbacks {
  /**
   * Called once leadership is acquired. `signal` aborts when leadership is
   * lost or run() is cancelled; the returned promise must settle soon after,
   * run() waits for it.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called when run() ends, whether or not this candidate ever led (as client-go). */
  onStoppedLeading(): void;
  /** Called when the observed leader changes ('' when the lease was released). */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectorOptions {
  client: Client;
  lock: LeaseLockConfig;
  /** How long others wait after the last observed change before taking over (default 15 s). */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before giving up (default 10 s). */
  renewDeadlineMs?: number;
  /** Time between attempts (default 2 s; acquisition jittered by 1.2). */
  retryPeriodMs?: number;
  callbacks: LeaderCallbacks;
  /** On cancellation, release the lease so another candidate takes over at once (default true). */
  releaseOnCancel?: boolean;
  clock: Clock;
  /** Label of leader_election_master_status (default: the lease name). */
  name?: string;
  logger?: Logger;
  /** Registry for leader_election_master_status (default: prom-client's global registry). */
  registry?: Registry;
  random?: () => number;
}

export interface LeaderElector {
  /**
   * Campaigns until leading, leads until leadership is lost or `signal`
   * aborts, then (releaseOnCancel) releases the lease. Resolves after
   * onStartedLeading's promise settled and onStoppedLeading was called.
   */
  run(signal: AbortSignal): Promise<void>;
  /** True while this candidate holds the lease and its last renewal is within renewDeadline. */
  isLeader(): boolean;
  /** The identity of the last observed holder ('' when none). */
  getLeader(): string;
  /**
   * For health checks: an error when we believe we lead but have not renewed
   * for leaseDuration + maxTolerableExpiredMs (client-go HealthzAdaptor).
   */
  check(maxTolerableExpiredMs: number): Error | undefined;
}

/** `<hostname>_<uuid>`, as kube-controller-manager's identity. */
export function defaultIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

class Elector implements LeaderElector {
  private readonly lock: ResourceLock;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly name: string;
  private readonly random: () => number;
  private observed: LeaderElectionRecord | undefined;
  private observedRaw = '';
  private observedTime = 0;
  /** Clock time at the start of our last successful write as holder. */
  private lastRenewAt: number | undefined;
  private reportedLeader = '';
  private readonly gauge;

  constructor(private readonly opts: LeaderElectorOptions) {
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    if (this.leaseDurationMs <= this.renewDeadlineMs) throw new Error('leaseDuration must be greater than renewDeadline');
    if (this.renewDeadlineMs <= JITTER_FACTOR * this.retryPeriodMs) throw new Error('renewDeadline must be greater than retryPeriod*JitterFactor');
    if (this.retryPeriodMs < 1) throw new Error('retryPeriod must be greater than zero');
    if (!opts.lock.identity) throw new Error('lock identity is empty');
    this.lock = newLeaseLock(opts.client, opts.lock);
    this.clock = opts.clock;
    this.name = opts.name ?? opts.lock.name;
    this.log = opts.logger ?? newLogger('leaderelection');
    this.random = opts.random ?? Math.random;
    this.gauge = masterStatusGauge(opts.registry);
    this.gauge.set({ name: this.name }, 0);
  }

  private holdsObserved(): boolean {
    return this.observed?.holderIdentity === this.lock.identity;
  }

  isLeader(): boolean {
    return this.holdsObserved() && this.lastRenewAt !== undefined && this.clock.now() - this.lastRenewAt < this.retryPeriodMs + this.renewDeadlineMs;
  }

  getLeader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  check(maxTolerableExpiredMs: number): Error | undefined {
    if (!this.holdsObserved()) return undefined;
    if (this.clock.since(this.observedTime) > this.leaseDurationMs + maxTolerableExpiredMs) {
      return new Error(`failed election to renew leadership on lease ${this.lock.describe()}`);
    }
    return undefined;
  }

  async run(signal: AbortSignal): Promise<void> {
    let started: Promise<void> | undefined;
    try {
      if (!(await this.acquire(signal))) return;
      const leading = new AbortController();
      const onAbort = () => leading.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      started = Promise.resolve()
        .then(() => this.opts.callbacks.onStartedLeading(leading.signal))
        .catch((err: unknown) => this.log.error(err, { lease: this.lock.describe() }, 'onStartedLeading failed'));
      try {
        await this.renew(leading);
      } finally {
        signal.removeEventListener('abort', onAbort);
        leading.abort();
      }
      if (this.opts.releaseOnCancel ?? true) await this.release();
      await started;
    } finally {
      this.gauge.set({ name: this.name }, 0);
      try {
        this.opts.callbacks.onStoppedLeading();
      } catch (err) {
        this.log.error(err, { lease: this.lock.describe() }, 'onStoppedLeading failed');
      }
    }
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info({ lease: this.lock.describe() }, 'attempting to acquire leader lease');
    while (!signal.aborted) {
      const ok = await this.tryAcquireOrRenew(this.clock.now() + this.renewDeadlineMs);
      this.maybeReportTransition();
      if (ok) {
        this.gauge.set({ name: this.name }, 1);
        this.log.info({ lease: this.lock.describe() }, 'successfully acquired lease');
        return true;
      }
      this.log.v(4).info({ lease: this.lock.describe() }, 'failed to acquire lease');
      try {
        await this.clock.sleep(jitter(this.retryPeriodMs, JITTER_FACTOR, this.random), signal);
      } catch {
        break;
      }
    }
    return false;
  }

  /** Renews until a renewal round fails (aborting `leading`) or `leading` aborts. */
  private async renew(leading: AbortController): Promise<void> {
    const signal = leading.signal;
    while (!signal.aborted) {
      // client-go: each round has renewDeadline from its own start.
      const deadline = this.clock.now() + this.renewDeadlineMs;
      let ok = false;
      for (;;) {
        ok = await this.tryAcquireOrRenew(deadline);
        if (ok || signal.aborted) break;
        const remaining = deadline - this.clock.now();
        if (remaining <= 0) break;
        try {
          await this.clock.sleep(Math.min(this.retryPeriodMs, remaining), signal);
        } catch {
          break;
        }
        if (this.clock.now() >= deadline) break;
      }
      this.maybeReportTransition();
      if (signal.aborted) return;
      if (!ok) {
        this.gauge.set({ name: this.name }, 0);
        this.log.info({ lease: this.lock.describe() }, 'failed to renew lease: timed out waiting for the condition');
        leading.abort(new Error('leader election lost'));
        return;
      }
      this.log.v(5).info({ lease: this.lock.describe() }, 'successfully renewed lease');
      try {
        await this.clock.sleep(this.retryPeriodMs, signal);
      } catch {
        return;
      }
    }
  }

  /** Runs `op`, giving up (undefined) when it has not settled by `deadline` on the clock. */
  private beforeDeadline<T>(op: Promise<T>, deadline: number): Promise<{ value: T } | undefined> {
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimer(() => resolve(undefined), deadline - this.clock.now());
      op.then(
        (value) => {
          timer.stop();
          resolve({ value });
        },
        (err: unknown) => {
          timer.stop();
          reject(err);
        },
      );
    });
  }

  private setObserved(rec: LeaderElectionRecord): void {
    this.observed = rec;
    this.observedTime = this.clock.now();
  }

  private isLeaseValid(now: number): boolean {
    return this.observedTime + (this.observed?.leaseDurationSeconds ?? 0) * 1000 > now;
  }

  /** One attempt to become or stay leader; results arriving after `deadline` count as failures. */
  private async tryAcquireOrRenew(deadline: number): Promise<boolean> {
    const now = this.clock.now();
    const rec: LeaderElectionRecord = {
      holderIdentity: this.lock.identity,
      leaseDurationSeconds: Math.floor(this.leaseDurationMs / 1000),
      acquireTime: now,
      renewTime: now,
      leaderTransitions: 0,
    };
    const late = () => this.clock.now() >= deadline;
    const written = () => {
      this.setObserved(rec);
      this.observedRaw = JSON.stringify(rec);
      this.lastRenewAt = now;
      return true;
    };

    // 1. Fast path: the leader updates optimistically over the record it wrote last.
    if (this.holdsObserved() && this.isLeaseValid(now) && this.observed) {
      rec.acquireTime = this.observed.acquireTime;
      rec.leaderTransitions = this.observed.leaderTransitions;
      try {
        const r = await this.beforeDeadline(this.lock.update(rec), deadline);
        if (!r || late()) return false;
        return written();
      } catch (err) {
        this.log.error(err, { lease: this.lock.describe() }, 'failed to update lock optimistically, falling back to slow path');
      }
    }

    // 2. Read the lock, or create it.
    let got: { record: LeaderElectionRecord; raw: string };
    try {
      const r = await this.beforeDeadline(this.lock.get(), deadline);
      if (!r || late()) return false;
      got = r.value;
    } catch (err) {
      if (!isNotFound(err)) {
        this.log.error(err, { lease: this.lock.describe() }, 'error retrieving resource lock');
        return false;
      }
      try {
        const r = await this.beforeDeadline(this.lock.create(rec), deadline);
        if (!r || late()) return false;
      } catch (createErr) {
        this.log.error(createErr, { lease: this.lock.describe() }, 'error initially creating leader election record');
        return false;
      }
      return written();
    }

    // 3. Observe the record; respect a valid lease held by someone else.
    if (got.raw !== this.observedRaw) {
      this.setObserved(got.record);
      this.observedRaw = got.raw;
    }
    if (got.record.holderIdentity && this.isLeaseValid(now) && !this.holdsObserved()) {
      this.log.v(4).info({ lease: this.lock.describe(), holder: got.record.holderIdentity }, 'lock is held and has not yet expired');
      return false;
    }

    // 4. Take or keep it.
    if (this.holdsObserved()) {
      rec.acquireTime = got.record.acquireTime;
      rec.leaderTransitions = got.record.leaderTransitions;
    } else {
      rec.leaderTransitions = got.record.leaderTransitions + 1;
    }
    try {
      const r = await this.beforeDeadline(this.lock.update(rec), deadline);
      if (!r || late()) return false;
    } catch (err) {
      this.log.error(err, { lease: this.lock.describe() }, 'failed to update lock');
      return false;
    }
    return written();
  }

  private async release(): Promise<boolean> {
    if (!this.holdsObserved()) return true;
    const deadline = this.clock.now() + this.renewDeadlineMs;
    try {
      const r = await this.beforeDeadline(this.lock.get(), deadline);
      if (!r) {
        this.log.error({ lease: this.lock.describe() }, 'timed out reading the lock to release it');
        return false;
      }
      if (r.value.record.holderIdentity !== this.lock.identity) return true;
      const now = this.clock.now();
      const rec: LeaderElectionRecord = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaderTransitions: r.value.record.leaderTransitions,
      };
      const u = await this.beforeDeadline(this.lock.update(rec), deadline);
      if (!u) {
        this.log.error({ lease: this.lock.describe() }, 'timed out releasing the lock');
        return false;
      }
      this.setObserved(rec);
      this.observedRaw = JSON.stringify(rec);
      this.lastRenewAt = undefined;
      this.log.info({ lease: this.lock.describe() }, 'released lease');
      return true;
    } catch (err) {
      this.log.error(err, { lease: this.lock.describe() }, 'failed to release lock');
      return false;
    }
  }

  private maybeReportTransition(): void {
    const holder = this.observed?.holderIdentity ?? '';
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    const cb = this.opts.callbacks.onNewLeader;
    if (!cb) return;
    queueMicrotask(() => {
      try {
        cb(holder);
      } catch (err) {
        this.log.error(err, { lease: this.lock.describe() }, 'onNewLeader failed');
      }
    });
  }
}

export function newLeaderElector(opts: LeaderElectorOptions): LeaderElector {
  return new Elector(opts);
}
