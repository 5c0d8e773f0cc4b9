import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { computeHash } from '../../controller/hash.js';
import { dropNulls, equalIgnoreHash, findActiveOrLatest, findNewReplicaSet, findOldReplicaSets } from './replica-sets.js';
import { newDeployment, newReplicaSet } from './testing.js';

describe('replica set selection', () => {
  it('treats templates as equal apart from the hash label, null timestamps and empty maps', () => {
    const a = { metadata: { labels: { app: 'web', 'pod-template-hash': 'abc' } }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    const b = { metadata: { labels: { app: 'web' }, creationTimestamp: null, annotations: {} }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    assert.equal(equalIgnoreHash(a, b as never), true);
    assert.equal(equalIgnoreHash(a, { ...b, spec: { containers: [{ name: 'c', image: 'y' }] } } as never), false);
  });

  it('hashes templates stably across key order, and differently for any change or collision count', () => {
    const t1 = { metadata: { labels: { app: 'web', tier: 'fe' } }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    const t2 = { spec: { containers: [{ image: 'x', name: 'c' }] }, metadata: { labels: { tier: 'fe', app: 'web' } } };
    assert.equal(computeHash(t1), computeHash(t2));
    assert.equal(computeHash(t1), computeHash(JSON.parse(JSON.stringify(t1))), 'same after a restart (re-parsed)');
    assert.equal(computeHash(dropNulls({ ...t1, metadata: { ...t1.metadata, creationTimestamp: null } })), computeHash(t1));
    assert.notEqual(computeHash(t1), computeHash({ ...t1, spec: { containers: [{ name: 'c', image: 'z' }] } }));
    assert.notEqual(computeHash(t1), computeHash(t1, 1));
    assert.notEqual(computeHash(t1, 1), computeHash(t1, 2));
  });

  it('picks the oldest replica set with the deployment template as the new one and the rest as old', () => {
    const d = newDeployment();
    const match = (name: string, created: string) => {
      const rs = newReplicaSet({ name, replicas: 1, created });
      rs.spec!.template = structuredClone(d.spec!.template);
      return rs;
    };
    const older = match('a', '2024-01-01T00:00:00Z');
    const newer = match('b', '2024-01-02T00:00:00Z');
    const other = newReplicaSet({ name: 'c', replicas: 0 });
    assert.equal(findNewReplicaSet(d, [newer, other, older])?.metadata?.name, 'a');
    const { all, required } = findOldReplicaSets(d, [newer, other, older]);
    assert.deepEqual(all.map((r) => r.metadata?.name), ['b', 'c']);
    assert.deepEqual(required.map((r) => r.metadata?.name), ['b']);
  });

  it('finds the only active replica set, or the newest when none is active', () => {
    const a = newReplicaSet({ name: 'a', replicas: 0, created: '2024-01-01T00:00:00Z' });
    const b = newReplicaSet({ name: 'b', replicas: 0, created: '2024-01-02T00:00:00Z' });
    const c = newReplicaSet({ name: 'c', replicas: 2, created: '2024-01-03T00:00:00Z' });
    assert.equal(findActiveOrLatest(undefined, [a, b])?.metadata?.name, 'b');
    assert.equal(findActiveOrLatest(a, [b, c])?.metadata?.name, 'c');
    assert.equal(findActiveOrLatest(c, [newReplicaSet({ name: 'd', replicas: 1 })]), undefined);
  });
});
