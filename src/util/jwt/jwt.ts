/**
 * Compact-serialized JWS tokens (RFC 7515/7519) signed with RSA PKCS#1 v1.5
 * (RS256/384/512) or ECDSA (ES256/384/512, raw r||s signatures as JWS
 * requires), on node:crypto. No `none`, no HMAC: a verifier holds public
 * keys only, and the header's `alg` must match the key's type, so a token
 * cannot pick a weaker check than the key implies.
 */
import { sign as cryptoSign, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { algorithmFor, keyId, type JwtAlgorithm } from './keys.js';
import type { Claims } from './claims.js';

export interface JwtHeader {
  alg: JwtAlgorithm;
  typ?: string;
  kid?: string;
}

/** Why a token was not accepted; `reason` is stable for callers, the message is for people. */
export class JwtError extends Error {
  constructor(
    readonly reason: 'malformed' | 'unsupported-algorithm' | 'unknown-key' | 'bad-signature',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'JwtError';
  }
}

const hashOf: Record<JwtAlgorithm, string> = { RS256: 'sha256', RS384: 'sha384', RS512: 'sha512', ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' };

function b64json(v: unknown): string {
  return Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
}

export interface SignOptions {
  /** Default: the key's own algorithm (algorithmFor). */
  alg?: JwtAlgorithm;
  /** Default: keyId(key); '' leaves kid out. */
  kid?: string;
}

/** Signs `claims` with a private key and returns `header.payload.signature`. */
export function signJwt(claims: Claims, key: KeyObject, opts: SignOptions = {}): string {
  if (key.type !== 'private') throw new TypeError('signJwt needs a private key');
  const alg = opts.alg ?? algorithmFor(key);
  const kid = opts.kid ?? keyId(key);
  const header: JwtHeader = { alg, ...(kid ? { kid } : {}) };
  const input = `${b64json(header)}.${b64json(claims)}`;
  const sig = cryptoSign(hashOf[alg], Buffer.from(input), alg.startsWith('ES') ? { key, dsaEncoding: 'ieee-p1363' } : key);
  return `${input}.${sig.toString('base64url')}`;
}

const b64url = /^[A-Za-z0-9_-]*$/;

function part<T>(s: string, what: string): T {
  if (!b64url.test(s)) throw new JwtError('malformed', `${what} is not base64url`);
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object');
    return v as T;
  } catch (err) {
    throw new JwtError('malformed', `${what} is not a JSON object`, { cause: err });
  }
}

/** Header and claims without checking anything (for routing a token to its verifier). Throws JwtError('malformed'). */
export function decodeJwt(token: string): { header: JwtHeader; claims: Claims } {
  const parts = token.split('.');
  if (parts.length !== 3) throw new JwtError('malformed', 'token is not a compact JWS (three parts)');
  return { header: part<JwtHeader>(parts[0]!, 'header'), claims: part<Claims>(parts[1]!, 'payload') };
}

/** Whether `token` looks like a JWT (three dot-separated parts with a JSON header naming an algorithm). */
export function looksLikeJwt(token: string): boolean {
  try {
    const { header } = decodeJwt(token);
    return typeof header.alg === 'string';
  } catch {
    return false;
  }
}

/**
 * Verifies the signature with one of `keys` (public or private) and returns
 * header and claims. Claims are not checked here (see checkTimes): the
 * caller decides which apply. A `kid` in the header that names one of the
 * keys selects it; otherwise every key of the header's algorithm is tried.
 */
export function verifyJwt(token: string, keys: readonly KeyObject[]): { header: JwtHeader; claims: Claims } {
  const { header, claims } = decodeJwt(token);
  const alg = header.alg;
  if (typeof alg !== 'string' || !(alg in hashOf)) throw new JwtError('unsupported-algorithm', `unsupported signing algorithm ${JSON.stringify(alg)}`);
  const candidates = keys.filter((k) => algorithmFor(k) === alg || (alg.startsWith('RS') && k.asymmetricKeyType === 'rsa'));
  const byKid = header.kid ? candidates.filter((k) => keyId(k) === header.kid) : [];
  const tryKeys = byKid.length > 0 ? byKid : candidates;
  if (tryKeys.length === 0) throw new JwtError('unknown-key', `no ${alg} key to verify the token with`);
  const [h, p, s] = token.split('.') as [string, string, string];
  if (!b64url.test(s)) throw new JwtError('malformed', 'signature is not base64url');
  const input = Buffer.from(`${h}.${p}`);
  const sig = Buffer.from(s, 'base64url');
  for (const key of tryKeys) {
    const ok = cryptoVerify(hashOf[alg], input, alg.startsWith('ES') ? { key, dsaEncoding: 'ieee-p1363' } : key, sig);
    if (ok) return { header, claims };
  }
  throw new JwtError('bad-signature', 'token signature is invalid');
}
