/**
 * Request authentication as kube-apiserver's union authenticator does it:
 * a client certificate signed by the cluster CA (CN = user, O = groups), then
 * a bearer token checked by each TokenAuthenticator in order. The first
 * success wins; every authenticated user also gets `system:authenticated`.
 *
 * A request that presents no credential at all is anonymous
 * (`system:anonymous`, group `system:unauthenticated`); one that presents a
 * bad credential is rejected, whatever its path.
 *
 * Client certificates are verified here, not by the TLS layer (which asks
 * for one and accepts whatever comes, as Go's tls.RequestClientCert): a
 * certificate that does not chain to the client CA (a look-alike issuer of
 * the same name, an expired or server-only certificate) is a rejected
 * credential, answered 401 with a log line, as kube-apiserver does.
 */
import { createHash, timingSafeEqual, X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { certIdentity } from '../../util/cert/cert.js';
import { peerCertificateChainDer } from '../../util/cert/peer-chain.js';
import { certificateIdentifier, parseCertificateBundle, verifyClientCertificate } from '../../util/cert/verify.js';
import type { UserInfo } from '../request-info.js';
import { publicInfoPaths } from '../authz/always-allow.js';
import { frontPeer } from './tls-front.js';

/** Maps a bearer token to a user; undefined when the token is not one it knows. May be async (JWT checks, TokenReview). */
export type TokenAuthenticator = (token: string) => UserInfo | undefined | Promise<UserInfo | undefined>;

export type AuthResult =
  | { kind: 'user'; user: UserInfo; method: 'x509' | 'token' }
  | { kind: 'anonymous'; user: UserInfo }
  /** A credential was presented but not accepted. */
  | { kind: 'rejected'; why: string };

export interface RequestAuthenticator {
  authenticate(req: IncomingMessage): Promise<AuthResult>;
  /** Adds a token authenticator after the existing ones (service-account JWTs, bootstrap tokens, ...). */
  addTokenAuthenticator(a: TokenAuthenticator): void;
  /** The user a request bearing `token` would be (with `system:authenticated`); undefined when no authenticator accepts it. */
  authenticateToken(token: string): Promise<UserInfo | undefined>;
}

export const anonymousUser: UserInfo = Object.freeze({ username: 'system:anonymous', groups: ['system:unauthenticated'] }) as UserInfo;

/** Adds `system:authenticated` to an authenticated user (upstream's AuthenticatedGroupAdder). */
export function withAuthenticated(u: UserInfo): UserInfo {
  return u.groups.includes('system:authenticated') ? u : { ...u, groups: [...u.groups, 'system:authenticated'] };
}

/** A fixed token table (kube-apiserver's --token-auth-file), compared in constant time. */
export function newStaticTokenAuthenticator(tokens: ReadonlyMap<string, UserInfo>): TokenAuthenticator {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  const table = [...tokens].map(([token, user]) => ({ d: digest(token), user }));
  return (token) => {
    const d = digest(token);
    let found: UserInfo | undefined;
    for (const e of table) if (timingSafeEqual(e.d, d)) found = e.user;
    return found;
  };
}

export interface RequestAuthenticatorOptions {
  /** Verify client certificates against this CA bundle (the TLS server must request certificates and must not reject them). */
  clientCA?: string;
  tokenAuthenticators?: TokenAuthenticator[];
}

/**
 * How long a connection's accepted bearer token stays accepted without
 * asking the token authenticators again: kube-apiserver caches successful
 * token authentications for 10 s (--authentication-token-success-cache-ttl's
 * default, tokencache); failures are not cached, as upstream's default.
 */
export const TOKEN_SUCCESS_CACHE_MS = 10_000;

export function newRequestAuthenticator(opts: RequestAuthenticatorOptions): RequestAuthenticator {
  // Per connection (its last accepted Authorization header): a client sends the same one on every request.
  const accepted = new WeakMap<object, { header: string; result: AuthResult; expires: number }>();
  const tokenAuthenticators = [...(opts.tokenAuthenticators ?? [])];
  const clientCA = opts.clientCA ? parseCertificateBundle(opts.clientCA) : [];

  // Per connection: its certificate chain does not change, so it is verified once (again once a certificate in it expires).
  const verifiedChains = new WeakMap<object, { result: AuthResult; until: number }>();
  const fromCertificate = (req: IncomingMessage): AuthResult | undefined => {
    if (clientCA.length === 0) return undefined;
    const socket = req.socket;
    const cached = verifiedChains.get(socket);
    const now = Date.now();
    if (cached && now < cached.until) return cached.result;
    const chain = peerCertificateChain(socket);
    if (!chain) return undefined;
    const peer = chain[0]!;
    const verified = verifyClientCertificate(peer, { roots: clientCA, intermediates: chain.slice(1), nowMs: now });
    if (!verified.ok) return { kind: 'rejected', why: `verifying certificate ${certificateIdentifier(peer)} failed: ${verified.reason}` };
    const id = certIdentity(peer);
    if (!id.user) return { kind: 'rejected', why: 'client certificate has no common name' };
    const result: AuthResult = { kind: 'user', user: withAuthenticated({ username: id.user, groups: id.groups }), method: 'x509' };
    verifiedChains.set(socket, { result, until: Math.min(...chain.map((c) => Date.parse(c.validTo))) });
    return result;
  };

  return {
    addTokenAuthenticator(a) {
      tokenAuthenticators.push(a);
    },
    async authenticateToken(token) {
      for (const a of tokenAuthenticators) {
        const user = await a(token);
        if (user) return withAuthenticated(user);
      }
      return undefined;
    },
    async authenticate(req) {
      const cert = fromCertificate(req);
      if (cert?.kind === 'user') return cert;
      const header = req.headers.authorization;
      if (header !== undefined) {
        const cached = accepted.get(req.socket);
        if (cached && cached.header === header && cached.expires > Date.now()) return cached.result;
        const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
        if (!m) return { kind: 'rejected', why: 'unsupported authorization header' };
        for (const a of tokenAuthenticators) {
          const user = await a(m[1]!);
          if (user) {
            const result: AuthResult = { kind: 'user', user: withAuthenticated(user), method: 'token' };
            accepted.set(req.socket, { header, result, expires: Date.now() + TOKEN_SUCCESS_CACHE_MS });
            return result;
          }
        }
        return { kind: 'rejected', why: 'invalid bearer token' };
      }
      if (cert) return cert;
      return { kind: 'anonymous', user: anonymousUser };
    },
  };
}

/** The client's certificate chain, leaf first: from the TLS socket, or from the TLS front that forwarded the connection. */
function peerCertificateChain(socket: object): X509Certificate[] | undefined {
  const front = frontPeer(socket);
  if (front) return front.certificates();
  return peerCertificateChainDer(socket)?.map((der) => new X509Certificate(der));
}

/**
 * Paths anonymous users may read: what kube-apiserver's
 * `system:public-info-viewer` ClusterRole grants (GET only).
 */
export function isPublicInfoPath(method: string | undefined, pathname: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  return publicInfoPaths.includes(pathname);
}
