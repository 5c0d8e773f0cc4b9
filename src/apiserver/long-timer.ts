/**
 * Timers for delays a client chooses. Node's setTimeout holds at most
 * 2^31 - 1 ms (about 24.8 days) and fires a longer delay after 1 ms, so a
 * watch asked to last for years would end at once. `setLongTimer` waits in
 * steps no longer than that, on any Clock (the real one or a fake).
 */
import type { Clock, Timer } from '../util/clock/clock.js';

/** The longest delay one setTimeout honours. */
export const maxTimerDelayMs = 2 ** 31 - 1;

/** Calls `fn` once, `ms` from now, however far off; `Infinity` never fires. */
export function setLongTimer(clock: Pick<Clock, 'now' | 'setTimer'>, fn: () => void, ms: number): Timer {
  let stopped = false;
  let fired = false;
  let current: Timer | undefined;
  if (ms !== Infinity) {
    const deadline = clock.now() + Math.max(0, ms);
    const step = (): void => {
      const remaining = deadline - clock.now();
      if (remaining > maxTimerDelayMs) {
        current = clock.setTimer(step, maxTimerDelayMs);
        return;
      }
      current = clock.setTimer(() => {
        fired = true;
        fn();
      }, remaining);
    };
    step();
  }
  return {
    stop() {
      if (stopped || fired) return false;
      stopped = true;
      current?.stop();
      return true;
    },
  };
}
