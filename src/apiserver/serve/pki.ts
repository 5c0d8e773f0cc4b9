/**
 * The API server's on-disk PKI under `<dataDir>/pki`: a CA, the serving
 * certificate and the admin bearer token. Created on first start and reused
 * afterwards, so kubeconfigs and client certificates stay valid across
 * restarts. The serving certificate is re-issued when it no longer covers the
 * wanted names, was not signed by the CA, or expires within 30 days.
 *
 * Keys and tokens are written with mode 0600, certificates 0644; every file is
 * written to a temporary name and renamed, so a crash never leaves half a key.
 */
import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newCA, newSignedCert, type KeyPair } from '../../util/cert/cert.js';
import { ipFamily } from '../../util/net/ip.js';
import type { Logger } from '../../util/log/logger.js';

/** The DNS names kube-apiserver always puts in its serving certificate. */
export const defaultServingDnsNames = [
  'localhost',
  'kubernetes',
  'kubernetes.default',
  'kubernetes.default.svc',
  'kubernetes.default.svc.cluster.local',
] as const;

export interface PkiOptions {
  /** Names the serving certificate must cover, besides defaultServingDnsNames. */
  dnsNames?: string[];
  /** IPs the serving certificate must cover (127.0.0.1 and ::1 are always added). */
  ipAddresses?: string[];
  /** Milliseconds since the epoch; default Date.now(). */
  now?: number;
  logger?: Logger;
}

export interface Pki {
  ca: KeyPair;
  serving: KeyPair;
  /** The admin bearer token (32 random bytes, base64url). */
  adminToken: string;
  /** Paths of the files, for kubeconfigs and messages. */
  paths: { dir: string; caCert: string; caKey: string; servingCert: string; servingKey: string; adminToken: string };
  /** What this call created or re-issued (empty on a plain reuse). */
  created: Array<'ca' | 'serving' | 'admin-token'>;
}

const renewBeforeMs = 30 * 86400_000;

function writeSecure(path: string, data: string, mode: number): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data, { mode });
  chmodSync(tmp, mode); // umask may have narrowed or the file pre-existed
  renameSync(tmp, path);
}

function readPair(certPath: string, keyPath: string): KeyPair | undefined {
  if (!existsSync(certPath) || !existsSync(keyPath)) return undefined;
  return { certPem: readFileSync(certPath, 'utf8'), keyPem: readFileSync(keyPath, 'utf8') };
}

/**
 * Why `serving` cannot be reused (undefined: it can): it must be signed by
 * `ca`, cover every wanted name and stay valid for 30 more days.
 */
export function servingCertProblem(serving: KeyPair, ca: KeyPair, dnsNames: readonly string[], ips: readonly string[], now: number): string | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(serving.certPem);
  } catch (err) {
    return `unreadable certificate: ${(err as Error).message}`;
  }
  if (!cert.verify(new X509Certificate(ca.certPem).publicKey)) return 'not signed by the CA';
  if (!cert.checkPrivateKey(createPrivateKey(serving.keyPem))) return 'key does not match the certificate';
  if (Date.parse(cert.validTo) - now < renewBeforeMs) return `expires ${cert.validTo}`;
  for (const name of dnsNames) if (cert.checkHost(name, { subject: 'never', wildcards: false }) === undefined) return `does not cover ${name}`;
  for (const ip of ips) if (cert.checkIP(ip) === undefined) return `does not cover ${ip}`;
  return undefined;
}

/** Loads the PKI under `dir`, creating or renewing what is missing or unfit. */
export function ensurePki(dir: string, opts: PkiOptions = {}): Pki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const now = opts.now ?? Date.now();
  const paths = {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    adminToken: join(dir, 'admin.token'),
  };
  const created: Pki['created'] = [];

  let ca = readPair(paths.caCert, paths.caKey);
  if (ca) {
    const caCert = new X509Certificate(ca.certPem);
    if (!caCert.ca || Date.parse(caCert.validTo) <= now) {
      opts.logger?.warn({ path: paths.caCert, validTo: caCert.validTo }, 'CA unusable; creating a new one (existing client certificates stop working)');
      ca = undefined;
    }
  }
  if (!ca) {
    ca = newCA('kcm-ca');
    writeSecure(paths.caKey, ca.keyPem, 0o600);
    writeSecure(paths.caCert, ca.certPem, 0o644);
    created.push('ca');
  }

  const dnsNames = [...new Set([...defaultServingDnsNames, ...(opts.dnsNames ?? [])])];
  const ipAddresses = [...new Set(['127.0.0.1', '::1', ...(opts.ipAddresses ?? [])])].filter((ip) => ipFamily(ip) !== 0);
  let serving = readPair(paths.servingCert, paths.servingKey);
  const problem = serving ? servingCertProblem(serving, ca, dnsNames, ipAddresses, now) : 'missing';
  if (problem !== undefined) {
    if (serving) opts.logger?.info({ reason: problem }, 're-issuing the serving certificate');
    serving = newSignedCert(ca, { commonName: 'kube-apiserver', dnsNames, ipAddresses, usage: 'server', validityDays: 365, notBefore: now - 3600_000 });
    writeSecure(paths.servingKey, serving.keyPem, 0o600);
    writeSecure(paths.servingCert, serving.certPem, 0o644);
    created.push('serving');
  }

  let adminToken = existsSync(paths.adminToken) ? readFileSync(paths.adminToken, 'utf8').trim() : '';
  if (adminToken === '') {
    adminToken = randomBytes(32).toString('base64url');
    writeSecure(paths.adminToken, adminToken + '\n', 0o600);
    created.push('admin-token');
  }
  return { ca, serving: serving!, adminToken, paths, created };
}
