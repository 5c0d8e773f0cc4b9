/**
 * Client-certificate verification as Go's x509.Certificate.Verify does it
 * for k8s.io/apiserver's x509 authenticator: the leaf must chain, through
 * the intermediates the client sent, to one of the trusted roots; every
 * certificate on the way must be within its validity period; the leaf must
 * allow client authentication (no extended key usage, clientAuth or any).
 *
 * Servers request client certificates without letting the TLS layer reject
 * them, and verify here: an untrusted certificate becomes a 401 with a log
 * line instead of a reset handshake.
 */
import { X509Certificate } from 'node:crypto';

const clientAuthOid = '1.3.6.1.5.5.7.3.2';
const anyExtendedKeyUsageOid = '2.5.29.37.0';
/** Longest chain followed (leaf, intermediates, root). */
const maxDepth = 8;

export type VerifyResult = { ok: true; chain: X509Certificate[] } | { ok: false; reason: string };

export interface VerifyOptions {
  /** Trusted certificate authorities. */
  roots: readonly X509Certificate[];
  /** Other certificates the peer presented (may help build the chain; never trusted by themselves). */
  intermediates?: readonly X509Certificate[];
  nowMs: number;
}

/** The certificates of a PEM bundle (other blocks are skipped); throws on a malformed certificate. */
export function parseCertificateBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

function commonName(c: X509Certificate): string {
  return (
    c.subject
      .split('\n')
      .find((p) => p.startsWith('CN='))
      ?.slice(3) ?? ''
  );
}

function validityProblem(c: X509Certificate, nowMs: number): string | undefined {
  const from = Date.parse(c.validFrom);
  const to = Date.parse(c.validTo);
  if (nowMs < from) return `x509: certificate has expired or is not yet valid: current time ${new Date(nowMs).toISOString()} is before ${new Date(from).toISOString()}`;
  if (nowMs > to) return `x509: certificate has expired or is not yet valid: current time ${new Date(nowMs).toISOString()} is after ${new Date(to).toISOString()}`;
  return undefined;
}

function signedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/** Verifies `leaf` for client authentication; the reason of a failure is worded as Go's x509 errors. */
export function verifyClientCertificate(leaf: X509Certificate, opts: VerifyOptions): VerifyResult {
  const expired = validityProblem(leaf, opts.nowMs);
  if (expired) return { ok: false, reason: expired };
  const usages = leaf.keyUsage;
  if (usages && usages.length > 0 && !usages.includes(clientAuthOid) && !usages.includes(anyExtendedKeyUsageOid)) {
    return { ok: false, reason: 'x509: certificate specifies an incompatible key usage' };
  }
  const chain = [leaf];
  let current = leaf;
  let candidate: string | undefined;
  for (let depth = 0; depth < maxDepth; depth++) {
    for (const root of opts.roots) {
      if (current.issuer === root.subject) candidate ??= commonName(root);
      if (signedBy(current, root) && !validityProblem(root, opts.nowMs)) return { ok: true, chain: [...chain, root] };
    }
    const next = (opts.intermediates ?? []).find((i) => i.ca && !chain.includes(i) && signedBy(current, i) && !validityProblem(i, opts.nowMs));
    if (!next) break;
    chain.push(next);
    current = next;
  }
  const hint = candidate !== undefined ? ` (possibly because of "x509: signature verification failed" while trying to verify candidate authority certificate "${candidate}")` : '';
  return { ok: false, reason: `x509: certificate signed by unknown authority${hint}` };
}

/** How Go's x509 authenticator names a certificate in errors: `SN=..., SKID=..., AKID=...` (SKID/AKID left out here). */
export function certificateIdentifier(c: X509Certificate): string {
  return `CN=${commonName(c)}, SN=${BigInt(`0x${c.serialNumber}`).toString()}`;
}
