import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { GVR } from '../api/gvr.js';
import { isNotFound, newStatus, StatusError } from '../client/errors.js';
import { newFakeRecorder } from '../tools/record/fake-recorder.js';
import { FakeClock } from '../util/clock/clock.js';
import { newFakeClient } from './testing/fake-client.js';
import { getPodFromTemplate, newPodControl, podsPrefix } from './pod-control.js';

const template: PodTemplateSpec = {
  metadata: { labels: { app: 'web' }, annotations: { note: 'x' }, finalizers: ['example.com/f'] },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
};
const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-5d4f8', namespace: 'ns', uid: 'rs-uid' } };
const ref: OwnerReference = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d4f8', uid: 'rs-uid', controller: true, blockOwnerDeletion: true };

describe('pod control', () => {
  it('builds pods from the template with the owner as controller', () => {
    const pod = getPodFromTemplate(template, rs, ref);
    assert.deepEqual(pod.metadata, {
      labels: { app: 'web' },
      annotations: { note: 'x' },
      generateName: 'web-5d4f8-',
      finalizers: ['example.com/f'],
      ownerReferences: [ref],
    });
    assert.deepEqual(pod.spec, template.spec);
    assert.notEqual(pod.spec, template.spec, 'the spec is copied');
    assert.equal(podsPrefix('x'.repeat(253)), 'x'.repeat(253));
  });

  it('creates pods and records SuccessfulCreate', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const recorder = newFakeRecorder();
    const control = newPodControl({ client: fake, recorder });
    const pod = await control.createPods('ns', template, rs, ref);
    assert.match(pod.metadata!.name!, /^web-5d4f8-[a-z0-9]{5}$/);
    assert.deepEqual(recorder.events, [`Normal SuccessfulCreate Created pod: ${pod.metadata!.name}`]);
    assert.equal(fake.storedList(GVR.pods, 'ns').length, 1);
  });

  it('records FailedCreate with the error and rethrows it', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    fake.prependReactor('create', 'pods', () => {
      throw new StatusError(newStatus(403, 'Forbidden', 'exceeded quota: q'));
    });
    const recorder = newFakeRecorder();
    const control = newPodControl({ client: fake, recorder });
    await assert.rejects(control.createPods('ns', template, rs, ref), /exceeded quota/);
    assert.deepEqual(recorder.events, ['Warning FailedCreate Error creating: exceeded quota: q']);
  });

  it('refuses controller refs that are not controllers and templates without labels', async () => {
    const control = newPodControl({ client: newFakeClient({ clock: new FakeClock() }), recorder: newFakeRecorder() });
    await assert.rejects(async () => control.createPods('ns', template, rs, { ...ref, controller: false }), /Controller is not set/);
    await assert.rejects(control.createPods('ns', { spec: template.spec }, rs, ref), /no labels/);
  });

  it('deletes pods with SuccessfulDelete, FailedDelete, and no event for NotFound', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    const recorder = newFakeRecorder();
    const control = newPodControl({ client: fake, recorder });
    fake.seed(GVR.pods, { metadata: { name: 'p1', namespace: 'ns' } });
    await control.deletePod('ns', 'p1', rs);
    await assert.rejects(control.deletePod('ns', 'p1', rs), isNotFound);
    fake.seed(GVR.pods, { metadata: { name: 'p2', namespace: 'ns' } });
    fake.prependReactor('delete', 'pods', () => {
      throw new StatusError(newStatus(500, 'InternalError', 'etcd down'));
    });
    await assert.rejects(control.deletePod('ns', 'p2', rs), /unable to delete pods: etcd down/);
    assert.deepEqual(recorder.events, ['Normal SuccessfulDelete Deleted pod: p1', 'Warning FailedDelete Error deleting: etcd down']);
  });

  it('patches pods with a strategic merge patch by default', async () => {
    const fake = newFakeClient({ clock: new FakeClock() });
    fake.seed(GVR.pods, { metadata: { name: 'p', namespace: 'ns', labels: { a: '1' } } });
    const control = newPodControl({ client: fake, recorder: newFakeRecorder() });
    const pod = await control.patchPod('ns', 'p', { metadata: { labels: { b: '2' } } });
    assert.deepEqual(pod.metadata?.labels, { a: '1', b: '2' });
    assert.equal(fake.actions().at(-1)?.patchType, 'strategic');
  });
});
