/**
 * In-cluster configuration (client-go rest.InClusterConfig): the API server
 * from KUBERNETES_SERVICE_HOST/PORT, the service account token and CA from
 * the mounted secret. The token is re-read every minute by the client
 * (bearerTokenFile), so rotated tokens are used.
 */
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { newRestConfig, type RestConfig } from './rest-config.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface InClusterOptions {
  /** Where token and ca.crt live (default SERVICE_ACCOUNT_DIR). */
  serviceAccountDir?: string;
}

/** Fails with a clear message when not running in a pod. */
export async function inClusterConfig(env: NodeJS.ProcessEnv = process.env, opts: InClusterOptions = {}): Promise<RestConfig> {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new Error('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined');
  }
  const dir = opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const tokenFile = path.join(dir, 'token');
  const caFile = path.join(dir, 'ca.crt');
  let token: string;
  try {
    token = (await readFile(tokenFile, 'utf8')).trim();
  } catch (err) {
    throw new Error(`unable to read in-cluster service account token "${tokenFile}": ${(err as Error).message}`, { cause: err });
  }
  const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const cfg = newRestConfig({ host: `https://${hostPart}:${port}` });
  cfg.auth = { bearerToken: token, bearerTokenFile: tokenFile };
  cfg.tls = { caFile };
  return cfg;
}
