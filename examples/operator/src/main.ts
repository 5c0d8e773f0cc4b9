/**
 * The StaticSite operator.
 *
 *   node dist/src/main.js [--kubeconfig PATH] [--install-crds] [--dns-namespace dns]
 *                         [--health-probe-bind-address :8081] [--metrics-bind-address 0]
 *                         [--leader-elect=false] [--leader-election-namespace NS]
 *
 * Runs until SIGTERM or SIGINT (then finishes running reconciles and
 * releases its Lease). Exits 1 when it loses the Lease, so a supervisor
 * restarts it.
 */
import { parseArgs } from 'node:util';
import { LeaderElectionLostError, getConfig, newManager, setLogOutput } from 'kcm/runtime';
import { setupStaticSiteController } from './controller.js';
import { StaticSite } from './resources.js';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: 'string' },
      'install-crds': { type: 'boolean', default: false },
      'dns-namespace': { type: 'string', default: 'dns' },
      'health-probe-bind-address': { type: 'string', default: ':8081' },
      'metrics-bind-address': { type: 'string', default: '0' },
      'leader-elect': { type: 'string', default: 'true' },
      'leader-election-namespace': { type: 'string' },
      quiet: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  if (values.quiet) setLogOutput(() => {});
  const mgr = newManager({
    name: 'staticsite-operator',
    restConfig: await getConfig(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    leaderElection: values['leader-elect'] === 'false' ? false : values['leader-election-namespace'] ? { namespace: values['leader-election-namespace'] } : {},
    healthProbeBindAddress: values['health-probe-bind-address'],
    metricsBindAddress: values['metrics-bind-address'],
    ...(values['install-crds'] ? { installCRDs: [StaticSite] } : {}),
  });
  setupStaticSiteController(mgr, { dnsNamespace: values['dns-namespace'] });
  void mgr.elected().then(() => process.stdout.write('staticsite-operator: leading, reconciling StaticSites\n'));
  await mgr.start();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`staticsite-operator: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof LeaderElectionLostError ? 1 : 2);
  },
);
