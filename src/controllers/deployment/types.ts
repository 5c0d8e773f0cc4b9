/**
 * Shapes the deployment controller works with: the API objects as stored
 * (kubernetes-types plus KubeObject) and the labels, annotations and
 * condition reasons it shares with Kubernetes (pkg/controller/deployment/util).
 */
import type { Deployment, DeploymentCondition, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../api/types.js';

export type DeploymentObject = Deployment & KubeObject;
export type ReplicaSetObject = ReplicaSet & KubeObject;
export type PodObject = Pod & KubeObject;
export type { DeploymentCondition };

/** Label added to the ReplicaSets, their selectors and their pods (apps.DefaultDeploymentUniqueLabelKey). */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
/** Set by extensions/v1beta1 rollbacks; never copied to ReplicaSets. */
export const DEPRECATED_ROLLBACK_TO_ANNOTATION = 'deprecated.deployment.rollback.to';
export const LAST_APPLIED_CONFIG_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** Longest revision-history annotation the controller writes (upstream maxRevHistoryLengthInChars). */
export const MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000;

// Condition types.
export const DEPLOYMENT_AVAILABLE = 'Available';
export const DEPLOYMENT_PROGRESSING = 'Progressing';
export const DEPLOYMENT_REPLICA_FAILURE = 'ReplicaFailure';

// Reasons (pkg/controller/deployment/util/deployment_util.go).
export const NEW_RS_REASON = 'NewReplicaSetCreated';
export const FOUND_NEW_RS_REASON = 'FoundNewReplicaSet';
export const REPLICA_SET_UPDATED_REASON = 'ReplicaSetUpdated';
export const NEW_RS_AVAILABLE_REASON = 'NewReplicaSetAvailable';
export const TIMED_OUT_REASON = 'ProgressDeadlineExceeded';
export const PAUSED_DEPLOY_REASON = 'DeploymentPaused';
export const RESUMED_DEPLOY_REASON = 'DeploymentResumed';
export const FAILED_RS_CREATE_REASON = 'ReplicaSetCreateError';
export const MINIMUM_REPLICAS_AVAILABLE = 'MinimumReplicasAvailable';
export const MINIMUM_REPLICAS_UNAVAILABLE = 'MinimumReplicasUnavailable';

/** progressDeadlineSeconds of MaxInt32 means "no deadline" (upstream HasProgressDeadline). */
export const INT32_MAX = 2147483647;
