export type { Controller } from './types.js';
export { keyFunc, objectFromDeleted } from './keys.js';
export { computeHash, safeEncodeString, canonicalJson, newFnv32a, deepHashObject, type Fnv32a } from './hash.js';
export {
  newControllerExpectations,
  newUIDTrackingControllerExpectations,
  EXPECTATIONS_TIMEOUT_MS,
  type ControllerExpectations,
  type ControlleeExpectations,
  type UIDTrackingControllerExpectations,
  type ExpectationsOptions,
} from './expectations.js';
export {
  newControllerRefManager,
  getControllerOf,
  newControllerRef,
  adoptPatch,
  releasePatch,
  patchWith,
  recheckDeletionTimestamp,
  resolveControllerRef,
  controllersSelecting,
  type ControllerRefManager,
  type ControllerRefManagerOptions,
} from './controller-ref-manager.js';
export {
  newPodControl,
  getPodFromTemplate,
  podsPrefix,
  validateControllerRef,
  FAILED_CREATE_POD_REASON,
  SUCCESSFUL_CREATE_POD_REASON,
  FAILED_DELETE_POD_REASON,
  SUCCESSFUL_DELETE_POD_REASON,
  type PodControl,
  type PodControlOptions,
} from './pod-control.js';
export {
  isPodActive,
  isPodTerminal,
  isPodReady,
  isPodAvailable,
  podReadyTime,
  filterActivePods,
  getPodCondition,
  getPodReadyCondition,
  updatePodCondition,
  maxContainerRestarts,
} from './pod-util.js';
export {
  activePodsWithRanksLess,
  sortActivePodsWithRanks,
  rankPodsByRelatedPodsOnSameNode,
  activePodsLess,
  sortActivePods,
  byLoggingLess,
  sortByLogging,
  podDeletionCost,
  logarithmicRankDiff,
  POD_DELETION_COST_ANNOTATION,
  type RankedPod,
  type RankingOptions,
} from './ranking.js';
export {
  newQueueWorker,
  waitForCacheSync,
  DEFAULT_MAX_RETRIES,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  type QueueWorker,
  type QueueWorkerOptions,
} from './base-controller.js';
export { newControllerLifecycle, type ControllerLifecycle, type ControllerLifecycleOptions } from './lifecycle.js';
