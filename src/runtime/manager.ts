/**
 * The manager (controller-runtime's manager): one per process. It owns the
 * shared cache, the client, leader election, the event recorder, health
 * probes, metrics, and the controllers and runnables added to it.
 *
 *   const mgr = newManager({ name: 'widget-operator', restConfig: await getConfig() });
 *   controller(mgr).for(Widget).owns(kinds.Deployment).complete(reconcile);
 *   await mgr.start();            // until SIGTERM/SIGINT; rejects with LeaderElectionLostError when the lease is lost
 *
 * start():
 * 1. serves the health probes and metrics (when bind addresses are given);
 * 2. starts the cache: informers of every kind in use run whether or not
 *    this process leads, so a new leader starts warm;
 * 3. campaigns for the Lease (unless leader election is off) and, once
 *    leading, starts the controllers and leader-only runnables;
 * 4. on the signal (or SIGTERM/SIGINT without one): stops taking work, lets
 *    running reconciles finish (up to gracefulShutdownTimeoutMs), releases
 *    the Lease, stops the cache and flushes events. Losing the Lease stops
 *    the controllers the same way, then start() rejects with
 *    LeaderElectionLostError: exit and restart, as controller-runtime does.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import type { Client } from '../client/interfaces.js';
import { newKubeClient, type KubeClient } from '../client/client.js';
import { SERVICE_ACCOUNT_DIR } from '../client/in-cluster.js';
import { leaderElectionRestConfig, type RestConfig } from '../client/rest-config.js';
import type { RestMapper } from '../client/rest-mapper.js';
import { defaultIdentity, newLeaderElector, type LeaderElector } from '../tools/leaderelection/leader-elector.js';
import { newEventBroadcaster } from '../tools/record/event-broadcaster.js';
import type { EventBroadcaster, EventRecorder } from '../tools/record/interfaces.js';
import { realClock, type Clock } from '../util/clock/clock.js';
import type { HealthCheck } from '../util/healthz/healthz.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import { newRuntimeCache, type KindCacheOptions, type RuntimeCache } from './cache.js';
import { newRuntimeClient, type RuntimeClient } from './client.js';
import type { RuntimeController } from './controller.js';
import { LeaderElectionLostError } from './errors.js';
import type { ResourceKind, RuntimeObject } from './kinds.js';
import { startEndpointServer, type EndpointServer } from './serving.js';

export const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 30_000;

export interface LeaderElectionOptions {
  /** Default true. */
  enabled?: boolean;
  /** The Lease's name (default `<manager name>-leader`). */
  id?: string;
  /** The Lease's namespace (default: the pod's namespace in a cluster, else `default`). */
  namespace?: string;
  /** This candidate's identity (default `<hostname>_<uuid>`). */
  identity?: string;
  /** Defaults as controller-runtime: 15 s, 10 s, 2 s. */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Release the Lease on shutdown so a successor takes over at once (default true). */
  releaseOnCancel?: boolean;
}

export interface ManagerCacheOptions {
  /** Namespaces to cache namespaced kinds in (default all). */
  namespaces?: string[];
  /** Per-kind label/field selectors and namespaces. */
  byKind?: KindCacheOptions[];
  /** Kinds to cache even when no controller watches them (readable through the client). */
  kinds?: ResourceKind[];
  /** Resync period of every informer (default 10 h, jittered). */
  syncPeriodMs?: number;
}

export interface ManagerOptions {
  /** Names the manager: default field manager, Lease name, event source. */
  name: string;
  /**
   * CustomResourceDefinitions to install (server-side apply, as the manager's
   * field manager) before anything else starts; start() waits until each is
   * Established. Pass resource definitions or CRD objects.
   */
  installCRDs?: Array<CustomResourceDefinition | { crd(): CustomResourceDefinition }>;
  /** How long to wait for installed CRDs to be Established (default 60 s). */
  crdEstablishTimeoutMs?: number;
  /** Where the API server is (see getConfig()). Either this or `client`. */
  restConfig?: RestConfig;
  /** A client you built (tests: a fake client). */
  client?: Client;
  /** Resolves custom kinds the client has not been given (default: the KubeClient's, when built from restConfig). */
  restMapper?: RestMapper;
  cache?: ManagerCacheOptions;
  /** Leader election over a Lease: on by default; `false` turns it off. */
  leaderElection?: LeaderElectionOptions | false;
  /** `/healthz` and `/readyz` (e.g. `:8081`); default off. */
  healthProbeBindAddress?: string;
  /** `/metrics` (e.g. `:8080`); default off. May equal healthProbeBindAddress. */
  metricsBindAddress?: string;
  /** How long running reconciles may finish after stop (default 30 s). */
  gracefulShutdownTimeoutMs?: number;
  clock?: Clock;
  logger?: Logger;
  /** Default: a new Registry with the process metrics. */
  registry?: Registry;
}

/** Something the manager runs: leader-only (default) or on every replica. */
export interface Runnable {
  start(signal: AbortSignal): Promise<void>;
  /** Default true: started only while this process leads. */
  needLeaderElection?: boolean;
}

export interface Manager {
  readonly name: string;
  readonly client: RuntimeClient;
  readonly cache: RuntimeCache;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly gracefulShutdownTimeoutMs: number;
  /** Indexes `kind` by `field` for `client.list(kind, { matchingFields })`. */
  indexField<T extends RuntimeObject>(kind: ResourceKind<T>, field: string, extract: (obj: T) => string[]): void;
  /** An event recorder reporting as `component` (Kubernetes' correlation and spam filtering apply). */
  getEventRecorder(component: string): EventRecorder;
  /** Called by the builder; controller names must be unique. */
  addController(c: RuntimeController): void;
  add(runnable: Runnable): void;
  addHealthzCheck(name: string, check: () => Error | undefined): void;
  addReadyzCheck(name: string, check: () => Error | undefined): void;
  /** Runs until `signal` aborts (default: SIGTERM/SIGINT). See the module comment. */
  start(signal?: AbortSignal): Promise<void>;
  /** Resolves once this process leads (at once without leader election). */
  elected(): Promise<void>;
  isLeader(): boolean;
  /** `http://host:port` of the probe and metrics servers once started. */
  healthProbeUrl(): string | undefined;
  metricsUrl(): string | undefined;
}

/**
 * An AbortSignal aborted by the first SIGTERM or SIGINT; a second one exits
 * the process with code 1 (controller-runtime's SetupSignalHandler).
 */
export function setupSignalHandler(): AbortSignal {
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) process.exit(1);
    ac.abort(new Error(`received ${sig}`));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return ac.signal;
}

function podNamespace(): string {
  const f = join(SERVICE_ACCOUNT_DIR, 'namespace');
  try {
    if (existsSync(f)) return readFileSync(f, 'utf8').trim() || 'default';
  } catch {
    // not in a pod
  }
  return 'default';
}

class ManagerImpl implements Manager {
  readonly name: string;
  readonly client: RuntimeClient;
  readonly cache: RuntimeCache;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly gracefulShutdownTimeoutMs: number;
  private readonly lowClient: Client;
  private readonly ownClient: KubeClient | undefined;
  private readonly controllers: RuntimeController[] = [];
  private readonly runnables: Runnable[] = [];
  private readonly healthz: HealthCheck[] = [{ name: 'ping', check: () => undefined }];
  private readonly readyz: HealthCheck[] = [{ name: 'ping', check: () => undefined }];
  private readonly broadcaster: EventBroadcaster;
  private readonly recorders = new Map<string, EventRecorder>();
  private elector: LeaderElector | undefined;
  private leading = false;
  private electedResolve!: () => void;
  private readonly electedPromise: Promise<void>;
  private started = false;
  private probeServer: EndpointServer | undefined;
  private metricsServer: EndpointServer | undefined;

  constructor(private readonly opts: ManagerOptions) {
    if (!opts.name) throw new TypeError('newManager: a name is required');
    if (!opts.client && !opts.restConfig) throw new TypeError('newManager: pass restConfig (see getConfig()) or client');
    this.name = opts.name;
    this.clock = opts.clock ?? realClock;
    this.logger = opts.logger ?? newLogger(opts.name);
    this.gracefulShutdownTimeoutMs = opts.gracefulShutdownTimeoutMs ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS;
    this.registry = opts.registry ?? new Registry();
    if (opts.client) this.lowClient = opts.client;
    else {
      this.ownClient = newKubeClient(opts.restConfig!, { clock: this.clock, metricsRegistry: this.registry, logger: this.logger.child({}, 'client') });
      this.lowClient = this.ownClient;
    }
    this.cache = newRuntimeCache({
      client: this.lowClient,
      clock: this.clock,
      logger: this.logger.child({}, 'cache'),
      namespaces: opts.cache?.namespaces,
      byKind: opts.cache?.byKind,
      syncPeriodMs: opts.cache?.syncPeriodMs,
    });
    for (const k of opts.cache?.kinds ?? []) this.cache.watch(k);
    this.client = newRuntimeClient({
      client: this.lowClient,
      cache: this.cache,
      fieldManager: opts.name,
      restMapper: opts.restMapper ?? this.ownClient?.restMapper,
      kinds: () => this.cache.kinds(),
    });
    this.broadcaster = newEventBroadcaster({ client: this.lowClient, clock: this.clock, logger: this.logger.child({}, 'events') });
    this.electedPromise = new Promise<void>((resolve) => (this.electedResolve = resolve));
    this.readyz.push({ name: 'informers', check: () => this.cache.readyCheck() });
  }

  indexField<T extends RuntimeObject>(kind: ResourceKind<T>, field: string, extract: (obj: T) => string[]): void {
    this.cache.indexField(kind, field, extract);
  }

  getEventRecorder(component: string): EventRecorder {
    let r = this.recorders.get(component);
    if (!r) {
      r = this.broadcaster.newRecorder({ component });
      this.recorders.set(component, r);
    }
    return r;
  }

  addController(c: RuntimeController): void {
    if (this.controllers.some((x) => x.name === c.name)) {
      throw new Error(`controller with name ${c.name} already exists: controller names must be unique (use .named())`);
    }
    this.controllers.push(c);
    if (this.started) this.logger.warn({ controller: c.name }, 'controller added after start: it starts with the next leadership term');
  }

  add(runnable: Runnable): void {
    this.runnables.push(runnable);
  }

  addHealthzCheck(name: string, check: () => Error | undefined): void {
    this.healthz.push({ name, check });
  }

  addReadyzCheck(name: string, check: () => Error | undefined): void {
    this.readyz.push({ name, check });
  }

  elected(): Promise<void> {
    return this.electedPromise;
  }

  isLeader(): boolean {
    return this.leading;
  }

  healthProbeUrl(): string | undefined {
    return this.probeServer?.url;
  }

  metricsUrl(): string | undefined {
    return this.metricsServer?.url;
  }

  async start(signal?: AbortSignal): Promise<void> {
    if (this.started) throw new Error('manager already started');
    this.started = true;
    const stop = new AbortController();
    const outer = signal ?? setupSignalHandler();
    const onOuter = () => stop.abort(outer.reason);
    if (outer.aborted) onOuter();
    else outer.addEventListener('abort', onOuter, { once: true });
    let failure: unknown;
    const fail = (err: unknown) => {
      failure ??= err;
      stop.abort(err);
    };
    let leClient: KubeClient | undefined;
    try {
      await this.startServers();
      if (this.opts.installCRDs?.length) await this.installCRDs(this.opts.installCRDs, stop.signal);
      this.cache.start(stop.signal);
      const everywhere = this.runnables.filter((r) => r.needLeaderElection === false).map((r) => r.start(stop.signal).catch(fail));
      const le = this.opts.leaderElection === false || this.opts.leaderElection?.enabled === false ? undefined : (this.opts.leaderElection ?? {});
      let lostLease: string | undefined;
      if (!le) {
        this.leading = true;
        this.electedResolve();
        await this.runLeaderWork(stop.signal, fail);
      } else {
        const lease = { namespace: le.namespace ?? podNamespace(), name: le.id ?? `${this.name}-leader`, identity: le.identity ?? defaultIdentity() };
        // As controller-runtime's manager: the lease goes through a client of its own (user agent .../leader-election), so
        // renewals never wait behind the reconcilers' writes in the main client's rate limiter and connections.
        leClient = this.opts.restConfig && !this.opts.client
          ? newKubeClient(leaderElectionRestConfig(this.opts.restConfig, le.renewDeadlineMs ?? 10_000), { clock: this.clock, metricsRegistry: this.registry, logger: this.logger.child({}, 'client') })
          : undefined;
        this.elector = newLeaderElector({
          client: leClient ?? this.lowClient,
          lock: lease,
          leaseDurationMs: le.leaseDurationMs,
          renewDeadlineMs: le.renewDeadlineMs,
          retryPeriodMs: le.retryPeriodMs,
          releaseOnCancel: le.releaseOnCancel ?? true,
          clock: this.clock,
          logger: this.logger.child({}, 'leaderelection'),
          registry: this.registry,
          callbacks: {
            onStartedLeading: async (leadSignal) => {
              this.leading = true;
              this.electedResolve();
              await this.runLeaderWork(leadSignal, fail);
              this.leading = false;
              if (!stop.signal.aborted) lostLease = `${lease.namespace}/${lease.name}`;
            },
            onStoppedLeading: () => {
              this.leading = false;
            },
            onNewLeader: (id) => {
              if (id && id !== lease.identity) this.logger.info({ leader: id }, 'new leader elected');
            },
          },
        });
        const elector = this.elector;
        this.healthz.push({ name: 'leaderElection', check: () => elector.check(20_000) });
        await elector.run(stop.signal);
        if (lostLease) {
          this.logger.error(new LeaderElectionLostError(lostLease), 'leader election lost');
          fail(new LeaderElectionLostError(lostLease));
        }
      }
      stop.abort();
      await Promise.all(everywhere);
    } catch (err) {
      fail(err);
    } finally {
      stop.abort();
      outer.removeEventListener('abort', onOuter);
      await this.cache.stop();
      await this.broadcaster.shutdown();
      await this.probeServer?.close();
      await this.metricsServer?.close();
      await leClient?.close();
      await this.ownClient?.close();
    }
    if (failure !== undefined) throw failure;
  }

  /** Applies the CRDs and waits (watching, bounded) until each is Established. */
  private async installCRDs(items: NonNullable<ManagerOptions['installCRDs']>, signal: AbortSignal): Promise<void> {
    const crds = items.map((c) => ('crd' in c && typeof c.crd === 'function' ? c.crd() : (c as CustomResourceDefinition)));
    const ri = this.lowClient.resource<CustomResourceDefinition & KubeObject>(GVR.customResourceDefinitions);
    for (const crd of crds) {
      const name = crd.metadata?.name;
      if (!name) throw new TypeError('installCRDs: a CustomResourceDefinition without metadata.name');
      await ri.patch(name, 'apply', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', ...crd }, { fieldManager: this.name, force: true });
      this.logger.info({ crd: name }, 'applied CustomResourceDefinition');
    }
    const timeoutMs = this.opts.crdEstablishTimeoutMs ?? 60_000;
    const timeout = new AbortController();
    const timer = this.clock.setTimer(() => timeout.abort(), timeoutMs);
    const both = AbortSignal.any([signal, timeout.signal]);
    const established = (c: CustomResourceDefinition) => !!c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
    try {
      for (const crd of crds) {
        const name = crd.metadata!.name!;
        // Read, then watch from there until Established; a watch the server ends is reopened.
        for (;;) {
          const current = await ri.get(name);
          if (established(current)) break;
          if (both.aborted) {
            if (signal.aborted) return;
            throw new Error(`CustomResourceDefinition ${name} was not Established within ${timeoutMs} ms`);
          }
          const w = await ri.watch({ fieldSelector: `metadata.name=${name}`, resourceVersion: current.metadata?.resourceVersion }, both);
          try {
            for await (const ev of w) {
              if ((ev.type === 'ADDED' || ev.type === 'MODIFIED') && established(ev.object)) break;
            }
          } catch (err) {
            if (!both.aborted) throw err;
          } finally {
            w.stop();
          }
        }
      }
    } finally {
      timer.stop();
    }
  }

  /** Controllers and leader-only runnables, until `signal` aborts (a failing one aborts it through `fail`). */
  private async runLeaderWork(signal: AbortSignal, fail: (err: unknown) => void): Promise<void> {
    const work = [...this.controllers.map((c) => c.start(signal)), ...this.runnables.filter((r) => r.needLeaderElection !== false).map((r) => r.start(signal))];
    const aborted = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await Promise.all([...work.map((p) => p.catch(fail)), aborted]);
  }

  private async startServers(): Promise<void> {
    const probe = this.opts.healthProbeBindAddress;
    const metrics = this.opts.metricsBindAddress;
    const log = this.logger.child({}, 'http');
    if (metrics && metrics !== '0' && !this.opts.registry) collectDefaultMetrics({ register: this.registry });
    if (probe && probe === metrics) {
      this.probeServer = await startEndpointServer({ address: probe, healthz: () => this.healthz, readyz: () => this.readyz, registry: this.registry, logger: log });
      this.metricsServer = this.probeServer;
      return;
    }
    this.probeServer = await startEndpointServer({ address: probe ?? '0', healthz: () => this.healthz, readyz: () => this.readyz, logger: log });
    this.metricsServer = await startEndpointServer({ address: metrics ?? '0', registry: this.registry, logger: log });
  }
}

export function newManager(opts: ManagerOptions): Manager {
  return new ManagerImpl(opts);
}
