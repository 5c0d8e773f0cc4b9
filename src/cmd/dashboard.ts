/**
 * `kcm dashboard`: the live web view of the control loops (src/dashboard)
 * for any cluster: objects through the API server of the kubeconfig, the
 * controllers from a controller manager's endpoint (kcm controller-manager's
 * /debug/controllers, or any kube-controller-manager's /metrics). Runs until
 * SIGTERM or SIGINT.
 *
 *   kcm dashboard [--kubeconfig PATH] [--port 8070] [--controller-manager-url https://127.0.0.1:10257]
 */
import { newKubeClient } from '../client/client.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { startDashboard } from '../dashboard/server.js';
import { onTerminationSignal, parseCommandLine, setUpLogging } from './common.js';
import { loggingFlags, type FlagSpec } from './flags.js';

/** Not 8081: that is the health probe port operators (controller-runtime, kcm/runtime) listen on while developed against kcm up. */
export const DEFAULT_DASHBOARD_PORT = 8070;

export const dashboardFlags = {
  kubeconfig: { type: 'string', default: '', usage: 'Path to a kubeconfig file (default: $KUBECONFIG or ~/.kube/config). Its credentials read the cluster (and its bearer token, if it has one, also signs a browser in).', section: 'Generic' },
  port: { type: 'int', default: DEFAULT_DASHBOARD_PORT, usage: 'The port the dashboard listens on. 0 picks a free port.', section: 'Dashboard' },
  address: { type: 'string', default: '127.0.0.1', typeName: 'ip', usage: 'The IP address the dashboard listens on. On a loopback address it answers only to loopback host names.', section: 'Dashboard' },
  'controller-manager-url': {
    type: 'string',
    default: 'https://127.0.0.1:10257',
    usage: "The controller manager's secure port, for the controllers view: kcm controller-manager's /debug/controllers (queues with keys, errors and syncs), or a kube-controller-manager's /metrics. Empty: no controllers view.",
    section: 'Dashboard',
  },
  'controller-manager-ca-file': {
    type: 'string',
    default: '',
    usage: "A CA bundle to verify the controller manager's serving certificate with. Empty: not verified (it is self-signed unless --tls-cert-file was given).",
    section: 'Dashboard',
  },
  ...loggingFlags,
} as const satisfies FlagSpec;

const description =
  'Serve a live web view of the control loops: every controller with its work queue (depth, adds, retries, errors, sync durations), objects as a graph of owners, ' +
  "a timeline of one object's writes, events and syncs, and the nodes with the scheduler's decisions.\n\n" +
  'Nobody gets in anonymously: open the URL printed at start (it carries a login token), or /login?token=<token> with a bearer token the API server accepts for a user who may list pods in every namespace.';

export async function run(args: string[]): Promise<number> {
  const flags = parseCommandLine(dashboardFlags, args, { command: 'kcm dashboard', usageLine: 'kcm dashboard [flags]', description });
  if (typeof flags === 'number') return flags;
  const v = flags.values;
  const log = setUpLogging(v, 'dashboard');
  let config;
  try {
    config = await loadKubeconfig(v.kubeconfig ? { kubeconfig: v.kubeconfig } : {});
  } catch (err) {
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
  const client = newKubeClient(config, { logger: log.child({}, 'client') });
  let dashboard;
  try {
    dashboard = await startDashboard({
      client,
      restConfig: config,
      clusterUrl: config.host,
      ...(v['controller-manager-url'] ? { controllerManagerUrl: v['controller-manager-url'] } : {}),
      ...(v['controller-manager-ca-file'] ? { controllerManagerCaFile: v['controller-manager-ca-file'] } : {}),
      bindAddress: v.address,
      port: v.port,
      eager: true,
      logger: log,
    });
  } catch (err) {
    await client.close();
    const e = err as NodeJS.ErrnoException;
    process.stderr.write(`Error: cannot listen on ${v.address}:${v.port}: ${e.code === 'EADDRINUSE' ? 'the port is in use (--port 0 picks a free one)' : e.message}\n`);
    return 1;
  }
  process.stdout.write(`kcm dashboard for ${config.host}\n  open ${dashboard.loginUrl}\n`);
  const ac = new AbortController();
  onTerminationSignal(() => ac.abort(), { log, quietSecond: true });
  await new Promise<void>((resolve) => ac.signal.addEventListener('abort', () => resolve(), { once: true }));
  await dashboard.close();
  await client.close();
  return 0;
}
