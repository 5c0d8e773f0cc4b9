export { ContainerRun, ContainerLog, defaultSpawn, fallbackPrograms, type ExecResult, type SpawnContext } from './container-process.js';
export { newRestartBackoff, formatGoDuration, BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, type RestartBackoff } from './restart-backoff.js';
export { isPullable, normalizeImage, imageID, registryHost } from './image.js';
export { newIpAllocator, parseCidr, type IpAllocator } from './ip-allocator.js';
export {
  HEARTBEAT_ANNOTATION,
  NODE_LEASE_NAMESPACE,
  LEASE_DURATION_SECONDS,
  parseTaint,
  nodeInternalIP,
  defaultPodCIDR,
  newNodeObject,
  buildNodeStatus,
  newLeaseObject,
  type NodeIdentity,
  type NodeTemplate,
} from './node-object.js';
export { isPaused, LEASE_RENEW_INTERVAL_MS, NODE_STATUS_UPDATE_INTERVAL_MS, NODE_STATUS_REPORT_INTERVAL_MS } from './node-agent.js';
export { PodRuntime, formatPod, type PodPhase, type ContainerSim, type ContainerState } from './pod-runtime.js';
export { buildPodStatus, kubeletConditions, mergeConditions } from './pod-status.js';
export { newNodeSimulator, DEFAULT_CAPACITY, DEFAULT_KUBELET_VERSION, type NodeSimulator, type NodeSimulatorOptions } from './node-simulator.js';
export { setHeartbeatPaused } from './pause.js';
export { podVolumeState, failedMountMessage, csiUniqueVolumeName, POD_ATTACH_AND_MOUNT_TIMEOUT_MS, type PodVolumeState, type VolumeLookup } from './volume-manager.js';
export {
  SIMULATED_CSI_DRIVER,
  DEFAULT_CSI_VOLUME_LIMIT,
  CSI_TOPOLOGY_KEY,
  attacherFinalizer,
  sanitizeDriverName,
  ensureCSIDriver,
  ensureCSINode,
  syncVolumeAttachment,
  type ExternalAttacherOptions,
} from './csi.js';
export { PRESSURE_ANNOTATION, pressureOf, type PressureKind } from './node-object.js';
export { PROBE_FAIL_ANNOTATION, parseForcedFailures, type ProbeKind } from './probes.js';
export { USAGE_ANNOTATION, parseUsageAnnotation, podUsage, podTotalUsage, nodeUsage } from './usage.js';
export { admitUnderPressure, rankForEviction, evictionMessage, isCriticalPod, EVICTION_REASON } from './eviction.js';
