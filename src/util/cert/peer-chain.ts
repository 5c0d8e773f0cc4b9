/**
 * The certificate chain a TLS peer sent, leaf first, as DER: what
 * getPeerCertificate(true) links through issuerCertificate (which ends at a
 * self-signed certificate pointing at itself). Imports only Node's modules:
 * the API server's TLS thread uses it too.
 */
import type { TLSSocket } from 'node:tls';

/** Undefined when the socket is not a TLS socket or the peer sent no certificate. */
export function peerCertificateChainDer(socket: object): Buffer[] | undefined {
  const tls = socket as Partial<TLSSocket>;
  if (typeof tls.getPeerCertificate !== 'function') return undefined;
  const first = tls.getPeerCertificate(true);
  if (!first?.raw) return undefined;
  const chain: Buffer[] = [];
  const seen = new Set<string>();
  for (let c: typeof first | undefined = first; c?.raw && !seen.has(c.fingerprint256); c = c.issuerCertificate) {
    seen.add(c.fingerprint256);
    chain.push(c.raw);
  }
  return chain;
}
