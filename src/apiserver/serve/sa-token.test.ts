import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { FakeClock, rfc3339 } from '../../util/clock/clock.js';
import { signJwt } from '../../util/jwt/jwt.js';
import type { KubeObject } from '../../api/types.js';
import type { ObjectReader } from '../admission/admission.js';
import { legacyIssuer, newServiceAccountTokenAuthenticator, newServiceAccountTokenSigner } from './sa-token.js';

const issuer = 'https://kubernetes.default.svc.cluster.local';

function world() {
  const objects = new Map<string, KubeObject>();
  const put = (resource: string, ns: string, name: string, extra: Record<string, unknown> = {}) => {
    const o = { metadata: { name, namespace: ns, uid: `${name}-uid`, ...(extra.metadata as object) }, ...extra } as KubeObject;
    o.metadata = { name, namespace: ns, uid: `${name}-uid`, ...((extra.metadata as object) ?? {}) };
    objects.set(`${resource}/${ns}/${name}`, o);
    return o;
  };
  const reader: ObjectReader = { get: async (_g, resource, ns, name) => objects.get(`${resource}/${ns}/${name}`) };
  return { objects, put, reader };
}

function setup(opts: { apiAudiences?: string[] } = {}) {
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const clock = new FakeClock('2025-01-01T00:00:00Z');
  const w = world();
  const signer = newServiceAccountTokenSigner({ key: key.privateKey, issuer, clock, ...(opts.apiAudiences ? { apiAudiences: opts.apiAudiences } : {}) });
  const authn = newServiceAccountTokenAuthenticator({ keys: [key.publicKey], issuers: [issuer], reader: w.reader, clock, ...(opts.apiAudiences ? { apiAudiences: opts.apiAudiences } : {}) });
  w.put('serviceaccounts', 'default', 'builder');
  return { key, clock, signer, authn, ...w };
}

const boundToken = (t: ReturnType<typeof setup>, extra: Partial<Parameters<ReturnType<typeof setup>['signer']['sign']>[0]> = {}) =>
  t.signer.sign({ namespace: 'default', serviceAccount: { name: 'builder', uid: 'builder-uid' }, audiences: t.signer.apiAudiences, expirationSeconds: 3600, ...extra });

describe('service-account token authenticator: bound tokens', () => {
  it('authenticates a fresh token as the service account with its groups, uid and credential id', async () => {
    const t = setup();
    const { token, expiresAtMs } = boundToken(t);
    assert.equal(expiresAtMs, t.clock.now() + 3600_000);
    const r = await t.authn.authenticate(token);
    assert.equal(r.kind, 'user');
    if (r.kind !== 'user') return;
    assert.equal(r.user.username, 'system:serviceaccount:default:builder');
    assert.equal(r.user.uid, 'builder-uid');
    assert.deepEqual(r.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:default']);
    assert.match(r.user.extra?.['authentication.kubernetes.io/credential-id']?.[0] ?? '', /^JTI=[0-9a-f-]{36}$/);
    assert.deepEqual(r.audiences, [issuer]);
  });

  it('refuses the token once expired beyond the leeway', async () => {
    const t = setup();
    const { token } = boundToken(t);
    await t.clock.advance(3600_000 + 30_000);
    assert.equal((await t.authn.authenticate(token)).kind, 'user');
    await t.clock.advance(31_000);
    assert.deepEqual(await t.authn.authenticate(token), { kind: 'invalid', error: 'service account token has expired' });
  });

  it('refuses a token whose audiences miss the ones asked for', async () => {
    const t = setup({ apiAudiences: ['api'] });
    const { token } = t.signer.sign({ namespace: 'default', serviceAccount: { name: 'builder', uid: 'builder-uid' }, audiences: ['vault'], expirationSeconds: 600 });
    const r = await t.authn.authenticate(token);
    assert.equal(r.kind, 'invalid');
    assert.match((r as { error: string }).error, /token audiences \["vault"\] is invalid for the target audiences \["api"\]/);
    const ok = await t.authn.authenticate(token, ['vault', 'other']);
    assert.equal(ok.kind, 'user');
    assert.deepEqual((ok as { audiences: string[] }).audiences, ['vault']);
  });

  it('refuses the token when its service account is deleted or recreated', async () => {
    const t = setup();
    const { token } = boundToken(t);
    t.objects.delete('serviceaccounts/default/builder');
    assert.deepEqual(await t.authn.authenticate(token), { kind: 'invalid', error: 'service account default/builder has been deleted' });
    t.put('serviceaccounts', 'default', 'builder', { metadata: { uid: 'new-uid' } });
    assert.deepEqual(await t.authn.authenticate(token), { kind: 'invalid', error: 'service account UID (new-uid) does not match claim (builder-uid)' });
  });

  it('binds to a pod: valid while the pod exists, refused once it is deleted or replaced', async () => {
    const t = setup();
    t.put('pods', 'default', 'web');
    const { token } = boundToken(t, { boundObject: { kind: 'Pod', name: 'web', uid: 'web-uid' }, node: { name: 'n1', uid: 'n1-uid' } });
    const r = await t.authn.authenticate(token);
    assert.equal(r.kind, 'user');
    assert.deepEqual((r as { user: { extra?: object } }).user.extra && Object.keys((r as { user: { extra: object } }).user.extra).sort(), [
      'authentication.kubernetes.io/credential-id', 'authentication.kubernetes.io/node-name', 'authentication.kubernetes.io/node-uid',
      'authentication.kubernetes.io/pod-name', 'authentication.kubernetes.io/pod-uid',
    ]);
    // Being deleted, within the leeway: still good.
    t.put('pods', 'default', 'web', { metadata: { uid: 'web-uid', deletionTimestamp: rfc3339(t.clock.now()) } });
    assert.equal((await t.authn.authenticate(token)).kind, 'user');
    await t.clock.advance(61_000);
    assert.deepEqual(await t.authn.authenticate(token), { kind: 'invalid', error: 'pod default/web has been deleted' });
    t.put('pods', 'default', 'web', { metadata: { uid: 'other' } });
    assert.deepEqual(await t.authn.authenticate(token), { kind: 'invalid', error: 'pod UID (other) does not match claim (web-uid)' });
    t.objects.delete('pods/default/web');
    assert.deepEqual(await t.authn.authenticate(token), { kind: 'invalid', error: 'pod default/web has been deleted' });
  });

  it('binds to a secret and to a node', async () => {
    const t = setup();
    t.put('secrets', 'default', 's1');
    t.put('nodes', '', 'n1');
    const bySecret = boundToken(t, { boundObject: { kind: 'Secret', name: 's1', uid: 's1-uid' } }).token;
    const byNode = boundToken(t, { boundObject: { kind: 'Node', name: 'n1', uid: 'n1-uid' } }).token;
    assert.equal((await t.authn.authenticate(bySecret)).kind, 'user');
    assert.equal((await t.authn.authenticate(byNode)).kind, 'user');
    t.objects.delete('secrets/default/s1');
    t.objects.delete('nodes//n1');
    assert.deepEqual(await t.authn.authenticate(bySecret), { kind: 'invalid', error: 'secret default/s1 has been deleted' });
    assert.deepEqual(await t.authn.authenticate(byNode), { kind: 'invalid', error: 'node n1 has been deleted' });
  });

  it('refuses tokens signed by another key and ignores other issuers and non-JWTs', async () => {
    const t = setup();
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = signJwt({ iss: issuer, sub: 'system:serviceaccount:default:builder', aud: [issuer], exp: t.clock.now() / 1000 + 600 }, other.privateKey);
    const r = await t.authn.authenticate(forged);
    assert.equal(r.kind, 'invalid');
    const foreign = signJwt({ iss: 'https://accounts.example.com', sub: 'x' }, t.key.privateKey);
    assert.deepEqual(await t.authn.authenticate(foreign), { kind: 'not-mine' });
    assert.deepEqual(await t.authn.authenticate('0123456789abcdef'), { kind: 'not-mine' });
  });

  it('writes a warnafter claim for extended pod tokens', () => {
    const t = setup();
    const { token } = boundToken(t, { expirationSeconds: 365 * 86400, warnAfterSeconds: 3607 });
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number; iat: number; nbf: number; 'kubernetes.io': { warnafter: number } };
    assert.equal(claims.exp - claims.iat, 365 * 86400);
    assert.equal(claims['kubernetes.io'].warnafter - claims.iat, 3607);
    assert.equal(claims.nbf, claims.iat);
  });
});

describe('service-account token authenticator: legacy Secret tokens', () => {
  function legacy(t: ReturnType<typeof setup>) {
    const claims = {
      iss: legacyIssuer,
      'kubernetes.io/serviceaccount/namespace': 'default',
      'kubernetes.io/serviceaccount/secret.name': 'builder-token',
      'kubernetes.io/serviceaccount/service-account.name': 'builder',
      'kubernetes.io/serviceaccount/service-account.uid': 'builder-uid',
      sub: 'system:serviceaccount:default:builder',
    };
    const token = signJwt(claims, t.key.privateKey);
    t.put('secrets', 'default', 'builder-token', {
      type: 'kubernetes.io/service-account-token',
      metadata: { annotations: { 'kubernetes.io/service-account.name': 'builder', 'kubernetes.io/service-account.uid': 'builder-uid' } },
      data: { token: Buffer.from(token).toString('base64') },
    });
    return token;
  }

  it('authenticates while the Secret holds the token and names the service account', async () => {
    const t = setup();
    const token = legacy(t);
    const r = await t.authn.authenticate(token);
    assert.equal(r.kind, 'user');
    assert.equal((r as { user: { username: string } }).user.username, 'system:serviceaccount:default:builder');
    // No expiry: still good a year later.
    await t.clock.advance(365 * 86400_000);
    assert.equal((await t.authn.authenticate(token)).kind, 'user');
  });

  it('refuses the token once the Secret is deleted, changed or re-pointed', async () => {
    const t = setup();
    const token = legacy(t);
    const secret = t.objects.get('secrets/default/builder-token')!;
    t.objects.delete('secrets/default/builder-token');
    assert.deepEqual(await t.authn.authenticate(token), { kind: 'invalid', error: 'secret default/builder-token has been deleted' });
    t.objects.set('secrets/default/builder-token', { ...secret, data: { token: Buffer.from('other').toString('base64') } } as KubeObject);
    assert.match((await t.authn.authenticate(token) as { error: string }).error, /token does not match/);
    t.objects.set('secrets/default/builder-token', { ...secret, metadata: { ...secret.metadata, annotations: { 'kubernetes.io/service-account.name': 'other' } } } as KubeObject);
    assert.match((await t.authn.authenticate(token) as { error: string }).error, /no longer references service account builder/);
  });

  it('refuses the token when the service account was recreated', async () => {
    const t = setup();
    const token = legacy(t);
    t.put('serviceaccounts', 'default', 'builder', { metadata: { uid: 'new' } });
    assert.equal((await t.authn.authenticate(token)).kind, 'invalid');
  });
});
