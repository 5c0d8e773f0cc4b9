/**
 * The controller manager's life, as kube-controller-manager's Run:
 *
 *   wait (bounded) for the API server's /healthz -> set up delegated
 *   authentication and authorization (a failed lookup ends start-up) ->
 *   serve /healthz, /metrics, /configz, /debug/controllers -> leader election (optional) ->
 *   when leading: discovery, build every enabled controller whose
 *   resources are served, start the shared informers once, wait for their
 *   caches, run each controller.
 *
 * `run(signal)` resolves with the process exit code: 0 after `signal` aborted
 * (controllers stopped, in-flight syncs given `shutdownTimeoutMs`, lease
 * released), 1 when leadership was lost ("leaderelection lost", as upstream)
 * or start-up failed.
 */
import { setMaxListeners } from 'node:events';
import type { Registry } from 'prom-client';
import type { ControllerState, DebugControllers } from '../util/workqueue/debug-types.js';
import { register as defaultRegistry } from 'prom-client';
import { newKubeClient, type KubeClient } from '../client/client.js';
import { leaderElectionRestConfig, type RestConfig } from '../client/rest-config.js';
import { discoverServed, servedKey, withVersionFallbacks, type ServedResources } from '../client/version-fallback.js';
import type { CloudProvider } from '../cloudprovider/cloud.js';
import { controllerEntry, loadController } from '../controllers/registry.js';
import type { ControllerContext, ControllerDescriptor, ControllerOptions } from '../controllers/types.js';
import type { Controller } from '../controller/types.js';
import { newSharedInformerFactory, type SharedInformerFactory, type SharedInformerFactoryOptions } from '../tools/cache/factory.js';
import { defaultIdentity, newLeaderElector, type LeaderElector } from '../tools/leaderelection/index.js';
import { newEventBroadcaster, type EventBroadcaster } from '../tools/record/index.js';
import { realClock, type Clock } from '../util/clock/clock.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import { claimDebugQueues, debugQueueMark, debugQueueStates, debugRecentSyncs } from '../util/workqueue/debug.js';
import { getDefaultWorkqueueMetricsProvider, newPrometheusWorkqueueMetrics, noopWorkqueueMetricsProvider, setDefaultWorkqueueMetricsProvider } from '../util/workqueue/metrics.js';
import { DelegatedAuthError, setUpDelegatedAuth, type DelegatedAuth, type DelegatedAuthConfig } from './delegated-auth.js';
import { newHealthChecks, startServing, type ComponentServer, type HealthChecks } from './serving.js';

const GARBAGE_COLLECTOR = 'garbage-collector-controller';
const RESOURCE_QUOTA = 'resourcequota-controller';

export interface LeaderElectionConfig {
  enabled: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  namespace: string;
  name: string;
  /** Default `<hostname>_<uuid>`. */
  identity?: string;
}

export interface ControllerManagerConfig {
  restConfig: RestConfig;
  /** Canonical names of the enabled controllers (resolveEnabledControllers). */
  controllers: readonly string[];
  options: ControllerOptions;
  leaderElection: LeaderElectionConfig;
  /** undefined: do not serve (`--secure-port 0`). `auth`: who may call the endpoints (delegated to the API server). */
  serving?: { bindAddress: string; port: number; certFile?: string; keyFile?: string; auth: DelegatedAuthConfig };
  /** The effective configuration for /configz. */
  configz?: () => unknown;
  /** How long to wait for the API server's /healthz (default 10 s). */
  apiServerWaitMs?: number;
  /** Informers to take from another factory of the process rather than watch again (SharedInformerFactoryOptions.borrow). */
  borrowInformers?: SharedInformerFactoryOptions['borrow'];
  /** Bound on waiting for controllers to stop after the signal (default 10 s). */
  shutdownTimeoutMs?: number;
  /** Pause between starting two controllers (`--controller-start-interval`). */
  controllerStartIntervalMs?: number;
  clock?: Clock;
  logger?: Logger;
  /** Default: prom-client's global registry (what /metrics shows). */
  registry?: Registry;
  /** Progress reports (for `kcm up`'s live status). */
  onProgress?(event: ProgressEvent): void;
  /** The cloud provider (`--cloud-provider`); without one the cloud controllers are skipped. */
  cloud?: CloudProvider;
  /** `--cloud-provider` as given, for the skip log line (`external`: another cloud controller manager runs them). */
  cloudProviderName?: string;
}

export type ProgressEvent =
  | { type: 'apiserver-healthy' }
  | { type: 'serving'; url: string }
  | { type: 'leading'; identity: string }
  | { type: 'controllers-started'; started: string[]; skipped: string[] }
  | { type: 'caches-synced'; ms: number };

export interface ControllerManager {
  /** Runs until `signal` aborts or leadership is lost; resolves with the exit code. */
  run(signal: AbortSignal): Promise<number>;
  /** The serving URL once serving (undefined when disabled or not yet). */
  servingUrl(): string | undefined;
  /** True while this instance leads (always true without leader election once running). */
  isLeader(): boolean;
  /** What /debug/controllers serves: the built controllers, every live named work queue, the election. */
  debugControllers(since?: number): DebugControllers;
}

class StartupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StartupError';
  }
}

const notImplementedLogged = new Set<string>();

/** Waits until GET /healthz answers "ok" or `timeoutMs` passes (kube-controller-manager's WaitForAPIServer). */
export async function waitForApiServer(client: KubeClient, clock: Clock, timeoutMs: number, signal: AbortSignal, log: Logger): Promise<void> {
  const start = clock.now();
  let last: unknown;
  for (;;) {
    try {
      const body = await client.request<string>('GET', '/healthz', { responseType: 'text', accept: 'text/plain', timeoutMs: 2000, signal });
      if (body.trim() === 'ok') return;
      last = new Error(`/healthz said ${JSON.stringify(body).slice(0, 200)}`);
    } catch (err) {
      last = err;
    }
    if (signal.aborted) throw new StartupError('aborted while waiting for the API server');
    if (clock.since(start) >= timeoutMs) {
      throw new StartupError(`failed to wait for apiserver being healthy: timed out after ${timeoutMs} ms`, { cause: last });
    }
    log.v(2).info({ error: last instanceof Error ? last.message : String(last) }, 'waiting for the API server to be healthy');
    await clock.sleep(100, signal).catch(() => undefined);
  }
}

/**
 * Builds a controller with `create` and attributes to it the named work
 * queues registered meanwhile (QueueState.controller). Controllers are built
 * one at a time, so the queues made during one build are that controller's.
 */
export async function createClaimingQueues<T>(name: string, create: () => T | Promise<T>): Promise<{ controller: T; queues: string[] }> {
  const mark = debugQueueMark();
  const controller = await create();
  return { controller, queues: claimDebugQueues(mark, name) };
}

/** The /debug/controllers document for `controllers` (as built, by name) at `time`. */
export function renderDebugControllers(
  time: number,
  controllers: readonly { name: string; controller: Pick<Controller, 'healthy'> }[],
  leaderElection?: DebugControllers['leaderElection'],
  since?: number,
): DebugControllers {
  const queues = debugQueueStates();
  const states: ControllerState[] = controllers.map(({ name, controller }) => ({
    name,
    healthy: controller.healthy(),
    queues: queues.filter((q) => q.controller === name).map((q) => q.name),
  }));
  return { time, controllers: states, queues, ...(leaderElection ? { leaderElection } : {}), recent: debugRecentSyncs(since) };
}


class Manager implements ControllerManager {
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly registry: Registry;
  private readonly checks: HealthChecks = newHealthChecks();
  private server: ComponentServer | undefined;
  private auth: DelegatedAuth | undefined;
  private elector: LeaderElector | undefined;
  private leading = false;
  /** This instance's name in the Lease. */
  private readonly identity: string;
  /** The controllers built while leading (for /debug/controllers). */
  private built: { name: string; controller: Controller }[] = [];

  constructor(private readonly cfg: ControllerManagerConfig) {
    this.clock = cfg.clock ?? realClock;
    this.log = cfg.logger ?? newLogger('controller-manager');
    this.registry = cfg.registry ?? defaultRegistry;
    this.identity = cfg.leaderElection.identity ?? defaultIdentity();
  }

  debugControllers(since?: number): DebugControllers {
    const le = this.cfg.leaderElection;
    const election = le.enabled ? { lease: `${le.namespace}/${le.name}`, identity: this.identity, leading: this.leading } : undefined;
    return renderDebugControllers(this.clock.now(), this.built, election, since);
  }

  servingUrl(): string | undefined {
    return this.server?.url;
  }

  isLeader(): boolean {
    return this.leading;
  }

  async run(signal: AbortSignal): Promise<number> {
    // Every queue a controller creates reports workqueue_* metrics.
    if (getDefaultWorkqueueMetricsProvider() === noopWorkqueueMetricsProvider) setDefaultWorkqueueMetricsProvider(newPrometheusWorkqueueMetrics(this.registry));
    const client = newKubeClient(this.cfg.restConfig, { clock: this.clock, metricsRegistry: this.registry, logger: this.log.child({}, 'client') });
    // Load the enabled controllers' code while waiting for the API server and the Lease, rather than after: nothing runs
    // before leading, but reading and compiling their modules took a quarter of a second of kcm up's start. A failure
    // is reported where the controller is built (loadController keeps the promise).
    for (const name of this.cfg.controllers) loadController(name).catch(() => undefined);
    try {
      await waitForApiServer(client, this.clock, this.cfg.apiServerWaitMs ?? 10_000, signal, this.log);
      if (signal.aborted) return 0;
      this.cfg.onProgress?.({ type: 'apiserver-healthy' });
      if (this.cfg.serving) {
        const { auth: authConfig, ...serving } = this.cfg.serving;
        try {
          this.auth = await setUpDelegatedAuth(authConfig, { clock: this.clock, logger: this.log });
        } catch (err) {
          if (err instanceof DelegatedAuthError) throw new StartupError(err.message, { cause: err });
          throw err;
        }
        this.server = await startServing({
          ...serving,
          auth: this.auth,
          component: 'kube-controller-manager',
          checks: this.checks,
          registry: this.registry,
          configz: this.cfg.configz ?? (() => ({})),
          debugControllers: (since) => this.debugControllers(since),
          logger: this.log,
        });
        this.cfg.onProgress?.({ type: 'serving', url: this.server.url });
      }
      if (!this.cfg.leaderElection.enabled) {
        this.leading = true;
        await this.runControllers(client, signal);
        return 0;
      }
      return await this.runWithLeaderElection(client, signal);
    } catch (err) {
      if (err instanceof StartupError && signal.aborted) return 0;
      this.log.error(err, 'controller manager failed');
      return 1;
    } finally {
      this.leading = false;
      await this.server?.close().catch((err: unknown) => this.log.error(err, 'closing the server'));
      await this.auth?.close().catch((err: unknown) => this.log.error(err, 'closing delegated authentication'));
      await client.close().catch((err: unknown) => this.log.error(err, 'closing the client'));
    }
  }

  private async runWithLeaderElection(client: KubeClient, signal: AbortSignal): Promise<number> {
    const le = this.cfg.leaderElection;
    const identity = this.identity;
    let lost = false;
    let failure: unknown;
    const leClient = newKubeClient(leaderElectionRestConfig(this.cfg.restConfig, le.renewDeadlineMs), { clock: this.clock, metricsRegistry: this.registry, logger: this.log.child({}, 'client') });
    this.elector = newLeaderElector({
      client: leClient,
      lock: { namespace: le.namespace, name: le.name, identity },
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      clock: this.clock,
      name: le.name,
      registry: this.registry,
      logger: this.log.child({}, 'leaderelection'),
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: async (leadSignal) => {
          this.leading = true;
          this.log.info({ identity, lease: `${le.namespace}/${le.name}` }, 'successfully acquired lease');
          this.cfg.onProgress?.({ type: 'leading', identity });
          try {
            await this.runControllers(client, leadSignal);
          } catch (err) {
            failure = err;
          } finally {
            this.leading = false;
          }
          if (!signal.aborted) lost = true;
        },
        onStoppedLeading: () => {
          this.leading = false;
        },
        onNewLeader: (id) => {
          if (id && id !== identity) this.log.info({ leader: id }, 'new leader elected');
        },
      },
    });
    const elector = this.elector;
    this.checks.add({ name: 'leaderElection', check: () => elector.check(20_000) });
    // A failed controller start-up ends leadership too.
    const runAbort = new AbortController();
    setMaxListeners(0, runAbort.signal);
    const onAbort = () => runAbort.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await elector.run(runAbort.signal);
    } finally {
      signal.removeEventListener('abort', onAbort);
      await leClient.close().catch((err: unknown) => this.log.error(err, 'closing the leader-election client'));
    }
    if (failure) throw failure;
    if (lost) {
      this.log.error('leaderelection lost');
      return 1;
    }
    return 0;
  }

  /** Builds and runs the enabled controllers until `signal` aborts; resolves once they stopped (bounded). */
  private async runControllers(client: KubeClient, signal: AbortSignal): Promise<void> {
    const opts = this.cfg.options;
    // Every informer and controller listens on this signal.
    setMaxListeners(0, signal);
    let discovered: ServedResources;
    try {
      discovered = await discoverServed(client);
    } catch (err) {
      throw new StartupError('failed to discover the served resources', { cause: err });
    }
    if (discovered.error) this.log.warn({ error: discovered.error.message }, 'some API groups could not be discovered');
    const { served, fallbacks } = discovered;
    for (const f of fallbacks) {
      this.log.info({ resource: f.current.resource, using: servedKey(f.older), notServed: servedKey(f.current) }, 'the server does not serve the current version, using the older one');
    }
    client = withVersionFallbacks(client, fallbacks);

    // Each controller gets its own client, so its own QPS/burst budget, as kube-controller-manager's
    // ClientBuilder.ClientOrDie(name) does (user agent "<agent>/<controller>"), and its own event broadcaster
    // writing through that client, as each upstream controller's record.NewBroadcaster with
    // StartRecordingToSink(kubeClient.CoreV1().Events("")): its events share its budget (a ReplicaSet controller
    // creating pods at QPS 20 writes their SuccessfulCreate events as tokens allow) and have its own spam filter.
    const controllerClients: KubeClient[] = [];
    const controllerClient = (name: string): KubeClient => {
      const c = newKubeClient(controllerRestConfig(this.cfg.restConfig, name), { clock: this.clock, metricsRegistry: this.registry, logger: this.log.child({}, 'client') });
      controllerClients.push(c);
      return withVersionFallbacks(c, fallbacks);
    };

    // The informers share a client of their own ("shared-informers", as upstream's informer factory): with the
    // manager's, whose budget the start-up discovery had just spent, their lists and watches waited for tokens,
    // and a watch opened a second or more late (a ResourceQuota created then was synced 0.7 s late, after the
    // pods it should have refused had been admitted).
    const resync = opts.minResyncPeriodMs * (1 + Math.random());
    const informers: SharedInformerFactory = newSharedInformerFactory(controllerClient('shared-informers'), {
      defaultResyncMs: resync,
      clock: this.clock,
      logger: this.log.child({}, 'informers'),
      ...(this.cfg.borrowInformers ? { borrow: this.cfg.borrowInformers } : {}),
    });
    const broadcasters: EventBroadcaster[] = [];
    // What every controller shares; controllerScope adds its own client and recorder.
    const ctx: SharedControllerContext = {
      discovery: client.discovery,
      informers,
      clock: this.clock,
      options: opts,
      logger: (name) => newLogger(name),
      ...(this.cfg.cloud ? { cloud: this.cfg.cloud } : {}),
    };

    const built: { descriptor: ControllerDescriptor; controller: Controller }[] = [];
    this.built = [];
    const skipped: string[] = [];
    // The resource quota controller and the garbage collector are built last: their monitors share the full
    // informers the other controllers asked for (sharedOrMetadataInformer).
    const last = (n: string) => (n === GARBAGE_COLLECTOR ? 2 : n === RESOURCE_QUOTA ? 1 : 0);
    const order = [...this.cfg.controllers].sort((a, b) => last(a) - last(b));
    for (const name of order) {
      if (signal.aborted) break;
      if (controllerEntry(name)?.cloudProvider && !this.cfg.cloud) {
        if (!notImplementedLogged.has(name)) {
          notImplementedLogged.add(name);
          if (this.cfg.cloudProviderName === 'external') this.log.info({ controller: name }, 'cloud provider is external: an external cloud controller manager runs this controller, skipping');
          else this.log.info({ controller: name }, 'no cloud provider (--cloud-provider), skipping');
        }
        skipped.push(name);
        continue;
      }
      const loaded = await loadController(name).catch((err: unknown) => {
        this.log.error(err, { controller: name }, 'cannot load controller, skipping');
        return undefined;
      });
      if (!loaded) {
        skipped.push(name);
        continue;
      }
      if (loaded.kind === 'not-implemented') {
        if (!notImplementedLogged.has(name)) {
          notImplementedLogged.add(name);
          this.log.info({ controller: name, reason: loaded.reason }, 'controller not implemented in kcm, skipping');
        }
        skipped.push(name);
        continue;
      }
      const d = loaded.descriptor;
      const missing = d.requiredResources.filter((r) => !served.has(servedKey(r)));
      if (missing.length > 0) {
        this.log.info({ controller: name, missing: missing.map(servedKey).join(',') }, 'skipping controller: the server does not serve its resources');
        skipped.push(name);
        continue;
      }
      try {
        const scoped = controllerScope(ctx, controllerClient(d.name), this.log.child({}, 'events'));
        broadcasters.push(scoped.broadcaster);
        const { controller } = await createClaimingQueues(d.name, () => d.create(scoped.ctx));
        built.push({ descriptor: d, controller });
        this.built.push({ name: d.name, controller });
        this.checks.add({ name: d.name, check: () => (controller.healthy() ? undefined : new Error(`${d.name} is not healthy`)) });
        this.log.v(1).info({ controller: name }, 'built controller');
      } catch (err) {
        this.log.error(err, { controller: name }, 'error starting controller, skipping');
        skipped.push(name);
      }
      if (this.cfg.controllerStartIntervalMs) await this.clock.sleep(this.cfg.controllerStartIntervalMs * (1 + Math.random()), signal).catch(() => undefined);
    }

    const started = this.clock.now();
    informers.start(signal);
    const runs: Promise<void>[] = [];
    if (!signal.aborted) {
      const synced = await informers.waitForCacheSync(signal);
      const unsynced = [...synced].filter(([, ok]) => !ok).map(([k]) => k);
      if (unsynced.length > 0 && !signal.aborted) this.log.warn({ informers: unsynced.join(',') }, 'some caches did not sync');
      if (!signal.aborted) {
        this.cfg.onProgress?.({ type: 'caches-synced', ms: this.clock.since(started) });
        for (const { descriptor, controller } of built) {
          const workers = opts.concurrency[descriptor.name] ?? descriptor.defaultWorkers;
          this.log.info({ controller: descriptor.name, workers }, 'Started controller');
          runs.push(
            controller.run(workers, signal).catch((err: unknown) => {
              this.log.error(err, { controller: descriptor.name }, 'controller stopped with an error');
            }),
          );
        }
        this.cfg.onProgress?.({ type: 'controllers-started', started: built.map((b) => b.descriptor.name), skipped });
      }
    }

    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    this.log.info('stopping controllers');
    const timeoutMs = this.cfg.shutdownTimeoutMs ?? 10_000;
    let timer: { stop(): boolean } | undefined;
    const timedOut = await Promise.race([
      Promise.all(runs).then(() => false),
      new Promise<boolean>((resolve) => (timer = this.clock.setTimer(() => resolve(true), timeoutMs))),
    ]);
    timer?.stop();
    if (timedOut) this.log.warn({ timeoutMs }, 'controllers did not stop in time; continuing shutdown');
    await Promise.race([Promise.all([informers.shutdown(), ...broadcasters.map((b) => b.shutdown())]), this.clock.sleep(Math.min(timeoutMs, 2000))]).catch((err: unknown) =>
      this.log.error(err, 'stopping informers and the event broadcasters'),
    );
    await Promise.all(controllerClients.map((c) => c.close().catch((err: unknown) => this.log.error(err, 'closing a controller client'))));
  }
}

/** A ControllerContext without what is each controller's own (controllerScope). */
export type SharedControllerContext = Omit<ControllerContext, 'client' | 'recorder'>;

/**
 * The context one controller is built with: its own client, and its own
 * event broadcaster writing through that client (so its events share its
 * QPS budget and have their own spam filter, as each upstream controller's).
 * The caller shuts the broadcaster down.
 */
export function controllerScope(ctx: SharedControllerContext, client: ControllerContext['client'], logger: Logger): { ctx: ControllerContext; broadcaster: EventBroadcaster } {
  const broadcaster = newEventBroadcaster({ client, clock: ctx.clock, logger });
  return { ctx: { ...ctx, client, recorder: (component) => broadcaster.newRecorder({ component }) }, broadcaster };
}

/** The client configuration of one controller: the manager's, with `/<controller>` appended to the user agent (client-go's AddUserAgent). */
export function controllerRestConfig(base: RestConfig, controller: string): RestConfig {
  return { ...base, userAgent: `${base.userAgent}/${controller}` };
}

export function newControllerManager(cfg: ControllerManagerConfig): ControllerManager {
  return new Manager(cfg);
}
