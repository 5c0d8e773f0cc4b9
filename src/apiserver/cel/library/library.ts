/**
 * What a CEL function library contributes to the environment: types and
 * functions declared on the engine, and implementations that replace the
 * engine's own where cel-go's behaviour differs (strings counted in code
 * points, RE2 regular expressions, error messages).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { CelEvalError } from '../errors.js';

/** Replaces the evaluation of a call; receives the receiver (if any) and the evaluated arguments. */
export type CallOverride = (receiver: unknown, args: unknown[]) => unknown;

export interface CelLibrary {
  /** cel-go / Kubernetes library name (`kubernetes.quantity`, `strings`). */
  readonly name: string;
  /** Declares the library's types, functions and operators. Called once on the base environment. */
  declare(env: Environment): void;
  /**
   * Implementations that take over calls the engine would evaluate itself,
   * keyed `<receiver kind>.<name>/<arg count>` (`string.indexOf/1`, `list.join/0`)
   * or `<name>/<arg count>` for global functions.
   */
  readonly overrides?: Readonly<Record<string, CallOverride>>;
  /** Function names the library declares (for `undeclared reference` vs overload errors). */
  readonly functions: readonly string[];
}

/** Throws a CEL runtime error with cel-go's message. */
export function celError(message: string): never {
  throw new CelEvalError(message);
}

/** A bigint argument as a JS number (CEL ints used as indexes and counts). */
export const num = (v: unknown): number => Number(v as bigint);
