/**
 * Kubeconfig loading with kubectl's rules: an explicit path, else the
 * KUBECONFIG list (merged: the first file to set a map key wins, the first
 * file to set current-context wins), else ~/.kube/config. Relative paths in a
 * file resolve against that file's directory.
 */
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import * as os from 'node:os';
import { parse as parseYaml } from 'yaml';
import { newRestConfig, type ExecConfig, type RestConfig } from './rest-config.js';

export interface KubeconfigOptions {
  /** Explicit file (`--kubeconfig`); it must exist. */
  kubeconfig?: string;
  /** Overrides current-context. */
  context?: string;
  /** Overrides the context's cluster. */
  cluster?: string;
  /** Overrides the context's user. */
  user?: string;
  env?: NodeJS.ProcessEnv;
  homeDir?: string;
}

/** The config plus what the context says beyond it. */
export interface KubeconfigResult {
  config: RestConfig;
  contextName: string;
  /** The context's namespace, or 'default'. */
  namespace: string;
  /** Files that were read, in precedence order. */
  files: string[];
}

interface Named<T> {
  value: T;
  dir: string;
}

interface RawCluster {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  extensions?: { name: string; extension?: unknown }[];
}
interface RawUser {
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  exec?: {
    apiVersion?: string;
    command?: string;
    args?: string[];
    env?: { name: string; value: string }[] | null;
    installHint?: string;
    provideClusterInfo?: boolean;
  };
  'auth-provider'?: { name?: string };
}
interface RawContext {
  cluster?: string;
  user?: string;
  namespace?: string;
}

interface Merged {
  currentContext?: string;
  clusters: Map<string, Named<RawCluster>>;
  users: Map<string, Named<RawUser>>;
  contexts: Map<string, Named<RawContext>>;
}

/** Loads a kubeconfig and returns the RestConfig of the chosen context. */
export async function loadKubeconfig(opts: KubeconfigOptions = {}): Promise<RestConfig> {
  return (await loadKubeconfigDetails(opts)).config;
}

/** As loadKubeconfig, with the context's name and namespace. */
export async function loadKubeconfigDetails(opts: KubeconfigOptions = {}): Promise<KubeconfigResult> {
  const env = opts.env ?? process.env;
  const { files, required } = kubeconfigFiles(opts, env);
  const merged: Merged = { clusters: new Map(), users: new Map(), contexts: new Map() };
  const read: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if (required || (err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new Error(`cannot read kubeconfig "${file}": ${(err as Error).message}`, { cause: err });
      }
      continue;
    }
    let doc: unknown;
    try {
      doc = parseYaml(text);
    } catch (err) {
      throw new Error(`cannot parse kubeconfig "${file}": ${(err as Error).message}`, { cause: err });
    }
    read.push(file);
    mergeInto(merged, doc, path.dirname(path.resolve(file)));
  }
  if (read.length === 0) {
    throw new Error('no kubeconfig found: pass --kubeconfig, set KUBECONFIG, or create ~/.kube/config');
  }
  const contextName = opts.context || merged.currentContext;
  if (!contextName) throw new Error('current-context is not set in the kubeconfig and no context was given');
  const ctx = merged.contexts.get(contextName);
  if (!ctx) throw new Error(`context "${contextName}" does not exist`);
  const clusterName = opts.cluster || ctx.value.cluster;
  if (!clusterName) throw new Error(`context "${contextName}" names no cluster`);
  const cluster = merged.clusters.get(clusterName);
  if (!cluster) throw new Error(`cluster "${clusterName}" (context "${contextName}") does not exist`);
  const userName = opts.user || ctx.value.user;
  const user = userName ? merged.users.get(userName) : undefined;
  if (userName && !user) throw new Error(`user "${userName}" (context "${contextName}") does not exist`);
  return {
    config: toRestConfig(clusterName, cluster, user),
    contextName,
    namespace: ctx.value.namespace || 'default',
    files: read,
  };
}

function kubeconfigFiles(opts: KubeconfigOptions, env: NodeJS.ProcessEnv): { files: string[]; required: boolean } {
  if (opts.kubeconfig) return { files: [opts.kubeconfig], required: true };
  const list = env.KUBECONFIG;
  if (list) {
    const seen = new Set<string>();
    const files: string[] = [];
    for (const f of list.split(path.delimiter)) {
      if (!f || seen.has(f)) continue;
      seen.add(f);
      files.push(f);
    }
    if (files.length > 0) return { files, required: false };
  }
  const home = opts.homeDir ?? env.HOME ?? os.homedir();
  return { files: [path.join(home, '.kube', 'config')], required: false };
}

function asArray(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Record<string, unknown>[]) : [];
}

function mergeInto(m: Merged, doc: unknown, dir: string): void {
  if (!doc || typeof doc !== 'object') return;
  const d = doc as Record<string, unknown>;
  if (!m.currentContext && typeof d['current-context'] === 'string' && d['current-context']) {
    m.currentContext = d['current-context'];
  }
  const add = <T>(target: Map<string, Named<T>>, entries: unknown, field: string) => {
    for (const e of asArray(entries)) {
      const name = e.name;
      if (typeof name !== 'string' || target.has(name)) continue;
      target.set(name, { value: (e[field] ?? {}) as T, dir });
    }
  };
  add(m.clusters, d.clusters, 'cluster');
  add(m.users, d.users, 'user');
  add(m.contexts, d.contexts, 'context');
}

function resolve(dir: string, p: string | undefined): string | undefined {
  if (!p) return undefined;
  return path.isAbsolute(p) ? p : path.join(dir, p);
}

function b64(data: string | undefined): string | undefined {
  return data ? Buffer.from(data, 'base64').toString('utf8') : undefined;
}

const EXEC_EXTENSION = 'client.authentication.k8s.io/exec';

function toRestConfig(clusterName: string, cluster: Named<RawCluster>, user: Named<RawUser> | undefined): RestConfig {
  const c = cluster.value;
  if (!c.server) throw new Error(`cluster "${clusterName}" has no server`);
  const cfg = newRestConfig({ host: c.server.replace(/\/+$/, '') });
  cfg.tls = {
    caData: b64(c['certificate-authority-data']),
    caFile: c['certificate-authority-data'] ? undefined : resolve(cluster.dir, c['certificate-authority']),
    insecureSkipTLSVerify: c['insecure-skip-tls-verify'] === true,
    serverName: c['tls-server-name'] || undefined,
  };
  if (!user) return cfg;
  const u = user.value;
  cfg.tls.certData = b64(u['client-certificate-data']);
  if (!cfg.tls.certData) cfg.tls.certFile = resolve(user.dir, u['client-certificate']);
  cfg.tls.keyData = b64(u['client-key-data']);
  if (!cfg.tls.keyData) cfg.tls.keyFile = resolve(user.dir, u['client-key']);
  if (u.token) cfg.auth.bearerToken = u.token;
  if (u.tokenFile) cfg.auth.bearerTokenFile = resolve(user.dir, u.tokenFile);
  if (u.username) cfg.auth.username = u.username;
  if (u.password) cfg.auth.password = u.password;
  if (u['auth-provider']) {
    throw new Error(`auth-provider "${u['auth-provider'].name ?? ''}" is not supported; use an exec credential plugin`);
  }
  if (u.exec) {
    if (!u.exec.command) throw new Error('exec plugin: command is required');
    if (!u.exec.apiVersion) throw new Error('exec plugin: apiVersion is required');
    const command = u.exec.command.includes(path.sep) && !path.isAbsolute(u.exec.command) ? path.join(user.dir, u.exec.command) : u.exec.command;
    const exec: ExecConfig = {
      apiVersion: u.exec.apiVersion,
      command,
      args: u.exec.args ?? [],
      env: u.exec.env ?? [],
      installHint: u.exec.installHint,
      provideClusterInfo: u.exec.provideClusterInfo === true,
      dir: user.dir,
    };
    const ext = (c.extensions ?? []).find((e) => e?.name === EXEC_EXTENSION);
    if (ext) exec.clusterConfig = ext.extension;
    cfg.auth.exec = exec;
  }
  return cfg;
}
