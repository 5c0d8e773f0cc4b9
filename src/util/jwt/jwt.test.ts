import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { decodeJwt, JwtError, looksLikeJwt, signJwt, verifyJwt } from './jwt.js';
import { algorithmFor, keyFromJwk, keyId, parsePrivateKey, parsePublicKeys, publicJwk } from './keys.js';
import { audiencesOf, checkTimes, ClaimsError, intersectAudiences } from './claims.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });

function tamper(token: string, claims: object): string {
  const [h, , s] = token.split('.');
  return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
}

describe('JWT signing and verification', () => {
  it('signs RS256 with an RSA key and verifies with its public key', () => {
    const t = signJwt({ sub: 'alice', exp: 10 }, rsa.privateKey);
    const { header, claims } = verifyJwt(t, [rsa.publicKey]);
    assert.equal(header.alg, 'RS256');
    assert.equal(header.kid, keyId(rsa.publicKey));
    assert.deepEqual(claims, { sub: 'alice', exp: 10 });
  });

  it('signs ES256 with raw 64-byte signatures and ES384 by curve', () => {
    const t = signJwt({ sub: 'bob' }, ec.privateKey);
    assert.equal(decodeJwt(t).header.alg, 'ES256');
    assert.equal(Buffer.from(t.split('.')[2]!, 'base64url').length, 64);
    assert.equal(verifyJwt(t, [rsa.publicKey, ec.publicKey]).claims.sub, 'bob');
    const t384 = signJwt({ sub: 'carol' }, ec384.privateKey);
    assert.equal(decodeJwt(t384).header.alg, 'ES384');
    assert.equal(verifyJwt(t384, [ec384.publicKey]).claims.sub, 'carol');
  });

  it('rejects a token whose payload was changed', () => {
    for (const key of [rsa, ec]) {
      const t = signJwt({ sub: 'alice' }, key.privateKey);
      assert.throws(() => verifyJwt(tamper(t, { sub: 'admin' }), [key.publicKey]), (e: unknown) => e instanceof JwtError && e.reason === 'bad-signature');
    }
  });

  it('rejects a token signed by another key, even with no kid', () => {
    const t = signJwt({ sub: 'alice' }, other.privateKey, { kid: '' });
    assert.equal(decodeJwt(t).header.kid, undefined);
    assert.throws(() => verifyJwt(t, [rsa.publicKey]), (e: unknown) => e instanceof JwtError && e.reason === 'bad-signature');
    assert.equal(verifyJwt(t, [rsa.publicKey, other.publicKey]).claims.sub, 'alice');
  });

  it('refuses alg none, HMAC and an algorithm the keys do not have', () => {
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.`;
    assert.throws(() => verifyJwt(none, [rsa.publicKey]), (e: unknown) => e instanceof JwtError && e.reason === 'unsupported-algorithm');
    const hs = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.abc`;
    assert.throws(() => verifyJwt(hs, [rsa.publicKey]), (e: unknown) => e instanceof JwtError && e.reason === 'unsupported-algorithm');
    const es = signJwt({ sub: 'x' }, ec.privateKey);
    assert.throws(() => verifyJwt(es, [rsa.publicKey]), (e: unknown) => e instanceof JwtError && e.reason === 'unknown-key');
  });

  it('rejects malformed tokens', () => {
    for (const t of ['', 'abc', 'a.b', 'a.b.c.d', '!!.e30.', `${Buffer.from('[1]').toString('base64url')}.e30.x`]) {
      assert.throws(() => verifyJwt(t, [rsa.publicKey]), JwtError);
    }
    assert.equal(looksLikeJwt('0123456789abcdef'), false);
    assert.equal(looksLikeJwt(signJwt({}, rsa.privateKey)), true);
  });
});

describe('JWT keys', () => {
  it('reads public keys from public PEM, private PEM (PKCS#1, PKCS#8, SEC1) and certificates', () => {
    const pkcs1 = rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
    const sec1 = ec.privateKey.export({ type: 'sec1', format: 'pem' }) as string;
    const spki = other.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const keys = parsePublicKeys(pkcs1 + sec1 + spki);
    assert.deepEqual(keys.map(keyId), [keyId(rsa.publicKey), keyId(ec.publicKey), keyId(other.publicKey)]);
    assert.equal(keyId(parsePrivateKey(sec1)), keyId(ec.publicKey));
    assert.throws(() => parsePublicKeys('nothing here'), /does not contain any valid RSA or ECDSA public keys/);
    assert.throws(() => parsePrivateKey(spki), /does not contain a PEM private key/);
  });

  it('round-trips public keys through JWK with kid and alg', () => {
    const jwk = publicJwk(ec.privateKey);
    assert.equal(jwk.kty, 'EC');
    assert.equal(jwk.alg, 'ES256');
    assert.equal((jwk as { d?: string }).d, undefined);
    const back = keyFromJwk(jwk);
    assert.equal(keyId(back), jwk.kid);
    assert.equal(verifyJwt(signJwt({ a: 1 }, ec.privateKey), [back]).claims.a, 1);
    assert.equal(algorithmFor(keyFromJwk(publicJwk(rsa.publicKey))), 'RS256');
  });

  it('rejects keys that are neither RSA nor ECDSA', () => {
    const ed = generateKeyPairSync('ed25519');
    assert.throws(() => algorithmFor(ed.publicKey), /unsupported key type ed25519/);
    assert.throws(() => parsePublicKeys(ed.publicKey.export({ type: 'spki', format: 'pem' }) as string), /unsupported key type/);
  });
});

describe('JWT claims', () => {
  const now = 1_700_000_000_000;
  const sec = now / 1000;
  it('accepts a token within its lifetime and within the leeway after exp', () => {
    checkTimes({ iat: sec - 10, nbf: sec - 10, exp: sec + 10 }, { nowMs: now });
    checkTimes({ exp: sec - 30 }, { nowMs: now, leewaySeconds: 60 });
  });

  it('rejects an expired token, a token not yet valid and one issued in the future', () => {
    assert.throws(() => checkTimes({ exp: sec - 61 }, { nowMs: now }), (e: unknown) => e instanceof ClaimsError && /expired/.test(e.message));
    assert.throws(() => checkTimes({ exp: sec - 1 }, { nowMs: now, leewaySeconds: 0 }), /expired/);
    assert.throws(() => checkTimes({ nbf: sec + 120 }, { nowMs: now }), /not valid yet/);
    assert.throws(() => checkTimes({ iat: sec + 120 }, { nowMs: now }), /issued in the future/);
    assert.throws(() => checkTimes({}, { nowMs: now, requireExpiry: true }), /no expiry/);
    assert.throws(() => checkTimes({ exp: '5' as unknown as number }, { nowMs: now }), /exp is not a number/);
  });

  it('reads aud as a string or a list and intersects audiences', () => {
    assert.deepEqual(audiencesOf({ aud: 'api' }), ['api']);
    assert.deepEqual(audiencesOf({ aud: ['a', 'b'] }), ['a', 'b']);
    assert.deepEqual(audiencesOf({}), []);
    assert.deepEqual(intersectAudiences(['b', 'c'], ['a', 'b']), ['b']);
  });
});
