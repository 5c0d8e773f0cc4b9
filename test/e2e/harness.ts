/**
 * End-to-end harness: runs `kcm <subcommand>` as a child process (as a user
 * would) and the real `kubectl` against it.
 *
 * The entry point is `$KCM_BIN` (default `<repo>/bin/kcm.js`, which loads the
 * compiled dist/). Every process gets its own temporary data directory and
 * `--secure-port 0`, so test files can run in parallel. Readiness = the
 * process printed `listening on https://...`, the kubeconfig exists, and
 * `/readyz` answered 200, all within a bounded time. Nothing here waits
 * without a deadline.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { Agent, request } from 'undici';
import { parse } from 'yaml';

/** The repository root: this file compiles to <repo or outDir>/test/e2e/harness.js, so look for bin/kcm.js upwards from the source layout. */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'bin', 'kcm.js')) && existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return resolve(process.cwd());
}

export const kcmBin = process.env.KCM_BIN ?? join(repoRoot(), 'bin', 'kcm.js');

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  input?: string;
  /** Default 30 s; the process is killed after it. */
  timeoutMs?: number;
}

/**
 * kubectl's environment for the cluster of `kubeconfig`: that kubeconfig, and a cache of its own
 * beside it. kubectl caches discovery per host and port (under ~/.kube/cache by default) and the
 * test clusters reuse ports: a real 1.20 API server's discovery left there made kubectl ask a
 * later kcm cluster on the same port for versions it does not serve (discovery.k8s.io/v1beta1).
 */
export function kubectlEnv(kubeconfig: string): NodeJS.ProcessEnv {
  return { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dirname(kubeconfig), '.kube-cache') };
}

/** Runs kubectl with KUBECONFIG set; resolves with its exit code and output (never rejects on a non-zero exit). */
export function runKubectl(kubeconfig: string, args: string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('kubectl', args, { env: kubectlEnv(kubeconfig), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kubectl ${args.join(' ')}: no exit after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run kubectl: ${err.message}`, { cause: err }));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** A kubectl left running (e.g. `get -w`): lines it printed so far, and stop(). */
export interface BackgroundKubectl {
  lines(): string[];
  stderr(): string;
  stop(): Promise<void>;
}

export function startKubectl(kubeconfig: string, args: string[]): BackgroundKubectl {
  const child = spawn('kubectl', args, { env: kubectlEnv(kubeconfig), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  return {
    lines: () => out.split('\n').filter((l) => l !== ''),
    stderr: () => err,
    stop: () => stopChild(child, 5000),
  };
}

/** Polls `fn` until it returns a truthy value (or stops throwing) and returns that value; rejects after `timeoutMs`. */
export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition', intervalMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${detail})`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolvePromise) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolvePromise();
    });
    child.kill('SIGTERM');
  });
}

export interface KcmProcess {
  readonly dataDir: string;
  readonly kubeconfigPath: string;
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  readonly caPem: string;
  readonly adminToken: string;
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  kubectl(args: string[], opts?: KubectlOptions): Promise<KubectlResult>;
  /** kubectl that must succeed: resolves with stdout, rejects with stderr. */
  kubectlOk(args: string[], opts?: KubectlOptions): Promise<string>;
  /** An authenticated fetch-like request against the server (admin token). */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }>;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, SIGKILL after 5 s; removes the data directory unless `keepDataDir`. */
  stop(opts?: { keepDataDir?: boolean }): Promise<void>;
}

export interface StartKcmOptions {
  /** Reuse this data directory (restarts); default a new temporary one. */
  dataDir?: string;
  /** Default 20 s. */
  readyTimeoutMs?: number;
  env?: Record<string, string>;
}

/**
 * Starts `node $KCM_BIN <subcommand> --data-dir <dir> --secure-port 0 ...args`
 * and waits until it serves. Works for any subcommand that serves the API
 * (`apiserver`, later `up`) and prints `listening on https://...`.
 */
export async function startKcm(subcommand: string, args: string[] = [], opts: StartKcmOptions = {}): Promise<KcmProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), `kcm-e2e-${subcommand}-`));
  // `kcm up` also serves the controller manager on 10257 by default: off, so test files can run in parallel.
  const extra = subcommand === 'up' && !args.some((a) => a.startsWith('--controller-manager-secure-port')) ? ['--controller-manager-secure-port', '0'] : [];
  const child = spawn(process.execPath, ['--enable-source-maps', kcmBin, subcommand, '--data-dir', dataDir, '--secure-port', '0', ...extra, ...args], {
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  let exitedEarly: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void exited.then((e) => (exitedEarly = e));
  const kubeconfigPath = join(dataDir, 'kubeconfig');

  const fail = async (why: string): Promise<never> => {
    await stopChild(child, 2000);
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`kcm ${subcommand}: ${why}\nstdout:\n${out}\nstderr:\n${err.slice(-4000)}`);
  };

  const readyTimeoutMs = opts.readyTimeoutMs ?? 20_000;
  let url: string;
  try {
    url = await waitFor(
      () => {
        if (exitedEarly) throw new Error(`exited early (${exitedEarly.code ?? exitedEarly.signal})`);
        const m = /listening on (https:\/\/\S+)/.exec(out);
        return m && existsSync(kubeconfigPath) ? m[1]! : undefined;
      },
      readyTimeoutMs,
      'the listening line and the kubeconfig',
    );
  } catch (e) {
    return fail((e as Error).message);
  }
  const kc = parse(readFileSync(kubeconfigPath, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  };
  const caPem = Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString();
  const adminToken = kc.users[0]!.user.token;
  if (kc.clusters[0]!.cluster.server !== url) return fail(`kubeconfig server ${kc.clusters[0]!.cluster.server} is not ${url}`);
  const { api, dispatcher } = adminApi(url, caPem, adminToken);

  try {
    await waitFor(async () => (await api('GET', '/readyz')).status === 200, readyTimeoutMs, '/readyz to answer 200');
  } catch (e) {
    await dispatcher.close();
    return fail((e as Error).message);
  }

  const kubectl = (a: string[], o?: KubectlOptions) => runKubectl(kubeconfigPath, a, o);
  return {
    dataDir,
    kubeconfigPath,
    url,
    caPem,
    adminToken,
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    kubectl,
    kubectlOk: kubectlOkWith(kubectl),
    api,
    async stop(o = {}) {
      await dispatcher.close().catch(() => undefined);
      await stopChild(child, 5000);
      if (!o.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** kubectl that must succeed: resolves with stdout, rejects with the exit code and stderr. */
export function kubectlOkWith(kubectl: KcmProcess['kubectl']): KcmProcess['kubectlOk'] {
  return async (a, o) => {
    const r = await kubectl(a, o);
    if (r.code !== 0) throw new Error(`kubectl ${a.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
    return r.stdout;
  };
}

/** An authenticated request function against `url` with a bearer token (close `dispatcher` when done). */
export function adminApi(url: string, caPem: string, token: string): { api: KcmProcess['api']; dispatcher: Agent } {
  const dispatcher = new Agent({ connect: { ca: caPem } });
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await request(`${url}${path}`, {
      method: method as 'GET',
      dispatcher,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : null,
    });
    const text = await r.body.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON (e.g. /readyz's "ok"): keep the text
    }
    return { status: r.statusCode, json };
  };
  return { api, dispatcher };
}

/** A loopback port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** `kcm apiserver` in a fresh (or the given) data directory. */
export function startApiServerProcess(opts: StartKcmOptions = {}, args: string[] = []): Promise<KcmProcess> {
  return startKcm('apiserver', args, opts);
}
