/**
 * V8 settings for kcm up's two processes, set at their start.
 *
 * undici parses HTTP with llhttp compiled to WebAssembly. V8 runs it first
 * with its baseline compiler and recompiles a function with the optimizing
 * one once it has run enough (dynamic tiering). llhttp's parser is one huge
 * function, which gets there within the first second of kcm up (every
 * informer's list and watch) and then costs about a quarter of a second of
 * CPU on a background thread, in each process, while both cores are busy
 * starting. A larger tiering budget moves that recompilation after start-up;
 * under load it still happens, a few seconds later.
 *
 * The API server's old generation grows by a fixed 20 % over what survived
 * its last full collection once that is over 128 MB, 50 % from 64 MB (see
 * boundApiServerHeapGrowth); the controller side's by 50 % (see
 * CONTROLLER_SIDE_HEAP_GROWING_PERCENT).
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/** V8's default is 1,800,000 (roughly bytes executed). */
const WASM_TIERING_BUDGET = 100_000_000;

export function deferWasmTierUp(): void {
  setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
}

/**
 * Semi-spaces of V8's young generation in kcm up's controller side: 64 MB
 * rather than Node's 16. Under load its scavenges copy many objects that
 * live a little longer than one 16 MB cycle (pods queued between informers,
 * scheduler and kubelets, requests in flight): at 1,000 nodes and 10,000
 * pods they took 17.8 s of its main thread, 11.3 s with 64 MB. At 1,000
 * nodes and 30,000 pods, smaller spaces traded time for memory: 64 MB
 * 176 s and a 1,360 MB peak, 48 MB 190 s and 1,330 MB, 32 MB 198 to 207 s
 * and 1,270 to 1,290 MB, 16 MB 194 s (50 s more CPU) and 1,254 MB. The
 * space grows only as allocation needs, so an idle kcm up keeps its size. A
 * --max-semi-space-size the user gives wins.
 */
export const CONTROLLER_SIDE_SEMI_SPACE_MB = 64;

/**
 * How far the controller side's old generation may grow past what survived
 * its last full collection before the next one. V8's own factor let it
 * grow to about twice its live heap: at 1,000 nodes and 30,000 pods it
 * peaked at 1,176 to 1,275 MB. At 50 % it peaked at 990 MB, for 15 % more
 * CPU (103 against 90 s) in the same time to converge (149 s: the API
 * server's thread is the limit there, and the controller side's extra
 * collections run beside it). The controller side allocates far more per
 * live byte than the API server, whose bound is tighter (30 % cost it 25 %
 * more CPU). A growth the user gives wins.
 */
export const CONTROLLER_SIDE_HEAP_GROWING_PERCENT = 50;

/** Node's flags for a forked controller side: the parent's (without --inspect), the semi-space size and the heap growth. */
export function controllerSideExecArgv(parent: readonly string[]): string[] {
  const out = parent.filter((a) => !a.startsWith('--inspect'));
  if (!out.some((a) => a.startsWith('--max-semi-space-size'))) out.push(`--max-semi-space-size=${CONTROLLER_SIDE_SEMI_SPACE_MB}`);
  if (!givesHeapGrowth(out)) out.push(`--heap-growing-percent=${CONTROLLER_SIDE_HEAP_GROWING_PERCENT}`);
  return out;
}

/** Whether `execArgv` sets V8's heap growth (either spelling). */
function givesHeapGrowth(execArgv: readonly string[]): boolean {
  return execArgv.some((a) => /^--heap[-_]growing[-_]percent/.test(a));
}

/** The same for a worker thread: V8's young generation is three semi-spaces (two, and as much for large objects). */
export const CONTROLLER_SIDE_YOUNG_GENERATION_MB = 3 * CONTROLLER_SIDE_SEMI_SPACE_MB;

/**
 * How far the API server process's old generation may grow past what
 * survived the last full collection before the next one, once that is
 * large. V8 picks a factor between 1.1 and 4 from how cheap its collections
 * are, and for the API server, whose heap is mostly the watch cache's
 * long-lived objects and whose garbage is short-lived request data promoted
 * under load, it picked about 2: at 1,000 nodes and 30,000 pods the process
 * peaked at 830 to 920 MB with 410 MB live. At 30 % it peaked at 625 to 650
 * MB and at 15 % at 593 MB, without a CPU cost beyond run-to-run noise (the
 * controller side, which allocates far more per live byte, paid 25 % more
 * CPU at 30 %, so it keeps V8's choice).
 */
export const API_SERVER_HEAP_GROWING_PERCENT = 20;

/**
 * Below this live heap the API server keeps V8's own growth: a small heap
 * bounded to 20 % is collected in full every few MB of promoted request
 * garbage, and every request in flight waits for each pause (at 50 clients
 * creating ConfigMaps, a full collection every half second, 5 to 20 ms each,
 * was the 99th percentile of gets: 25 to 43 ms, 16 to 18 ms with V8's growth).
 * From there to API_SERVER_BOUNDED_GROWTH_FROM_MB it grows by 50 %, then by
 * 20 %. The step between matters because the bound applies from the full
 * collection after the one that found the heap large: straight from V8's
 * growth (up to 4x) at 128 MB the API server at 1,000 nodes and 30,000 pods
 * peaked at 600 and 611 MB, 610 MB with the step and 589 MB with a fixed 20 % (runs differ by tens of MB).
 */
export const API_SERVER_OWN_GROWTH_BELOW_MB = 64;
export const API_SERVER_BOUNDED_GROWTH_FROM_MB = 128;
const API_SERVER_MIDDLE_GROWING_PERCENT = 50;

/** The growth for a live heap of `liveBytes`: 0 (V8's own), 50 % or the bound. */
export function apiServerHeapGrowingPercent(liveBytes: number): number {
  const mb = liveBytes / 2 ** 20;
  if (mb < API_SERVER_OWN_GROWTH_BELOW_MB) return 0;
  return mb < API_SERVER_BOUNDED_GROWTH_FROM_MB ? API_SERVER_MIDDLE_GROWING_PERCENT : API_SERVER_HEAP_GROWING_PERCENT;
}

/** Whether a process started with `execArgv` gets the API server's bound: not when the user gave a growth of their own. */
export function boundsApiServerHeap(execArgv: readonly string[]): boolean {
  return !givesHeapGrowth(execArgv);
}

/**
 * Applies apiServerHeapGrowingPercent to this process after each full
 * collection (V8 reads the flag at each one, so it applies from the next).
 */
export function boundApiServerHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  if (!boundsApiServerHeap(execArgv)) return;
  let percent = 0;
  const observer = new PerformanceObserver((list) => {
    if (!list.getEntries().some((e) => (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) return;
    const want = apiServerHeapGrowingPercent(getHeapStatistics().used_heap_size);
    if (want !== percent) {
      percent = want;
      setFlagsFromString(`--heap-growing-percent=${want}`);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}
