import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Secret } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { descriptor, newTokenCleanerController } from './tokencleaner-controller.js';

function token(id: string, expiration?: string, type = 'bootstrap.kubernetes.io/token'): Kube<Secret> {
  const data: Record<string, string> = { 'token-id': Buffer.from(id).toString('base64'), 'token-secret': Buffer.from('0123456789abcdef').toString('base64') };
  if (expiration !== undefined) data['expiration'] = Buffer.from(expiration).toString('base64');
  return { metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system', uid: `uid-${id}` }, type, data };
}
const stored = (f: FakeClient, id: string) => f.stored<Kube<Secret>>(GVR.secrets, 'kube-system', `bootstrap-token-${id}`);

// The test clock starts at 2024-01-01T00:00:00Z.
describe('token cleaner controller', () => {
  before(() => setLogOutput(() => {}));

  it('deletes expired and unparseable tokens and keeps the rest', async () => {
    const env = await setupController(
      (f) => f.seed(GVR.secrets, token('expird', '2023-12-31T00:00:00Z'), token('garbag', 'soon'), token('foreva'), token('later1', '2024-01-02T00:00:00Z'), token('opaque', '2000-01-01T00:00:00Z', 'Opaque')),
      (ctx) => newTokenCleanerController(ctx),
    );
    for (const id of ['expird', 'garbag', 'foreva', 'later1', 'opaque']) await env.c.syncSecret(`kube-system/bootstrap-token-${id}`);
    assert.equal(stored(env.fake, 'expird'), undefined);
    assert.equal(stored(env.fake, 'garbag'), undefined);
    assert.ok(stored(env.fake, 'foreva'));
    assert.ok(stored(env.fake, 'later1'));
    assert.ok(stored(env.fake, 'opaque'), 'only bootstrap token secrets are cleaned');
    const del = env.fake.actions().find((a) => a.verb === 'delete' && a.name === 'bootstrap-token-expird');
    assert.deepEqual(del?.deleteOptions?.preconditions, { uid: 'uid-expird' });
    await env.stop();
  });

  it('deletes a token when it expires while running', async () => {
    const env = await setupController((f) => f.seed(GVR.secrets, token('abcdef', '2024-01-01T01:00:00Z')), (ctx) => newTokenCleanerController(ctx));
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await until(() => env.clock.pendingTimers() > 0, 'requeue at expiry scheduled');
    await env.clock.advance(59 * 60_000);
    assert.ok(stored(env.fake, 'abcdef'), 'still valid');
    await env.clock.advance(60_000);
    await until(() => stored(env.fake, 'abcdef') === undefined, 'deleted at expiry');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered disabled by default under its upstream name', () => {
    assert.equal(descriptor.name, 'token-cleaner-controller');
    assert.deepEqual(descriptor.aliases, ['tokencleaner']);
    assert.equal(descriptor.disabledByDefault, true);
  });
});
