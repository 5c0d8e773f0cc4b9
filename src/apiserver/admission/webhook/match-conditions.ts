/**
 * matchConditions of admission webhooks: CEL expressions over `object`,
 * `oldObject`, `request` and `authorizer` that must all be true for a
 * webhook to be called (apiserver pkg/admission/plugin/webhook/matchconditions).
 *
 * The CEL environment lives in src/apiserver/cel/ (built separately). This
 * module is the seam: `setMatchConditionEngine` installs an engine; until
 * one is installed, configurations with matchConditions are accepted
 * (names validated, expressions only checked to be non-empty) and every
 * condition evaluates to an error, so a webhook with matchConditions fails
 * closed (failurePolicy Fail) or is skipped (Ignore) — never silently called
 * for requests its conditions would exclude.
 */
import type { UserInfo } from '../../request-info.js';

/** A compile error as the CEL environment reports it (cel.Error: Required, Invalid or Internal). */
export interface CelCompileError {
  type: 'Required' | 'Invalid' | 'Internal';
  detail: string;
}

/** What the expressions see (the AdmissionRequest's parts, in the webhook's version). */
export interface MatchConditionInput {
  object: unknown;
  oldObject: unknown;
  /** The admission.k8s.io/v1 AdmissionRequest (without object/oldObject). */
  request: Record<string, unknown>;
  user: UserInfo;
}

export interface CompiledMatchConditions {
  /**
   * true when every condition is true; false when one is false; an error
   * text when an expression failed (the first false wins over errors, as
   * upstream's matcher does).
   */
  evaluate(input: MatchConditionInput): Promise<{ matches: boolean } | { error: string }>;
}

export interface MatchConditionEngine {
  /** Compile errors of one expression (`request`, `object`, `oldObject`, `authorizer` declared). */
  check(expression: string): CelCompileError | undefined;
  compile(conditions: readonly { name: string; expression: string }[]): CompiledMatchConditions;
}

let engine: MatchConditionEngine | undefined;

/** Installs the CEL engine (src/apiserver/cel). Returns the previous one. */
export function setMatchConditionEngine(e: MatchConditionEngine | undefined): MatchConditionEngine | undefined {
  const prev = engine;
  engine = e;
  return prev;
}

/** The installed engine, if any. */
export function matchConditionEngine(): MatchConditionEngine | undefined {
  return engine;
}

const noEngine: CompiledMatchConditions = {
  async evaluate() {
    return { error: 'matchConditions are not supported by this server yet (no CEL environment installed)' };
  },
};

/** Compiles a webhook's conditions with the installed engine (or the fail-closed stand-in). */
export function compileMatchConditions(conditions: readonly { name: string; expression: string }[]): CompiledMatchConditions {
  return engine ? engine.compile(conditions) : noEngine;
}
