/**
 * PKCS#10 certificate signing requests: parse one (subject, public key,
 * subjectAltNames, signature check), create one (kubelets, tests), and issue
 * an X.509 certificate for its public key from a CA, the way client-go's
 * authority.Sign with a PermissiveSigningPolicy does: subject and SANs come
 * from the request, key usages from the caller, no CA bit.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { formatIPv6, ipBytes } from '../net/ip.js';
import * as der from './der.js';
import { children, decodeOid, decodeString, DerError, expectTag, readOne, type Tlv } from './der-reader.js';

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  extensionRequest: '1.2.840.113549.1.9.14',
  subjectAltName: '2.5.29.17',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  basicConstraints: '2.5.29.19',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  rsaEncryption: '1.2.840.113549.1.1.1',
  ecPublicKey: '1.2.840.10045.2.1',
  ed25519: '1.3.101.112',
  sha256WithRSA: '1.2.840.113549.1.1.11',
  sha384WithRSA: '1.2.840.113549.1.1.12',
  sha512WithRSA: '1.2.840.113549.1.1.13',
  sha1WithRSA: '1.2.840.113549.1.1.5',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  ecdsaWithSHA384: '1.2.840.10045.4.3.3',
  ecdsaWithSHA512: '1.2.840.10045.4.3.4',
  p256: '1.2.840.10045.3.1.7',
  p384: '1.3.132.0.34',
  p521: '1.3.132.0.35',
};

/** What a request asks for. `subjectDer` and `publicKeyDer` are copied into the certificate verbatim. */
export interface CertificateRequest {
  /** DER of the whole request. */
  raw: Buffer;
  subjectDer: Buffer;
  commonName: string;
  organizations: string[];
  /** SubjectPublicKeyInfo DER. */
  publicKeyDer: Buffer;
  publicKeyAlgorithm: 'rsa' | 'ecdsa' | 'ed25519' | 'unknown';
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
}

export class CSRParseError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CSRParseError';
  }
}

/** Decodes the first PEM block; Go's ParseCSR message when it is not a CERTIFICATE REQUEST. */
export function pemBlock(pem: string | Buffer): { type: string; body: Buffer } | undefined {
  const text = Buffer.isBuffer(pem) ? pem.toString('latin1') : pem;
  const m = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(text);
  if (!m) return undefined;
  return { type: m[1]!, body: Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64') };
}

function parseName(name: Tlv): { commonName: string; organizations: string[] } {
  let commonName = '';
  const organizations: string[] = [];
  for (const rdn of children(name)) {
    for (const atv of children(rdn)) {
      const [type, value] = children(atv);
      if (!type || !value) continue;
      const o = decodeOid(expectTag(type, 0x06, 'attribute type').content);
      if (o === OID.commonName) commonName = decodeString(value);
      else if (o === OID.organization) organizations.push(decodeString(value));
    }
  }
  return { commonName, organizations };
}

function ipString(b: Buffer): string {
  if (b.length === 4) return [...b].join('.');
  if (b.length === 16) {
    const groups: number[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(i));
    return formatIPv6(groups);
  }
  throw new DerError('invalid IP address length in subjectAltName');
}

function keyAlgorithm(spki: Tlv): CertificateRequest['publicKeyAlgorithm'] {
  const alg = children(expectTag(children(spki)[0], 0x30, 'AlgorithmIdentifier'))[0];
  const o = decodeOid(expectTag(alg, 0x06, 'algorithm OID').content);
  if (o === OID.rsaEncryption) return 'rsa';
  if (o === OID.ecPublicKey) return 'ecdsa';
  if (o === OID.ed25519) return 'ed25519';
  return 'unknown';
}

function hashOf(sigAlgOid: string): string | null {
  switch (sigAlgOid) {
    case OID.sha256WithRSA:
    case OID.ecdsaWithSHA256:
      return 'sha256';
    case OID.sha384WithRSA:
    case OID.ecdsaWithSHA384:
      return 'sha384';
    case OID.sha512WithRSA:
    case OID.ecdsaWithSHA512:
      return 'sha512';
    case OID.sha1WithRSA:
      return 'sha1';
    case OID.ed25519:
      return null;
    default:
      throw new CSRParseError(`x509: cannot verify signature: algorithm unimplemented (${sigAlgOid})`);
  }
}

/**
 * Parses a PEM "CERTIFICATE REQUEST" and verifies its self-signature
 * (x509.ParseCertificateRequest + CheckSignature). Throws CSRParseError.
 */
export function parseCSR(pem: string | Buffer): CertificateRequest {
  const block = pemBlock(pem);
  if (!block || block.type !== 'CERTIFICATE REQUEST') throw new CSRParseError('PEM block type must be CERTIFICATE REQUEST');
  try {
    const top = expectTag(readOne(block.body), 0x30, 'CertificationRequest');
    const [info, sigAlg, sigBits] = children(top);
    const infoSeq = expectTag(info, 0x30, 'CertificationRequestInfo');
    const [, subject, spki, attrs] = children(infoSeq);
    expectTag(subject, 0x30, 'subject Name');
    expectTag(spki, 0x30, 'SubjectPublicKeyInfo');
    const req: CertificateRequest = {
      raw: block.body,
      subjectDer: Buffer.from(subject!.raw),
      ...parseName(subject!),
      publicKeyDer: Buffer.from(spki!.raw),
      publicKeyAlgorithm: keyAlgorithm(spki!),
      dnsNames: [],
      ipAddresses: [],
      emailAddresses: [],
      uris: [],
    };
    if (attrs && attrs.tag === 0xa0) {
      for (const attr of children(attrs)) {
        const [type, values] = children(attr);
        if (decodeOid(expectTag(type, 0x06, 'attribute OID').content) !== OID.extensionRequest) continue;
        for (const exts of children(expectTag(values, 0x31, 'attribute values'))) {
          for (const ext of children(exts)) {
            const parts = children(ext);
            if (decodeOid(expectTag(parts[0], 0x06, 'extension OID').content) !== OID.subjectAltName) continue;
            const value = expectTag(parts[parts.length - 1], 0x04, 'extension value');
            for (const gn of children(readOne(value.content))) {
              switch (gn.tag) {
                case 0x81:
                  req.emailAddresses.push(gn.content.toString('latin1'));
                  break;
                case 0x82:
                  req.dnsNames.push(gn.content.toString('latin1'));
                  break;
                case 0x86:
                  req.uris.push(gn.content.toString('latin1'));
                  break;
                case 0x87:
                  req.ipAddresses.push(ipString(gn.content));
                  break;
                default:
                  break;
              }
            }
          }
        }
      }
    }
    const algOid = decodeOid(expectTag(children(expectTag(sigAlg, 0x30, 'signatureAlgorithm'))[0], 0x06, 'signature OID').content);
    const sig = expectTag(sigBits, 0x03, 'signature').content.subarray(1);
    const key = createPublicKey({ key: req.publicKeyDer, format: 'der', type: 'spki' });
    if (!verify(hashOf(algOid), infoSeq.raw, key, sig)) throw new CSRParseError('x509: ECDSA verification failure');
    return req;
  } catch (err) {
    if (err instanceof CSRParseError) throw err;
    throw new CSRParseError(`x509: malformed certificate request: ${(err as Error).message}`, { cause: err });
  }
}

function toPem(label: string, body: Buffer): string {
  const b64 = body.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

function generalNames(o: { dnsNames?: string[]; ipAddresses?: string[]; emailAddresses?: string[]; uris?: string[] }): Buffer[] {
  const out: Buffer[] = [];
  for (const d of o.dnsNames ?? []) out.push(der.context(2, Buffer.from(d, 'latin1'), false));
  for (const e of o.emailAddresses ?? []) out.push(der.context(1, Buffer.from(e, 'latin1'), false));
  for (const ip of o.ipAddresses ?? []) out.push(der.context(7, ipBytes(ip), false));
  for (const u of o.uris ?? []) out.push(der.context(6, Buffer.from(u, 'latin1'), false));
  return out;
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? der.sequence(der.oid(id), der.boolean(true), der.octetString(value)) : der.sequence(der.oid(id), der.octetString(value));
}

/** Signature AlgorithmIdentifier and hash for a signing key, as Go picks them. */
function signatureAlgorithm(key: KeyObject): { alg: Buffer; hash: string | null } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { alg: der.sequence(der.oid(OID.sha256WithRSA), der.nullValue()), hash: 'sha256' };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'secp384r1') return { alg: der.sequence(der.oid(OID.ecdsaWithSHA384)), hash: 'sha384' };
      if (curve === 'secp521r1') return { alg: der.sequence(der.oid(OID.ecdsaWithSHA512)), hash: 'sha512' };
      return { alg: der.sequence(der.oid(OID.ecdsaWithSHA256)), hash: 'sha256' };
    }
    case 'ed25519':
      return { alg: der.sequence(der.oid(OID.ed25519)), hash: null };
    default:
      throw new Error(`unsupported signing key type ${key.asymmetricKeyType}`);
  }
}

export interface NewCSROptions {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  emailAddresses?: string[];
  uris?: string[];
  /** Default: a fresh ECDSA P-256 key. */
  keyPem?: string;
}

/** A PEM CSR and its private key (what a kubelet or `openssl req` produces). */
export function newCSR(opts: NewCSROptions): { csrPem: string; keyPem: string } {
  const priv = opts.keyPem ? createPrivateKey(opts.keyPem) : generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const pub = createPublicKey(priv);
  const rdns = (opts.organizations ?? []).map((o) => der.set(der.sequence(der.oid(OID.organization), der.utf8String(o))));
  rdns.push(der.set(der.sequence(der.oid(OID.commonName), der.utf8String(opts.commonName))));
  const sans = generalNames(opts);
  const attrs = sans.length
    ? der.context(0, der.sequence(der.oid(OID.extensionRequest), der.set(der.sequence(extension(OID.subjectAltName, false, der.sequence(...sans))))))
    : der.context(0, Buffer.alloc(0));
  const info = der.sequence(der.integer(0), der.sequence(...rdns), Buffer.from(pub.export({ type: 'spki', format: 'der' })), attrs);
  const { alg, hash } = signatureAlgorithm(priv);
  const sig = sign(hash, info, priv);
  return { csrPem: toPem('CERTIFICATE REQUEST', der.sequence(info, alg, der.bitString(sig))), keyPem: priv.export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** Key usage names of certificates.k8s.io/v1 and their X.509 keyUsage bit. */
const KEY_USAGE_BITS: Record<string, number> = {
  signing: 0,
  'digital signature': 0,
  'content commitment': 1,
  'key encipherment': 2,
  'data encipherment': 3,
  'key agreement': 4,
  'cert sign': 5,
  'crl sign': 6,
  'encipher only': 7,
  'decipher only': 8,
};
/** Extended key usage names and their OIDs. */
const EXT_KEY_USAGE_OIDS: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** A CA able to issue certificates: its certificate and private key (PEM). */
export interface SigningCA {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  /** certificates.k8s.io usages (`digital signature`, `client auth`, ...); unknown names throw. */
  usages: string[];
  /** Requested lifetime in ms. */
  ttlMs: number;
  /** Now, in ms since the epoch (from the caller's clock). */
  now: number;
  /** Backdating of notBefore (5 min upstream), skipped when ttlMs < shortMs (8 h upstream). */
  backdateMs?: number;
  shortMs?: number;
}

function caSubjectAndKeyId(cert: X509Certificate): { subject: Buffer; keyId?: Buffer } {
  const top = readOne(cert.raw);
  const tbsFields = children(children(top)[0]!);
  const hasVersion = tbsFields[0]!.tag === 0xa0;
  const subject = tbsFields[(hasVersion ? 1 : 0) + 4]!;
  let keyId: Buffer | undefined;
  const extsField = tbsFields.find((f) => f.tag === 0xa3);
  if (extsField) {
    for (const ext of children(children(extsField)[0]!)) {
      const parts = children(ext);
      if (decodeOid(parts[0]!.content) !== OID.subjectKeyIdentifier) continue;
      keyId = Buffer.from(readOne(parts[parts.length - 1]!.content).content);
    }
  }
  return { subject: Buffer.from(subject.raw), ...(keyId ? { keyId } : {}) };
}

/**
 * Issues a certificate for `req` from `ca` (PEM "CERTIFICATE"): serial of
 * 128 random bits, notAfter capped by the CA's own notAfter, AKI from the
 * CA's SKI. Throws when a usage is unknown or the CA has expired.
 */
export function issueCertificate(ca: SigningCA, req: CertificateRequest, opts: IssueOptions): string {
  const caCert = new X509Certificate(ca.certPem);
  const caKey = createPrivateKey(ca.keyPem);
  const caNotAfter = Date.parse(caCert.validTo);
  const keyBits: number[] = [];
  const ekus: string[] = [];
  for (const u of opts.usages) {
    if (u in KEY_USAGE_BITS) keyBits.push(KEY_USAGE_BITS[u]!);
    else if (u in EXT_KEY_USAGE_OIDS) ekus.push(EXT_KEY_USAGE_OIDS[u]!);
    else throw new Error(`unrecognized usage: ${u}`);
  }
  let backdate = opts.backdateMs ?? 0;
  if (opts.ttlMs < (opts.shortMs ?? 0)) backdate = 0;
  const notBefore = opts.now - backdate;
  let notAfter = opts.now + opts.ttlMs - backdate;
  if (!(opts.now < caNotAfter)) throw new Error('the signer has expired: NotAfter=' + caCert.validTo);
  if (notAfter > caNotAfter) notAfter = caNotAfter;

  const { subject: issuer, keyId } = caSubjectAndKeyId(caCert);
  const exts: Buffer[] = [];
  if (keyBits.length) exts.push(extension(OID.keyUsage, true, der.namedBits([...new Set(keyBits)])));
  if (ekus.length) exts.push(extension(OID.extKeyUsage, false, der.sequence(...[...new Set(ekus)].map((o) => der.oid(o)))));
  exts.push(extension(OID.basicConstraints, true, der.sequence()));
  if (keyId) exts.push(extension(OID.authorityKeyIdentifier, false, der.sequence(der.context(0, keyId, false))));
  const sans = generalNames(req);
  if (sans.length) exts.push(extension(OID.subjectAltName, false, der.sequence(...sans)));

  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const { alg, hash } = signatureAlgorithm(caKey);
  const tbs = der.sequence(
    der.context(0, der.integer(2)),
    der.integer(serial),
    alg,
    issuer,
    der.sequence(der.time(notBefore), der.time(notAfter)),
    req.subjectDer,
    req.publicKeyDer,
    der.context(3, der.sequence(...exts)),
  );
  const signature = sign(hash, tbs, caKey);
  return toPem('CERTIFICATE', der.sequence(tbs, alg, der.bitString(signature)));
}
