/**
 * The StaticSite operator.
 *
 *   node dist/src/main.js [--kubeconfig PATH] [--install-crds] [--dns-namespace dns]
 *                         [--health-probe-bind-address :8081] [--metrics-bind-address 0]
 *                         [--leader-elect=false] [--leader-election-namespace NS]
 *                         [--webhook-bind-address :9443] [--webhook-cert-dir DIR] [--install-webhooks]
 *
 * The defaulting webhook is served on --webhook-bind-address ('0': off)
 * with tls.crt and tls.key from --webhook-cert-dir, or a certificate
 * generated at start. --install-webhooks creates the
 * MutatingWebhookConfiguration pointing at this process by URL (for
 * development against a local cluster such as `kcm up`; in a cluster the
 * configuration names a Service and carries the certificate's CA).
 *
 * Runs until SIGTERM or SIGINT (then finishes running reconciles and
 * releases its Lease). Exits 1 when it loses the Lease, so a supervisor
 * restarts it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LeaderElectionLostError, getConfig, newManager, newWebhookServer, setLogOutput, webhookConfigurations } from 'kcm/runtime';
import { newKubeClient } from 'kcm/client';
import { setupStaticSiteController } from './controller.js';
import { StaticSite } from './resources.js';
import { staticSiteWebhooks } from './webhooks.js';

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
      'webhook-bind-address': { type: 'string', default: ':9443' },
      'webhook-cert-dir': { type: 'string' },
      'install-webhooks': { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  if (values.quiet) setLogOutput(() => {});
  const restConfig = await getConfig(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {});
  const mgr = newManager({
    name: 'staticsite-operator',
    restConfig,
    leaderElection: values['leader-elect'] === 'false' ? false : values['leader-election-namespace'] ? { namespace: values['leader-election-namespace'] } : {},
    healthProbeBindAddress: values['health-probe-bind-address'],
    metricsBindAddress: values['metrics-bind-address'],
    ...(values['install-crds'] ? { installCRDs: [StaticSite] } : {}),
  });
  setupStaticSiteController(mgr, { dnsNamespace: values['dns-namespace'] });
  const bind = values['webhook-bind-address'];
  if (bind !== '0') {
    const [host, port] = [bind.slice(0, bind.lastIndexOf(':')), Number(bind.slice(bind.lastIndexOf(':') + 1))];
    const dir = values['webhook-cert-dir'];
    const server = newWebhookServer({
      port,
      ...(host ? { host } : {}),
      ...(dir ? { certificate: { certPem: readFileSync(join(dir, 'tls.crt'), 'utf8'), keyPem: readFileSync(join(dir, 'tls.key'), 'utf8') } } : {}),
    });
    for (const w of staticSiteWebhooks) server.register(w.path, w.handler);
    mgr.add(server);
    if (values['install-webhooks']) {
      void server.listening().then(async () => {
        const { mutating } = webhookConfigurations({ name: 'staticsite-operator', caBundle: server.caBundle, target: { url: server.url()! }, webhooks: staticSiteWebhooks });
        const client = newKubeClient(restConfig);
        const configs = client.resource({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations' });
        await configs.delete('staticsite-operator').catch(() => undefined);
        await configs.create(mutating as never);
        await client.close();
        process.stdout.write(`staticsite-operator: webhooks installed, served at ${server.url()}\n`);
      });
    }
  }
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
