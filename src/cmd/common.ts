/**
 * What every `kcm` subcommand does the same way: reading its command line,
 * setting up logging from the logging flags, and stopping on SIGTERM/SIGINT.
 */
import { newLogger, setLogFormat, setVerbosity, type Logger } from '../util/log/logger.js';
import { FlagError, flagUsage, parseFlags, type FlagSpec, type ParsedFlags } from './flags.js';

export interface CommandLineOptions<S extends FlagSpec> {
  /** The command as typed, e.g. `kcm scheduler` (error messages). */
  command: string;
  /** The usage line of --help, e.g. `kcm scheduler [flags]`. */
  usageLine: string;
  description: string;
  /** Words that are not flags are the command's own (default: an error). */
  allowPositional?: boolean;
  /** More checks of the parsed flags; a FlagError it throws is reported like a parse error (before --help is looked at). */
  validate?: (flags: ParsedFlags<S>) => void;
}

/**
 * Parses `args`. Returns the flags, or the exit code when the command is
 * done: 1 after printing `Error: ...` for a bad flag or an unexpected word,
 * 0 after printing the usage for --help.
 */
export function parseCommandLine<S extends FlagSpec>(spec: S, args: readonly string[], opts: CommandLineOptions<S>): ParsedFlags<S> | number {
  let flags: ParsedFlags<S>;
  try {
    flags = parseFlags(spec, args);
    opts.validate?.(flags);
  } catch (err) {
    return reportFlagError(err);
  }
  if (flags.help) {
    process.stdout.write(flagUsage(spec, opts.usageLine, opts.description));
    return 0;
  }
  if (!opts.allowPositional && flags.positional.length > 0) {
    process.stderr.write(`Error: unknown command "${flags.positional[0]}" for "${opts.command}"\n`);
    return 1;
  }
  return flags;
}

/**
 * Prints `Error: <message>` and returns exit code 1 for a FlagError or an
 * error of one of `alsoFor`; throws anything else on.
 */
export function reportFlagError(err: unknown, ...alsoFor: Array<abstract new (...args: never[]) => Error>): number {
  if (err instanceof FlagError || alsoFor.some((c) => err instanceof c)) {
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
  throw err;
}

/** Applies `-v` and `--logging-format` (loggingFlags) to the process's logging. */
export function applyLoggingFlags(v: { v: number; 'logging-format': string }): void {
  setVerbosity(v.v);
  setLogFormat(v['logging-format'] === 'json' ? 'json' : 'text');
}

/** applyLoggingFlags, then the command's logger. */
export function setUpLogging(v: { v: number; 'logging-format': string }, name: string): Logger {
  applyLoggingFlags(v);
  return newLogger(name);
}

export interface TerminationOptions {
  /** Logs `shutting down` on the first signal (and, unless quietSecond, a warning on the second). */
  log?: Logger;
  /** The second signal exits without a log line. */
  quietSecond?: boolean;
}

/**
 * Calls `stop` on the first SIGTERM or SIGINT; a second one exits the process
 * with code 1 at once. Returns a function that removes the first-signal
 * handler (when the command ends without a signal).
 */
export function onTerminationSignal(stop: () => void, opts: TerminationOptions = {}): () => void {
  const { log, quietSecond = false } = opts;
  const onSignal = (sig: NodeJS.Signals) => {
    log?.info({ signal: sig }, 'shutting down');
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    const again = (s: NodeJS.Signals) => {
      if (!quietSecond) log?.warn({ signal: s }, 'second signal: exiting now');
      process.exit(1);
    };
    process.once('SIGTERM', again);
    process.once('SIGINT', again);
    stop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}
