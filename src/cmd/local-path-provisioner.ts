/**
 * `kcm local-path-provisioner`: kcm's local-path provisioner and resizer
 * alone, against any API server (as `kcm up` runs it beside the
 * controllers). Volumes are directories under --volume-dir on this machine,
 * so it suits clusters whose nodes run here (kcm nodes). Runs until SIGTERM or SIGINT.
 */
import { loadKubeconfig } from '../client/kubeconfig.js';
import { runProvisionerComponent } from '../provisioner/component.js';
import { onTerminationSignal, parseCommandLine, setUpLogging } from './common.js';
import { loggingFlags, type FlagSpec } from './flags.js';

export const provisionerFlags = {
  kubeconfig: { type: 'string', default: '', usage: 'Path to a kubeconfig file (default: $KUBECONFIG or ~/.kube/config).', section: 'Generic' },
  'volume-dir': { type: 'string', default: './.kcm/volumes', usage: 'Directory holding one directory per provisioned volume.', section: 'Provisioner' },
  'kube-api-qps': { type: 'float', default: 50, usage: 'QPS towards the API server.', section: 'Generic' },
  'kube-api-burst': { type: 'int', default: 100, usage: 'Burst towards the API server.', section: 'Generic' },
  ...loggingFlags,
} as const satisfies FlagSpec;

export async function run(args: string[]): Promise<number> {
  const flags = parseCommandLine(provisionerFlags, args, {
    command: 'kcm local-path-provisioner',
    usageLine: 'kcm local-path-provisioner [flags]',
    description: 'Run the local-path provisioner (provisioner and resizer "local-path.kcm.io"): hostPath volumes in directories on this machine for claims of its StorageClasses.',
  });
  if (typeof flags === 'number') return flags;
  const v = flags.values;
  const log = setUpLogging(v, 'local-path-provisioner');
  const config = await loadKubeconfig(v.kubeconfig ? { kubeconfig: v.kubeconfig } : {});
  const ac = new AbortController();
  onTerminationSignal(() => ac.abort(), { log, quietSecond: true });
  await runProvisionerComponent(
    {
      restConfig: { ...config, qps: v['kube-api-qps'], burst: v['kube-api-burst'] },
      volumesDir: v['volume-dir'],
      logger: log,
      onStarted: () => process.stdout.write(`kcm local-path-provisioner running against ${config.host ?? 'the cluster'}, volumes in ${v['volume-dir']}\n`),
    },
    ac.signal,
  );
  return 0;
}
