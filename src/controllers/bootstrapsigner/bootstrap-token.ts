/**
 * Bootstrap token Secrets (k8s.io/cluster-bootstrap: token/api, util/secrets,
 * token/jws): `type: bootstrap.kubernetes.io/token` Secrets named
 * `bootstrap-token-<token-id>` in kube-system, and the detached JWS
 * signatures they put on the `cluster-info` ConfigMap in kube-public.
 */
import { createHmac } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.js';

export const SECRET_TYPE_BOOTSTRAP_TOKEN = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_TOKEN_ID_KEY = 'token-id';
export const BOOTSTRAP_TOKEN_SECRET_KEY = 'token-secret';
export const BOOTSTRAP_TOKEN_EXPIRATION_KEY = 'expiration';
export const BOOTSTRAP_TOKEN_USAGE_SIGNING_KEY = 'usage-bootstrap-signing';
/** Namespace of the token Secrets. */
export const TOKEN_SECRET_NAMESPACE = 'kube-system';
/** The ConfigMap the signer signs, and its namespace. */
export const CLUSTER_INFO_NAMESPACE = 'kube-public';
export const CLUSTER_INFO_NAME = 'cluster-info';
/** The signed key of cluster-info. */
export const KUBECONFIG_KEY = 'kubeconfig';
/** Prefix of the signature keys in cluster-info (`jws-kubeconfig-<token-id>`). */
export const JWS_SIGNATURE_PREFIX = 'jws-kubeconfig-';

const NAME_RE = /^bootstrap-token-([a-z0-9]{6})$/;
// Go's time.RFC3339 layout (fraction optional, zone Z or ±hh:mm).
const RFC3339_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The token id in a Secret's name, or undefined when the name is not `bootstrap-token-<6 chars>`. */
export function parseTokenSecretName(name: string): string | undefined {
  return NAME_RE.exec(name)?.[1];
}

/** A data value of the Secret, decoded (the API carries base64). */
export function secretData(secret: Secret, key: string): string {
  const v = secret.data?.[key];
  return v === undefined ? '' : Buffer.from(v, 'base64').toString('utf8');
}

/**
 * Time left before the token expires (GetExpiration): `expired` once past,
 * or when the expiration does not parse (treated as expired); `ttlMs` is 0
 * without an expiration.
 */
export function tokenExpiration(secret: Secret, nowMs: number): { ttlMs: number; expired: boolean } {
  const exp = secretData(secret, BOOTSTRAP_TOKEN_EXPIRATION_KEY);
  if (exp === '') return { ttlMs: 0, expired: false };
  const t = RFC3339_RE.test(exp) ? Date.parse(exp) : Number.NaN;
  if (Number.isNaN(t)) return { ttlMs: 0, expired: true };
  const ttlMs = t - nowMs;
  return ttlMs <= 0 ? { ttlMs: 0, expired: true } : { ttlMs, expired: false };
}

/**
 * The id and secret of a token that may sign cluster-info
 * (validateSecretForSigning): a well-formed name whose id equals `token-id`,
 * a non-empty `token-secret`, not expired, and `usage-bootstrap-signing: true`.
 * Otherwise the reason it was skipped.
 */
export function tokenForSigning(secret: Secret, nowMs: number): { tokenId: string; tokenSecret: string } | { skip: string } {
  const nameId = parseTokenSecretName(secret.metadata?.name ?? '');
  if (!nameId) return { skip: `Invalid secret name, must be of the form ${BOOTSTRAP_TOKEN_SECRET_PREFIX}<secret-id>` };
  const tokenId = secretData(secret, BOOTSTRAP_TOKEN_ID_KEY);
  if (tokenId === '') return { skip: `no ${BOOTSTRAP_TOKEN_ID_KEY} key in secret` };
  if (tokenId !== nameId) return { skip: 'token ID in secret name does not match token ID in secret data' };
  const tokenSecret = secretData(secret, BOOTSTRAP_TOKEN_SECRET_KEY);
  if (tokenSecret === '') return { skip: `no ${BOOTSTRAP_TOKEN_SECRET_KEY} key in secret` };
  if (tokenExpiration(secret, nowMs).expired) return { skip: 'token has expired' };
  if (secretData(secret, BOOTSTRAP_TOKEN_USAGE_SIGNING_KEY) !== 'true') return { skip: 'token is not for signing' };
  return { tokenId, tokenSecret };
}

/**
 * A detached JWS (RFC 7515 appendix F) of `content`: HS256 keyed by the
 * token secret (zero-padded to 32 bytes, which HMAC does anyway), protected
 * header `{"alg":"HS256","kid":"<token-id>"}`, payload left out:
 * `<header>..<signature>`. Equal inputs give equal strings, which is how
 * clients verify it (jws.DetachedTokenIsValid).
 */
export function computeDetachedSignature(content: string, tokenId: string, tokenSecret: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: tokenId })).toString('base64url');
  const payload = Buffer.from(content, 'utf8').toString('base64url');
  const key = Buffer.alloc(Math.max(32, Buffer.byteLength(tokenSecret)));
  key.write(tokenSecret, 'utf8');
  const sig = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  return `${header}..${sig}`;
}
