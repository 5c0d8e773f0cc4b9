export { newLeaderElector, defaultIdentity, JITTER_FACTOR, type LeaderElector, type LeaderElectorOptions, type LeaderCallbacks } from './leader-elector.js';
export {
  newLeaseLock,
  leaseSpecToRecord,
  recordToLeaseSpec,
  type LeaderElectionRecord,
  type LeaseLockConfig,
  type ResourceLock,
} from './lease-lock.js';
export { masterStatusGauge, LEADER_ELECTION_MASTER_STATUS } from './metrics.js';
