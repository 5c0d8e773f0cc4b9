/**
 * What kcm controller-manager serves at /debug/controllers (authenticated
 * like /metrics): its controllers and their work queues (debug.ts). The
 * dashboard (dashboard/protocol.ts) reads and re-exports these types.
 */

export interface QueueState {
  name: string;
  /** The controller that made the queue, when known. */
  controller?: string;
  depth: number;
  /** Total adds since the process started, and the rate over the last ~10 s. */
  adds: number;
  addsPerSecond: number;
  retries: number;
  /** Keys being synced now, longest first. */
  processing: { key: string; seconds: number }[];
  longestRunningSeconds: number;
  /** Keys waiting (the first 50). Absent from /metrics. */
  waiting?: string[];
  /** Sync (work) duration in seconds. */
  duration: { count: number; p50: number | null; p90: number | null; p99: number | null };
  /** Newest last. Absent from /metrics. */
  lastErrors?: { time: number; key: string; message: string }[];
}

export interface ControllerState {
  name: string;
  healthy: boolean;
  /** Queue names, see QueueState.controller. */
  queues: string[];
}

/** The document of /debug/controllers. */
export interface DebugControllers {
  time: number;
  controllers: ControllerState[];
  queues: QueueState[];
  leaderElection?: { lease: string; identity: string; leading: boolean };
  /** The last syncs of each queue, oldest first (at most 200 per queue); with `?since=<ms>`, only those that started later. */
  recent: { queue: string; key: string; start: number; durationMs: number; error?: string }[];
}
