/**
 * X.509 certificates for kcm's own serving and client authentication: a
 * self-signed CA, serving certificates with SANs and client certificates
 * (CN = user, O = groups), all ECDSA P-256 / SHA-256, built with node:crypto
 * and a small DER encoder (no external tooling).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { ipBytes } from '../net/ip.js';
import * as der from './der.js';

export interface KeyPair {
  /** PEM "CERTIFICATE". */
  certPem: string;
  /** PEM "PRIVATE KEY" (PKCS#8). */
  keyPem: string;
}

export interface CertOptions {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  /** server: TLS serving; client: TLS client auth; both: either. */
  usage?: 'server' | 'client' | 'both';
  validityDays?: number;
  /** Start of validity (defaults to one hour ago, to tolerate clock skew). */
  notBefore?: number;
}

const OID = {
  ecPublicKey: '1.2.840.10045.2.1',
  prime256v1: '1.2.840.10045.3.1.7',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

function name(cn: string, orgs: string[] = []): Buffer {
  const rdns = orgs.map((o) => der.set(der.sequence(der.oid(OID.organization), der.utf8String(o))));
  rdns.push(der.set(der.sequence(der.oid(OID.commonName), der.utf8String(cn))));
  return der.sequence(...rdns);
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? der.sequence(der.oid(id), der.boolean(true), der.octetString(value)) : der.sequence(der.oid(id), der.octetString(value));
}

/** A stable 20-byte identifier of a public key (truncated SHA-256 of its SPKI). */
function keyId(pub: KeyObject): Buffer {
  const spki = pub.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest().subarray(0, 20);
}

function toPem(label: string, body: Buffer): string {
  const b64 = body.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

interface Issuer {
  name: Buffer;
  key: KeyObject;
  keyId: Buffer;
}

function build(opts: CertOptions & { isCA: boolean }, subjectKey: KeyObject, issuer: Issuer | undefined, subjectPriv: KeyObject): string {
  const pub = subjectKey;
  const spki = pub.export({ type: 'spki', format: 'der' });
  const subject = name(opts.commonName, opts.organizations);
  const ski = keyId(pub);
  const notBefore = opts.notBefore ?? Date.now() - 3600_000;
  const notAfter = notBefore + (opts.validityDays ?? 365) * 86400_000;
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const sigAlg = der.sequence(der.oid(OID.ecdsaWithSHA256));

  const exts: Buffer[] = [];
  exts.push(extension(OID.basicConstraints, true, opts.isCA ? der.sequence(der.boolean(true)) : der.sequence()));
  // keyUsage bits: digitalSignature(0), keyEncipherment(2), keyCertSign(5), cRLSign(6)
  exts.push(extension(OID.keyUsage, true, opts.isCA ? der.namedBits([0, 2, 5]) : der.namedBits([0, 2])));
  if (!opts.isCA) {
    const usage = opts.usage ?? 'server';
    const ekus: Buffer[] = [];
    if (usage === 'server' || usage === 'both') ekus.push(der.oid(OID.serverAuth));
    if (usage === 'client' || usage === 'both') ekus.push(der.oid(OID.clientAuth));
    exts.push(extension(OID.extKeyUsage, false, der.sequence(...ekus)));
  }
  exts.push(extension(OID.subjectKeyIdentifier, false, der.octetString(ski)));
  if (issuer) exts.push(extension(OID.authorityKeyIdentifier, false, der.sequence(der.context(0, issuer.keyId, false))));
  const sans: Buffer[] = [];
  for (const d of opts.dnsNames ?? []) sans.push(der.context(2, Buffer.from(d, 'ascii'), false));
  for (const ip of opts.ipAddresses ?? []) sans.push(der.context(7, ipBytes(ip), false));
  if (sans.length) exts.push(extension(OID.subjectAltName, false, der.sequence(...sans)));

  const tbs = der.sequence(
    der.context(0, der.integer(2)), // v3
    der.integer(serial),
    sigAlg,
    issuer ? issuer.name : subject,
    der.sequence(der.time(notBefore), der.time(notAfter)),
    subject,
    Buffer.from(spki),
    der.context(3, der.sequence(...exts)),
  );
  const signature = sign('sha256', tbs, issuer ? issuer.key : subjectPriv); // DER ECDSA-Sig-Value
  return toPem('CERTIFICATE', der.sequence(tbs, sigAlg, der.bitString(signature)));
}

function newKey(): { priv: KeyObject; pub: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { priv: privateKey, pub: publicKey };
}

/** A self-signed certificate authority. */
export function newCA(commonName: string, validityDays = 3650): KeyPair {
  const { priv, pub } = newKey();
  const certPem = build({ commonName, isCA: true, validityDays }, pub, undefined, priv);
  return { certPem, keyPem: priv.export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** A certificate signed by `ca`. */
export function newSignedCert(ca: KeyPair, opts: CertOptions): KeyPair {
  const caCert = new X509Certificate(ca.certPem);
  const caKey = createPrivateKey(ca.keyPem);
  const caPub = createPublicKey(caKey);
  const issuer: Issuer = { name: issuerName(caCert), key: caKey, keyId: keyId(caPub) };
  const { priv, pub } = newKey();
  const certPem = build({ ...opts, isCA: false }, pub, issuer, priv);
  return { certPem, keyPem: priv.export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** The DER subject Name of a certificate (used as the issuer of certificates it signs). */
function issuerName(cert: X509Certificate): Buffer {
  // Walk the DER: Certificate -> TBSCertificate -> fields; subject is the 6th element (after version [0]).
  const raw = cert.raw;
  const readTL = (buf: Buffer, off: number) => {
    const tag = buf[off]!;
    let len = buf[off + 1]!;
    let hdr = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + buf[off + 2 + i]!;
      hdr = 2 + n;
    }
    return { tag, start: off + hdr, end: off + hdr + len, headerStart: off };
  };
  const certSeq = readTL(raw, 0);
  const tbs = readTL(raw, certSeq.start);
  let off = tbs.start;
  const fields: { start: number; end: number; headerStart: number; tag: number }[] = [];
  while (off < tbs.end) {
    const f = readTL(raw, off);
    fields.push(f);
    off = f.end;
  }
  const hasVersion = fields[0]!.tag === 0xa0;
  const subject = fields[(hasVersion ? 1 : 0) + 4]!;
  return Buffer.from(raw.subarray(subject.headerStart, subject.end));
}

/** The identity a client certificate asserts: CN is the user, O entries the groups. */
export function certIdentity(cert: X509Certificate): { user: string; groups: string[] } {
  const parts = cert.subject.split('\n');
  const user = parts.find((p) => p.startsWith('CN='))?.slice(3) ?? '';
  const groups = parts.filter((p) => p.startsWith('O=')).map((p) => p.slice(2));
  return { user, groups };
}
