/**
 * The legacy (secret-based) service-account tokens this controller writes,
 * as kube-controller-manager signs them (pkg/serviceaccount/legacy.go):
 * iss `kubernetes/serviceaccount`, sub `system:serviceaccount:<ns>:<name>`
 * and the four `kubernetes.io/serviceaccount/...` claims, signed with
 * --service-account-private-key-file (RS256 for RSA keys, ES256/384/512 for
 * EC keys, `kid` as upstream). Signing and verification live in util/jwt; the
 * API server verifies these tokens (apiserver/serve/sa-token.ts).
 */
import { signJwt } from '../../util/jwt/jwt.js';
import { algorithmFor, keyId, parsePrivateKey, type JwtAlgorithm } from '../../util/jwt/keys.js';
import type { Claims } from '../../util/jwt/claims.js';

export const LEGACY_ISSUER = 'kubernetes/serviceaccount';

/** Claims of a legacy token. */
export interface LegacyClaims extends Claims {
  iss: string;
  sub: string;
  'kubernetes.io/serviceaccount/namespace': string;
  'kubernetes.io/serviceaccount/secret.name': string;
  'kubernetes.io/serviceaccount/service-account.name': string;
  'kubernetes.io/serviceaccount/service-account.uid': string;
}

/** The legacy claims for the token stored in `secretName` of service account `sa`. */
export function legacyClaims(sa: { namespace: string; name: string; uid: string }, secretName: string): LegacyClaims {
  return {
    iss: LEGACY_ISSUER,
    sub: `system:serviceaccount:${sa.namespace}:${sa.name}`,
    'kubernetes.io/serviceaccount/namespace': sa.namespace,
    'kubernetes.io/serviceaccount/secret.name': secretName,
    'kubernetes.io/serviceaccount/service-account.name': sa.name,
    'kubernetes.io/serviceaccount/service-account.uid': sa.uid,
  };
}

export interface TokenGenerator {
  readonly algorithm: JwtAlgorithm;
  readonly keyID: string;
  /** Signs `claims`. */
  generate(claims: Claims): string;
}

/** A signer for `privateKeyPem` (PKCS#1, PKCS#8 or SEC1 PEM). Throws when the key is unusable. */
export function newTokenGenerator(privateKeyPem: string): TokenGenerator {
  const key = parsePrivateKey(privateKeyPem);
  const algorithm = algorithmFor(key);
  const keyID = keyId(key);
  return { algorithm, keyID, generate: (claims) => signJwt(claims, key, { alg: algorithm, kid: keyID }) };
}
