/**
 * The service-account signing key of `kcm up`: `<data-dir>/pki/sa.key`
 * (PKCS#8 PEM, RSA 2048 as kubeadm makes it) and `sa.pub` (SPKI PEM),
 * created once and reused, so tokens stay valid across restarts.
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
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
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
