/**
 * Keys for signing and verifying JWTs: PEM (PKCS#1, PKCS#8, SEC1, SPKI,
 * certificates) and JWK, RSA and EC (P-256, P-384, P-521).
 *
 * The key id is what kube-apiserver puts in a token's `kid` header: the
 * unpadded base64url SHA-256 of the public key's DER SPKI encoding, so a
 * token signed here names the same key as one signed by Kubernetes.
 */
import { createHash, createPrivateKey, createPublicKey, X509Certificate, type JsonWebKey, type KeyObject } from 'node:crypto';

export type JwtAlgorithm = 'RS256' | 'RS384' | 'RS512' | 'ES256' | 'ES384' | 'ES512';

export class JwtKeyError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'JwtKeyError';
  }
}

const pemBlock = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

/** Every PEM block in `text`, with its label (`PRIVATE KEY`, `PUBLIC KEY`, `CERTIFICATE`, ...). */
export function pemBlocks(text: string): { label: string; pem: string }[] {
  return [...text.matchAll(pemBlock)].map((m) => ({ label: m[1]!, pem: m[0] }));
}

/**
 * The public keys in a PEM file as kube-apiserver reads
 * --service-account-key-file: public keys, certificates, and private keys
 * (their public half). Throws JwtKeyError when the file holds none.
 */
export function parsePublicKeys(text: string): KeyObject[] {
  const out: KeyObject[] = [];
  for (const b of pemBlocks(text)) {
    try {
      if (b.label === 'CERTIFICATE') out.push(new X509Certificate(b.pem).publicKey);
      else if (b.label.includes('PRIVATE KEY')) out.push(createPublicKey(createPrivateKey(b.pem)));
      else if (b.label.includes('PUBLIC KEY')) out.push(createPublicKey(b.pem));
    } catch (err) {
      throw new JwtKeyError(`cannot parse the ${b.label} block`, { cause: err });
    }
  }
  if (out.length === 0) throw new JwtKeyError('data does not contain any valid RSA or ECDSA public keys');
  for (const k of out) algorithmFor(k);
  return out;
}

/** The first private key in a PEM file (--service-account-signing-key-file). */
export function parsePrivateKey(text: string): KeyObject {
  const b = pemBlocks(text).find((x) => x.label.includes('PRIVATE KEY'));
  if (!b) throw new JwtKeyError('data does not contain a PEM private key');
  let key: KeyObject;
  try {
    key = createPrivateKey(b.pem);
  } catch (err) {
    throw new JwtKeyError(`cannot parse the ${b.label} block`, { cause: err });
  }
  algorithmFor(key);
  return key;
}

/** The algorithm a key signs with: RS256 for RSA, ES256/384/512 by EC curve. */
export function algorithmFor(key: KeyObject): JwtAlgorithm {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RS256';
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1' || curve === 'P-256') return 'ES256';
      if (curve === 'secp384r1' || curve === 'P-384') return 'ES384';
      if (curve === 'secp521r1' || curve === 'P-521') return 'ES512';
      throw new JwtKeyError(`unsupported EC curve ${String(curve)}`);
    }
    default:
      throw new JwtKeyError(`unsupported key type ${String(key.asymmetricKeyType)} (want RSA or ECDSA)`);
  }
}

function publicOf(key: KeyObject): KeyObject {
  return key.type === 'private' ? createPublicKey(key) : key;
}

/** kube-apiserver's key id: base64url(sha256(DER SPKI)) of the public key. */
export function keyId(key: KeyObject): string {
  // Every signed token names its key: export and hash each key once.
  let id = keyIds.get(key);
  if (id === undefined) {
    const der = publicOf(key).export({ format: 'der', type: 'spki' });
    id = createHash('sha256').update(der).digest('base64url');
    keyIds.set(key, id);
  }
  return id;
}
const keyIds = new WeakMap<KeyObject, string>();

/** The public JWK (with kid, use and alg) as a JWKS document lists it. */
export function publicJwk(key: KeyObject): JsonWebKey & { kid: string; use: 'sig'; alg: JwtAlgorithm } {
  const pub = publicOf(key);
  return { ...pub.export({ format: 'jwk' }), kid: keyId(pub), use: 'sig', alg: algorithmFor(pub) };
}

/** A public key from a JWK (private members, when present, are ignored). */
export function keyFromJwk(jwk: JsonWebKey): KeyObject {
  try {
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = jwk;
    const key = createPublicKey({ key: pub, format: 'jwk' });
    algorithmFor(key);
    return key;
  } catch (err) {
    if (err instanceof JwtKeyError) throw err;
    throw new JwtKeyError('invalid JWK', { cause: err });
  }
}
