import { afterEach, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { newCA, newSignedCert } from '../../util/cert/cert.js';
import { newRequestAuthenticator } from './authn.js';

/** A request on a TLS socket presenting `certPem`, counting how often the socket is asked for it. */
function requestWithCertificate(certPem: string): { req: IncomingMessage; asked: () => number } {
  let asked = 0;
  const x = new X509Certificate(certPem);
  const socket = {
    getPeerCertificate: () => {
      asked++;
      return { raw: x.raw, fingerprint256: x.fingerprint256 };
    },
  };
  return { req: { socket, headers: {} } as unknown as IncomingMessage, asked: () => asked };
}

describe('newRequestAuthenticator', () => {
  afterEach(() => mock.timers.reset());

  it("verifies a connection's client certificate once, and again once it has expired", async () => {
    const ca = newCA('kcm-ca');
    const client = newSignedCert(ca, { commonName: 'alice', organizations: ['devs'], usage: 'client', validityDays: 1 });
    const authn = newRequestAuthenticator({ clientCA: ca.certPem });
    const { req, asked } = requestWithCertificate(client.certPem);
    mock.timers.enable({ apis: ['Date'], now: Date.now() });

    const first = await authn.authenticate(req);
    assert.deepEqual(first, { kind: 'user', user: { username: 'alice', groups: ['devs', 'system:authenticated'] }, method: 'x509' });
    assert.deepEqual(await authn.authenticate(req), first);
    assert.equal(asked(), 1);

    // A day later the certificate has expired: the connection's next request is verified again, and refused.
    mock.timers.tick(2 * 86_400_000);
    const later = await authn.authenticate(req);
    assert.equal(later.kind, 'rejected');
    assert.match((later as { why: string }).why, /expired|not valid/);
    assert.equal(asked(), 2);
  });

  it('does not remember a refused certificate', async () => {
    const stranger = newSignedCert(newCA('other'), { commonName: 'mallory', usage: 'client' });
    const authn = newRequestAuthenticator({ clientCA: newCA('kcm-ca').certPem });
    const { req, asked } = requestWithCertificate(stranger.certPem);
    assert.equal((await authn.authenticate(req)).kind, 'rejected');
    assert.equal((await authn.authenticate(req)).kind, 'rejected');
    assert.equal(asked(), 2);
  });
});
