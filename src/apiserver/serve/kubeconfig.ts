/**
 * The admin kubeconfig the embedded API server writes for kubectl and kcm's
 * own components: cluster `kcm`, user `kcm-admin` (bearer token), context
 * `kcm`, current-context `kcm`. kubectl uses it as is.
 */
import { chmodSync, renameSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

export interface AdminKubeconfig {
  /** `https://127.0.0.1:6443`. */
  server: string;
  caPem: string;
  token: string;
}

export const kubeconfigNames = { cluster: 'kcm', user: 'kcm-admin', context: 'kcm' } as const;

export function renderKubeconfig(k: AdminKubeconfig): string {
  const { cluster, user, context } = kubeconfigNames;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: k.server, 'certificate-authority-data': Buffer.from(k.caPem).toString('base64') } }],
    users: [{ name: user, user: { token: k.token } }],
    contexts: [{ name: context, context: { cluster, user } }],
    'current-context': context,
    preferences: {},
  });
}

/** Writes the kubeconfig (mode 0600: it holds the admin token), replacing any previous one atomically. */
export function writeKubeconfig(path: string, k: AdminKubeconfig): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, renderKubeconfig(k), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
