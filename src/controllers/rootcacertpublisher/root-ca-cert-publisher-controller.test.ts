import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { StatusError, newStatus } from '../../client/errors.js';
import { newFakeClient, type FakeClient } from '../../controller/testing/fake-client.js';
import { newSharedInformerFactory, type Kube } from '../../tools/cache/factory.js';
import { newFakeRecorder } from '../../tools/record/fake-recorder.js';
import { FakeClock, flushMicrotasks } from '../../util/clock/clock.js';
import { newLogger, setLogOutput } from '../../util/log/logger.js';
import type { ControllerContext, ControllerOptions } from '../types.js';
import { DESCRIPTION, DESCRIPTION_ANNOTATION, descriptor, newRootCACertPublisher } from './root-ca-cert-publisher-controller.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (cond()) return;
    await flushMicrotasks();
  }
  throw new Error(`never happened: ${what}`);
}

function context(fake: FakeClient, clock: FakeClock, rootCA?: string): ControllerContext {
  return {
    client: fake,
    informers: newSharedInformerFactory(fake, { clock }),
    clock,
    options: { concurrency: {}, extra: {}, ...(rootCA ? { rootCA } : {}) } as unknown as ControllerOptions,
    recorder: () => newFakeRecorder(),
    logger: (n) => newLogger(n),
  };
}

async function setup(seed: (fake: FakeClient) => void) {
  const clock = new FakeClock();
  const fake = newFakeClient({ clock });
  seed(fake);
  const ctx = context(fake, clock, CA);
  const c = newRootCACertPublisher(ctx, CA);
  const stop = new AbortController();
  ctx.informers.start(stop.signal);
  await until(() => c.hasSynced(), 'informers synced');
  const done = async () => {
    stop.abort();
    await ctx.informers.shutdown();
  };
  return { fake, c, stop, done };
}

const cmOf = (fake: FakeClient, ns: string) => fake.stored<Kube<ConfigMap>>(GVR.configMaps, ns, 'kube-root-ca.crt');

describe('root CA cert publisher', () => {
  before(() => setLogOutput(() => {}));

  it('creates kube-root-ca.crt with ca.crt and the description annotation', async () => {
    const { fake, c, done } = await setup((f) => f.seed(GVR.namespaces, { metadata: { name: 'a' }, status: { phase: 'Active' } }));
    await c.syncNamespace('a');
    const cm = cmOf(fake, 'a');
    assert.deepEqual(cm?.data, { 'ca.crt': CA });
    assert.equal(
      cm?.metadata?.annotations?.['kubernetes.io/description'],
      'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
        'No other usage is guaranteed across distributions of Kubernetes clusters.',
    );
    await done();
  });

  it('restores changed data and a missing annotation, and leaves a correct map alone', async () => {
    const { fake, c, done } = await setup((f) => {
      f.seed(GVR.configMaps, { metadata: { name: 'kube-root-ca.crt', namespace: 'a', annotations: { keep: 'me' } }, data: { 'ca.crt': 'tampered', extra: 'x' } });
    });
    await c.syncNamespace('a');
    const cm = cmOf(fake, 'a');
    assert.deepEqual(cm?.data, { 'ca.crt': CA });
    assert.equal(cm?.metadata?.annotations?.keep, 'me');
    assert.equal(cm?.metadata?.annotations?.[DESCRIPTION_ANNOTATION], DESCRIPTION);
    await done();

    const again = await setup((f) => {
      f.seed(GVR.configMaps, { metadata: { name: 'kube-root-ca.crt', namespace: 'a', annotations: { [DESCRIPTION_ANNOTATION]: 'x' } }, data: { 'ca.crt': CA } });
    });
    again.fake.clearActions();
    await again.c.syncNamespace('a');
    assert.deepEqual(again.fake.actions().filter((x) => x.verb !== 'list' && x.verb !== 'watch'), []);
    await again.done();
  });

  it('does not retry when the namespace is gone or terminating', async () => {
    const { fake, c, done } = await setup(() => {});
    fake.prependReactor('create', 'configmaps', () => { throw new StatusError(newStatus(404, 'NotFound', 'namespaces "gone" not found')); });
    await c.syncNamespace('gone');
    fake.prependReactor('create', 'configmaps', () => {
      const s = newStatus(403, 'Forbidden', 'terminating');
      s.details = { causes: [{ reason: 'NamespaceTerminating' }] };
      throw new StatusError(s);
    });
    await c.syncNamespace('t');
    fake.prependReactor('create', 'configmaps', () => {
      throw new StatusError(newStatus(500, 'InternalError', 'boom'));
    });
    await assert.rejects(c.syncNamespace('t'), /boom/);
    await done();
  });

  it('recreates the map when it is deleted and repairs it when edited, through the handlers', async () => {
    const { fake, c, stop, done } = await setup((f) => f.seed(GVR.namespaces, { metadata: { name: 'a' }, status: { phase: 'Active' } }));
    const run = c.run(1, stop.signal);
    await until(() => !!cmOf(fake, 'a'), 'created');
    await fake.resource(GVR.configMaps).namespace('a').delete('kube-root-ca.crt');
    await until(() => !!cmOf(fake, 'a'), 'recreated');
    const cm = structuredClone(cmOf(fake, 'a')!);
    cm.data = { 'ca.crt': 'bad' };
    await fake.resource(GVR.configMaps).namespace('a').update(cm);
    await until(() => cmOf(fake, 'a')?.data?.['ca.crt'] === CA, 'repaired');
    stop.abort();
    await run;
    await done();
  });

  it('is registered under its upstream name and idles without a CA', async () => {
    assert.equal(descriptor.name, 'root-ca-certificate-publisher-controller');
    assert.deepEqual(descriptor.aliases, ['root-ca-cert-publisher']);
    const clock = new FakeClock();
    const fake = newFakeClient({ clock });
    const ctl = await descriptor.create(context(fake, clock));
    const stop = new AbortController();
    const run = ctl.run(1, stop.signal);
    stop.abort();
    await run;
    assert.deepEqual(fake.actions(), []);
  });
});
