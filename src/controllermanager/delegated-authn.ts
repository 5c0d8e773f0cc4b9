/**
 * Delegated authentication of the controller manager's and scheduler's
 * HTTPS endpoints, as k8s.io/apiserver's DelegatingAuthenticatorConfig
 * builds it for kube-controller-manager:
 *
 *   union(request header, x509 client certificate, bearer token via TokenReview)
 *   -> add `system:authenticated`
 *   -> fail on error, otherwise anonymous (`system:anonymous`, `system:unauthenticated`)
 *
 * The first authenticator that accepts the request wins. When none does and
 * one of them failed (a certificate that does not verify, a token the API
 * server rejects, a TokenReview that could not be made), the request is
 * refused (401); a request with no credential at all is anonymous.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { peerCertificateChainDer } from '../util/cert/peer-chain.js';
import { certIdentity } from '../util/cert/cert.js';
import { certificateIdentifier, verifyClientCertificate } from '../util/cert/verify.js';
import type { Clock } from '../util/clock/clock.js';

/** The caller, as authenticated. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const anonymousUser: UserInfo = Object.freeze({ username: 'system:anonymous', groups: ['system:unauthenticated'] }) as UserInfo;

export type AuthenticationResult =
  | { kind: 'user'; user: UserInfo; method: 'requestheader' | 'x509' | 'token' }
  | { kind: 'anonymous'; user: UserInfo }
  /** Credentials were presented and refused, or could not be checked; `errors` say why (for the log). */
  | { kind: 'failed'; errors: string[] };

/** A TokenReview answer (authentication.k8s.io/v1 TokenReviewStatus). */
export interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  error?: string;
}

/** The front proxy's request-header settings (`--requestheader-*` or the extension-apiserver-authentication ConfigMap). */
export interface RequestHeaderConfig {
  /** CA bundle that signs the front proxy's client certificates. */
  clientCA: readonly X509Certificate[];
  usernameHeaders: readonly string[];
  groupHeaders: readonly string[];
  extraHeaderPrefixes: readonly string[];
  /** Common names the front proxy's certificate may have; empty: any certificate the CA signed. */
  allowedNames: readonly string[];
}

export interface DelegatingAuthenticatorOptions {
  /** Asks the API server about a bearer token; absent: tokens are not checked (requests with one are anonymous, as upstream without an authentication kubeconfig). */
  reviewToken?: (token: string) => Promise<TokenReviewStatus>;
  /** How long TokenReview answers (both ways) are reused (`--authentication-token-webhook-cache-ttl`). Errors are never cached. */
  tokenCacheTtlMs: number;
  /** Current client CA bundle (it may be refreshed from the cluster); empty or absent: no client-certificate authentication. */
  clientCA: () => readonly X509Certificate[] | undefined;
  /** Current request-header settings; absent: no request-header authentication. */
  requestHeader: () => RequestHeaderConfig | undefined;
  clock: Clock;
}

export interface DelegatingAuthenticator {
  authenticate(req: IncomingMessage): Promise<AuthenticationResult>;
}

const maxCachedTokens = 4096;

/** Adds `system:authenticated` unless the user already has it or is unauthenticated (upstream's AuthenticatedGroupAdder). */
function withAuthenticated(u: UserInfo): UserInfo {
  if (u.groups.includes('system:authenticated') || u.groups.includes('system:unauthenticated')) return u;
  return { ...u, groups: [...u.groups, 'system:authenticated'] };
}

/** The peer's certificate chain as sent (leaf first), or undefined without one. */
function peerChain(req: IncomingMessage): X509Certificate[] | undefined {
  return peerCertificateChainDer(req.socket)?.map((der) => new X509Certificate(der));
}

function headerValues(req: IncomingMessage, name: string): string[] {
  const v = req.headersDistinct[name.toLowerCase()];
  return (v ?? []).filter((x) => x !== '');
}

/** url.PathUnescape, keeping the raw key when it does not decode (headerrequest's unescapeExtraKey). */
function unescapeExtraKey(k: string): string {
  try {
    return decodeURIComponent(k);
  } catch {
    return k;
  }
}

export function newDelegatingAuthenticator(opts: DelegatingAuthenticatorOptions): DelegatingAuthenticator {
  const tokenCache = new Map<string, { expires: number; status: TokenReviewStatus }>();

  const verify = (chain: X509Certificate[], roots: readonly X509Certificate[]) =>
    verifyClientCertificate(chain[0]!, { roots, intermediates: chain.slice(1), nowMs: opts.clock.now() });

  /** headerrequest.NewDynamicVerifyOptionsSecure: a verified front-proxy certificate, then the user from the headers. */
  function fromRequestHeader(req: IncomingMessage, chain: X509Certificate[] | undefined): AuthenticationResult | undefined {
    const cfg = opts.requestHeader();
    if (!cfg || !chain || cfg.clientCA.length === 0) return undefined;
    const r = verify(chain, cfg.clientCA);
    if (!r.ok) return { kind: 'failed', errors: [`verifying certificate ${certificateIdentifier(chain[0]!)} failed: ${r.reason}`] };
    const cn = certIdentity(chain[0]!).user;
    if (cfg.allowedNames.length > 0 && !cfg.allowedNames.includes(cn)) return { kind: 'failed', errors: [`x509: subject with cn=${cn} is not in the allowed list`] };
    const username = cfg.usernameHeaders.map((h) => headerValues(req, h)[0]).find((v) => v !== undefined);
    if (username === undefined) return undefined;
    const groups = cfg.groupHeaders.flatMap((h) => headerValues(req, h));
    const extra: Record<string, string[]> = {};
    for (const prefix of cfg.extraHeaderPrefixes) {
      const p = prefix.toLowerCase();
      for (const [name, values] of Object.entries(req.headersDistinct)) {
        if (!name.startsWith(p) || !values) continue;
        const key = unescapeExtraKey(name.slice(p.length));
        (extra[key] ??= []).push(...values);
      }
    }
    return { kind: 'user', user: { username, groups, ...(Object.keys(extra).length > 0 ? { extra } : {}) }, method: 'requestheader' };
  }

  /** x509.NewDynamic with CommonNameUserConversion: CN is the user, O the groups. */
  function fromCertificate(chain: X509Certificate[] | undefined): AuthenticationResult | undefined {
    const roots = opts.clientCA();
    if (!chain || !roots || roots.length === 0) return undefined;
    const r = verify(chain, roots);
    if (!r.ok) return { kind: 'failed', errors: [`verifying certificate ${certificateIdentifier(chain[0]!)} failed: ${r.reason}`] };
    const id = certIdentity(chain[0]!);
    if (!id.user) return undefined;
    return { kind: 'user', user: { username: id.user, groups: id.groups }, method: 'x509' };
  }

  async function review(token: string): Promise<TokenReviewStatus> {
    const key = createHash('sha256').update(token).digest('base64');
    const now = opts.clock.now();
    const hit = tokenCache.get(key);
    if (hit && hit.expires > now) return hit.status;
    tokenCache.delete(key);
    const status = await opts.reviewToken!(token);
    if (opts.tokenCacheTtlMs > 0) {
      if (tokenCache.size >= maxCachedTokens) tokenCache.delete(tokenCache.keys().next().value!);
      tokenCache.set(key, { expires: now + opts.tokenCacheTtlMs, status });
    }
    return status;
  }

  /** bearertoken.New over the cached webhook token authenticator. */
  async function fromToken(req: IncomingMessage): Promise<AuthenticationResult | undefined> {
    if (!opts.reviewToken) return undefined;
    const header = req.headers.authorization?.trim();
    if (!header) return undefined;
    const parts = header.split(' ');
    if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
    const token = parts[1]!;
    if (token === '') return { kind: 'failed', errors: ['invalid bearer token'] };
    let status: TokenReviewStatus;
    try {
      status = await review(token);
    } catch (err) {
      return { kind: 'failed', errors: [`token review failed: ${(err as Error).message}`] };
    }
    if (!status.authenticated) return { kind: 'failed', errors: [status.error ? status.error : 'invalid bearer token'] };
    const u = status.user ?? {};
    return {
      kind: 'user',
      user: { username: u.username ?? '', ...(u.uid ? { uid: u.uid } : {}), groups: [...(u.groups ?? [])], ...(u.extra && Object.keys(u.extra).length > 0 ? { extra: u.extra } : {}) },
      method: 'token',
    };
  }

  return {
    async authenticate(req) {
      const chain = peerChain(req);
      const errors: string[] = [];
      for (const step of [() => fromRequestHeader(req, chain), () => fromCertificate(chain), () => fromToken(req)]) {
        const r = await step();
        if (!r) continue;
        if (r.kind === 'user') return { ...r, user: withAuthenticated(r.user) };
        if (r.kind === 'failed') errors.push(...r.errors);
      }
      if (errors.length > 0) return { kind: 'failed', errors };
      return { kind: 'anonymous', user: anonymousUser };
    },
  };
}
