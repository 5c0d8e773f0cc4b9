/** Helpers shared by the shell tests (not part of the library's API). */
import { startProcess, type ProcessStatus, type StartOptions } from './process.js';

export const T0 = Date.UTC(2026, 10, 26, 18, 2, 7);

export interface RunResult extends ProcessStatus {
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved in order, stderr lines prefixed with `E:`. */
  all: string;
}

/** Runs a script for `ms` of virtual time (default 60 s). */
export function run(script: string, opts: Partial<StartOptions> & { ms?: number } = {}): RunResult {
  const { ms, ...rest } = opts;
  const p = startProcess({ script, clock: T0, hostname: 'pod-1', ...rest });
  const st = p.advance(T0 + (ms ?? 60_000));
  return {
    ...st,
    stdout: st.output.filter((c) => c.stream === 'stdout').map((c) => c.data).join(''),
    stderr: st.output.filter((c) => c.stream === 'stderr').map((c) => c.data).join(''),
    all: st.output.map((c) => (c.stream === 'stderr' ? 'E:' : '') + c.data).join(''),
  };
}

/** Runs a script and returns its stdout. */
export function out(script: string, opts: Partial<StartOptions> & { ms?: number } = {}): string {
  return run(script, opts).stdout;
}
