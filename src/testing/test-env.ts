/**
 * An API server for tests, in the test's own process: kcm's embedded
 * Kubernetes API server on loopback with memory storage, no binaries, no
 * etcd (envtest's job, without downloads). Optionally kcm's own
 * controllers beside it (garbage collector, namespace, ... : so cascading
 * deletion of an operator's children really happens), a scheduler and
 * simulated nodes (so Deployments become available), fault injection, and
 * a fake clock that drives the managers made with `env.newManager`.
 *
 *   const env = await startTestEnv({ crds: [StaticSite], controllers: ['garbagecollector', 'namespace'] });
 *   const mgr = env.newManager({ name: 'sites' });
 *   ...
 *   await env.stop();
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setMaxListeners } from 'node:events';
import { Registry } from 'prom-client';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { createApiHandler } from '../apiserver/handler.js';
import { newMemoryStorage } from '../apiserver/storage/memory.js';
import type { UserInfo } from '../apiserver/request-info.js';
import { newKubeClient, type KubeClient } from '../client/client.js';
import { isAlreadyExists } from '../client/errors.js';
import { newRestConfig, type RestConfig } from '../client/rest-config.js';
import { newControllerManager } from '../controllermanager/manager.js';
import { buildControllerOptions, controllerManagerFlags } from '../controllermanager/options.js';
import { canonicalControllerName, controllerEntry, isImplemented } from '../controllers/registry.js';
import { parseFlags } from '../cmd/flags.js';
import { newNodeSimulator } from '../nodes/node-simulator.js';
import { newScheduler } from '../scheduler/scheduler.js';
import { newSharedInformerFactory } from '../tools/cache/factory.js';
import { newEventBroadcaster } from '../tools/record/event-broadcaster.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { FakeClock, flushMicrotasks, realClock, type Clock } from '../util/clock/clock.js';
import { newLogger } from '../util/log/logger.js';
import { newManager, type Manager, type ManagerOptions } from '../runtime/manager.js';
import { newFaultInjector, type Faults } from './faults.js';
import { startTestWebhooks, type StartedTestWebhooks, type TestWebhookOptions, type TestWebhooks } from './webhooks.js';

export interface TestEnvOptions {
  /** CRDs (or resource definitions) to install; startTestEnv returns once each is Established. */
  crds?: Array<CustomResourceDefinition | { crd(): CustomResourceDefinition }>;
  /**
   * kcm's own controllers to run beside the API server, by kube-controller-manager's
   * names (`garbagecollector`, `namespace`, `serviceaccount`, `deployment`,
   * `replicaset`, ...). Default none. Controllers that make pods bring the
   * serviceaccount controller along (pods need their namespace's default
   * ServiceAccount).
   */
  controllers?: string[];
  /**
   * Simulated nodes, with kcm's scheduler, node lifecycle controller and root CA publisher (the
   * service-account volume's ca.crt), so pods get scheduled and run (default 0: none).
   */
  nodes?: number;
  /**
   * Drive time by hand: `env.clock` is a FakeClock, and managers made with
   * env.newManager use it, so requeueAfter, backoff and resync happen when
   * the test calls `env.advance(ms)`. The API server and kcm's own
   * controllers keep real time.
   */
  fakeClock?: boolean;
  /** How long to wait for CRDs (default 10 s). */
  crdTimeoutMs?: number;
  /**
   * Webhooks served by the test's own process (a kcm/runtime webhook server
   * on 127.0.0.1 with a generated certificate) and installed in the env's
   * API server: admission handlers with their specs, conversion handlers
   * for the env's CRDs, or configurations from manifests pointed at it.
   */
  webhooks?: TestWebhookOptions;
}

export interface TestEnv {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Admin access (system:masters) to the test server. */
  readonly restConfig: RestConfig;
  /** A kubeconfig (YAML) for the test server, for kubectl or other tools. */
  readonly kubeconfig: string;
  /** An admin client; closed by stop(). */
  readonly client: KubeClient;
  /** The fake clock (fakeClock: true) or the real one. */
  readonly clock: Clock;
  /** Failures to inject into the next requests. */
  readonly faults: Faults;
  /** The webhook server, when started with `webhooks`. */
  readonly webhooks: TestWebhooks | undefined;
  /** Installs CRDs and waits until they are Established. */
  installCRDs(crds: NonNullable<TestEnvOptions['crds']>): Promise<void>;
  /**
   * A kcm/runtime manager on this server (leader election off unless asked,
   * the env's clock); it is stopped by env.stop() if still running.
   */
  newManager(opts: Omit<ManagerOptions, 'restConfig' | 'client'> & Partial<Pick<ManagerOptions, 'name'>>): Manager;
  /** Starts a manager made by newManager and waits until it leads and its controllers' caches synced. */
  startManager(mgr: Manager): Promise<void>;
  /** Fake clock only: moves it `ms` ahead, then waits until the server has no request in flight. */
  advance(ms: number): Promise<void>;
  /** Waits (real time, bounded) until the server has had no request in flight for a moment. */
  waitIdle(timeoutMs?: number): Promise<void>;
  /** Stops managers, controllers and nodes, ends every watch, closes the server and drops all state. */
  stop(): Promise<void>;
}

const admin: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

function kubeconfigYaml(url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: kcm-test',
    '  cluster:',
    `    server: ${url}`,
    'users:',
    '- name: admin',
    '  user: {}',
    'contexts:',
    '- name: kcm-test',
    '  context:',
    '    cluster: kcm-test',
    '    user: admin',
    'current-context: kcm-test',
    '',
  ].join('\n');
}

async function waitEstablished(client: KubeClient, names: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const crds = client.resource<CustomResourceDefinition & KubeObject>(GVR.customResourceDefinitions);
  for (const name of names) {
    for (;;) {
      const crd = await crds.get(name);
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CustomResourceDefinition ${name} not Established within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

/** Controllers whose pods need the namespace's default ServiceAccount (ServiceAccount admission). */
const POD_MAKERS = new Set(['replicaset', 'deployment', 'statefulset', 'daemonset', 'job', 'cronjob', 'replicationcontroller'].map((n) => canonicalControllerName(n)));

function resolveControllers(names: string[], nodes: number): string[] {
  const out = names.map((n) => {
    const name = canonicalControllerName(n);
    const entry = name ? controllerEntry(name) : undefined;
    if (!name || !entry) throw new TypeError(`startTestEnv: unknown controller ${JSON.stringify(n)}`);
    if (!isImplemented(entry)) throw new TypeError(`startTestEnv: controller ${name} is not implemented in kcm`);
    return name;
  });
  const serviceAccounts = canonicalControllerName('serviceaccount')!;
  if (out.some((n) => POD_MAKERS.has(n)) && !out.includes(serviceAccounts)) out.push(serviceAccounts);
  // Nodes register tainted not-ready; the node lifecycle controller lifts the taint once they report Ready.
  const nodeLifecycle = canonicalControllerName('nodelifecycle')!;
  if (nodes > 0 && !out.includes(nodeLifecycle)) out.push(nodeLifecycle);
  // A simulated kubelet mounts the service-account volume, whose ca.crt is the kube-root-ca.crt ConfigMap this controller publishes.
  const rootCA = canonicalControllerName('root-ca-cert-publisher')!;
  if (nodes > 0 && !out.includes(rootCA)) out.push(rootCA);
  return out;
}

export async function startTestEnv(opts: TestEnvOptions = {}): Promise<TestEnv> {
  const controllers = resolveControllers(opts.controllers ?? [], opts.nodes ?? 0);
  const storage = newMemoryStorage();
  const handler = await createApiHandler({ storage, logger: newLogger('test-apiserver') });
  const faults = newFaultInjector();
  let inFlight = 0;
  let lastActivity = Date.now();
  const server = http.createServer((req, res) => {
    const watch = /[?&]watch=(1|true)\b/.test(req.url ?? '');
    if (!watch) {
      inFlight++;
      res.on('close', () => {
        inFlight--;
        lastActivity = Date.now();
      });
    }
    lastActivity = Date.now();
    faults.intercept(req, res).then(
      (handled) => {
        if (!handled) handler.handle(req, res, admin);
      },
      () => handler.handle(req, res, admin),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const restConfig = newRestConfig({ host: url, qps: -1 });
  const client = newKubeClient(restConfig);
  const clock: Clock = opts.fakeClock ? new FakeClock(Date.now()) : realClock;
  const timeout = opts.crdTimeoutMs ?? 10_000;
  const stopAll = new AbortController();
  setMaxListeners(0, stopAll.signal);
  const background: Promise<unknown>[] = [];
  const managers: Array<{ mgr: Manager; ac: AbortController; done?: Promise<void> }> = [];
  const extraClients: KubeClient[] = [];

  let webhooks: StartedTestWebhooks | undefined;
  const installCRDs = async (items: NonNullable<TestEnvOptions['crds']>) => {
    const crds = items.map((c) => ('crd' in c && typeof c.crd === 'function' ? c.crd() : (c as CustomResourceDefinition))).map((c) => webhooks?.prepareCRD(c) ?? c);
    const ri = client.resource<CustomResourceDefinition & KubeObject>(GVR.customResourceDefinitions);
    for (const crd of crds) {
      try {
        await ri.create({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', ...crd } as CustomResourceDefinition & KubeObject);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
    await waitEstablished(
      client,
      crds.map((c) => c.metadata?.name ?? ''),
      timeout,
    );
  };

  const waitIdle = async (timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await flushMicrotasks();
      if (inFlight === 0 && Date.now() - lastActivity >= 20) return;
      if (Date.now() > deadline) throw new Error(`the test API server did not go idle within ${timeoutMs} ms (${inFlight} requests in flight)`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  let stopped = false;
  const env: TestEnv = {
    url,
    restConfig,
    kubeconfig: kubeconfigYaml(url),
    client,
    clock,
    faults,
    get webhooks() {
      return webhooks ? { server: webhooks.server, url: webhooks.url, caBundle: webhooks.caBundle } : undefined;
    },
    installCRDs,
    newManager(mopts) {
      const mgr = newManager({ leaderElection: false, ...mopts, name: mopts.name ?? 'test-manager', restConfig, clock });
      managers.push({ mgr, ac: new AbortController() });
      return mgr;
    },
    async startManager(mgr) {
      const m = managers.find((x) => x.mgr === mgr);
      if (!m) throw new Error('startManager: the manager was not made by this env (env.newManager)');
      m.done = mgr.start(AbortSignal.any([m.ac.signal, stopAll.signal]));
      m.done.catch(() => undefined);
      await Promise.race([mgr.elected(), m.done]);
      await waitIdle();
    },
    async advance(ms) {
      if (!(clock instanceof FakeClock)) throw new Error('advance: start the env with { fakeClock: true }');
      await clock.advance(ms);
      await waitIdle();
    },
    waitIdle,
    async stop() {
      if (stopped) return;
      stopped = true;
      faults.clear();
      for (const m of managers) m.ac.abort();
      stopAll.abort();
      await Promise.all(managers.map((m) => m.done?.catch(() => undefined)));
      await Promise.all(background);
      await webhooks?.done.catch(() => undefined);
      await Promise.all(extraClients.map((c) => c.close().catch(() => undefined)));
      await client.close();
      await handler.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await storage.close();
    },
  };

  try {
    if (opts.webhooks) {
      webhooks = await startTestWebhooks(opts.webhooks, stopAll.signal);
      await webhooks.install(client);
    }
    if (opts.crds?.length) await installCRDs(opts.crds);
    if (controllers.length > 0) {
      const flags = parseFlags(controllerManagerFlags, []);
      const cm = newControllerManager({
        restConfig: { ...restConfig, userAgent: 'kcm-test-controller-manager' },
        controllers,
        options: buildControllerOptions(flags.values),
        leaderElection: { enabled: false, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, namespace: 'kube-system', name: 'kube-controller-manager' },
        apiServerWaitMs: 5_000,
        shutdownTimeoutMs: 2_000,
        registry: new Registry(),
        logger: newLogger('test-controller-manager'),
        onProgress: (e) => {
          if (e.type === 'caches-synced') controllersSynced();
        },
      });
      let controllersSynced!: () => void;
      const synced = new Promise<void>((resolve) => (controllersSynced = resolve));
      const running = cm.run(stopAll.signal);
      background.push(running);
      // Return once the controllers run (or failed to start).
      await Promise.race([synced, running.then((code) => Promise.reject(new Error(`the test controller manager stopped (exit ${code})`)))]);
    }
    if ((opts.nodes ?? 0) > 0) {
      const schedClient = newKubeClient(restConfig, { logger: newLogger('test-scheduler') });
      const nodeClient = newKubeClient(restConfig, { logger: newLogger('test-nodes') });
      extraClients.push(schedClient, nodeClient);
      const broadcaster = newEventBroadcaster({ client: schedClient, clock: realClock, logger: newLogger('test-scheduler') });
      const scheduler = newScheduler({
        client: schedClient,
        informers: newSharedInformerFactory(schedClient, { clock: realClock }),
        recorder: broadcaster.newRecorder({ component: 'default-scheduler' }),
        clock: realClock,
        logger: newLogger('test-scheduler'),
      });
      background.push(scheduler.run(stopAll.signal).finally(() => broadcaster.shutdown()));
      const sim = newNodeSimulator({ client: nodeClient, count: opts.nodes, clock: realClock, logger: newLogger('test-nodes') });
      background.push(sim.run(stopAll.signal));
      // Return once every node is registered and Ready.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const nodes = (await client.resource<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(GVR.nodes).list()).items;
        const ready = nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
        if (ready.length >= opts.nodes!) break;
        if (Date.now() > deadline) throw new Error(`startTestEnv: ${ready.length} of ${opts.nodes} nodes Ready after 10 s`);
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  } catch (err) {
    await env.stop();
    throw err;
  }
  return env;
}
