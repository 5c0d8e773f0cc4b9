import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { descriptor, newPVProtectionController } from './pvprotection-controller.js';

const F = 'kubernetes.io/pv-protection';
const pv = (name: string, phase: string, deleting = false, finalizers = [F]): Kube<PersistentVolume> => ({
  metadata: { name, finalizers, ...(deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
  spec: {},
  status: { phase },
});
const stored = (f: FakeClient, n: string) => f.stored<Kube<PersistentVolume>>(GVR.persistentVolumes, '', n);

describe('pv protection controller', () => {
  before(() => setLogOutput(() => {}));

  it('adds the finalizer to a live volume', async () => {
    const env = await setupController((f) => f.seed(GVR.persistentVolumes, pv('v', 'Available', false, [])), (ctx) => newPVProtectionController(ctx));
    await env.c.processPV('v');
    assert.deepEqual(stored(env.fake, 'v')!.metadata?.finalizers, [F]);
    await env.stop();
  });

  it('keeps a deleted volume while Bound and releases it otherwise', async () => {
    const env = await setupController((f) => f.seed(GVR.persistentVolumes, pv('bound', 'Bound', true), pv('released', 'Released', true)), (ctx) => newPVProtectionController(ctx));
    await env.c.processPV('bound');
    await env.c.processPV('released');
    assert.deepEqual(stored(env.fake, 'bound')!.metadata?.finalizers, [F]);
    assert.equal(stored(env.fake, 'released'), undefined, 'last finalizer removed: volume gone');
    await env.stop();
  });

  it('protects new volumes through informer events while running', async () => {
    const env = await setupController(() => {}, (ctx) => newPVProtectionController(ctx));
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await env.fake.resource(GVR.persistentVolumes).create(pv('v', 'Available', false, []));
    await until(() => (stored(env.fake, 'v')?.metadata?.finalizers ?? []).includes(F), 'finalizer added');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'persistentvolume-protection-controller');
    assert.deepEqual(descriptor.aliases, ['pv-protection']);
  });
});
