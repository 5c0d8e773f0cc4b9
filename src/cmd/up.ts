/**
 * `kcm up`: a whole local control plane in one command (see src/up/up.ts).
 * Exit codes: 0 after SIGTERM/SIGINT, 1 on a bad flag or when the API server
 * cannot start. A second signal exits 1 at once.
 */
import { UnknownControllerError } from '../controllers/registry.js';
import { parseUpFlags, upFlags } from '../up/options.js';
import { runUp } from '../up/up.js';
import { onTerminationSignal, reportFlagError } from './common.js';
import { flagUsage } from './flags.js';

const description = `Run a local Kubernetes control plane: the embedded API server, the controller manager (all default controllers), the scheduler and simulated nodes, on loopback, with state in --data-dir. Controller-manager flags pass through (e.g. --controllers=*,-deployment, --concurrent-deployment-syncs=10).`;

export async function run(args: string[]): Promise<number> {
  const startedAt = Date.now();
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(flagUsage(upFlags, 'kcm up [flags]', description));
    return 0;
  }
  let opts;
  try {
    opts = parseUpFlags(args);
  } catch (err) {
    return reportFlagError(err, UnknownControllerError);
  }
  const ac = new AbortController();
  onTerminationSignal(() => ac.abort());
  const code = await runUp(opts, startedAt, ac.signal);
  setTimeout(() => process.exit(code), 2000).unref();
  return code;
}
