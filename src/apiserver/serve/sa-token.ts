/**
 * Service-account tokens as kube-apiserver issues and checks them
 * (pkg/serviceaccount): legacy Secret-based tokens and bound tokens.
 *
 * Legacy tokens (iss `kubernetes/serviceaccount`) carry flat
 * `kubernetes.io/serviceaccount/*` claims and no expiry; they stay valid
 * while their Secret exists, still holds exactly this token and names the
 * service account, and the service account exists with the same uid.
 *
 * Bound tokens (iss = --service-account-issuer) carry aud, exp, nbf, iat,
 * jti and a `kubernetes.io` claim: namespace, serviceaccount {name, uid},
 * and optionally the pod, secret or node they are bound to. Each named
 * object must still exist with the same uid (and not be deleted for longer
 * than the leeway); aud must meet the audiences asked for.
 *
 * The user is `system:serviceaccount:<ns>:<name>` with uid = the service
 * account's uid, groups `system:serviceaccounts` and
 * `system:serviceaccounts:<ns>`, and for bound tokens the extras
 * `authentication.kubernetes.io/{pod-name,pod-uid,node-name,node-uid,credential-id}`.
 */
import { randomUUID, type KeyObject } from 'node:crypto';
import type { UserInfo } from '../request-info.js';
import type { ObjectReader } from '../admission/admission.js';
import type { TokenSignRequest } from '../context.js';
import type { Clock } from '../../util/clock/clock.js';
import { parseTime } from '../../util/clock/clock.js';
import { audiencesOf, checkTimes, ClaimsError, intersectAudiences, numericDate, type Claims } from '../../util/jwt/claims.js';
import { decodeJwt, JwtError, signJwt, verifyJwt } from '../../util/jwt/jwt.js';

export const legacyIssuer = 'kubernetes/serviceaccount';
export const defaultIssuer = 'https://kubernetes.default.svc.cluster.local';
/** go-jose's DefaultLeeway, which kube-apiserver uses for exp/nbf/iat and deletion grace. */
const leewaySeconds = 60;

export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
}

/** The outcome for one token: not a service-account token at all, accepted, or refused with a reason. */
export type ServiceAccountTokenResult =
  | { kind: 'not-mine' }
  | { kind: 'user'; user: UserInfo; audiences: string[] }
  | { kind: 'invalid'; error: string };

export interface ServiceAccountTokenAuthenticatorOptions {
  /** --service-account-key-file: public keys that verify tokens. */
  keys: readonly KeyObject[];
  /** --service-account-issuer values accepted for bound tokens (the first one signs). */
  issuers: readonly string[];
  /** --api-audiences: what a bound token's aud must meet when the caller asks for none. Default: the issuers. */
  apiAudiences?: readonly string[];
  reader: ObjectReader;
  clock: Clock;
}

export interface ServiceAccountTokenAuthenticator {
  /** Authenticates `token` for `audiences` (default: the API audiences). */
  authenticate(token: string, audiences?: readonly string[]): Promise<ServiceAccountTokenResult>;
}

interface Ref {
  name?: string;
  uid?: string;
}
interface KubernetesClaim {
  namespace?: string;
  serviceaccount?: Ref;
  pod?: Ref;
  secret?: Ref;
  node?: Ref;
  warnafter?: number;
}

type Meta = { metadata?: { uid?: string; deletionTimestamp?: string; annotations?: Record<string, string> } };

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function newServiceAccountTokenAuthenticator(opts: ServiceAccountTokenAuthenticatorOptions): ServiceAccountTokenAuthenticator {
  const issuers = new Set([...opts.issuers, legacyIssuer]);
  const apiAudiences = [...(opts.apiAudiences && opts.apiAudiences.length > 0 ? opts.apiAudiences : opts.issuers)];

  /** Whether the object was deleted longer ago than the leeway (upstream treats recent deletions as still present). */
  const goneSince = (o: Meta) => {
    const t = parseTime(o.metadata?.deletionTimestamp);
    return t !== undefined && t < opts.clock.now() - leewaySeconds * 1000;
  };

  async function serviceAccount(ns: string, name: string, uid: string): Promise<string | undefined> {
    const sa = (await opts.reader.get('', 'serviceaccounts', ns, name)) as Meta | undefined;
    if (!sa || goneSince(sa)) return `service account ${ns}/${name} has been deleted`;
    if (uid && sa.metadata?.uid !== uid) return `service account UID (${sa.metadata?.uid ?? ''}) does not match claim (${uid})`;
    return undefined;
  }

  async function legacy(token: string, c: Claims): Promise<ServiceAccountTokenResult> {
    const ns = str(c['kubernetes.io/serviceaccount/namespace']);
    const secretName = str(c['kubernetes.io/serviceaccount/secret.name']);
    const saName = str(c['kubernetes.io/serviceaccount/service-account.name']);
    const saUid = str(c['kubernetes.io/serviceaccount/service-account.uid']);
    if (!ns || !secretName || !saName || !saUid) return { kind: 'invalid', error: 'token is missing service account claims' };
    if (c.sub !== undefined && c.sub !== serviceAccountUsername(ns, saName)) return { kind: 'invalid', error: 'sub does not match the service account claims' };
    const secret = (await opts.reader.get('', 'secrets', ns, secretName)) as (Meta & { data?: Record<string, string> }) | undefined;
    if (!secret || secret.metadata?.deletionTimestamp) return { kind: 'invalid', error: `secret ${ns}/${secretName} has been deleted` };
    if (secret.metadata?.annotations?.['kubernetes.io/service-account.name'] !== saName) {
      return { kind: 'invalid', error: `secret ${ns}/${secretName} no longer references service account ${saName}` };
    }
    const stored = secret.data?.token;
    if (!stored || Buffer.from(stored, 'base64').toString('utf8') !== token) return { kind: 'invalid', error: `token does not match the token in secret ${ns}/${secretName}` };
    const saError = await serviceAccount(ns, saName, saUid);
    if (saError) return { kind: 'invalid', error: saError };
    return {
      kind: 'user',
      user: {
        username: serviceAccountUsername(ns, saName),
        uid: saUid,
        groups: serviceAccountGroups(ns),
        extra: { 'authentication.kubernetes.io/credential-id': [`secret:${secretName}`] },
      },
      // Legacy tokens have no audience: they are good for the API server's own (upstream's implicit audiences).
      audiences: apiAudiences,
    };
  }

  async function bound(c: Claims, wanted: readonly string[]): Promise<ServiceAccountTokenResult> {
    try {
      checkTimes(c, { nowMs: opts.clock.now(), leewaySeconds, requireExpiry: true });
    } catch (err) {
      if (err instanceof ClaimsError) return { kind: 'invalid', error: /expired/.test(err.message) ? 'service account token has expired' : `service account token is invalid: ${err.message}` };
      throw err;
    }
    const auds = intersectAudiences(wanted, audiencesOf(c));
    if (auds.length === 0) return { kind: 'invalid', error: `token audiences ${JSON.stringify(audiencesOf(c))} is invalid for the target audiences ${JSON.stringify(wanted)}` };
    const k = (c['kubernetes.io'] ?? {}) as KubernetesClaim;
    const ns = str(k.namespace);
    const saName = str(k.serviceaccount?.name);
    const saUid = str(k.serviceaccount?.uid);
    if (!ns || !saName || !saUid) return { kind: 'invalid', error: 'token is missing the kubernetes.io service account claims' };
    if (c.sub !== serviceAccountUsername(ns, saName)) return { kind: 'invalid', error: 'sub does not match the service account claims' };
    const saError = await serviceAccount(ns, saName, saUid);
    if (saError) return { kind: 'invalid', error: saError };
    const extra: Record<string, string[]> = {};
    const check = async (what: 'pod' | 'secret' | 'node', ref: Ref | undefined): Promise<string | undefined> => {
      if (!ref) return undefined;
      const resource = what === 'pod' ? 'pods' : what === 'secret' ? 'secrets' : 'nodes';
      const obj = (await opts.reader.get('', resource, what === 'node' ? '' : ns, str(ref.name))) as Meta | undefined;
      if (!obj || goneSince(obj)) return `${what} ${what === 'node' ? '' : `${ns}/`}${str(ref.name)} has been deleted`;
      if (ref.uid && obj.metadata?.uid !== ref.uid) return `${what} UID (${obj.metadata?.uid ?? ''}) does not match claim (${ref.uid})`;
      return undefined;
    };
    // A pod-bound token's node claim is informational (the pod's uid already pins it).
    for (const what of k.pod ? (['pod', 'secret'] as const) : (['pod', 'secret', 'node'] as const)) {
      const problem = await check(what, k[what]);
      if (problem) return { kind: 'invalid', error: problem };
    }
    if (k.pod) extra['authentication.kubernetes.io/pod-name'] = [str(k.pod.name)], extra['authentication.kubernetes.io/pod-uid'] = [str(k.pod.uid)];
    if (k.node) extra['authentication.kubernetes.io/node-name'] = [str(k.node.name)], extra['authentication.kubernetes.io/node-uid'] = [str(k.node.uid)];
    if (typeof c.jti === 'string' && c.jti) extra['authentication.kubernetes.io/credential-id'] = [`JTI=${c.jti}`];
    return {
      kind: 'user',
      user: { username: serviceAccountUsername(ns, saName), uid: saUid, groups: serviceAccountGroups(ns), ...(Object.keys(extra).length ? { extra } : {}) },
      audiences: auds,
    };
  }

  return {
    async authenticate(token, audiences) {
      let iss: unknown;
      try {
        iss = decodeJwt(token).claims.iss;
      } catch {
        return { kind: 'not-mine' };
      }
      if (typeof iss !== 'string' || !issuers.has(iss)) return { kind: 'not-mine' };
      let claims: Claims;
      try {
        claims = verifyJwt(token, opts.keys).claims;
      } catch (err) {
        if (err instanceof JwtError) return { kind: 'invalid', error: `invalid bearer token, ${err.message}` };
        throw err;
      }
      const wanted = audiences && audiences.length > 0 ? [...audiences] : apiAudiences;
      return iss === legacyIssuer ? legacy(token, claims) : bound(claims, wanted);
    },
  };
}

/** What a bound token names (TokenRequest's service account and boundObjectRef, already checked to exist; `node`: a bound pod's node). */
export type BoundTokenRequest = TokenSignRequest;

export interface ServiceAccountTokenSigner {
  /** The `iss` of the tokens it signs (the first --service-account-issuer). */
  readonly issuer: string;
  /** --api-audiences: the default audiences of a TokenRequest. */
  readonly apiAudiences: readonly string[];
  /** Signs a bound token valid from now for expirationSeconds. */
  sign(req: BoundTokenRequest): { token: string; expiresAtMs: number };
}

export function newServiceAccountTokenSigner(opts: { key: KeyObject; issuer: string; apiAudiences?: readonly string[]; clock: Clock }): ServiceAccountTokenSigner {
  const apiAudiences = opts.apiAudiences && opts.apiAudiences.length > 0 ? [...opts.apiAudiences] : [opts.issuer];
  return {
    issuer: opts.issuer,
    apiAudiences,
    sign(req) {
      const nowMs = opts.clock.now();
      const now = numericDate(nowMs);
      const exp = now + req.expirationSeconds;
      const k: KubernetesClaim = { namespace: req.namespace, serviceaccount: { name: req.serviceAccount.name, uid: req.serviceAccount.uid } };
      if (req.boundObject?.kind === 'Pod') k.pod = { name: req.boundObject.name, uid: req.boundObject.uid };
      if (req.boundObject?.kind === 'Secret') k.secret = { name: req.boundObject.name, uid: req.boundObject.uid };
      if (req.boundObject?.kind === 'Node') k.node = { name: req.boundObject.name, uid: req.boundObject.uid };
      if (req.node && !k.node) k.node = { ...req.node };
      if (req.warnAfterSeconds !== undefined) k.warnafter = now + req.warnAfterSeconds;
      const claims: Claims = {
        aud: [...req.audiences],
        exp,
        iat: now,
        iss: opts.issuer,
        'kubernetes.io': k,
        nbf: now,
        sub: serviceAccountUsername(req.namespace, req.serviceAccount.name),
        jti: randomUUID(),
      };
      return { token: signJwt(claims, opts.key), expiresAtMs: exp * 1000 };
    },
  };
}
