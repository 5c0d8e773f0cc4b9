/**
 * Service-account JWTs as kube-apiserver signs and verifies them
 * (pkg/serviceaccount/jwt.go, legacy.go, claims.go), with node:crypto.
 *
 * - Signing: RS256 for RSA keys; ES256 / ES384 / ES512 for EC P-256 / P-384 /
 *   P-521 keys. The header carries `kid` = base64url(SHA-256(DER SPKI of
 *   the public key)), as upstream's keyIDFromPublicKey.
 * - Legacy (secret-based) tokens: iss `kubernetes/serviceaccount`, sub
 *   `system:serviceaccount:<ns>:<name>` and the four
 *   `kubernetes.io/serviceaccount/...` claims.
 * - Verification: signature against any of the given public keys, issuer,
 *   time bounds and (bound tokens) audience; the caller still checks that
 *   the referenced Secret / ServiceAccount / Pod exist with the same uid
 *   (upstream's validator does those lookups).
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { realClock } from '../../util/clock/clock.js';

export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
export const SERVICE_ACCOUNT_USERNAME_PREFIX = 'system:serviceaccount:';
export const ALL_SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

export type JWTAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512';

/** Claims of a legacy token (the secret-based ones this controller writes). */
export interface LegacyClaims extends Claims {
  iss: string;
  sub: string;
  'kubernetes.io/serviceaccount/namespace': string;
  'kubernetes.io/serviceaccount/secret.name': string;
  'kubernetes.io/serviceaccount/service-account.name': string;
  'kubernetes.io/serviceaccount/service-account.uid': string;
}

/** The `kubernetes.io` claim of a bound token (TokenRequest). */
export interface BoundPrivateClaims {
  namespace: string;
  serviceaccount: { name: string; uid: string };
  pod?: { name: string; uid: string };
  secret?: { name: string; uid: string };
  node?: { name: string; uid: string };
  warnafter?: number;
}

export type Claims = Record<string, unknown>;

export function makeUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USERNAME_PREFIX}${namespace}:${name}`;
}

/** The legacy claims for the token stored in `secretName` of service account `sa`. */
export function legacyClaims(sa: { namespace: string; name: string; uid: string }, secretName: string): LegacyClaims {
  return {
    iss: LEGACY_ISSUER,
    sub: makeUsername(sa.namespace, sa.name),
    'kubernetes.io/serviceaccount/namespace': sa.namespace,
    'kubernetes.io/serviceaccount/secret.name': secretName,
    'kubernetes.io/serviceaccount/service-account.name': sa.name,
    'kubernetes.io/serviceaccount/service-account.uid': sa.uid,
  };
}

function b64url(buf: Buffer | string): string {
  return Buffer.from(buf).toString('base64url');
}

function algorithmFor(key: KeyObject): JWTAlgorithm {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RS256';
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1' || curve === 'P-256') return 'ES256';
      if (curve === 'secp384r1' || curve === 'P-384') return 'ES384';
      if (curve === 'secp521r1' || curve === 'P-521') return 'ES512';
      throw new Error(`unsupported EC curve ${curve ?? '?'} for service account tokens`);
    }
    default:
      throw new Error(`unsupported key type ${key.asymmetricKeyType ?? '?'} for service account tokens (RSA or EC)`);
  }
}

function hashFor(alg: JWTAlgorithm): string {
  return alg === 'ES384' ? 'sha384' : alg === 'ES512' ? 'sha512' : 'sha256';
}

/** base64url(SHA-256(DER SPKI)), upstream's key id. */
export function keyIDFromPublicKey(publicKey: KeyObject): string {
  return b64url(createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest());
}

export interface TokenGenerator {
  readonly algorithm: JWTAlgorithm;
  readonly keyID: string;
  /** Signs `claims` (iss is set to the generator's issuer unless present). */
  generate(claims: Claims): string;
}

/** A signer for `privateKeyPem` (PKCS#1, PKCS#8 or SEC1 PEM). Throws when the key is unusable. */
export function newTokenGenerator(privateKeyPem: string, issuer: string = LEGACY_ISSUER): TokenGenerator {
  const key = createPrivateKey(privateKeyPem);
  const alg = algorithmFor(key);
  const keyID = keyIDFromPublicKey(createPublicKey(key));
  return {
    algorithm: alg,
    keyID,
    generate(claims) {
      const header = b64url(JSON.stringify({ alg, kid: keyID }));
      const payload = b64url(JSON.stringify({ iss: issuer, ...claims }));
      const input = `${header}.${payload}`;
      const sig = sign(hashFor(alg), Buffer.from(input), alg === 'RS256' ? key : { key, dsaEncoding: 'ieee-p1363' });
      return `${input}.${b64url(sig)}`;
    },
  };
}

export class TokenVerificationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TokenVerificationError';
  }
}

/** Who a verified token authenticates, and what the caller must still check exists. */
export interface ServiceAccountTokenInfo {
  /** `system:serviceaccount:<ns>:<name>` */
  username: string;
  /** The service account's uid. */
  uid: string;
  /** `system:serviceaccounts`, `system:serviceaccounts:<ns>` */
  groups: string[];
  namespace: string;
  serviceAccountName: string;
  /** Legacy tokens: the Secret holding the token (must exist, not being deleted, with this token). */
  secretName?: string;
  /** Bound tokens: the objects the token is bound to. */
  pod?: { name: string; uid: string };
  secret?: { name: string; uid: string };
  node?: { name: string; uid: string };
  /** 'legacy' or 'bound'. */
  kind: 'legacy' | 'bound';
  claims: Claims;
}

export interface VerifyOptions {
  /** Accepted issuers (default: the legacy issuer only). */
  issuers?: readonly string[];
  /** Bound tokens must name one of these in `aud` when given. */
  audiences?: readonly string[];
  /** Epoch ms (default: the real clock); exp/nbf are checked with 60 s leeway. */
  now?: number;
}

const LEEWAY_S = 60;

function keysOf(pems: string | readonly string[]): KeyObject[] {
  const out: KeyObject[] = [];
  for (const p of typeof pems === 'string' ? [pems] : pems) {
    // A PEM file may hold several keys (or certificates); each block is tried.
    const blocks = p.match(/-----BEGIN [^-]+-----[\s\S]*?-----END [^-]+-----/g) ?? [p];
    for (const b of blocks) {
      try {
        out.push(createPublicKey(b));
      } catch (err) {
        throw new TokenVerificationError('cannot read service account public key', { cause: err });
      }
    }
  }
  return out;
}

/**
 * Verifies a service-account JWT against `publicKeyPem` (one PEM, several
 * PEMs, or an array; public keys, private keys or certificates). Throws
 * TokenVerificationError when the token is malformed, the signature or
 * issuer does not match, it expired, or required claims are missing.
 */
export function verifyServiceAccountToken(token: string, publicKeyPem: string | readonly string[], opts: VerifyOptions = {}): ServiceAccountTokenInfo {
  const parts = token.split('.');
  if (parts.length !== 3) throw new TokenVerificationError('token is not a JWT');
  const [h, p, s] = parts as [string, string, string];
  let header: { alg?: string; kid?: string };
  let claims: Claims;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { alg?: string };
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Claims;
  } catch (err) {
    throw new TokenVerificationError('token is not a JWT', { cause: err });
  }
  if (typeof claims !== 'object' || claims === null) throw new TokenVerificationError('token claims are not an object');
  const issuers = opts.issuers ?? [LEGACY_ISSUER];
  if (typeof claims.iss !== 'string' || !issuers.includes(claims.iss)) throw new TokenVerificationError('token issuer is not accepted');
  const alg = header.alg;
  if (alg !== 'RS256' && alg !== 'ES256' && alg !== 'ES384' && alg !== 'ES512') throw new TokenVerificationError(`unsupported signing algorithm ${String(alg)}`);
  const input = Buffer.from(`${h}.${p}`);
  const sig = Buffer.from(s, 'base64url');
  const ok = keysOf(publicKeyPem).some((key) => {
    try {
      if (alg !== algorithmFor(key)) return false;
      return verify(hashFor(alg), input, alg === 'RS256' ? key : { key, dsaEncoding: 'ieee-p1363' }, sig);
    } catch {
      return false;
    }
  });
  if (!ok) throw new TokenVerificationError('token signature is invalid');

  const nowS = Math.floor((opts.now ?? realClock.now()) / 1000);
  if (typeof claims.exp === 'number' && nowS > claims.exp + LEEWAY_S) throw new TokenVerificationError('token has expired');
  if (typeof claims.nbf === 'number' && nowS < claims.nbf - LEEWAY_S) throw new TokenVerificationError('token is not valid yet');

  const bound = claims['kubernetes.io'] as BoundPrivateClaims | undefined;
  if (bound && typeof bound === 'object') {
    if (opts.audiences?.length) {
      const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? (claims.aud as string[]) : [];
      if (!aud.some((a) => opts.audiences!.includes(a))) throw new TokenVerificationError('token audiences are not accepted');
    }
    const ns = bound.namespace;
    const sa = bound.serviceaccount;
    if (!ns || !sa?.name || !sa.uid) throw new TokenVerificationError('token is missing the kubernetes.io service account claims');
    if (claims.sub !== makeUsername(ns, sa.name)) throw new TokenVerificationError('token subject does not match its service account');
    return {
      username: makeUsername(ns, sa.name),
      uid: sa.uid,
      groups: [ALL_SERVICE_ACCOUNTS_GROUP, `${ALL_SERVICE_ACCOUNTS_GROUP}:${ns}`],
      namespace: ns,
      serviceAccountName: sa.name,
      ...(bound.pod ? { pod: bound.pod } : {}),
      ...(bound.secret ? { secret: bound.secret } : {}),
      ...(bound.node ? { node: bound.node } : {}),
      kind: 'bound',
      claims,
    };
  }

  const ns = claims['kubernetes.io/serviceaccount/namespace'];
  const secretName = claims['kubernetes.io/serviceaccount/secret.name'];
  const saName = claims['kubernetes.io/serviceaccount/service-account.name'];
  const saUID = claims['kubernetes.io/serviceaccount/service-account.uid'];
  if (typeof ns !== 'string' || !ns) throw new TokenVerificationError('namespace claim is missing');
  if (typeof secretName !== 'string' || !secretName) throw new TokenVerificationError('secretName claim is missing');
  if (typeof saName !== 'string' || !saName) throw new TokenVerificationError('serviceAccountName claim is missing');
  if (typeof saUID !== 'string' || !saUID) throw new TokenVerificationError('serviceAccountUID claim is missing');
  if (claims.sub !== makeUsername(ns, saName)) throw new TokenVerificationError('token subject does not match its service account');
  return {
    username: makeUsername(ns, saName),
    uid: saUID,
    groups: [ALL_SERVICE_ACCOUNTS_GROUP, `${ALL_SERVICE_ACCOUNTS_GROUP}:${ns}`],
    namespace: ns,
    serviceAccountName: saName,
    secretName,
    kind: 'legacy',
    claims,
  };
}
