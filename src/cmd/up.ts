/**
 * `kcm up`: a whole local control plane in one command (see src/up/up.ts).
 * Exit codes: 0 after SIGTERM/SIGINT, 1 on a bad flag or when the API server
 * cannot start. A second signal exits 1 at once.
 */
import { UnknownControllerError } from '../controllers/registry.js';
import { parseUpFlags, upFlags } from '../up/options.js';
import { runUp } from '../up/up.js';
import { FlagError, flagUsage } from './flags.js';

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
    if (err instanceof FlagError || err instanceof UnknownControllerError) {
      process.stderr.write(`Error: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const ac = new AbortController();
  const onSignal = () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    const again = () => process.exit(1);
    process.once('SIGTERM', again);
    process.once('SIGINT', again);
    ac.abort();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const code = await runUp(opts, startedAt, ac.signal);
  setTimeout(() => process.exit(code), 2000).unref();
  return code;
}
