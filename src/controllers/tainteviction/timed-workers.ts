/**
 * Work scheduled per pod at a given time (pkg/controller/tainteviction/timed_workers.go).
 *
 * A key whose work ran successfully stays known (with no timer) so that
 * adding it again is a no-op: a pod is deleted once, not on every node
 * update, until cancel() forgets it (the pod is gone or its taints went away).
 */
import type { Clock, Timer } from '../../util/clock/clock.js';

export interface TimedWork {
  key: string;
  createdAt: number;
  fireAt: number;
}

export interface TimedWorkerQueue {
  /** Schedules `key` at `fireAt` (now or earlier: at once). No-op when the key is already known. */
  addWork(key: string, createdAt: number, fireAt: number): void;
  /** Forgets `key`; true when a pending (not yet run) work was cancelled. */
  cancelWork(key: string): boolean;
  /** The pending work of `key`, if any. */
  getWork(key: string): TimedWork | undefined;
  /** Number of pending works (tests). */
  pending(): number;
  /** Cancels every timer. */
  stop(): void;
}

interface Entry {
  work: TimedWork;
  timer: Timer;
}

/** `handler` rejecting forgets the key (it may be added again); resolving keeps it known. */
export function newTimedWorkerQueue(clock: Clock, handler: (work: TimedWork) => Promise<void>, onError: (err: unknown, work: TimedWork) => void): TimedWorkerQueue {
  /** undefined value = ran successfully, kept to prevent a second run. */
  const workers = new Map<string, Entry | undefined>();
  return {
    addWork(key, createdAt, fireAt) {
      if (workers.has(key)) return;
      const work: TimedWork = { key, createdAt, fireAt };
      const fire = () => {
        void handler(work).then(
          () => {
            if (workers.get(key) === entry) workers.set(key, undefined);
          },
          (err: unknown) => {
            if (workers.get(key) === entry) workers.delete(key);
            onError(err, work);
          },
        );
      };
      const delay = fireAt - clock.now();
      // Due now: run at once (as a zero Go timer does), not on the clock's next tick.
      const entry: Entry = { work, timer: delay > 0 ? clock.setTimer(fire, delay) : { stop: () => false } };
      if (delay <= 0) queueMicrotask(fire);
      workers.set(key, entry);
    },
    cancelWork(key) {
      if (!workers.has(key)) return false;
      const entry = workers.get(key);
      workers.delete(key);
      if (!entry) return false;
      entry.timer.stop();
      return true;
    },
    getWork(key) {
      return workers.get(key)?.work;
    },
    pending() {
      let n = 0;
      for (const e of workers.values()) if (e) n++;
      return n;
    },
    stop() {
      for (const e of workers.values()) e?.timer.stop();
    },
  };
}
