/**
 * Start-up time of `kcm up` to ready (API server serving, controller-manager
 * caches synced, scheduler started, 3 nodes Ready), measured from spawning
 * `node bin/kcm.js up` to its `kcm up: ready in N ms` line: a fresh data
 * directory (PKI and service-account key generated) and a restart on the
 * same one, with the controller side in a child process and in a worker
 * thread. Median of RUNS each. First, a start with an empty compile cache
 * (src/util/compile-cache: what the first start after installing costs),
 * kept running until it has written the cache that the other starts read.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RUNS = 3;

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'bin', 'kcm.js')) && existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}

/**
 * Milliseconds from spawn to the ready line; the process is stopped afterwards, once `keepUntil` (polled) holds if
 * given (at most 20 s).
 */
function timeToReady(dataDir: string, isolation: string, env: NodeJS.ProcessEnv, keepUntil?: () => boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [join(repoRoot(), 'bin', 'kcm.js'), 'up', '--data-dir', dataDir, '--secure-port', '0', '--controller-manager-secure-port', '0', '--isolation', isolation], {
      stdio: ['ignore', 'pipe', 'ignore'],
      env,
    });
    let out = '';
    let readyAt: number | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kcm up not ready after 30 s: ${out}`));
    }, 30_000);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (readyAt === undefined && /kcm up: ready in/.test(out)) {
        readyAt = performance.now() - started;
        const until = Date.now() + 20_000;
        const stop = () => {
          if (!keepUntil || keepUntil() || Date.now() > until) child.kill('SIGTERM');
          else setTimeout(stop, 200);
        };
        stop();
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      if (readyAt === undefined) reject(new Error(`kcm up exited before ready: ${out}`));
      else resolve(readyAt);
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(): Promise<string[]> {
  const lines: string[] = [];
  const cacheHome = mkdtempSync(join(tmpdir(), 'kcm-bench-cache-'));
  const env = { ...process.env, XDG_CACHE_HOME: cacheHome };
  const cached = () => {
    try {
      return readdirSync(join(cacheHome, 'kcm', 'v8-cache')).filter((f) => f.endsWith('.bin')).length >= 2;
    } catch {
      return false;
    }
  };
  const firstDir = mkdtempSync(join(tmpdir(), 'kcm-bench-up-'));
  try {
    const first = await timeToReady(firstDir, 'process', env, cached);
    lines.push(`kcm up (--isolation process), fresh data dir, empty compile cache (first start after installing): ${first.toFixed(0)} ms to ready; cache written: ${cached()}`);
  } finally {
    rmSync(firstDir, { recursive: true, force: true });
  }
  for (const isolation of ['process', 'thread']) {
    const fresh: number[] = [];
    const restart: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'kcm-bench-up-'));
      try {
        fresh.push(await timeToReady(dir, isolation, env));
        restart.push(await timeToReady(dir, isolation, env));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    lines.push(`kcm up (--isolation ${isolation}), fresh data dir: ${median(fresh).toFixed(0)} ms to ready (median of ${RUNS}; runs ${fresh.map((x) => x.toFixed(0)).join(', ')})`);
    lines.push(`kcm up (--isolation ${isolation}), restart: ${median(restart).toFixed(0)} ms to ready (median of ${RUNS}; runs ${restart.map((x) => x.toFixed(0)).join(', ')})`);
  }
  rmSync(cacheHome, { recursive: true, force: true });
  return lines;
}
