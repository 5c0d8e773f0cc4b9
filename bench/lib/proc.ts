/** Process measurements for the side-by-side benchmarks (Linux /proc). */
import { readFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** utime + stime of a process, in seconds. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command: state is field 3; utime 14 and stime 15 (1-based over the whole line).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Peak resident set (VmHWM) in MB. */
export function peakRssMB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** `k/r` as "1.23x", or n/a. */
export const ratio = (k: number, r: number): string => (r > 0 ? `${(k / r).toFixed(2)}x` : 'n/a');

/** The real v1.20 binaries' directory ($KCM_REAL_BIN, default /tmp/k8sbin) when they are all there. */
export function realBinaries(names: string[]): { bin: string; missing?: string } {
  const bin = process.env.KCM_REAL_BIN ?? '/tmp/k8sbin';
  const missing = names.filter((b) => !existsSync(join(bin, b)));
  return missing.length ? { bin, missing: `skipped: ${missing.join(', ')} not in ${bin} (../shared/tools/build-real-k8s.sh builds them)` } : { bin };
}
