import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { legacyClaims, newTokenGenerator, TokenVerificationError, verifyServiceAccountToken } from './jwt.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'sec1', format: 'pem' } });
const sa = { namespace: 'ns', name: 'builder', uid: 'uid-1' };

describe('service account JWTs', () => {
  it('signs legacy tokens with RS256 for RSA keys and verifies them', () => {
    const g = newTokenGenerator(rsa.privateKey);
    assert.equal(g.algorithm, 'RS256');
    const token = g.generate(legacyClaims(sa, 'builder-token-abcde'));
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { alg: string; kid: string };
    assert.equal(header.alg, 'RS256');
    assert.equal(header.kid, g.keyID);
    const info = verifyServiceAccountToken(token, rsa.publicKey);
    assert.equal(info.username, 'system:serviceaccount:ns:builder');
    assert.equal(info.uid, 'uid-1');
    assert.equal(info.secretName, 'builder-token-abcde');
    assert.deepEqual(info.groups, ['system:serviceaccounts', 'system:serviceaccounts:ns']);
    assert.equal(info.claims.iss, 'kubernetes/serviceaccount');
    assert.equal(info.claims['kubernetes.io/serviceaccount/service-account.name'], 'builder');
  });

  it('signs with ES256 for P-256 keys (raw r||s signatures)', () => {
    const g = newTokenGenerator(ec.privateKey);
    assert.equal(g.algorithm, 'ES256');
    const token = g.generate(legacyClaims(sa, 's'));
    assert.equal(Buffer.from(token.split('.')[2]!, 'base64url').length, 64);
    assert.equal(verifyServiceAccountToken(token, ec.publicKey).serviceAccountName, 'builder');
  });

  it('rejects a token signed by another key, a tampered one and a foreign issuer', () => {
    const token = newTokenGenerator(rsa.privateKey).generate(legacyClaims(sa, 's'));
    assert.throws(() => verifyServiceAccountToken(token, ec.publicKey), TokenVerificationError);
    const [h, p, s] = token.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: 'system:serviceaccount:kube-system:admin' })).toString('base64url');
    assert.throws(() => verifyServiceAccountToken(`${h}.${forged}.${s}`, rsa.publicKey), /signature/);
    const other = newTokenGenerator(rsa.privateKey).generate({ ...legacyClaims(sa, 's'), iss: 'https://elsewhere' });
    assert.throws(() => verifyServiceAccountToken(other, rsa.publicKey), /issuer/);
    assert.throws(() => verifyServiceAccountToken('not-a-jwt', rsa.publicKey), /not a JWT/);
  });

  it('verifies bound tokens with audience and expiry', () => {
    const g = newTokenGenerator(rsa.privateKey, 'https://kubernetes.default.svc');
    const now = Date.UTC(2024, 0, 1) / 1000;
    const token = g.generate({ sub: 'system:serviceaccount:ns:builder', aud: ['api'], exp: now + 3600, iat: now, 'kubernetes.io': { namespace: 'ns', serviceaccount: { name: 'builder', uid: 'uid-1' } } });
    const opts = { issuers: ['https://kubernetes.default.svc'], audiences: ['api'], now: now * 1000 };
    assert.equal(verifyServiceAccountToken(token, rsa.publicKey, opts).kind, 'bound');
    assert.throws(() => verifyServiceAccountToken(token, rsa.publicKey, { ...opts, audiences: ['other'] }), /audiences/);
    assert.throws(() => verifyServiceAccountToken(token, rsa.publicKey, { ...opts, now: (now + 7200) * 1000 }), /expired/);
  });
});
