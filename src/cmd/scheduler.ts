/**
 * `kcm scheduler`: the default scheduler (kube-scheduler's everyday flags).
 * Runs until SIGTERM or SIGINT; with --leader-elect (default) only the holder
 * of Lease kube-system/kube-scheduler schedules.
 *
 * Serves kube-scheduler's secure port (`--secure-port`, default 10259;
 * 0 disables it): `/healthz`, `/livez`, `/readyz` for anyone (the
 * `--authorization-always-allow-paths`), `/metrics` and `/configz` for
 * callers the API server authenticates (TokenReview, client certificates)
 * and authorizes (SubjectAccessReview), as kube-scheduler does. There is no
 * insecure port (kube-scheduler 1.20's deprecated `--port` 10251).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { register as defaultRegistry } from 'prom-client';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { newKubeClient } from '../client/client.js';
import { componentUserAgent, leaderElectionRestConfig, newRestConfig } from '../client/rest-config.js';
import { readFileSync } from 'node:fs';
import { parseSchedulerConfiguration, SchedulerConfigError, type SchedulerConfiguration } from '../scheduler/config.js';
import { newScheduler } from '../scheduler/scheduler.js';
import { DEFAULT_SCHEDULER_NAME } from '../scheduler/profile.js';
import { newSharedInformerFactory } from '../tools/cache/factory.js';
import { newLeaderElector } from '../tools/leaderelection/index.js';
import { newEventBroadcaster } from '../tools/record/index.js';
import { realClock } from '../util/clock/clock.js';
import { newLogger } from '../util/log/logger.js';
import { delegatedAuthConfig, schedulerDelegatedAuthFlags, validateAuthFlags } from '../controllermanager/auth-flags.js';
import { setUpDelegatedAuth, type DelegatedAuth } from '../controllermanager/delegated-auth.js';
import { newHealthChecks, startServing, type ComponentServer } from '../controllermanager/serving.js';
import { onTerminationSignal, parseCommandLine, setUpLogging } from './common.js';
import { FlagError, formatDuration, loggingFlags, type FlagSpec } from './flags.js';

export const schedulerFlags = {
  config: {
    type: 'string',
    default: '',
    usage: 'The path to the configuration file (a KubeSchedulerConfiguration: profiles, percentageOfNodesToScore, plugin arguments). Its leaderElection and clientConnection settings take precedence over the flags.',
    section: 'Misc',
  },
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
  'secure-port': { type: 'int', default: 10259, usage: "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all.", section: 'Secure serving' },
  'bind-address': {
    type: 'string',
    default: '0.0.0.0',
    typeName: 'ip',
    usage: 'The IP address on which to listen for the --secure-port port. The associated interface(s) must be reachable by the rest of the cluster, and by CLI/web clients. If blank or an unspecified address (0.0.0.0 or ::), all interfaces will be used.',
    section: 'Secure serving',
  },
  'cert-dir': { type: 'string', default: '', usage: 'The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored.', section: 'Secure serving' },
  'tls-cert-file': { type: 'string', default: '', usage: 'File containing the default x509 Certificate for HTTPS. If not given, a self-signed certificate is generated.', section: 'Secure serving' },
  'tls-private-key-file': { type: 'string', default: '', usage: 'File containing the default x509 private key matching --tls-cert-file.', section: 'Secure serving' },
  ...schedulerDelegatedAuthFlags,
  ...loggingFlags,
} as const satisfies FlagSpec;

const description = 'Run the default scheduler: binds pending pods (spec.schedulerName default-scheduler) to nodes.';

export async function run(args: string[]): Promise<number> {
  const flags = parseCommandLine(schedulerFlags, args, {
    command: 'kcm scheduler',
    usageLine: 'kcm scheduler [flags]',
    description,
    validate: ({ values: v }) => {
      if (v['secure-port'] < 0 || v['secure-port'] > 65535) throw new FlagError(`--secure-port ${v['secure-port']} must be between 0 and 65535, inclusive. 0 for turning off secure port`);
      const authProblem = validateAuthFlags(v);
      if (authProblem) throw new FlagError(authProblem);
    },
  });
  if (typeof flags === 'number') return flags;
  const v = { ...flags.values };
  const log = setUpLogging(v, 'scheduler');
  let schedConfig: SchedulerConfiguration | undefined;
  if (v.config) {
    try {
      schedConfig = parseSchedulerConfiguration(readFileSync(v.config, 'utf8'));
    } catch (err) {
      const why = err instanceof SchedulerConfigError ? err.message : (err as Error).message;
      process.stderr.write(`kcm scheduler: invalid configuration ${v.config}: ${why}\n`);
      return 1;
    }
    for (const w of schedConfig.warnings) log.warn({ config: v.config }, w);
    const le = schedConfig.leaderElection;
    if (le.leaderElect !== undefined) v['leader-elect'] = le.leaderElect;
    if (le.leaseDurationMs !== undefined) v['leader-elect-lease-duration'] = le.leaseDurationMs;
    if (le.renewDeadlineMs !== undefined) v['leader-elect-renew-deadline'] = le.renewDeadlineMs;
    if (le.retryPeriodMs !== undefined) v['leader-elect-retry-period'] = le.retryPeriodMs;
    if (le.resourceName !== undefined) v['leader-elect-resource-name'] = le.resourceName;
    if (le.resourceNamespace !== undefined) v['leader-elect-resource-namespace'] = le.resourceNamespace;
    const cc = schedConfig.clientConnection;
    if (cc.kubeconfig !== undefined && !v.kubeconfig) v.kubeconfig = cc.kubeconfig;
    if (cc.qps !== undefined) v['kube-api-qps'] = cc.qps;
    if (cc.burst !== undefined) v['kube-api-burst'] = cc.burst;
  }

  let config;
  try {
    config = await loadKubeconfig(v.kubeconfig ? { kubeconfig: v.kubeconfig } : {});
  } catch (err) {
    if (!v.master) {
      log.error(err, 'loading kubeconfig failed');
      return 1;
    }
    // --master alone: an unauthenticated (or insecure test) server.
    config = newRestConfig({ host: v.master });
  }
  if (v.master) config = { ...config, host: v.master };
  config = { ...config, qps: v['kube-api-qps'], burst: v['kube-api-burst'], userAgent: componentUserAgent('kube-scheduler') };

  const clock = realClock;
  const registry = defaultRegistry;
  const checks = newHealthChecks();
  let auth: DelegatedAuth | undefined;
  let server: ComponentServer | undefined;
  if (v['secure-port'] !== 0) {
    try {
      auth = await setUpDelegatedAuth(await delegatedAuthConfig(v, config, (kubeconfig) => loadKubeconfig({ kubeconfig })), { clock, logger: log });
      server = await startServing({
        bindAddress: v['bind-address'],
        port: v['secure-port'],
        ...(v['tls-cert-file'] ? { certFile: v['tls-cert-file'] } : {}),
        ...(v['tls-private-key-file'] ? { keyFile: v['tls-private-key-file'] } : {}),
        checks,
        registry,
        configz: () => schedulerConfiguration(v, schedConfig),
        auth,
        component: 'kube-scheduler',
        logger: log,
      });
      process.stdout.write(`kcm scheduler serving on ${server.url}\n`);
    } catch (err) {
      log.error(err, 'cannot serve the secure port');
      await auth?.close();
      return 1;
    }
  }
  const stopServing = async () => {
    await server?.close().catch((err: unknown) => log.error(err, 'closing the server'));
    await auth?.close().catch((err: unknown) => log.error(err, 'closing delegated authentication'));
  };

  const client = newKubeClient(config, { clock, logger: newLogger('client'), metricsRegistry: registry });
  const broadcaster = newEventBroadcaster({ client, clock, logger: log.child({}, 'events') });
  const identity = `${hostname()}_${randomUUID()}`;
  const recorder = broadcaster.newRecorder({ component: DEFAULT_SCHEDULER_NAME, host: hostname() });
  // Each profile reports its events as its own schedulerName (reportingController).
  const recorderFor = (schedulerName: string) => broadcaster.newRecorder({ component: schedulerName, host: hostname() });

  const ac = new AbortController();
  const release = onTerminationSignal(() => ac.abort(), { log });
  let code = 0;
  // The lease through a client of its own (own rate limiter), as kube-scheduler's leaderElectionClient.
  const leClient = v['leader-elect'] ? newKubeClient(leaderElectionRestConfig(config, v['leader-elect-renew-deadline']), { clock, logger: newLogger('client'), metricsRegistry: registry }) : undefined;
  const runScheduler = async (signal: AbortSignal) => {
    const informers = newSharedInformerFactory(client, { clock, logger: log.child({}, 'informers') });
    const profiles = schedConfig?.profilesFor({ client, clock });
    const sched = newScheduler({
      client,
      informers,
      clock,
      recorder,
      recorderFor,
      logger: log,
      registry,
      ...(profiles ? { profiles, percentageOfNodesToScore: schedConfig!.percentageOfNodesToScore } : {}),
    });
    try {
      await sched.run(signal);
    } finally {
      await informers.shutdown();
    }
  };
  try {
    if (leClient) {
      const elector = newLeaderElector({
        client: leClient,
        clock,
        logger: log.child({}, 'leaderelection'),
        lock: { namespace: v['leader-elect-resource-namespace'], name: v['leader-elect-resource-name'], identity },
        leaseDurationMs: v['leader-elect-lease-duration'],
        renewDeadlineMs: v['leader-elect-renew-deadline'],
        retryPeriodMs: v['leader-elect-retry-period'],
        name: v['leader-elect-resource-name'],
        registry,
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
      checks.add({ name: 'leaderElection', check: () => elector.check(20_000) });
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
    await leClient?.close();
    await stopServing();
  }
  return code;
}

/** What /configz shows: the effective KubeSchedulerConfiguration (flags, and the --config file's profiles). */
function schedulerConfiguration(v: { kubeconfig: string; 'kube-api-qps': number; 'kube-api-burst': number; 'leader-elect': boolean; 'leader-elect-lease-duration': number; 'leader-elect-renew-deadline': number; 'leader-elect-retry-period': number; 'leader-elect-resource-namespace': string; 'leader-elect-resource-name': string }, file: SchedulerConfiguration | undefined): Record<string, unknown> {
  return {
    kind: 'KubeSchedulerConfiguration',
    apiVersion: 'kubescheduler.config.k8s.io/v1beta1',
    percentageOfNodesToScore: file?.percentageOfNodesToScore ?? 0,
    clientConnection: { kubeconfig: v.kubeconfig, qps: v['kube-api-qps'], burst: v['kube-api-burst'] },
    leaderElection: {
      leaderElect: v['leader-elect'],
      leaseDuration: formatDuration(v['leader-elect-lease-duration']),
      renewDeadline: formatDuration(v['leader-elect-renew-deadline']),
      retryPeriod: formatDuration(v['leader-elect-retry-period']),
      resourceLock: 'leases',
      resourceName: v['leader-elect-resource-name'],
      resourceNamespace: v['leader-elect-resource-namespace'],
    },
    profiles: (file?.effective.profiles as unknown[] | undefined) ?? [{ schedulerName: DEFAULT_SCHEDULER_NAME }],
  };
}
