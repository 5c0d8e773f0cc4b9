/**
 * What the dashboard server sends its front end (web/dashboard): types only,
 * shared by both sides. The server watches the cluster through the API (and
 * reads the controller manager's /debug/controllers or /metrics) and sends
 * summaries, not whole objects, so 5,000 pods cost about a megabyte.
 *
 * HTTP API (every path but /login and /healthz needs the session cookie set
 * by /login, or an `Authorization: Bearer` token the API server accepts):
 *
 *   GET /login?token=T      checks T, sets the session cookie, redirects to /
 *   GET /                   the page; /app.js, /app.css its code and style
 *   GET /api/stream         server-sent events, below
 *   GET /api/timeline?uid=U[&descendants=1]   TimelineResponse
 *   GET /api/object?uid=U   the whole object as the API server returned it (JSON), 404 when unknown
 *
 * Server-sent events on /api/stream (each `data:` is one JSON document):
 *
 *   event: snapshot     Snapshot, first, and again after the server re-listed
 *   event: delta        Delta, at most every 250 ms while something changed
 *   event: controllers  ControllersState, every second
 *   event: scheduling   SchedulingDecision[]: new decisions since the last one, newest last
 */
import type { ControllerState, QueueState } from '../util/workqueue/debug-types.js';

export type { ControllerState, DebugControllers, QueueState } from '../util/workqueue/debug-types.js';

/** At a glance: ok (green), progressing (blue), warning (amber), failed (red), terminating (grey), unknown. */
export type Health = 'ok' | 'progressing' | 'warning' | 'failed' | 'terminating' | 'unknown';

export interface OwnerRef {
  uid: string;
  kind: string;
  name: string;
  /** ownerReferences[].controller */
  controller: boolean;
  /**
   * Not an ownerReference: a PersistentVolumeClaim named after a StatefulSet's volumeClaimTemplate
   * (`<template>-<set>-<ordinal>`), linked to that StatefulSet while it exists. Its claims are owned only
   * under a Delete retention policy; they are shown with their StatefulSet either way.
   */
  claim?: boolean;
}

export interface Resources {
  /** Millicores. */
  cpu: number;
  /** Bytes. */
  memory: number;
}

export interface PodInfo {
  phase: string;
  ready: boolean;
  node?: string;
  /** Sum of the containers' requests (init containers' max counted as the scheduler does). */
  requests: Resources;
  containers: number;
  readyContainers: number;
  restarts: number;
  /** PodScheduled=False: its reason and message (why it is Pending: the scheduler's filter results). */
  unschedulable?: { reason: string; message: string };
}

export interface NodeInfo {
  ready: boolean;
  unschedulable: boolean;
  taints: { key: string; value?: string; effect: string }[];
  conditions: { type: string; status: string; reason?: string; message?: string }[];
  allocatable: Resources & { pods: number };
  capacity: Resources & { pods: number };
  zone?: string;
}

export interface LeaseInfo {
  holder?: string;
  renewTime?: string;
  acquireTime?: string;
  transitions?: number;
  durationSeconds?: number;
}

export interface ObjectSummary {
  uid: string;
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  resourceVersion: string;
  created: string;
  /** metadata.deletionTimestamp is set. */
  deleting: boolean;
  finalizers?: string[];
  owners: OwnerRef[];
  health: Health;
  /** One short line: `Running`, `3/3 ready`, `Complete`, `Bound`, ... */
  status: string;
  /** deployment.kubernetes.io/revision (Deployments and ReplicaSets). */
  revision?: string;
  /** Workloads: desired and counted replicas. */
  replicas?: { desired: number; ready: number; available?: number; updated?: number };
  pod?: PodInfo;
  node?: NodeInfo;
  lease?: LeaseInfo;
}

export interface Snapshot {
  /** Server time (ms since the epoch). */
  time: number;
  /** Where the data comes from: the API server's URL. */
  cluster: string;
  namespaces: string[];
  objects: ObjectSummary[];
  controllers: ControllersState | null;
  scheduling: SchedulingDecision[];
}

export interface Delta {
  time: number;
  upserts: ObjectSummary[];
  /** uids of deleted objects. */
  deletes: string[];
  /** Namespaces now present (sent when the list changed). */
  namespaces?: string[];
  /** uids whose timeline gained entries since the last delta (writes or events). */
  touched: string[];
}



export interface ControllersState {
  /** The URL read: `<controller manager>/debug/controllers` or `<controller manager>/metrics`. */
  source: string;
  /** 'debug': kcm's own endpoint; 'metrics': only Prometheus metrics (a real kube-controller-manager). */
  mode: 'debug' | 'metrics';
  ok: boolean;
  /** Why the last read failed. */
  error?: string;
  fetchedAt: number;
  controllers: ControllerState[];
  queues: QueueState[];
  /** The controller manager's own election, when the endpoint tells. */
  leaderElection?: { lease: string; identity: string; leading: boolean };
}

export interface SchedulingDecision {
  time: number;
  namespace: string;
  pod: string;
  podUid?: string;
  /** Scheduled, FailedScheduling, Preempted, ... (the scheduler's event reason). */
  reason: string;
  node?: string;
  /** The event message: for FailedScheduling, the filter results (`0/3 nodes are available: ...`). */
  message: string;
}

export type TimelineEntry =
  | {
      type: 'write';
      time: number;
      uid: string;
      kind: string;
      namespace?: string;
      name: string;
      /** ADDED, MODIFIED or DELETED as the watch reported it. */
      op: 'ADDED' | 'MODIFIED' | 'DELETED';
      resourceVersion: string;
      /** The field manager of the newest managedFields entry (who wrote it), when known. */
      manager?: string;
      /** Changed field paths (`spec.replicas`, `status.readyReplicas`), at most 20. */
      changed: string[];
      /** A readable line: `spec.replicas 1 → 3`. */
      text: string;
    }
  | {
      type: 'event';
      time: number;
      uid: string;
      kind: string;
      namespace?: string;
      name: string;
      reason: string;
      message: string;
      /** Normal or Warning. */
      eventType: string;
      /** The reporting component: `replicaset-controller`, `default-scheduler`, `kubelet`. */
      source: string;
      count: number;
    }
  | {
      type: 'reconcile';
      time: number;
      /** The controller (or its queue's name) that synced the key. */
      controller: string;
      queue: string;
      key: string;
      durationMs: number;
      error?: string;
    };

export interface TimelineResponse {
  uid: string;
  /** The object and, with descendants=1, its dependents, as uids. */
  uids: string[];
  /** Oldest first, at most 2,000 (the newest). */
  entries: TimelineEntry[];
}

