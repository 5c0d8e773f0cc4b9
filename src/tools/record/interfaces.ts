/**
 * Event recording (client-go tools/record): controllers report what they did
 * as core/v1 Events attached to the object they acted on.
 */
import type { ObjectReference } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../api/types.js';

export type EventType = 'Normal' | 'Warning';

/** Who reports: the component (e.g. `replicaset-controller`) and optionally the host. */
export interface EventSource {
  component: string;
  host?: string;
}

/**
 * The object an event is about: an API object carrying apiVersion and kind
 * (objects from lists often lack them: set them, or pass a reference).
 */
export type EventTarget = KubeObject | ObjectReference;

/**
 * Records events. Calls never block and never throw: events are queued and
 * written in the background; failures are logged.
 */
export interface EventRecorder {
  event(obj: EventTarget, type: EventType, reason: string, message: string): void;
  /** Like event, with a Go-style format (`%v`, `%s`, `%d`, `%q`, `%%`). */
  eventf(obj: EventTarget, type: EventType, reason: string, format: string, ...args: unknown[]): void;
  /** Like eventf, and the Event carries `annotations`. */
  annotatedEventf(
    obj: EventTarget,
    annotations: Record<string, string>,
    type: EventType,
    reason: string,
    format: string,
    ...args: unknown[]
  ): void;
}

export interface EventBroadcaster {
  /** A recorder whose events carry `source` (and reportingComponent/reportingInstance from it). */
  newRecorder(source: EventSource): EventRecorder;
  /** Resolves once every queued event has been written, dropped or given up on. */
  whenIdle(): Promise<void>;
  /**
   * Stops accepting events, tries each still-queued event once more without
   * waiting between retries, and resolves when the writer has stopped.
   */
  shutdown(): Promise<void>;
}
