/**
 * The service-account signing key of `kcm up`: `<data-dir>/pki/sa.key`
 * (PKCS#8 PEM) and `sa.pub` (SPKI PEM), created once and reused, so tokens
 * stay valid across restarts. ECDSA P-256 (tokens signed ES256, which
 * kube-apiserver supports as it does RS256) rather than kubeadm's RSA 2048:
 * every pod's projected token is one signature, and a P-256 signature costs
 * a small fraction of an RSA one (as does making the key at first start).
 * A data directory made with an RSA key keeps it.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';

export interface ServiceAccountKey {
  keyPath: string;
  pubPath: string;
  privateKeyPem: string;
  publicKeyPem: string;
  created: boolean;
}

export function ensureServiceAccountKey(pkiDir: string): ServiceAccountKey {
  mkdirSync(pkiDir, { recursive: true, mode: 0o700 });
  const keyPath = join(pkiDir, 'sa.key');
  const pubPath = join(pkiDir, 'sa.pub');
  if (existsSync(keyPath) && existsSync(pubPath)) {
    return { keyPath, pubPath, privateKeyPem: readFileSync(keyPath, 'utf8'), publicKeyPem: readFileSync(pubPath, 'utf8'), created: false };
  }
  const { privateKey, publicKey } = generateKeyPairSync('ec', {
    namedCurve: 'prime256v1',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const write = (path: string, data: string, mode: number) => {
    const tmp = `${path}.tmp-${process.pid}`;
    writeFileSync(tmp, data, { mode });
    renameSync(tmp, path);
  };
  write(keyPath, privateKey, 0o600);
  write(pubPath, publicKey, 0o644);
  return { keyPath, pubPath, privateKeyPem: privateKey, publicKeyPem: publicKey, created: true };
}
