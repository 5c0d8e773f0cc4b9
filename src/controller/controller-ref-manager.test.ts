import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Selector, Labels } from '../api/labels-selector.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { FakeClock } from '../util/clock/clock.js';
import { newFakeClient } from './testing/fake-client.js';
import { getControllerOf, newControllerRefManager, patchWith, recheckDeletionTimestamp, resolveControllerRef, controllersSelecting } from './controller-ref-manager.js';

function selectorOf(match: Record<string, string>): Selector {
  return {
    matches: (labels: Labels | undefined) => Object.entries(match).every(([k, v]) => labels?.[k] === v),
    empty: () => Object.keys(match).length === 0,
    toString: () => Object.entries(match).map(([k, v]) => `${k}=${v}`).join(','),
  };
}

const RS_KIND = { group: 'apps', version: 'v1', kind: 'ReplicaSet' };

async function setup() {
  const fake = newFakeClient({ clock: new FakeClock() });
  const [rs] = fake.seed<KubeObject>(GVR.replicaSets, { metadata: { name: 'rs', namespace: 'ns' }, spec: { selector: { matchLabels: { app: 'web' } } } });
  const pods = fake.resource(GVR.pods);
  const mk = (name: string, labels: Record<string, string>, owner?: { uid: string; controller: boolean }, extra: Record<string, unknown> = {}) =>
    fake.seed<KubeObject>(GVR.pods, {
      metadata: {
        name,
        namespace: 'ns',
        labels,
        ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'o', uid: owner.uid, controller: owner.controller }] } : {}),
        ...extra,
      },
    })[0]!;
  return { fake, rs: rs!, pods, mk };
}

describe('controller ref manager', () => {
  it('adopts matching orphans, releases owned pods that stopped matching and ignores the rest', async () => {
    const { fake, rs, pods, mk } = await setup();
    const orphan = mk('orphan', { app: 'web' });
    const mine = mk('mine', { app: 'web' }, { uid: rs.metadata!.uid!, controller: true });
    const strayed = mk('strayed', { app: 'db' }, { uid: rs.metadata!.uid!, controller: true });
    const foreign = mk('foreign', { app: 'web' }, { uid: 'someone-else', controller: true });
    const unmatched = mk('unmatched', { app: 'db' });
    const dying = mk('dying', { app: 'web' }, undefined, { deletionTimestamp: '2024-01-01T00:00:00Z' });
    fake.clearActions();
    let canAdoptCalls = 0;
    const m = newControllerRefManager<KubeObject>({
      controller: rs,
      controllerKind: RS_KIND,
      selector: selectorOf({ app: 'web' }),
      canAdopt: async () => {
        canAdoptCalls++;
      },
      patch: patchWith(pods),
    });
    const claimed = await m.claim([orphan, mine, strayed, foreign, unmatched, dying]);
    assert.deepEqual(claimed.map((p) => p.metadata?.name), ['orphan', 'mine']);
    assert.equal(canAdoptCalls, 1);
    assert.deepEqual(fake.actions().map((a) => [a.verb, a.name, a.patchType]), [
      ['patch', 'orphan', 'strategic'],
      ['patch', 'strayed', 'strategic'],
    ]);
    const adopted = fake.stored(GVR.pods, 'ns', 'orphan')!;
    assert.deepEqual(getControllerOf(adopted), {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: 'rs',
      uid: rs.metadata!.uid,
      controller: true,
      blockOwnerDeletion: true,
    });
    assert.deepEqual(fake.actions()[0]!.patch, {
      metadata: { ownerReferences: [getControllerOf(adopted)], uid: orphan.metadata!.uid },
    });
    assert.equal(fake.stored(GVR.pods, 'ns', 'strayed')!.metadata?.ownerReferences, undefined);
  });

  it('adopts and releases nothing while the controller is being deleted, but keeps what it owns', async () => {
    const { fake, rs, pods, mk } = await setup();
    const orphan = mk('orphan', { app: 'web' });
    const mine = mk('mine', { app: 'web' }, { uid: rs.metadata!.uid!, controller: true });
    const strayed = mk('strayed', { app: 'db' }, { uid: rs.metadata!.uid!, controller: true });
    fake.clearActions();
    const deleting = { ...rs, metadata: { ...rs.metadata, deletionTimestamp: '2024-01-01T00:00:00Z' } };
    const m = newControllerRefManager<KubeObject>({ controller: deleting, controllerKind: RS_KIND, selector: selectorOf({ app: 'web' }), patch: patchWith(pods) });
    const claimed = await m.claim([orphan, mine, strayed]);
    assert.deepEqual(claimed.map((p) => p.metadata?.name), ['mine']);
    assert.equal(fake.actions().length, 0);
  });

  it('stops every adoption when canAdopt rejects', async () => {
    const { fake, rs, pods, mk } = await setup();
    const a = mk('a', { app: 'web' });
    const b = mk('b', { app: 'web' });
    fake.clearActions();
    // The controller was deleted and recreated under the same name: a new UID.
    fake.resource(GVR.replicaSets).namespace('ns');
    await fake.resource(GVR.replicaSets).namespace('ns').delete('rs');
    await fake.resource(GVR.replicaSets).namespace('ns').create({ metadata: { name: 'rs' } });
    fake.clearActions();
    const m = newControllerRefManager<KubeObject>({
      controller: rs,
      controllerKind: RS_KIND,
      selector: selectorOf({ app: 'web' }),
      canAdopt: recheckDeletionTimestamp(rs, () => fake.resource(GVR.replicaSets).namespace('ns').get('rs')),
      patch: patchWith(pods),
    });
    await assert.rejects(m.claim([a, b]), (err: unknown) => {
      assert.ok(err instanceof AggregateError);
      assert.equal(err.errors.length, 2);
      assert.match(String(err.errors[0]), /is gone: got uid/);
      return true;
    });
    assert.deepEqual(fake.actions().map((x) => x.verb), ['get'], 'the controller is re-read once, no pod is patched');
  });

  it('ignores pods that vanished before adoption or release', async () => {
    const { fake, rs, pods, mk } = await setup();
    const gone = mk('gone', { app: 'web' });
    const goneOwned = mk('gone-owned', { app: 'db' }, { uid: rs.metadata!.uid!, controller: true });
    await pods.namespace('ns').delete('gone');
    await pods.namespace('ns').delete('gone-owned');
    const m = newControllerRefManager<KubeObject>({ controller: rs, controllerKind: RS_KIND, selector: selectorOf({ app: 'web' }), patch: patchWith(pods) });
    assert.deepEqual(await m.claim([gone, goneOwned]), []);
    assert.ok(fake.actions().length > 0);
  });

  it('does not adopt a same-named pod that was recreated meanwhile', async () => {
    const { fake, rs, pods, mk } = await setup();
    const old = mk('p', { app: 'web' });
    await pods.namespace('ns').delete('p');
    await pods.namespace('ns').create({ metadata: { name: 'p', labels: { app: 'web' } } });
    const m = newControllerRefManager<KubeObject>({ controller: rs, controllerKind: RS_KIND, selector: selectorOf({ app: 'web' }), patch: patchWith(pods) });
    await assert.rejects(m.claim([old]));
    assert.equal(fake.stored(GVR.pods, 'ns', 'p')!.metadata?.ownerReferences, undefined);
  });
});

describe('resolveControllerRef', () => {
  const sets = new Map([['web', { metadata: { name: 'web', uid: 'u1' } }]]);
  const lister = { namespace: (ns: string) => ({ get: (name: string) => (ns === 'default' ? sets.get(name) : undefined) }) };

  it('finds the controller a reference names when kind and uid match', () => {
    assert.equal(resolveControllerRef(lister, 'default', { kind: 'StatefulSet', name: 'web', uid: 'u1' }, 'StatefulSet')?.metadata.uid, 'u1');
  });

  it('ignores another kind, a recreated controller (other uid), another namespace and no reference', () => {
    assert.equal(resolveControllerRef(lister, 'default', { kind: 'DaemonSet', name: 'web', uid: 'u1' }, 'StatefulSet'), undefined);
    assert.equal(resolveControllerRef(lister, 'default', { kind: 'StatefulSet', name: 'web', uid: 'old' }, 'StatefulSet'), undefined);
    assert.equal(resolveControllerRef(lister, 'other', { kind: 'StatefulSet', name: 'web', uid: 'u1' }, 'StatefulSet'), undefined);
    assert.equal(resolveControllerRef(lister, 'default', undefined, 'StatefulSet'), undefined);
  });
});

describe('controllersSelecting', () => {
  const all = [
    { name: 'web', spec: { selector: { matchLabels: { app: 'web' } } } },
    { name: 'everything', spec: { selector: {} } },
    { name: 'broken', spec: { selector: { matchExpressions: [{ key: 'app', operator: 'Bogus', values: ['x'] }] } } },
    { name: 'db', spec: { selector: { matchLabels: { app: 'db' } } } },
  ];
  const lister = { namespace: (ns: string) => ({ list: () => (ns === 'default' ? all : []) }) };

  it('returns the controllers whose non-empty, valid selector matches the labels', () => {
    assert.deepEqual(controllersSelecting(lister, 'default', { app: 'web', tier: 'a' }).map((c) => c.name), ['web']);
    assert.deepEqual(controllersSelecting(lister, 'default', { app: 'x' }), []);
    assert.deepEqual(controllersSelecting(lister, 'other', { app: 'web' }), []);
  });
});
