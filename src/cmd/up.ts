/**
 * `kcm up`: a whole local control plane in one command (see src/up/up.ts).
 * Exit codes: 0 after SIGTERM/SIGINT, 1 on a bad flag or when the API server
 * cannot start. A second signal exits 1 at once.
 */
import { preforkControllerSide, type PreforkedProcess } from '../up/supervisor.js';
import { boundApiServerHeapGrowth, deferWasmTierUp } from '../up/v8-flags.js';

const description = `Run a local Kubernetes control plane: the embedded API server, the controller manager (all default controllers), the scheduler and simulated nodes, on loopback, with state in --data-dir. Controller-manager flags pass through (e.g. --controllers=*,-deployment, --concurrent-deployment-syncs=10).`;

/** `--isolation thread` or `--isolation=thread` among the arguments (checked before the flags are parsed). */
function wantsThread(args: string[]): boolean {
  return args.some((a, i) => a === '--isolation=thread' || (a === '--isolation' && args[i + 1] === 'thread'));
}

export async function run(args: string[]): Promise<number> {
  const startedAt = Date.now();
  deferWasmTierUp();
  // This process is the API server; with --isolation thread the controller side shares its V8 flags, and would pay for it.
  if (!wantsThread(args)) boundApiServerHeapGrowth();
  const help = args.includes('--help') || args.includes('-h');
  // The controller side's process is forked first, so that it loads its modules while this one loads the API server's
  // (most of kcm up's start is reading and compiling modules, and there are two cores). Hence the import below.
  const preforked: PreforkedProcess | undefined = help || wantsThread(args) ? undefined : preforkControllerSide();
  const { UnknownControllerError, parseUpFlags, upFlags, runUp, onTerminationSignal, reportFlagError, flagUsage } = await import('../up/up-entry.js');
  if (help) {
    process.stdout.write(flagUsage(upFlags, 'kcm up [flags]', description));
    return 0;
  }
  let opts;
  try {
    opts = parseUpFlags(args);
  } catch (err) {
    preforked?.discard();
    return reportFlagError(err, UnknownControllerError);
  }
  const ac = new AbortController();
  onTerminationSignal(() => ac.abort());
  const code = await runUp(opts, startedAt, ac.signal, preforked);
  setTimeout(() => process.exit(code), 2000).unref();
  return code;
}
