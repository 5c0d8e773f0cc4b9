/**
 * The runtime's own failure kinds. API errors stay the client's StatusError
 * (isNotFound, isConflict, ...).
 */
import { kindString, type ResourceKind } from './kinds.js';

/**
 * Thrown from a reconciler for an error that retrying cannot fix (an
 * invalid spec the user must change): logged, counted in
 * controller_runtime_terminal_reconcile_errors_total, and not retried. The
 * object is reconciled again when it changes.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export function isTerminalError(err: unknown): err is TerminalError {
  return err instanceof TerminalError;
}

/** A cached read of a kind nobody asked the cache to hold. */
export class UncachedKindError extends Error {
  constructor(readonly kind: ResourceKind) {
    super(
      `${kindString(kind)} is not cached: watch it (for/owns/watches), list it in the manager's cache.kinds, or read it from the API server with client.live`,
    );
    this.name = 'UncachedKindError';
  }
}

/** Leadership was lost: the manager stopped its controllers. Exit and let the process restart, as controller-runtime does. */
export class LeaderElectionLostError extends Error {
  constructor(readonly leaseName: string) {
    super(`leader election lost (lease ${leaseName})`);
    this.name = 'LeaderElectionLostError';
  }
}
