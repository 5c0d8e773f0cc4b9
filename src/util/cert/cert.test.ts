import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createServer } from 'node:https';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { newCA, newSignedCert, certIdentity } from './cert.js';

describe('certificates', () => {
  it('makes a CA that verifies the certificates it signs', () => {
    const ca = newCA('kcm-ca');
    const leaf = newSignedCert(ca, { commonName: 'kube-apiserver', dnsNames: ['localhost', 'kubernetes.default.svc'], ipAddresses: ['127.0.0.1', '::1', '10.0.0.1'] });
    const caCert = new X509Certificate(ca.certPem);
    const cert = new X509Certificate(leaf.certPem);
    assert.equal(caCert.ca, true);
    assert.equal(cert.ca, false);
    assert.equal(cert.checkIssued(caCert), true);
    assert.equal(cert.verify(caCert.publicKey), true);
    assert.equal(cert.checkHost('kubernetes.default.svc'), 'kubernetes.default.svc');
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(cert.checkIP('::1'), '::1');
    assert.equal(cert.checkHost('example.com'), undefined);
  });

  it('encodes user and groups of a client certificate', () => {
    const ca = newCA('kcm-ca');
    const c = newSignedCert(ca, { commonName: 'alice', organizations: ['system:masters', 'dev'], usage: 'client' });
    assert.deepEqual(certIdentity(new X509Certificate(c.certPem)), { user: 'alice', groups: ['system:masters', 'dev'] });
  });

  it('serves TLS that a client trusting the CA accepts, with client-certificate authentication', async () => {
    const ca = newCA('kcm-ca');
    const serving = newSignedCert(ca, { commonName: 'server', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    const client = newSignedCert(ca, { commonName: 'bob', organizations: ['g1'], usage: 'client' });
    const server = createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
      const peer = (req.socket as import('node:tls').TLSSocket).getPeerX509Certificate();
      res.end(peer ? certIdentity(peer).user : 'anonymous');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/', ca: ca.certPem, cert: client.certPem, key: client.keyPem }, (res) => {
          let data = '';
          res.on('data', (d) => (data += d));
          res.on('end', () => resolve(data));
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(body, 'bob');
    } finally {
      server.close();
    }
  });
});
