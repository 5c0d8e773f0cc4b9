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
 * pods they took 17.8 s of its main thread, 11.3 s with 64 MB (128 MB: 9.6 s,
 * but more memory). The space grows only as allocation needs, so an idle
 * kcm up keeps its size. A --max-semi-space-size the user gives wins.
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
