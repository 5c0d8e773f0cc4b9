/**
 * Registered JWT claims (RFC 7519 section 4.1) and their checks. Times are
 * NumericDate: seconds since the epoch. Callers pass `now` from their Clock.
 */

export interface RegisteredClaims {
  iss?: string;
  sub?: string;
  /** A string or a list of strings. */
  aud?: string | string[];
  exp?: number;
  nbf?: number;
  iat?: number;
  jti?: string;
}

export type Claims = RegisteredClaims & Record<string, unknown>;

/** Why claims were not accepted (the message says which check failed). */
export class ClaimsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClaimsError';
  }
}

/** `aud` as a list (a single string becomes a one-element list). */
export function audiencesOf(claims: RegisteredClaims): string[] {
  const aud = claims.aud;
  if (aud === undefined) return [];
  return typeof aud === 'string' ? [aud] : aud.filter((a): a is string => typeof a === 'string');
}

/** The audiences in both lists, in `wanted`'s order. */
export function intersectAudiences(wanted: readonly string[], have: readonly string[]): string[] {
  return wanted.filter((a) => have.includes(a));
}

/** Seconds since the epoch, as NumericDate (milliseconds truncated). */
export function numericDate(ms: number): number {
  return Math.floor(ms / 1000);
}

export interface TimeCheckOptions {
  /** Now, in milliseconds since the epoch. */
  nowMs: number;
  /** Clock skew allowed on exp, nbf and iat, in seconds (go-jose's default: 60). */
  leewaySeconds?: number;
  /** Reject claims without `exp`. */
  requireExpiry?: boolean;
}

/**
 * Checks exp, nbf and iat against now: expired (exp + leeway <= now), not
 * valid yet (nbf - leeway > now), issued in the future (iat - leeway > now).
 * Throws ClaimsError.
 */
export function checkTimes(claims: RegisteredClaims, opts: TimeCheckOptions): void {
  const now = opts.nowMs / 1000;
  const leeway = opts.leewaySeconds ?? 60;
  for (const f of ['exp', 'nbf', 'iat'] as const) {
    const v = claims[f];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v))) throw new ClaimsError(`${f} is not a number`);
  }
  if (claims.exp === undefined) {
    if (opts.requireExpiry) throw new ClaimsError('token has no expiry (exp)');
  } else if (now > claims.exp + leeway) {
    throw new ClaimsError('token has expired (exp)');
  }
  if (claims.nbf !== undefined && now < claims.nbf - leeway) throw new ClaimsError('token is not valid yet (nbf)');
  if (claims.iat !== undefined && now < claims.iat - leeway) throw new ClaimsError('token issued in the future (iat)');
}
