/**
 * The shape every controller has. The controller manager starts controllers
 * through this interface and reads their health from it.
 */

export interface Controller {
  readonly name: string;
  /**
   * Starts `workers` concurrent workers and runs until `signal` aborts.
   * Resolves only after every worker and everything else the controller
   * started has stopped.
   */
  run(workers: number, signal: AbortSignal): Promise<void>;
  /** False once the controller stopped without being asked to. */
  healthy(): boolean;
}
