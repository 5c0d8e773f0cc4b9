import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { newCA, newSignedCert } from './cert.js';
import { parseCertificateBundle, verifyClientCertificate } from './verify.js';

const x509 = (pem: string) => new X509Certificate(pem);

describe('verifyClientCertificate', () => {
  const ca = newCA('kcm-ca');
  const client = newSignedCert(ca, { commonName: 'alice', organizations: ['devs'], usage: 'client' });
  const now = Date.now();

  it('accepts a client certificate signed by a trusted root', () => {
    const r = verifyClientCertificate(x509(client.certPem), { roots: [x509(ca.certPem)], nowMs: now });
    assert.equal(r.ok, true);
  });

  it('rejects a look-alike: same issuer name, another key', () => {
    const lookAlike = newSignedCert(newCA('kcm-ca'), { commonName: 'mallory', usage: 'client' });
    const r = verifyClientCertificate(x509(lookAlike.certPem), { roots: [x509(ca.certPem)], nowMs: now });
    assert.deepEqual(r, {
      ok: false,
      reason: 'x509: certificate signed by unknown authority (possibly because of "x509: signature verification failed" while trying to verify candidate authority certificate "kcm-ca")',
    });
  });

  it('rejects a certificate of an unrelated authority, a server-only certificate and an expired one', () => {
    const stranger = newSignedCert(newCA('other'), { commonName: 'eve', usage: 'client' });
    assert.deepEqual(verifyClientCertificate(x509(stranger.certPem), { roots: [x509(ca.certPem)], nowMs: now }), { ok: false, reason: 'x509: certificate signed by unknown authority' });
    const server = newSignedCert(ca, { commonName: 'srv', usage: 'server' });
    assert.deepEqual(verifyClientCertificate(x509(server.certPem), { roots: [x509(ca.certPem)], nowMs: now }), { ok: false, reason: 'x509: certificate specifies an incompatible key usage' });
    const r = verifyClientCertificate(x509(client.certPem), { roots: [x509(ca.certPem)], nowMs: now + 400 * 86_400_000 });
    assert.equal(r.ok, false);
    assert.match((r as { reason: string }).reason, /^x509: certificate has expired or is not yet valid: current time .* is after /);
  });

  it('trusts any root of a bundle', () => {
    const other = newCA('other');
    const bundle = parseCertificateBundle(`${other.certPem}\n${ca.certPem}`);
    assert.equal(bundle.length, 2);
    assert.equal(verifyClientCertificate(x509(client.certPem), { roots: bundle, nowMs: now }).ok, true);
  });
});
