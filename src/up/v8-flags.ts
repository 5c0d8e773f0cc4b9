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
 * its last full collection (see boundApiServerHeapGrowth).
 */
import { setFlagsFromString } from 'node:v8';

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

/** Node's flags for a forked controller side: the parent's (without --inspect) and the semi-space size. */
export function controllerSideExecArgv(parent: readonly string[]): string[] {
  const out = parent.filter((a) => !a.startsWith('--inspect'));
  if (!out.some((a) => a.startsWith('--max-semi-space-size'))) out.push(`--max-semi-space-size=${CONTROLLER_SIDE_SEMI_SPACE_MB}`);
  return out;
}

/** The same for a worker thread: V8's young generation is three semi-spaces (two, and as much for large objects). */
export const CONTROLLER_SIDE_YOUNG_GENERATION_MB = 3 * CONTROLLER_SIDE_SEMI_SPACE_MB;

/**
 * How far the API server process's old generation may grow past what
 * survived the last full collection before the next one. V8 picks a factor
 * between 1.1 and 4 from how cheap its collections are, and for the API
 * server, whose heap is mostly the watch cache's long-lived objects and
 * whose garbage is short-lived request data promoted under load, it picked
 * about 2: at 1,000 nodes and 30,000 pods the process peaked at 830 to 920 MB
 * with 410 MB live. At 30 % it peaked at 625 to 650 MB and at 15 % at 593 MB,
 * without a CPU cost beyond run-to-run noise (the controller side, which
 * allocates far more per live byte, paid 25 % more CPU at 30 %, so it keeps
 * V8's choice).
 */
export const API_SERVER_HEAP_GROWING_PERCENT = 20;

/** The V8 flags boundApiServerHeapGrowth sets for a process started with `execArgv`: none when the user gave a growth of their own. */
export function apiServerV8Flags(execArgv: readonly string[]): string[] {
  return execArgv.some((a) => /^--heap[-_]growing[-_]percent/.test(a)) ? [] : [`--heap-growing-percent=${API_SERVER_HEAP_GROWING_PERCENT}`];
}

/** Applies apiServerV8Flags to this process (V8 reads it at each full collection, so it works after start). */
export function boundApiServerHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  for (const f of apiServerV8Flags(execArgv)) setFlagsFromString(f);
}
