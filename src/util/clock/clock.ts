/**
 * Clock: the only source of time and timers for tools/, util/, controller/ and
 * controllers/. Production code uses `realClock`; tests use `FakeClock` and move
 * time by hand, so no unit test ever sleeps.
 */

/** A scheduled callback. `stop()` returns true when it prevented the call. */
export interface Timer {
  stop(): boolean;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Milliseconds elapsed since `t` (a value from `now()`). */
  since(t: number): number;
  /** Calls `fn` once, `ms` milliseconds from now (0 or negative: on the next tick of the clock). */
  setTimer(fn: () => void, ms: number): Timer;
  /** Resolves after `ms` milliseconds; rejects with the signal's reason when aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

/** Sleep on any clock, honouring an AbortSignal. */
export function sleepOn(clock: Pick<Clock, 'setTimer'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      timer.stop();
      reject(abortReason(signal!));
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The longest delay one setTimeout can hold. */
const MAX_TIMER_MS = 2 ** 31 - 1;

class RealClock implements Clock {
  now(): number {
    return Date.now();
  }
  since(t: number): number {
    return Date.now() - t;
  }
  setTimer(fn: () => void, ms: number): Timer {
    let fired = false;
    let stopped = false;
    // Node's timers hold at most 2^31-1 ms (24.8 days) and fire at once beyond: wait longer delays in steps.
    const due = Date.now() + Math.max(0, ms);
    let handle: NodeJS.Timeout;
    const arm = (delay: number) => {
      handle = setTimeout(() => {
        const left = due - Date.now();
        if (left > 0 && delay === MAX_TIMER_MS) return arm(Math.min(left, MAX_TIMER_MS));
        fired = true;
        fn();
      }, delay);
    };
    arm(Math.min(Math.max(0, ms), MAX_TIMER_MS));
    return {
      stop() {
        if (fired || stopped) return false;
        stopped = true;
        clearTimeout(handle);
        return true;
      },
    };
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }
}

/** The wall clock. Timers use the host's setTimeout. */
export const realClock: Clock = new RealClock();

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
  active: boolean;
}

/** Lets pending promise continuations (and I/O callbacks) run before the next step. */
export function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A clock that moves only when told. Timers fire in deadline order (ties in
 * creation order) as time passes them.
 *
 * `advance` is async: after each timer fires it lets promise continuations run,
 * so code that awaits a sleep and then schedules the next one behaves as it
 * would on the real clock.
 */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: FakeTimer[] = [];

  constructor(start: number | string = Date.UTC(2024, 0, 1)) {
    this.t = typeof start === 'string' ? Date.parse(start) : start;
  }

  now(): number {
    return this.t;
  }
  since(t: number): number {
    return this.t - t;
  }
  setTimer(fn: () => void, ms: number): Timer {
    const timer: FakeTimer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, active: true };
    this.timers.push(timer);
    return {
      stop: () => {
        if (!timer.active) return false;
        timer.active = false;
        this.timers = this.timers.filter((x) => x !== timer);
        return true;
      },
    };
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Number of timers waiting to fire. */
  pendingTimers(): number {
    return this.timers.length;
  }
  /** Deadline of the earliest pending timer, or undefined. */
  nextTimerAt(): number | undefined {
    return this.next()?.at;
  }

  private next(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const x of this.timers) {
      if (!best || x.at < best.at || (x.at === best.at && x.seq < best.seq)) best = x;
    }
    return best;
  }

  /**
   * Moves time forward by `ms`, firing every timer due on the way (including
   * timers that fired timers schedule within the window), letting promise
   * continuations run after each.
   */
  async advance(ms: number): Promise<void> {
    const target = this.t + Math.max(0, ms);
    await flushMicrotasks();
    for (;;) {
      const timer = this.next();
      if (!timer || timer.at > target) break;
      this.timers = this.timers.filter((x) => x !== timer);
      timer.active = false;
      this.t = Math.max(this.t, timer.at);
      timer.fn();
      await flushMicrotasks();
    }
    this.t = target;
    await flushMicrotasks();
  }

  /** Fires timers that are already due without moving time. */
  async tick(): Promise<void> {
    await this.advance(0);
  }

  /** Sets the time without firing timers (for tests of clock skew). Never goes backwards unless `allowBack`. */
  setTime(t: number | string, allowBack = false): void {
    const v = typeof t === 'string' ? Date.parse(t) : t;
    if (v < this.t && !allowBack) throw new Error('FakeClock.setTime: time cannot go backwards');
    this.t = v;
  }
}

/** RFC 3339 with second precision, as metav1.Time serialises: 2024-01-01T00:00:00Z. */
export function rfc3339(ms: number): string {
  const second = Math.floor(ms / 1000);
  // Writes stamp the current second many times over (creation, managedFields, conditions): format it once.
  if (second !== lastSecond) {
    lastSecond = second;
    lastText = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
  }
  return lastText;
}
let lastSecond = NaN;
let lastText = '';

/** RFC 3339 with microseconds, as metav1.MicroTime serialises: 2024-01-01T00:00:00.000000Z. */
export function rfc3339Micro(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Parses an RFC 3339 timestamp to epoch milliseconds; undefined for missing or invalid input. */
export function parseTime(s: string | undefined | null): number | undefined {
  if (!s) return undefined;
  const v = Date.parse(s);
  return Number.isNaN(v) ? undefined : v;
}
