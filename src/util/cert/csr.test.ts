import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { newCA } from './cert.js';
import { CSRParseError, issueCertificate, newCSR, parseCSR } from './csr.js';

const NOW = Date.parse('2024-01-01T00:00:00Z');

describe('certificate signing requests', () => {
  it('round-trips subject and subjectAltNames through newCSR and parseCSR', () => {
    const { csrPem } = newCSR({
      commonName: 'system:node:n1',
      organizations: ['system:nodes'],
      dnsNames: ['n1.example'],
      ipAddresses: ['10.0.0.5', 'fd00::1'],
      emailAddresses: ['a@b.c'],
      uris: ['spiffe://x/y'],
    });
    const req = parseCSR(csrPem);
    assert.equal(req.commonName, 'system:node:n1');
    assert.deepEqual(req.organizations, ['system:nodes']);
    assert.deepEqual(req.dnsNames, ['n1.example']);
    assert.deepEqual(req.ipAddresses, ['10.0.0.5', 'fd00::1']);
    assert.deepEqual(req.emailAddresses, ['a@b.c']);
    assert.deepEqual(req.uris, ['spiffe://x/y']);
    assert.equal(req.publicKeyAlgorithm, 'ecdsa');
  });

  it('parses RSA requests', () => {
    const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const req = parseCSR(newCSR({ commonName: 'alice', keyPem: key }).csrPem);
    assert.equal(req.publicKeyAlgorithm, 'rsa');
    assert.equal(req.commonName, 'alice');
  });

  it('rejects a non-CSR PEM block with upstream message', () => {
    const ca = newCA('ca');
    assert.throws(() => parseCSR(ca.certPem), (e: unknown) => e instanceof CSRParseError && e.message === 'PEM block type must be CERTIFICATE REQUEST');
  });

  it('rejects a request whose signature does not verify', () => {
    const { csrPem } = newCSR({ commonName: 'alice' });
    const body = Buffer.from(csrPem.split('\n').filter((l) => !l.startsWith('-----')).join(''), 'base64');
    body[20] = body[20]! ^ 0xff; // inside the subject, covered by the signature
    const bad = `-----BEGIN CERTIFICATE REQUEST-----\n${body.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    assert.throws(() => parseCSR(bad), CSRParseError);
  });

  it('issues a certificate for the request key, signed by the CA, with the usages asked', () => {
    const ca = newCA('cluster-ca');
    const { csrPem } = newCSR({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'], ipAddresses: ['10.1.2.3'] });
    const req = parseCSR(csrPem);
    const pem = issueCertificate(ca, req, { usages: ['digital signature', 'server auth'], ttlMs: 24 * 3600_000, now: NOW, backdateMs: 300_000, shortMs: 8 * 3600_000 });
    const cert = new X509Certificate(pem);
    const caCert = new X509Certificate(ca.certPem);
    assert.equal(cert.verify(caCert.publicKey), true);
    assert.equal(cert.checkIssued(caCert), true);
    assert.equal(cert.ca, false);
    assert.match(cert.subject, /CN=system:node:n1/);
    assert.match(cert.subject, /O=system:nodes/);
    assert.equal(cert.checkIP('10.1.2.3'), '10.1.2.3');
    assert.equal(cert.checkHost('n1'), 'n1');
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.equal(Date.parse(cert.validFrom), NOW - 300_000);
    assert.equal(Date.parse(cert.validTo), NOW + 24 * 3600_000 - 300_000);
    assert.equal(cert.publicKey.export({ type: 'spki', format: 'der' }).equals(req.publicKeyDer), true);
  });

  it('does not backdate short-lived certificates and caps notAfter at the CA expiry', () => {
    const ca = newCA('ca', 1);
    const req = parseCSR(newCSR({ commonName: 'bob' }).csrPem);
    const now = Date.now();
    const short = new X509Certificate(issueCertificate(ca, req, { usages: ['client auth'], ttlMs: 3600_000, now, backdateMs: 300_000, shortMs: 8 * 3600_000 }));
    assert.equal(Date.parse(short.validFrom), Math.floor(now / 1000) * 1000);
    const long = new X509Certificate(issueCertificate(ca, req, { usages: ['client auth'], ttlMs: 365 * 86400_000, now, backdateMs: 300_000, shortMs: 8 * 3600_000 }));
    assert.equal(long.validTo, new X509Certificate(ca.certPem).validTo);
  });

  it('refuses unknown usages', () => {
    const ca = newCA('ca');
    const req = parseCSR(newCSR({ commonName: 'bob' }).csrPem);
    assert.throws(() => issueCertificate(ca, req, { usages: ['flying'], ttlMs: 1000, now: NOW }), /unrecognized usage: flying/);
  });
});
