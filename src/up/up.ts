/**
 * `kcm up`: the embedded API server in this process, the controller side
 * (controller manager, scheduler, simulated nodes) in a child process or
 * worker thread, all on loopback, state in `--data-dir`.
 *
 * Stdout: the kubeconfig path, a one-line kubectl hint and
 * `kcm up listening on https://...` as soon as the API server serves (tools
 * may wait for that line), then the status (status.ts) and
 * `kcm up: ready in N ms` once caches are synced and the nodes are Ready.
 * SIGTERM/SIGINT: stop the controller side, then the API server; exit 0.
 */
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { startApiServer, type RunningApiServer } from '../apiserver/serve/index.js';
import { newKubeClient, type KubeClient } from '../client/client.js';
import { newRestConfig, viaUnixSocket } from '../client/rest-config.js';
import { newLogger, setLogFormat, setVerbosity, type Logger } from '../util/log/logger.js';
import type { ControllerSideConfig, ControllerSideMessage } from './controller-side.js';
import type { UpOptions } from './options.js';
import type { RunningDashboard } from '../dashboard/server.js';
import { ensureServiceAccountKey } from './sa-key.js';
import { ensureDefaultStorageClass } from './storage.js';
import { newSimulatedMetricsSource } from './metrics-source.js';
import { realClock } from '../util/clock/clock.js';
import { countReady, newStatusView, isAllReady, type NodeLike, type StatusView } from './status.js';
import { startSupervisor, type Isolation, type PreforkedProcess, type Supervisor } from './supervisor.js';

export interface UpRun {
  /** Resolves when everything stopped; the exit code. */
  done: Promise<number>;
  stop(): void;
}

/** Polls the node list until `wanted` nodes are Ready or `signal` aborts. */
async function watchNodesReady(client: KubeClient, wanted: number, status: StatusView, signal: AbortSignal, log: Logger): Promise<void> {
  let last = -1;
  while (!signal.aborted) {
    try {
      const list = await client.request<{ items: NodeLike[] }>('GET', '/api/v1/nodes');
      const ready = countReady(list.items ?? []);
      if (ready !== last) {
        last = ready;
        status.update({ nodesReady: ready });
      }
      if (ready >= wanted) return;
    } catch (err) {
      log.v(2).info({ error: (err as Error).message }, 'cannot list nodes yet');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `<data-dir>/apiserver.sock`: the API server's private socket for kcm up's
 * own components, or none where the path is too long for a socket address
 * (about 100 bytes; they then use HTTPS as any client).
 */
function apiSocketPath(dataDir: string): string | undefined {
  const path = join(resolve(dataDir), 'apiserver.sock');
  return Buffer.byteLength(path) <= 100 ? path : undefined;
}

/**
 * The dashboard (src/dashboard) on 127.0.0.1:port, or on a free port when that one is taken. Its module loads
 * after the API server serves; its watches start when a browser first opens it. Undefined when it cannot start.
 */
async function startUpDashboard(server: RunningApiServer, client: KubeClient, port: number, cmUrl: () => string | undefined, log: Logger, out: NodeJS.WriteStream): Promise<RunningDashboard | undefined> {
  const { startDashboard } = await import('../dashboard/server.js');
  const opts = { client, restConfig: client.config, clusterUrl: server.url, controllerManagerUrl: cmUrl, logger: newLogger('dashboard') };
  try {
    let d: RunningDashboard;
    try {
      d = await startDashboard({ ...opts, port });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      d = await startDashboard({ ...opts, port: 0 });
      log.info({ wanted: port, port: d.port }, 'the dashboard port is taken: using a free one');
    }
    out.write(`Dashboard: ${d.loginUrl}\n`);
    return d;
  } catch (err) {
    log.error(err, 'cannot start the dashboard');
    return undefined;
  }
}

export async function runUp(o: UpOptions, startedAt: number, signal: AbortSignal, preforked?: PreforkedProcess): Promise<number> {
  const v = o.flags.values;
  setVerbosity(v.v);
  setLogFormat(v['logging-format'] === 'json' ? 'json' : 'text');
  const log = newLogger('kcm-up');
  const out = process.stdout;

  let server: RunningApiServer;
  // The API server's credential for the simulated kubelets' endpoint (logs, exec, port-forward, proxy): new each run.
  const kubeletToken = randomBytes(24).toString('hex');
  const socketPath = apiSocketPath(v['data-dir']);
  try {
    const sa = ensureServiceAccountKey(join(resolve(v['data-dir']), 'pki'));
    if (sa.created) log.info({ path: sa.keyPath }, 'wrote the service-account signing key');
    const signingKeyFile = v['service-account-signing-key-file'] || o.cm['service-account-private-key-file'] || sa.keyPath;
    server = await startApiServer({
      serviceAccounts: {
        // Default: verify what TokenRequest signs and what the token controller signs (legacy Secrets).
        keyFiles: v['service-account-key-file'].length > 0 ? [...v['service-account-key-file']] : [...new Set([signingKeyFile, o.cm['service-account-private-key-file'] || sa.keyPath])],
        signingKeyFile,
        issuers: [...v['service-account-issuer']],
        apiAudiences: [...v['api-audiences']],
      },
      authorizationMode: v['authorization-mode'] === 'RBAC' ? 'RBAC' : 'AlwaysAllow',
      requestTimeoutMs: v['request-timeout'],
      dataDir: v['data-dir'],
      bindAddress: v['bind-address'],
      securePort: v['secure-port'],
      serviceClusterIPRange: v['service-cluster-ip-range'],
      storage: v.storage === 'memory' ? 'memory' : 'sqlite',
      logger: newLogger('apiserver'),
      // The resource metrics API, as metrics-server would serve it (simulated usage).
      resourceMetrics: newSimulatedMetricsSource({ clock: realClock, resolutionMs: v['metric-resolution'] }),
      kubelet: { token: kubeletToken },
      ...(socketPath ? { socketPath } : {}),
    });
  } catch (err) {
    preforked?.discard();
    log.error(err, 'cannot start the API server');
    return 1;
  }
  const dataDir = join(server.kubeconfigPath, '..');
  const status = newStatusView(out, v.nodes);
  out.write(
    `Admin kubeconfig: ${server.kubeconfigPath}\n` +
      `  export KUBECONFIG=${server.kubeconfigPath}; kubectl get nodes\n` +
      `kcm up listening on ${server.url}\n`,
  );
  status.update({ apiServerReadyMs: Date.now() - startedAt });


  const config: ControllerSideConfig = {
    dataDir,
    kubeconfigPath: server.kubeconfigPath,
    ...(server.socketPath ? { apiSocketPath: server.socketPath } : {}),
    cm: o.cm,
    controllers: o.controllers,
    cmSecurePort: v['controller-manager-secure-port'],
    cmBindAddress: v['controller-manager-bind-address'],
    nodes: v.nodes,
    gracefulShutdown: v['graceful-shutdown'],
    imagePullRule: { unpullable: [...v['unpullable-images']], pullable: [...v['pullable-images']] },
    scheduler: v.scheduler,
    localPathProvisioner: v['local-path-provisioner'],
    schedulerQps: v['scheduler-kube-api-qps'],
    ...(v['scheduler-config'] ? { schedulerConfig: resolve(v['scheduler-config']) } : {}),
    schedulerBurst: v['scheduler-kube-api-burst'],
    verbosity: v.v,
    loggingFormat: v['logging-format'] === 'json' ? 'json' : 'text',
    loadBalancerIPRange: v['load-balancer-ip-range'],
    kubeletToken,
  };

  const watchAbort = new AbortController();
  let cmUrl: string | undefined;
  let readyAnnounced = false;
  const checkReady = () => {
    if (readyAnnounced || !isAllReady(status.current(), v.scheduler)) return;
    readyAnnounced = true;
    const ms = Date.now() - startedAt;
    status.update({ readyMs: ms });
    status.finish();
    out.write(`kcm up: ready in ${ms} ms (${v.nodes} nodes, isolation ${v.isolation}). Try: kubectl apply -f examples/deployment.yaml\n`);
  };
  const onMessage = (m: ControllerSideMessage) => {
    switch (m.type) {
      case 'cm':
        if (m.event.type === 'caches-synced') {
          if (status.current().cachesSyncedMs !== undefined) out.write(`kcm up: controller side ready again after restart ${status.current().restarts} (caches synced in ${m.event.ms} ms)\n`);
          else status.update({ cachesSyncedMs: Date.now() - startedAt });
        }
        else if (m.event.type === 'controllers-started') status.update({ controllers: { started: m.event.started.length, skipped: m.event.skipped.length } });
        else if (m.event.type === 'serving') {
          cmUrl = m.event.url;
          out.write(`kcm up: controller manager serving on ${m.event.url}\n`);
        }
        break;
      case 'scheduler-started':
        status.update({ schedulerStarted: true });
        break;
      case 'nodes-started':
      case 'stopped':
        break;
    }
    checkReady();
  };

  let supervisor: Supervisor;
  try {
    supervisor = startSupervisor({
      config,
      isolation: v.isolation as Isolation,
      logger: log,
      onMessage,
      onCrash: ({ restarts }) => status.update({ restarts }),
      ...(preforked ? { preforked } : {}),
    });
  } catch (err) {
    log.error(err, 'cannot start the controller side');
    await server.close();
    return 1;
  }

  const client = newKubeClient(viaUnixSocket(newRestConfig({ host: server.url, tls: { caData: server.caPem }, auth: { bearerToken: server.adminToken }, qps: 0 }), server.socketPath), { logger: log });
  const dashboard = v['dashboard-port'] > 0 ? startUpDashboard(server, client, v['dashboard-port'], () => cmUrl, log, out) : Promise.resolve(undefined);
  const watching = watchNodesReady(client, v.nodes, status, watchAbort.signal, log).then(checkReady);
  const storageClass = v['local-path-provisioner'] ? ensureDefaultStorageClass(client, dataDir, v.storage !== 'memory', watchAbort.signal, log) : Promise.resolve();

  await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
  watchAbort.abort();
  status.finish();
  log.info('stopping the controller side');
  await supervisor.stop();
  await watching.catch(() => undefined);
  await storageClass.catch(() => undefined);
  await (await dashboard)?.close().catch((err: unknown) => log.error(err, 'stopping the dashboard'));
  await client.close().catch(() => undefined);
  log.info('stopping the API server');
  await server.close();
  return 0;
}
