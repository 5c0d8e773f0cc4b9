import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { verifyJwt } from '../../util/jwt/jwt.js';
import { keyId, parsePublicKeys } from '../../util/jwt/keys.js';
import { legacyClaims, newTokenGenerator } from './jwt.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'sec1', format: 'pem' } });
const sa = { namespace: 'ns', name: 'builder', uid: 'u-1' };

describe('legacy service-account tokens', () => {
  it('signs the legacy claims with RS256 for an RSA key, with the upstream key id', () => {
    const gen = newTokenGenerator(rsa.privateKey);
    assert.equal(gen.algorithm, 'RS256');
    const pub = parsePublicKeys(rsa.publicKey);
    const { header, claims } = verifyJwt(gen.generate(legacyClaims(sa, 'builder-token-abcde')), pub);
    assert.equal(header.kid, keyId(pub[0]!));
    assert.deepEqual(claims, {
      iss: 'kubernetes/serviceaccount',
      sub: 'system:serviceaccount:ns:builder',
      'kubernetes.io/serviceaccount/namespace': 'ns',
      'kubernetes.io/serviceaccount/secret.name': 'builder-token-abcde',
      'kubernetes.io/serviceaccount/service-account.name': 'builder',
      'kubernetes.io/serviceaccount/service-account.uid': 'u-1',
    });
  });

  it('signs with ES256 for an EC P-256 key and fails verification with another key', () => {
    const gen = newTokenGenerator(ec.privateKey);
    assert.equal(gen.algorithm, 'ES256');
    const token = gen.generate(legacyClaims(sa, 's'));
    assert.equal(verifyJwt(token, parsePublicKeys(ec.publicKey)).claims.sub, 'system:serviceaccount:ns:builder');
    assert.throws(() => verifyJwt(token, parsePublicKeys(rsa.publicKey)));
  });

  it('refuses a key that cannot sign', () => {
    assert.throws(() => newTokenGenerator('not a key'));
  });
});
