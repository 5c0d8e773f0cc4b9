import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { GVR } from '../../api/gvr.js';
import { StatusError, newStatus } from '../../client/errors.js';
import { newFakeClient, type FakeClient } from '../../controller/testing/fake-client.js';
import { newSharedInformerFactory } from '../../tools/cache/factory.js';
import { newFakeRecorder } from '../../tools/record/fake-recorder.js';
import { FakeClock, flushMicrotasks } from '../../util/clock/clock.js';
import { newLogger, setLogOutput } from '../../util/log/logger.js';
import type { ControllerContext, ControllerOptions } from '../types.js';
import { descriptor, newServiceAccountsController } from './serviceaccount-controller.js';

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (cond()) return;
    await flushMicrotasks();
  }
  throw new Error(`never happened: ${what}`);
}

async function setup(seed: (fake: FakeClient) => void) {
  const clock = new FakeClock();
  const fake = newFakeClient({ clock });
  seed(fake);
  const informers = newSharedInformerFactory(fake, { clock });
  const ctx: ControllerContext = {
    client: fake,
    informers,
    clock,
    options: { concurrency: {}, extra: {} } as unknown as ControllerOptions,
    recorder: () => newFakeRecorder(),
    logger: (n) => newLogger(n),
  };
  const c = newServiceAccountsController(ctx);
  const stop = new AbortController();
  informers.start(stop.signal);
  await until(() => c.hasSynced(), 'informers synced');
  return { fake, c, informers, stop, clock };
}

const ns = (name: string, phase = 'Active') => ({ metadata: { name }, status: { phase } });

describe('serviceaccount controller', () => {
  before(() => setLogOutput(() => {}));
  it('creates the default service account in an active namespace', async () => {
    const { fake, c, stop, informers } = await setup((f) => f.seed(GVR.namespaces, ns('team')));
    await c.syncNamespace('team');
    const sa = fake.stored(GVR.serviceAccounts, 'team', 'default');
    assert.ok(sa, 'default created');
    assert.equal(sa.metadata?.namespace, 'team');
    stop.abort();
    await informers.shutdown();
  });

  it('does nothing when the service account already exists', async () => {
    const { fake, c, stop, informers } = await setup((f) => {
      f.seed(GVR.namespaces, ns('team'));
      f.seed(GVR.serviceAccounts, { metadata: { name: 'default', namespace: 'team' } });
    });
    fake.clearActions();
    await c.syncNamespace('team');
    assert.deepEqual(fake.actions().filter((a) => a.verb === 'create'), []);
    stop.abort();
    await informers.shutdown();
  });

  it('leaves terminating and missing namespaces alone', async () => {
    const { fake, c, stop, informers } = await setup((f) => f.seed(GVR.namespaces, ns('old', 'Terminating')));
    fake.clearActions();
    await c.syncNamespace('old');
    await c.syncNamespace('missing');
    assert.deepEqual(fake.actions().filter((a) => a.verb === 'create'), []);
    stop.abort();
    await informers.shutdown();
  });

  it('ignores AlreadyExists and namespace-terminating refusals but fails on other errors', async () => {
    const { fake, c, stop, informers } = await setup((f) => f.seed(GVR.namespaces, ns('a')));
    fake.prependReactor('create', 'serviceaccounts', () => {
      const s = newStatus(403, 'Forbidden', 'being terminated');
      s.details = { causes: [{ reason: 'NamespaceTerminating' }] };
      throw new StatusError(s);
    });
    await c.syncNamespace('a');
    fake.prependReactor('create', 'serviceaccounts', () => {
      throw new StatusError(newStatus(500, 'InternalError', 'boom'));
    });
    await assert.rejects(c.syncNamespace('a'), /boom/);
    stop.abort();
    await informers.shutdown();
  });

  it('recreates default after it is deleted, through the informer handlers', async () => {
    const { fake, c, stop, informers } = await setup((f) => f.seed(GVR.namespaces, ns('team')));
    const run = c.run(1, stop.signal);
    await until(() => !!fake.stored(GVR.serviceAccounts, 'team', 'default'), 'default created');
    await fake.resource(GVR.serviceAccounts).namespace('team').delete('default');
    await until(() => fake.actions().filter((a) => a.verb === 'create' && a.resource === 'serviceaccounts').length === 2, 'recreated');
    assert.ok(fake.stored(GVR.serviceAccounts, 'team', 'default'));
    stop.abort();
    await run;
    await informers.shutdown();
  });

  it('is registered under its upstream name with one worker', () => {
    assert.equal(descriptor.name, 'serviceaccount-controller');
    assert.deepEqual(descriptor.aliases, ['serviceaccount']);
    assert.equal(descriptor.defaultWorkers, 1);
  });
});
