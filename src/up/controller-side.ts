/**
 * The controller side of `kcm up`: the controller manager, the scheduler and
 * the simulated nodes, each with its own client (as separate components
 * would be), against the API server the main process runs.
 *
 * Runs in a child process or a worker thread (see supervisor.ts); the
 * configuration arrives as plain JSON and progress leaves as messages.
 */
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { GVR } from '../api/gvr.js';
import { newKubeClient, type KubeClient } from '../client/client.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { componentUserAgent, leaderElectionRestConfig, viaUnixSocket, type RestConfig } from '../client/rest-config.js';
import { newControllerManager, type ProgressEvent } from '../controllermanager/manager.js';
import { buildControllerOptions, effectiveConfiguration, type ControllerManagerFlagValues } from '../controllermanager/options.js';
import { delegatedAuthConfig } from '../controllermanager/auth-flags.js';
import { newCloudProvider } from '../controllermanager/cloud.js';
import { UNINITIALIZED_TAINT_KEY } from '../controllers/cloudnode/cloud-node-controller.js';
import { formatDuration } from '../cmd/flags.js';
import { newNodeSimulator } from '../nodes/index.js';
import { runProvisionerComponent, volumesDirOf } from '../provisioner/component.js';
import { newScheduler } from '../scheduler/index.js';
import { parseSchedulerConfiguration } from '../scheduler/config.js';
import { newSharedInformerFactory } from '../tools/cache/factory.js';
import { newEventBroadcaster } from '../tools/record/index.js';
import { newLeaderElector } from '../tools/leaderelection/index.js';
import { realClock } from '../util/clock/clock.js';
import { newLogger, setLogFormat, setVerbosity } from '../util/log/logger.js';

export interface ControllerSideConfig {
  dataDir: string;
  kubeconfigPath: string;
  /** The API server's private Unix domain socket: the controller side's clients use it rather than TLS over TCP (the kubeconfig still gives credentials and the CA). */
  apiSocketPath?: string;
  /** Effective controller-manager flag values (after --config and validation). */
  cm: ControllerManagerFlagValues;
  /** Canonical names of the enabled controllers. */
  controllers: string[];
  /** Controller-manager serving port (0: not served). */
  cmSecurePort: number;
  cmBindAddress: string;
  nodes: number;
  /** Simulated kubelets stop deleted pods gracefully (default true). */
  gracefulShutdown?: boolean;
  /** Images the simulated nodes fail to pull (--unpullable-images, --pullable-images). */
  imagePullRule?: { unpullable: string[]; pullable: string[] };
  scheduler: boolean;
  /** Run the local-path provisioner (volumes in <dataDir>/volumes). */
  localPathProvisioner?: boolean;
  /** The scheduler's client limits (kcm up's --scheduler-kube-api-qps/--scheduler-kube-api-burst). */
  schedulerQps: number;
  schedulerBurst: number;
  /** A KubeSchedulerConfiguration file (absolute path; validated by kcm up before start). */
  schedulerConfig?: string;
  verbosity: number;
  loggingFormat: 'text' | 'json';
  /** The local cloud's load balancer pool (`--load-balancer-ip-range`). */
  loadBalancerIPRange?: string;
  /** The bearer token the API server presents to the simulated kubelets' endpoint (logs, exec, port-forward, proxy). */
  kubeletToken?: string;
}

/** Messages from the controller side to the supervisor. */
export type ControllerSideMessage =
  | { type: 'cm'; event: ProgressEvent }
  | { type: 'scheduler-started' }
  | { type: 'nodes-started'; names: string[] }
  | { type: 'stopped'; code: number };

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Connections the simulated kubelets' events take at most. */
const NODE_EVENT_CONNECTIONS = 4;

/** Runs until `signal` aborts; resolves with the exit code (non-zero when the controller manager failed). */
export async function runControllerSide(cfg: ControllerSideConfig, signal: AbortSignal, send: (m: ControllerSideMessage) => void): Promise<number> {
  setVerbosity(cfg.verbosity);
  setLogFormat(cfg.loggingFormat);
  const log = newLogger('kcm-up');
  const base = viaUnixSocket(await loadKubeconfig({ kubeconfig: cfg.kubeconfigPath }), cfg.apiSocketPath);
  const pki = join(cfg.dataDir, 'pki');
  const rootCA = cfg.cm['root-ca-file'] ? readFileSync(cfg.cm['root-ca-file'], 'utf8') : readOptional(join(pki, 'ca.crt'));
  const saKeyFile = cfg.cm['service-account-private-key-file'] || join(pki, 'sa.key');
  const saKey = readOptional(saKeyFile);
  const cmRest: RestConfig = { ...base, qps: cfg.cm['kube-api-qps'], burst: cfg.cm['kube-api-burst'], userAgent: componentUserAgent('kube-controller-manager') };

  // The cloud (default: the local one); the simulated kubelets then register tainted uninitialized, as kubelet --cloud-provider=external.
  const cloud = newCloudProvider(cfg.cm['cloud-provider'], cfg.cm['cloud-config'], cfg.loadBalancerIPRange ? { loadBalancerIPRange: cfg.loadBalancerIPRange } : undefined);
  const cloudTaints = cfg.cm['cloud-provider'] !== '' ? [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }] : [];

  // The scheduler and the simulated kubelets read the same objects (pods above all): one set of
  // informers for both, through the nodes' client, so each pod is cached and decoded once rather than twice.
  // The controller manager borrows their pods and nodes informers too (see SharedInformerFactoryOptions.borrow).
  // Connections of their own, as every kubelet has its own: a thousand kubelets' TokenRequests and status writes
  // must not queue the controller manager's creates and the scheduler's bindings behind them in one pool
  // (1,000 nodes and 30,000 pods: all available in 179 s so, 192 s through the shared pool).
  const nodesClient = cfg.nodes > 0 ? newKubeClient({ ...base, qps: 0, burst: 0, userAgent: componentUserAgent('kubelet'), ownConnections: true }, { logger: newLogger('nodes') }) : undefined;
  // The kubelets' events go over a few connections of their own (the kubelet has an event client of its own too):
  // pods starting make three events each, and on the shared pool that flood queued the pods' TokenRequests and
  // status writes behind it (1,000 nodes and 10,000 pods: all available in 83 s through the shared pool, 69 s so).
  const nodesEventClient = cfg.nodes > 0 ? newKubeClient({ ...base, qps: 0, burst: 0, userAgent: componentUserAgent('kubelet'), ownConnections: NODE_EVENT_CONNECTIONS }, { logger: newLogger('nodes') }) : undefined;
  const sharedInformers = nodesClient ? newSharedInformerFactory(nodesClient, { clock: realClock, logger: newLogger('informers') }) : undefined;

  const cm = newControllerManager({
    restConfig: cmRest,
    ...(cloud ? { cloud } : {}),
    cloudProviderName: cfg.cm['cloud-provider'],
    controllers: cfg.controllers,
    // The cluster CA signs CSRs too (as kubeadm sets --cluster-signing-*-file), unless flags say otherwise.
    options: buildControllerOptions(
      {
        ...cfg.cm,
        'cluster-signing-cert-file': cfg.cm['cluster-signing-cert-file'] || join(pki, 'ca.crt'),
        'cluster-signing-key-file': cfg.cm['cluster-signing-key-file'] || join(pki, 'ca.key'),
      },
      { ...(rootCA ? { rootCA } : {}), ...(saKey ? { serviceAccountPrivateKey: saKey } : {}) },
    ),
    leaderElection: {
      enabled: cfg.cm['leader-elect'],
      leaseDurationMs: cfg.cm['leader-elect-lease-duration'],
      renewDeadlineMs: cfg.cm['leader-elect-renew-deadline'],
      retryPeriodMs: cfg.cm['leader-elect-retry-period'],
      namespace: cfg.cm['leader-elect-resource-namespace'],
      name: cfg.cm['leader-elect-resource-name'],
      // Stable across restarts: a kcm up that crashed takes its own unexpired lease back at once.
      identity: `${hostname()}_kcm-up`,
    },
    // The port answers only callers the API server authenticates and authorizes (TokenReview, SubjectAccessReview through the admin kubeconfig), as kube-controller-manager's.
    ...(cfg.cmSecurePort !== 0
      ? { serving: { bindAddress: cfg.cmBindAddress, port: cfg.cmSecurePort, auth: await delegatedAuthConfig(cfg.cm, base, (kubeconfig) => loadKubeconfig({ kubeconfig })) } }
      : {}),
    configz: () => effectiveConfiguration(cfg.cm, formatDuration),
    apiServerWaitMs: cfg.cm['apiserver-wait-timeout'],
    ...(sharedInformers ? { borrowInformers: { from: sharedInformers, resources: [GVR.pods, GVR.nodes] } } : {}),
    shutdownTimeoutMs: cfg.cm['shutdown-timeout'],
    logger: newLogger('controller-manager'),
    onProgress: (event) => send({ type: 'cm', event }),
  });

  const clients: KubeClient[] = [];
  if (nodesClient) clients.push(nodesClient);
  if (nodesEventClient) clients.push(nodesEventClient);
  const parts: Promise<unknown>[] = [];
  const stopAll = new AbortController();
  setMaxListeners(0, stopAll.signal);
  const onAbort = () => stopAll.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  // The controller manager's way to ready is the longest (the API server's health, its Lease, discovery, every
  // informer's list), so it starts first; the scheduler, the nodes and the provisioner are set up meanwhile.
  const cmRun = cm.run(stopAll.signal);

  try {
    if (cfg.scheduler) {
      const schedulerRest: RestConfig = { ...base, qps: cfg.schedulerQps, burst: cfg.schedulerBurst, userAgent: componentUserAgent('kube-scheduler') };
      const client = newKubeClient(schedulerRest, { logger: newLogger('scheduler') });
      // Events go through their own client (own rate limiter), as kube-scheduler's createClients does, so they never delay bindings.
      const eventClient = newKubeClient(schedulerRest, { logger: newLogger('scheduler') });
      clients.push(client, eventClient);
      const broadcaster = newEventBroadcaster({ client: eventClient, clock: realClock, logger: newLogger('scheduler') });
      const schedConfig = cfg.schedulerConfig ? parseSchedulerConfiguration(readFileSync(cfg.schedulerConfig, 'utf8'), { client, clock: realClock }) : undefined;
      for (const w of schedConfig?.warnings ?? []) log.warn({ config: cfg.schedulerConfig }, w);
      const scheduler = newScheduler({
        client,
        informers: sharedInformers ?? newSharedInformerFactory(client, { clock: realClock }),
        recorder: broadcaster.newRecorder({ component: 'default-scheduler' }),
        recorderFor: (schedulerName) => broadcaster.newRecorder({ component: schedulerName }),
        clock: realClock,
        logger: newLogger('scheduler'),
        ...(schedConfig ? { profiles: schedConfig.profiles, percentageOfNodesToScore: schedConfig.percentageOfNodesToScore } : {}),
      });
      send({ type: 'scheduler-started' });
      // With leader election (the default), the scheduler holds kube-system/kube-scheduler as kube-scheduler does.
      // The lease through a client of its own, as kube-scheduler's leaderElectionClient.
      const leClient = cfg.cm['leader-elect'] ? newKubeClient(leaderElectionRestConfig(schedulerRest, cfg.cm['leader-elect-renew-deadline']), { logger: newLogger('scheduler') }) : undefined;
      if (leClient) clients.push(leClient);
      const runScheduler = leClient
        ? newLeaderElector({
            client: leClient,
            clock: realClock,
            logger: newLogger('scheduler').child({}, 'leaderelection'),
            lock: { namespace: 'kube-system', name: 'kube-scheduler', identity: `${hostname()}_kcm-up` },
            leaseDurationMs: cfg.cm['leader-elect-lease-duration'],
            renewDeadlineMs: cfg.cm['leader-elect-renew-deadline'],
            retryPeriodMs: cfg.cm['leader-elect-retry-period'],
            name: 'kube-scheduler',
            callbacks: {
              onStartedLeading: (leading) => scheduler.run(leading),
              onStoppedLeading: () => {
                if (!stopAll.signal.aborted) {
                  // As kube-scheduler: losing the lease is fatal; kcm up restarts the controller side.
                  log.error('scheduler leaderelection lost');
                  stopAll.abort();
                }
              },
            },
          }).run(stopAll.signal)
        : scheduler.run(stopAll.signal);
      parts.push(
        runScheduler
          .catch((err: unknown) => log.error(err, 'scheduler stopped with an error'))
          .finally(() => broadcaster.shutdown()),
      );
    }
    if (nodesClient && sharedInformers) {
      const sim = newNodeSimulator({ client: nodesClient, ...(nodesEventClient ? { eventClient: nodesEventClient } : {}), informers: sharedInformers, count: cfg.nodes, clock: realClock, logger: newLogger('nodes'), taints: cloudTaints, gracefulShutdown: cfg.gracefulShutdown ?? true, ...(cfg.imagePullRule ? { imagePullRule: cfg.imagePullRule } : {}), kubeletServer: cfg.kubeletToken ? { token: cfg.kubeletToken } : {} });
      send({ type: 'nodes-started', names: [...sim.nodeNames] });
      parts.push(sim.run(stopAll.signal).catch((err: unknown) => log.error(err, 'simulated nodes stopped with an error')));
    }

    if (cfg.localPathProvisioner) {
      // Its own component, as a CSI driver's external-provisioner and external-resizer sidecars.
      const provisioner = runProvisionerComponent({ restConfig: { ...base, qps: 50, burst: 100 }, volumesDir: volumesDirOf(cfg.dataDir), logger: newLogger('local-path-provisioner') }, stopAll.signal);
      parts.push(provisioner.catch((err: unknown) => log.error(err, 'local-path provisioner stopped with an error')));
    }
  } catch (err) {
    // A part failed to start: the controller manager, started first, stops with it.
    stopAll.abort();
    await cmRun;
    throw err;
  }

  // The controller manager decides the exit code; when it ends on its own (lost lease, failed start), stop the rest too.
  const code = await cmRun;
  stopAll.abort();
  signal.removeEventListener('abort', onAbort);
  await Promise.race([Promise.all(parts), realClock.sleep(5000)]);
  await sharedInformers?.shutdown().catch((err: unknown) => log.error(err, 'stopping the shared informers'));
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  return code;
}
