import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { Secret, ServiceAccount } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { newTestContext, type TestContext } from '../garbagecollector/test-support.js';
import { reportServerVersion } from '../testing/test-context.js';
import { verifyJwt } from '../../util/jwt/jwt.js';
import { parsePublicKeys } from '../../util/jwt/keys.js';

/** The token's legacy claims, after checking its signature with the public key. */
function verifyServiceAccountToken(token: string, publicKeyPem: string) {
  const c = verifyJwt(token, parsePublicKeys(publicKeyPem)).claims as Record<string, string>;
  return {
    namespace: c['kubernetes.io/serviceaccount/namespace'],
    serviceAccountName: c['kubernetes.io/serviceaccount/service-account.name'],
    uid: c['kubernetes.io/serviceaccount/service-account.uid'],
    secretName: c['kubernetes.io/serviceaccount/secret.name'],
    username: c.sub,
  };
}
import { descriptor, needsLegacyTokens } from './serviceaccounttoken-controller.js';

const keys = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

const sa = (name: string): Kube<ServiceAccount> => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: 'ns' } }) as Kube<ServiceAccount>;

/** Starts the controller against a server reporting `minor` (1.23: legacy token secrets are generated). */
async function start(seed: (t: TestContext) => void = () => {}, minor = '23') {
  const t = newTestContext({ options: { serviceAccountPrivateKey: keys.privateKey, rootCA: CA } });
  reportServerVersion(t.ctx, minor);
  seed(t);
  const c = await descriptor.create(t.ctx);
  t.ctx.informers.start(t.stop.signal);
  const run = c.run(2, t.stop.signal);
  const secrets = () => t.fake.resource<Kube<Secret>>(GVR.secrets).namespace('ns');
  const sas = () => t.fake.resource<Kube<ServiceAccount>>(GVR.serviceAccounts).namespace('ns');
  /** Lets informers and workers run (the fake clock moves 100 ms per round for cache sync and retries). */
  const settle = async (cond: () => Promise<boolean>, what: string) => {
    for (let i = 0; i < 200; i++) {
      if (await cond()) return;
      await t.clock.advance(100);
    }
    throw new Error(`never happened: ${what}`);
  };
  return {
    t,
    secrets,
    sas,
    settle,
    async close() {
      await t.close();
      await run;
    },
  };
}

const tokenSecrets = async (e: Awaited<ReturnType<typeof start>>) => (await e.secrets().list()).items.filter((s) => s.type === 'kubernetes.io/service-account-token');

describe('serviceaccount-token controller', () => {
  before(() => setLogOutput(() => {}));

  it('is registered under its upstream name and needs the private key', async () => {
    assert.equal(descriptor.name, 'serviceaccount-token-controller');
    assert.deepEqual(descriptor.aliases, ['serviceaccount-token']);
    const t = newTestContext();
    const c = await descriptor.create(t.ctx);
    const stop = new AbortController();
    const run = c.run(1, stop.signal);
    stop.abort();
    await run;
    assert.equal(t.fake.actions().length, 0, 'without a key nothing is done');
  });

  it('creates one referenced token secret per service account with a verifiable token, ca.crt and namespace', async () => {
    const e = await start((t) => t.fake.seed(GVR.serviceAccounts, sa('builder')));
    await e.settle(async () => ((await e.sas().get('builder')).secrets ?? []).length === 1, 'secret referenced');
    await e.t.clock.advance(1000);
    const list = await tokenSecrets(e);
    assert.equal(list.length, 1, 'exactly one token secret');
    const s = list[0]!;
    const live = await e.sas().get('builder');
    assert.equal(live.secrets?.[0]?.name, s.metadata?.name);
    assert.match(s.metadata?.name ?? '', /^builder-token-[a-z0-9]{5}$/);
    assert.equal(s.metadata?.annotations?.['kubernetes.io/service-account.name'], 'builder');
    assert.equal(s.metadata?.annotations?.['kubernetes.io/service-account.uid'], live.metadata?.uid);
    const data = s.data ?? {};
    assert.equal(Buffer.from(data['ca.crt']!, 'base64').toString(), CA);
    assert.equal(Buffer.from(data.namespace!, 'base64').toString(), 'ns');
    const info = verifyServiceAccountToken(Buffer.from(data.token!, 'base64').toString(), keys.publicKey);
    assert.equal(info.username, 'system:serviceaccount:ns:builder');
    assert.equal(info.secretName, s.metadata?.name);
    assert.equal(info.uid, live.metadata?.uid);
    await e.close();
  });

  it('replaces a deleted token secret and deletes tokens when the service account goes', async () => {
    const e = await start((t) => t.fake.seed(GVR.serviceAccounts, sa('builder')));
    await e.settle(async () => (await tokenSecrets(e)).length === 1 && ((await e.sas().get('builder')).secrets ?? []).length === 1, 'first token');
    const first = (await tokenSecrets(e))[0]!.metadata!.name!;
    await e.secrets().delete(first);
    await e.settle(async () => {
      const refs = (await e.sas().get('builder')).secrets ?? [];
      return refs.length === 1 && refs[0]!.name !== first && (await tokenSecrets(e)).length === 1;
    }, 'a new referenced token');
    await e.sas().delete('builder');
    await e.settle(async () => (await tokenSecrets(e)).length === 0, 'tokens deleted with the service account');
    await e.close();
  });

  it('fills in a token secret created by a user', async () => {
    const e = await start((t) => t.fake.seed(GVR.serviceAccounts, sa('builder')));
    await e.settle(async () => (await tokenSecrets(e)).length === 1, 'auto token');
    await e.secrets().create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'manual', namespace: 'ns', annotations: { 'kubernetes.io/service-account.name': 'builder' } },
      type: 'kubernetes.io/service-account-token',
    } as Kube<Secret>);
    await e.settle(async () => !!(await e.secrets().get('manual')).data?.token, 'token filled in');
    const m = await e.secrets().get('manual');
    assert.equal(verifyServiceAccountToken(Buffer.from(m.data!.token!, 'base64').toString(), keys.publicKey).secretName, 'manual');
    assert.ok(m.metadata?.annotations?.['kubernetes.io/service-account.uid']);
    await e.close();
  });

  it('generates legacy token secrets only for API servers before 1.24', () => {
    assert.equal(needsLegacyTokens({ major: '1', minor: '23' }), true);
    assert.equal(needsLegacyTokens({ major: '1', minor: '20+' }), true);
    assert.equal(needsLegacyTokens({ major: '1', minor: '24' }), false);
    assert.equal(needsLegacyTokens({ major: '1', minor: '33' }), false);
    assert.equal(needsLegacyTokens({}), false);
  });

  it('on a current API server creates no token secret for a service account but still fills in a user-created one', async () => {
    const e = await start((t) => t.fake.seed(GVR.serviceAccounts, sa('builder')), '31');
    try {
      await e.t.clock.advance(2000);
      assert.equal((await tokenSecrets(e)).length, 0, 'no generated secret');
      await e.secrets().create({
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/service-account-token',
        metadata: { name: 'manual', namespace: 'ns', annotations: { 'kubernetes.io/service-account.name': 'builder' } },
      } as Kube<Secret>);
      await e.settle(async () => !!(await e.secrets().get('manual')).data?.token, 'the manual token filled in');
      const s = await e.secrets().get('manual');
      const claims = verifyServiceAccountToken(Buffer.from(s.data!.token!, 'base64').toString(), keys.publicKey);
      assert.equal(claims.serviceAccountName, 'builder');
    } finally {
      await e.close();
    }
  });
});
