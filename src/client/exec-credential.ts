/**
 * Exec credential plugins (client.authentication.k8s.io/v1 and v1beta1), as
 * kubectl runs them: the command with its args and env plus
 * KUBERNETES_EXEC_INFO (interactive: false), stdout parsed as an
 * ExecCredential. The credential is cached until its expirationTimestamp;
 * after a 401 the caller invalidates it and the plugin runs again.
 */
import { spawn } from 'node:child_process';
import type { Clock } from '../util/clock/clock.js';
import type { ExecConfig, RestConfig } from './rest-config.js';

export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;

export interface ExecCredential {
  token?: string;
  /** PEM client certificate and key. */
  clientCertificateData?: string;
  clientKeyData?: string;
  /** Epoch ms after which the credential is not used; undefined: until a 401. */
  expiresAt?: number;
}

export interface ExecCredentialProvider {
  /** The cached credential, running the plugin when there is none or it expired. */
  get(): Promise<ExecCredential>;
  /** Drops `used` from the cache (a 401 answered it), so the next get() runs the plugin again. */
  invalidate(used: ExecCredential): void;
}

export function newExecCredentialProvider(opts: { exec: ExecConfig; config: RestConfig; clock: Clock; env?: NodeJS.ProcessEnv }): ExecCredentialProvider {
  const { exec, clock } = opts;
  if (!(EXEC_API_VERSIONS as readonly string[]).includes(exec.apiVersion)) {
    throw new Error(`exec plugin: invalid apiVersion "${exec.apiVersion}"; supported: ${EXEC_API_VERSIONS.join(', ')}`);
  }
  let cached: ExecCredential | undefined;
  let running: Promise<ExecCredential> | undefined;
  const valid = (c: ExecCredential | undefined): c is ExecCredential => !!c && (c.expiresAt === undefined || clock.now() < c.expiresAt);
  return {
    get() {
      if (valid(cached)) return Promise.resolve(cached);
      running ??= runPlugin(exec, opts.config, opts.env ?? process.env)
        .then((c) => {
          cached = c;
          return c;
        })
        .finally(() => {
          running = undefined;
        });
      return running;
    },
    invalidate(used) {
      if (cached === used) cached = undefined;
    },
  };
}

function execInfo(exec: ExecConfig, config: RestConfig): string {
  const spec: Record<string, unknown> = { interactive: false };
  if (exec.provideClusterInfo) {
    const cluster: Record<string, unknown> = { server: config.host };
    if (config.tls.serverName) cluster['tls-server-name'] = config.tls.serverName;
    if (config.tls.insecureSkipTLSVerify) cluster['insecure-skip-tls-verify'] = true;
    if (config.tls.caData) cluster['certificate-authority-data'] = Buffer.from(config.tls.caData).toString('base64');
    if (exec.clusterConfig !== undefined) cluster.config = exec.clusterConfig;
    spec.cluster = cluster;
  }
  return JSON.stringify({ kind: 'ExecCredential', apiVersion: exec.apiVersion, spec });
}

function runPlugin(exec: ExecConfig, config: RestConfig, baseEnv: NodeJS.ProcessEnv): Promise<ExecCredential> {
  const env: NodeJS.ProcessEnv = { ...baseEnv };
  for (const e of exec.env ?? []) env[e.name] = e.value;
  env.KUBERNETES_EXEC_INFO = execInfo(exec, config);
  return new Promise<ExecCredential>((resolve, reject) => {
    const child = spawn(exec.command, exec.args ?? [], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') {
        const hint = exec.installHint ? `\n\n${exec.installHint}` : '';
        reject(new Error(`exec: executable "${exec.command}" not found${hint}`, { cause: e }));
      } else {
        reject(new Error(`exec: cannot run "${exec.command}": ${e.message}`, { cause: e }));
      }
    });
    child.on('close', (code, sig) => {
      const stderr = Buffer.concat(err).toString('utf8').trim();
      if (code !== 0) {
        const why = sig ? `was killed by ${sig}` : `failed with exit code ${code}`;
        reject(new Error(`exec: executable "${exec.command}" ${why}${stderr ? `: ${stderr}` : ''}`));
        return;
      }
      try {
        resolve(parseCredential(exec, Buffer.concat(out).toString('utf8')));
      } catch (e) {
        reject(e);
      }
    });
  });
}

/** Parses and checks a plugin's stdout. */
export function parseCredential(exec: Pick<ExecConfig, 'apiVersion' | 'command'>, stdout: string): ExecCredential {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(stdout) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`exec plugin "${exec.command}": decoding stdout: ${(e as Error).message}`, { cause: e });
  }
  if (doc.kind !== 'ExecCredential') throw new Error(`exec plugin "${exec.command}": returned kind "${String(doc.kind)}", want "ExecCredential"`);
  if (doc.apiVersion !== exec.apiVersion) {
    throw new Error(`exec plugin "${exec.command}" is configured to use API version "${exec.apiVersion}", plugin returned version "${String(doc.apiVersion)}"`);
  }
  const status = doc.status as Record<string, unknown> | undefined;
  if (!status || typeof status !== 'object') throw new Error(`exec plugin "${exec.command}" didn't return a status field`);
  const token = typeof status.token === 'string' && status.token ? status.token : undefined;
  const cert = typeof status.clientCertificateData === 'string' && status.clientCertificateData ? status.clientCertificateData : undefined;
  const key = typeof status.clientKeyData === 'string' && status.clientKeyData ? status.clientKeyData : undefined;
  if (!!cert !== !!key) throw new Error(`exec plugin "${exec.command}" returned only certificate or key, not both`);
  if (!token && !cert) throw new Error(`exec plugin "${exec.command}" didn't return a token or cert/key pair`);
  const cred: ExecCredential = {};
  if (token) cred.token = token;
  if (cert && key) {
    cred.clientCertificateData = cert;
    cred.clientKeyData = key;
  }
  if (typeof status.expirationTimestamp === 'string') {
    const at = Date.parse(status.expirationTimestamp);
    if (Number.isNaN(at)) throw new Error(`exec plugin "${exec.command}": invalid expirationTimestamp "${status.expirationTimestamp}"`);
    cred.expiresAt = at;
  }
  return cred;
}
