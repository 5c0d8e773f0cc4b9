import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { pod, setupController, until } from '../endpointslice/test-support.js';
import { descriptor, newPVCProtectionController } from './pvcprotection-controller.js';

const F = 'kubernetes.io/pvc-protection';
const pvc = (name: string, deleting = false, finalizers = [F]): Kube<PersistentVolumeClaim> => ({
  metadata: { name, namespace: 'default', finalizers, ...(deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
  spec: {},
});
const user = (name: string, claim: string, o: Parameters<typeof pod>[1] = {}): Kube<Pod> => {
  const p = pod(name, o);
  return { ...p, spec: { ...p.spec!, volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] } };
};
const stored = (f: FakeClient, n: string) => f.stored<Kube<PersistentVolumeClaim>>(GVR.persistentVolumeClaims, 'default', n);

describe('pvc protection controller', () => {
  before(() => setLogOutput(() => {}));

  it('adds the finalizer to a live claim', async () => {
    const env = await setupController((f) => f.seed(GVR.persistentVolumeClaims, pvc('c', false, [])), (ctx) => newPVCProtectionController(ctx));
    await env.c.processPVC('default/c');
    assert.deepEqual(stored(env.fake, 'c')!.metadata?.finalizers, [F]);
    await env.stop();
  });

  it('keeps the finalizer of a deleted claim while a running pod uses it', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.persistentVolumeClaims, pvc('c', true));
      f.seed(GVR.pods, user('p', 'c'));
    }, (ctx) => newPVCProtectionController(ctx));
    await env.c.processPVC('default/c');
    assert.deepEqual(stored(env.fake, 'c')!.metadata?.finalizers, [F]);
    await env.stop();
  });

  it('releases a deleted claim used only by terminated or unscheduled pods', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.persistentVolumeClaims, pvc('c', true, [F, 'other/keep']));
      f.seed(GVR.pods, user('done', 'c', { phase: 'Succeeded' }), user('pending', 'c', { node: '' }));
    }, (ctx) => newPVCProtectionController(ctx));
    const p = env.fake.stored<Kube<Pod>>(GVR.pods, 'default', 'pending')!;
    assert.equal(p.spec?.nodeName, '');
    await env.c.processPVC('default/c');
    assert.deepEqual(stored(env.fake, 'c')!.metadata?.finalizers, ['other/keep']);
    await env.stop();
  });

  it('confirms with a live list before releasing, so a stale pod cache keeps the claim', async () => {
    const env = await setupController((f) => f.seed(GVR.persistentVolumeClaims, pvc('c', true)), (ctx) => newPVCProtectionController(ctx));
    // Stop the informers first: the pod created next is only visible live.
    await env.stop();
    env.fake.seed(GVR.pods, user('late', 'c'));
    await env.c.processPVC('default/c');
    assert.deepEqual(stored(env.fake, 'c')!.metadata?.finalizers, [F]);
  });

  it('releases the claim once its pod is deleted while running', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.persistentVolumeClaims, pvc('c'));
      f.seed(GVR.pods, user('p', 'c'));
    }, (ctx) => newPVCProtectionController(ctx));
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await env.fake.resource(GVR.persistentVolumeClaims).namespace('default').delete('c');
    await until(() => !!stored(env.fake, 'c')?.metadata?.deletionTimestamp, 'claim marked deleted');
    await env.fake.resource(GVR.pods).namespace('default').delete('p');
    await until(() => stored(env.fake, 'c') === undefined, 'claim gone');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'persistentvolumeclaim-protection-controller');
    assert.deepEqual(descriptor.aliases, ['pvc-protection']);
  });
});
