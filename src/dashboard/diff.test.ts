import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { changedPaths, describeChanges } from './diff.js';

describe('dashboard write diffs', () => {
  it('names changed fields down to three levels, ignoring resourceVersion and managedFields', () => {
    const a = { metadata: { resourceVersion: '1', labels: { app: 'web' } }, spec: { replicas: 1, template: { spec: { containers: [{ image: 'nginx:1' }] } } }, status: { readyReplicas: 1 } };
    const b = { metadata: { resourceVersion: '2', labels: { app: 'web' } }, spec: { replicas: 3, template: { spec: { containers: [{ image: 'nginx:2' }] } } }, status: { readyReplicas: 1, conditions: [{ type: 'Available' }] } };
    const changes = changedPaths(a, b);
    assert.deepEqual(changes.map((c) => c.path), ['spec.replicas', 'spec.template.spec', 'status.conditions']);
    assert.equal(describeChanges(changes), 'spec.replicas 1 → 3, spec.template.spec changed, status.conditions ∅ → changed'.replace('status.conditions ∅ → changed', 'status.conditions changed'));
  });

  it('finds nothing between equal objects but their resourceVersion', () => {
    assert.deepEqual(changedPaths({ metadata: { resourceVersion: '1' }, spec: { a: [1, 2] } }, { metadata: { resourceVersion: '9' }, spec: { a: [1, 2] } }), []);
  });

  it('shortens long values in the readable line', () => {
    const text = describeChanges(changedPaths({ spec: { s: 'x' } }, { spec: { s: 'y'.repeat(100) } }));
    assert.match(text, /^spec\.s x → y{37}\.\.\.$/);
  });
});
