/**
 * `kcm scheduler`: the default scheduler (kube-scheduler's everyday flags).
 * Runs until SIGTERM or SIGINT; with --leader-elect (default) only the holder
 * of Lease kube-system/kube-scheduler schedules.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { newKubeClient } from '../client/client.js';
import { newScheduler } from '../scheduler/scheduler.js';
import { DEFAULT_SCHEDULER_NAME } from '../scheduler/profile.js';
import { newSharedInformerFactory } from '../tools/cache/factory.js';
import { newLeaderElector } from '../tools/leaderelection/index.js';
import { newEventBroadcaster } from '../tools/record/index.js';
import { realClock } from '../util/clock/clock.js';
import { newLogger } from '../util/log/logger.js';
import { onTerminationSignal, parseCommandLine, setUpLogging } from './common.js';
import { loggingFlags, type FlagSpec } from './flags.js';

export const schedulerFlags = {
  kubeconfig: { type: 'string', default: '', usage: 'Path to kubeconfig file with authorization and master location information.', section: 'Misc' },
  master: { type: 'string', default: '', usage: 'The address of the Kubernetes API server (overrides any value in kubeconfig).', section: 'Misc' },
  'kube-api-qps': { type: 'float', default: 50, usage: 'QPS to use while talking with kubernetes apiserver.', section: 'Misc' },
  'kube-api-burst': { type: 'int', default: 100, usage: 'Burst to use while talking with kubernetes apiserver.', section: 'Misc' },
  'leader-elect': {
    type: 'bool',
    default: true,
    usage: 'Start a leader election client and gain leadership before executing the main loop. Enable this when running replicated components for high availability.',
    section: 'Leader election',
  },
  'leader-elect-lease-duration': { type: 'duration', default: 15_000, usage: 'The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership.', section: 'Leader election' },
  'leader-elect-renew-deadline': { type: 'duration', default: 10_000, usage: 'The interval between attempts by the acting master to renew a leadership slot before it stops leading.', section: 'Leader election' },
  'leader-elect-retry-period': { type: 'duration', default: 2_000, usage: 'The duration the clients should wait between attempting acquisition and renewal of a leadership.', section: 'Leader election' },
  'leader-elect-resource-namespace': { type: 'string', default: 'kube-system', usage: 'The namespace of resource object that is used for locking during leader election.', section: 'Leader election' },
  'leader-elect-resource-name': { type: 'string', default: 'kube-scheduler', usage: 'The name of resource object that is used for locking during leader election.', section: 'Leader election' },
  ...loggingFlags,
} as const satisfies FlagSpec;

const description = 'Run the default scheduler: binds pending pods (spec.schedulerName default-scheduler) to nodes.';

export async function run(args: string[]): Promise<number> {
  const flags = parseCommandLine(schedulerFlags, args, { command: 'kcm scheduler', usageLine: 'kcm scheduler [flags]', description });
  if (typeof flags === 'number') return flags;
  const v = flags.values;
  const log = setUpLogging(v, 'scheduler');

  let config;
  try {
    config = await loadKubeconfig(v.kubeconfig ? { kubeconfig: v.kubeconfig } : {});
  } catch (err) {
    if (!v.master) {
      log.error(err, 'loading kubeconfig failed');
      return 1;
    }
    // --master alone: an unauthenticated (or insecure test) server.
    const { newRestConfig } = await import('../client/rest-config.js');
    config = newRestConfig({ host: v.master });
  }
  if (v.master) config = { ...config, host: v.master };
  config = { ...config, qps: v['kube-api-qps'], burst: v['kube-api-burst'], userAgent: `kcm-scheduler/${config.userAgent}` };

  const clock = realClock;
  const client = newKubeClient(config, { clock, logger: newLogger('client') });
  const broadcaster = newEventBroadcaster({ client, clock, logger: log.child({}, 'events') });
  const identity = `${hostname()}_${randomUUID()}`;
  const recorder = broadcaster.newRecorder({ component: DEFAULT_SCHEDULER_NAME, host: hostname() });

  const ac = new AbortController();
  const release = onTerminationSignal(() => ac.abort(), { log });
  let code = 0;
  const runScheduler = async (signal: AbortSignal) => {
    const informers = newSharedInformerFactory(client, { clock, logger: log.child({}, 'informers') });
    const sched = newScheduler({ client, informers, clock, recorder, logger: log });
    try {
      await sched.run(signal);
    } finally {
      await informers.shutdown();
    }
  };
  try {
    if (v['leader-elect']) {
      const elector = newLeaderElector({
        client,
        clock,
        logger: log.child({}, 'leaderelection'),
        lock: { namespace: v['leader-elect-resource-namespace'], name: v['leader-elect-resource-name'], identity },
        leaseDurationMs: v['leader-elect-lease-duration'],
        renewDeadlineMs: v['leader-elect-renew-deadline'],
        retryPeriodMs: v['leader-elect-retry-period'],
        name: v['leader-elect-resource-name'],
        callbacks: {
          onStartedLeading: (signal) => runScheduler(signal),
          onStoppedLeading: () => {
            if (!ac.signal.aborted) {
              // As kube-scheduler: losing the lease is fatal, a restart campaigns again.
              log.error('leaderelection lost');
              code = 1;
              ac.abort();
            }
          },
          onNewLeader: (id) => {
            if (id !== identity) log.info({ leader: id }, 'new leader elected');
          },
        },
      });
      await elector.run(ac.signal);
    } else {
      await runScheduler(ac.signal);
    }
  } catch (err) {
    if (!ac.signal.aborted) {
      log.error(err, 'scheduler failed');
      code = 1;
    }
  } finally {
    release();
    await broadcaster.shutdown();
    await client.close();
  }
  return code;
}
