import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { computeDetachedSignature, tokenExpiration, tokenForSigning } from './bootstrap-token.js';
import { descriptor, newBootstrapSignerController } from './bootstrapsigner-controller.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
function tokenSecret(id: string, secret: string, extra: Record<string, string> = { 'usage-bootstrap-signing': 'true' }, name = `bootstrap-token-${id}`): Kube<Secret> {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries({ 'token-id': id, 'token-secret': secret, ...extra })) data[k] = b64(v);
  return { metadata: { name, namespace: 'kube-system', uid: `uid-${name}` }, type: 'bootstrap.kubernetes.io/token', data };
}
const KUBECONFIG = 'apiVersion: v1\nkind: Config\nclusters: []\n';
const clusterInfo = (extra: Record<string, string> = {}): Kube<ConfigMap> => ({ metadata: { name: 'cluster-info', namespace: 'kube-public' }, data: { kubeconfig: KUBECONFIG, ...extra } });
const stored = (f: FakeClient) => f.stored<Kube<ConfigMap>>(GVR.configMaps, 'kube-public', 'cluster-info');

describe('bootstrap token helpers', () => {
  it('computes the detached JWS upstream computes (cluster-bootstrap jws test vectors)', () => {
    const content = 'Hello from the other side. I must have called a thousand times.';
    assert.equal(computeDetachedSignature(content, 'joshua', 'my voice is my passcode'), 'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8');
    assert.equal(computeDetachedSignature('', 'joshua', 'my voice is my passcode'), 'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk');
    assert.equal(computeDetachedSignature(content, 'joshua', ''), 'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..UfkqvDGiIFxrMnFseDj9LYJOLNrvjW8aHhF71mvvAs8');
    assert.equal(
      computeDetachedSignature(content, 'joshua', 'my voice is my passcode. my voice is my passcode'),
      'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..SFoKn0-YxqnvpSExt4LuCZ_7pvIBdX3SoUO_NsTpkdg',
    );
  });

  it('accepts only well-formed, unexpired signing tokens', () => {
    const now = Date.parse('2024-01-01T00:00:00Z');
    assert.deepEqual(tokenForSigning(tokenSecret('abcdef', '0123456789abcdef'), now), { tokenId: 'abcdef', tokenSecret: '0123456789abcdef' });
    assert.ok('skip' in tokenForSigning(tokenSecret('abcdef', 's', {}), now), 'not for signing');
    assert.ok('skip' in tokenForSigning(tokenSecret('abcdef', 's', { 'usage-bootstrap-signing': 'true' }, 'bootstrap-token-zzzzzz'), now), 'id mismatch');
    assert.ok('skip' in tokenForSigning(tokenSecret('abcdef', 's', { 'usage-bootstrap-signing': 'true' }, 'my-token'), now), 'bad name');
    assert.ok('skip' in tokenForSigning(tokenSecret('abcdef', 's', { 'usage-bootstrap-signing': 'true', expiration: '2023-12-31T23:59:59Z' }), now), 'expired');
  });

  it('reads expirations as RFC 3339 and treats garbage as expired', () => {
    const now = Date.parse('2024-01-01T00:00:00Z');
    assert.deepEqual(tokenExpiration(tokenSecret('abcdef', 's', { expiration: '2024-01-01T01:00:00Z' }), now), { ttlMs: 3_600_000, expired: false });
    assert.deepEqual(tokenExpiration(tokenSecret('abcdef', 's', { expiration: '2024-01-01T02:00:00+01:00' }), now), { ttlMs: 3_600_000, expired: false });
    assert.deepEqual(tokenExpiration(tokenSecret('abcdef', 's', { expiration: 'tomorrow' }), now), { ttlMs: 0, expired: true });
    assert.deepEqual(tokenExpiration(tokenSecret('abcdef', 's', {}), now), { ttlMs: 0, expired: false });
  });
});

describe('bootstrap signer controller', () => {
  before(() => setLogOutput(() => {}));

  it('signs cluster-info with every signing token and drops stale signatures', async () => {
    const env = await setupController(
      (f) => {
        f.seed(GVR.configMaps, clusterInfo({ 'jws-kubeconfig-old000': 'stale', other: 'kept' }));
        f.seed(GVR.secrets, tokenSecret('abcdef', '0123456789abcdef'), tokenSecret('nosign', 'x', {}), tokenSecret('ghijkl', 'fedcba9876543210'));
      },
      (ctx) => newBootstrapSignerController(ctx),
    );
    await env.c.signConfigMap();
    const data = stored(env.fake)!.data!;
    assert.deepEqual(Object.keys(data).sort(), ['jws-kubeconfig-abcdef', 'jws-kubeconfig-ghijkl', 'kubeconfig', 'other']);
    assert.equal(data['jws-kubeconfig-abcdef'], computeDetachedSignature(KUBECONFIG, 'abcdef', '0123456789abcdef'));
    await env.stop();
  });

  it('does not write cluster-info when its signatures are current', async () => {
    const sig = computeDetachedSignature(KUBECONFIG, 'abcdef', '0123456789abcdef');
    const env = await setupController(
      (f) => {
        f.seed(GVR.configMaps, clusterInfo({ 'jws-kubeconfig-abcdef': sig }));
        f.seed(GVR.secrets, tokenSecret('abcdef', '0123456789abcdef'));
      },
      (ctx) => newBootstrapSignerController(ctx),
    );
    await env.c.signConfigMap();
    assert.equal(env.fake.actions().filter((a) => a.verb === 'update').length, 0);
    await env.stop();
  });

  it('re-signs when a token is added or deleted while running', async () => {
    const env = await setupController((f) => f.seed(GVR.configMaps, clusterInfo()), (ctx) => newBootstrapSignerController(ctx));
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await env.fake.resource(GVR.secrets).namespace('kube-system').create(tokenSecret('abcdef', '0123456789abcdef'));
    await until(() => stored(env.fake)?.data?.['jws-kubeconfig-abcdef'] !== undefined, 'signed');
    await env.fake.resource(GVR.secrets).namespace('kube-system').delete('bootstrap-token-abcdef');
    await until(() => stored(env.fake)?.data?.['jws-kubeconfig-abcdef'] === undefined, 'signature removed');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered disabled by default under its upstream name', () => {
    assert.equal(descriptor.name, 'bootstrap-signer-controller');
    assert.deepEqual(descriptor.aliases, ['bootstrapsigner']);
    assert.equal(descriptor.disabledByDefault, true);
  });
});
