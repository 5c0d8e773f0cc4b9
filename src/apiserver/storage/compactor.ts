/**
 * Periodic compaction of a storage's history, as kube-apiserver compacts etcd
 * every 5 minutes (--etcd-compaction-interval).
 *
 * Without `keep`, each run compacts to the revision seen by the previous run,
 * so at least one interval of history stays readable (kube-apiserver's
 * policy). With `keep`, each run keeps the last `keep` revisions.
 */
import { realClock, type Clock, type Timer } from '../../util/clock/clock.js';
import { newLogger } from '../../util/log/logger.js';
import type { Storage } from './storage.js';

const log = newLogger('compactor');

export interface CompactorOptions {
  /** Time between runs. Default 5 minutes. */
  intervalMs?: number;
  /** Revisions of history to keep at each run; default: everything since the previous run. */
  keep?: number;
}

export interface Compactor {
  /** Stops future runs (a run in progress finishes). */
  stop(): void;
}

export function startCompactor(storage: Pick<Storage, 'currentRevision' | 'compactedRevision' | 'compact'>, opts: CompactorOptions = {}, clock: Clock = realClock): Compactor {
  const intervalMs = opts.intervalMs ?? 5 * 60_000;
  let previous = storage.currentRevision();
  let stopped = false;
  let timer: Timer | undefined;

  const run = async () => {
    const current = storage.currentRevision();
    const target = opts.keep !== undefined ? current - opts.keep : previous;
    previous = current;
    if (target > storage.compactedRevision()) {
      try {
        await storage.compact(target);
        log.v(2).info({ revision: target }, 'compacted');
      } catch (err) {
        log.error(err, { revision: target }, 'compaction failed');
      }
    }
  };

  const schedule = () => {
    if (stopped) return;
    timer = clock.setTimer(() => {
      run().finally(schedule);
    }, intervalMs);
  };
  schedule();
  return {
    stop() {
      stopped = true;
      timer?.stop();
    },
  };
}
