/**
 * kcm/leaderelection: client-go's leader election over a
 * coordination.k8s.io/v1 Lease. One candidate leads; the others take over
 * within the lease duration when it stops renewing.
 *
 *   const elector = newLeaderElector({ client, clock: realClock, lock: { namespace: 'default', name: 'my-operator', identity: defaultIdentity() },
 *     callbacks: { onStartedLeading: (signal) => runControllers(signal), onStoppedLeading: () => process.exit(0) } });
 *   await elector.run(signal);
 */
export { newLeaderElector, defaultIdentity, type LeaderElector, type LeaderElectorOptions, type LeaderCallbacks } from '../tools/leaderelection/leader-elector.js';
export { newLeaseLock, type LeaderElectionRecord, type LeaseLockConfig, type ResourceLock } from '../tools/leaderelection/lease-lock.js';
export { realClock, type Clock, type Timer } from '../util/clock/clock.js';
