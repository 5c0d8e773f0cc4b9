/**
 * Builders of Deployments and ReplicaSets for this folder's tests.
 */
import type { IntOrString } from '../../api/intstr.js';
import { DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, type DeploymentObject, type ReplicaSetObject } from './types.js';

export interface DeploymentOptions {
  name?: string;
  namespace?: string;
  replicas?: number;
  maxSurge?: IntOrString;
  maxUnavailable?: IntOrString;
  strategy?: 'RollingUpdate' | 'Recreate';
  image?: string;
  progressDeadlineSeconds?: number;
  revisionHistoryLimit?: number;
  paused?: boolean;
  uid?: string;
}

export function newDeployment(o: DeploymentOptions = {}): DeploymentObject {
  const strategy = o.strategy ?? 'RollingUpdate';
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: o.name ?? 'web', namespace: o.namespace ?? 'default', generation: 1, ...(o.uid ? { uid: o.uid } : {}) },
    spec: {
      replicas: o.replicas ?? 1,
      selector: { matchLabels: { app: 'web' } },
      strategy:
        strategy === 'RollingUpdate'
          ? { type: 'RollingUpdate', rollingUpdate: { maxSurge: o.maxSurge ?? '25%', maxUnavailable: o.maxUnavailable ?? '25%' } }
          : { type: 'Recreate' },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: o.image ?? 'nginx:1' }] },
      },
      revisionHistoryLimit: o.revisionHistoryLimit ?? 10,
      progressDeadlineSeconds: o.progressDeadlineSeconds ?? 600,
      ...(o.paused ? { paused: true } : {}),
    },
  };
}

export interface ReplicaSetOptions {
  name: string;
  replicas: number;
  available?: number;
  desired?: number;
  max?: number;
  created?: string;
  uid?: string;
}

export function newReplicaSet(o: ReplicaSetOptions): ReplicaSetObject {
  const annotations: Record<string, string> = {};
  if (o.desired !== undefined) annotations[DESIRED_REPLICAS_ANNOTATION] = String(o.desired);
  if (o.max !== undefined) annotations[MAX_REPLICAS_ANNOTATION] = String(o.max);
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: o.name,
      namespace: 'default',
      uid: o.uid ?? `uid-${o.name}`,
      creationTimestamp: o.created ?? '2024-01-01T00:00:00Z',
      annotations,
    },
    spec: { replicas: o.replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } } } },
    status: { replicas: o.replicas, availableReplicas: o.available ?? o.replicas },
  };
}
