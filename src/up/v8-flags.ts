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
