import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import type { RuntimeObject } from './kinds.js';
import {
  and,
  annotationsChanged,
  generationChanged,
  labelsChanged,
  not,
  objectMatches,
  or,
  resourceVersionChanged,
  type ObjectEvent,
  type Predicate,
} from './predicates.js';

function obj(meta: ObjectMeta = {}): RuntimeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default', ...meta } };
}

const create = (o: RuntimeObject): ObjectEvent => ({ type: 'create', object: o });
const del = (o: RuntimeObject, stateUnknown = false): ObjectEvent => ({ type: 'delete', object: o, stateUnknown });
const update = (oldObject: RuntimeObject, object: RuntimeObject): ObjectEvent => ({ type: 'update', oldObject, object });

/** Every `*Changed` predicate lets creates and deletes through, whatever the object holds. */
function passesCreateAndDelete(p: Predicate): void {
  for (const o of [obj(), obj({ generation: 3, labels: { a: 'b' }, annotations: { x: 'y' }, resourceVersion: '7' }), {}]) {
    assert.equal(p(create(o)), true, 'create');
    assert.equal(p(del(o)), true, 'delete');
    assert.equal(p(del(o, true)), true, 'delete with unknown final state');
  }
}

describe('generationChanged', () => {
  it('lets every create and delete through', () => passesCreateAndDelete(generationChanged()));

  it('lets an update through only when metadata.generation changed', () => {
    const p = generationChanged();
    assert.equal(p(update(obj({ generation: 1 }), obj({ generation: 2 }))), true);
    assert.equal(p(update(obj({ generation: 2, resourceVersion: '1' }), obj({ generation: 2, resourceVersion: '2', labels: { a: 'b' } }))), false);
  });

  it('counts a generation appearing or disappearing as a change', () => {
    const p = generationChanged();
    assert.equal(p(update(obj(), obj({ generation: 1 }))), true);
    assert.equal(p(update(obj({ generation: 1 }), obj())), true);
    assert.equal(p(update(obj(), obj())), false);
  });
});

describe('labelsChanged', () => {
  it('lets every create and delete through', () => passesCreateAndDelete(labelsChanged()));

  it('lets an update through when a label was added, removed or changed its value', () => {
    const p = labelsChanged();
    assert.equal(p(update(obj({ labels: { app: 'web' } }), obj({ labels: { app: 'web', tier: 'db' } }))), true);
    assert.equal(p(update(obj({ labels: { app: 'web', tier: 'db' } }), obj({ labels: { app: 'web' } }))), true);
    assert.equal(p(update(obj({ labels: { app: 'web' } }), obj({ labels: { app: 'api' } }))), true);
    assert.equal(p(update(obj(), obj({ labels: { app: 'web' } }))), true);
    assert.equal(p(update(obj({ labels: { app: 'web' } }), obj())), true);
  });

  it('holds back an update whose labels are the same, in any order, even when everything else changed', () => {
    const p = labelsChanged();
    const before = obj({ labels: { app: 'web', tier: 'db' }, generation: 1, annotations: { a: '1' }, resourceVersion: '1' });
    const after = obj({ labels: { tier: 'db', app: 'web' }, generation: 2, annotations: { a: '2' }, resourceVersion: '2' });
    assert.equal(p(update(before, after)), false);
  });

  it('treats missing labels and an empty label map as the same', () => {
    const p = labelsChanged();
    assert.equal(p(update(obj(), obj({ labels: {} }))), false);
    assert.equal(p(update(obj({ labels: {} }), obj())), false);
  });

  it('sees a key swapped for another with the same count and values as a change', () => {
    const p = labelsChanged();
    assert.equal(p(update(obj({ labels: { a: 'x' } }), obj({ labels: { b: 'x' } }))), true);
  });
});

describe('annotationsChanged', () => {
  it('lets every create and delete through', () => passesCreateAndDelete(annotationsChanged()));

  it('lets an update through only when the annotations changed', () => {
    const p = annotationsChanged();
    assert.equal(p(update(obj({ annotations: { a: '1' } }), obj({ annotations: { a: '2' } }))), true);
    assert.equal(p(update(obj(), obj({ annotations: { a: '1' } }))), true);
    assert.equal(p(update(obj({ annotations: { a: '1', b: '2' } }), obj({ annotations: { a: '1' } }))), true);
    assert.equal(p(update(obj({ annotations: { a: '1' }, labels: { x: '1' } }), obj({ annotations: { a: '1' }, labels: { x: '2' } }))), false);
  });

  it('ignores label changes (it looks at annotations only)', () => {
    const p = annotationsChanged();
    assert.equal(p(update(obj({ labels: { a: '1' } }), obj({ labels: { a: '2' } }))), false);
  });
});

describe('resourceVersionChanged', () => {
  it('lets every create and delete through', () => passesCreateAndDelete(resourceVersionChanged()));

  it('drops a resync (same resourceVersion) and lets a real write through', () => {
    const p = resourceVersionChanged();
    assert.equal(p(update(obj({ resourceVersion: '5' }), obj({ resourceVersion: '5' }))), false);
    assert.equal(p(update(obj({ resourceVersion: '5' }), obj({ resourceVersion: '6' }))), true);
  });
});

describe('objectMatches', () => {
  const isWeb = objectMatches((o) => o.metadata?.labels?.app === 'web');

  it('tests the object of a create and of a delete', () => {
    assert.equal(isWeb(create(obj({ labels: { app: 'web' } }))), true);
    assert.equal(isWeb(create(obj({ labels: { app: 'db' } }))), false);
    assert.equal(isWeb(del(obj({ labels: { app: 'web' } }))), true);
    assert.equal(isWeb(del(obj())), false);
  });

  it('tests the new object of an update, not the old one', () => {
    assert.equal(isWeb(update(obj({ labels: { app: 'db' } }), obj({ labels: { app: 'web' } }))), true);
    assert.equal(isWeb(update(obj({ labels: { app: 'web' } }), obj({ labels: { app: 'db' } }))), false);
  });
});

describe('and, or, not', () => {
  const yes: Predicate = () => true;
  const no: Predicate = () => false;
  const e = create(obj());

  it('and passes only when every predicate does, and passes when given none', () => {
    assert.equal(and(yes, yes)(e), true);
    assert.equal(and(yes, no)(e), false);
    assert.equal(and(no, yes)(e), false);
    assert.equal(and()(e), true);
  });

  it('or passes when any predicate does, and fails when given none', () => {
    assert.equal(or(no, yes)(e), true);
    assert.equal(or(yes, no)(e), true);
    assert.equal(or(no, no)(e), false);
    assert.equal(or()(e), false);
  });

  it('not inverts a predicate', () => {
    assert.equal(not(yes)(e), false);
    assert.equal(not(no)(e), true);
  });

  it('hands each predicate the same event', () => {
    const seen: ObjectEvent[] = [];
    const spy: Predicate = (ev) => {
      seen.push(ev);
      return true;
    };
    const ev = update(obj({ generation: 1 }), obj({ generation: 2 }));
    and(spy, spy)(ev);
    or(no, spy)(ev);
    not(spy)(ev);
    assert.equal(seen.length, 4);
    for (const s of seen) assert.equal(s, ev);
  });

  it('composes with the change predicates', () => {
    const p = or(generationChanged(), labelsChanged());
    assert.equal(p(update(obj({ generation: 1 }), obj({ generation: 1, labels: { a: 'b' } }))), true);
    assert.equal(p(update(obj({ generation: 1 }), obj({ generation: 2 }))), true);
    assert.equal(p(update(obj({ generation: 1, resourceVersion: '1' }), obj({ generation: 1, resourceVersion: '2' }))), false);
    const q = and(generationChanged(), not(annotationsChanged()));
    assert.equal(q(update(obj({ generation: 1 }), obj({ generation: 2 }))), true);
    assert.equal(q(update(obj({ generation: 1 }), obj({ generation: 2, annotations: { a: 'b' } }))), false);
  });
});
