import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isSaturated, maxSurge, maxUnavailable, minAvailable, newRSNewReplicas, resolveFenceposts } from './rolling-math.js';
import { proportionalScale } from './proportional.js';
import { newDeployment, newReplicaSet } from './testing.js';

describe('rolling update fenceposts', () => {
  it('rounds a percentage surge up and a percentage unavailability down', () => {
    assert.deepEqual(resolveFenceposts('25%', '25%', 10), { surge: 3, unavailable: 2 });
    assert.deepEqual(resolveFenceposts('30%', '30%', 5), { surge: 2, unavailable: 1 });
    assert.deepEqual(resolveFenceposts(3, 2, 10), { surge: 3, unavailable: 2 });
  });

  it('makes one pod unavailable when both values round to zero', () => {
    assert.deepEqual(resolveFenceposts('0%', '25%', 3), { surge: 0, unavailable: 1 });
    assert.deepEqual(resolveFenceposts(0, 0, 5), { surge: 0, unavailable: 1 });
  });

  it('caps unavailability at the replica count and is zero for Recreate and for zero replicas', () => {
    assert.equal(maxUnavailable(newDeployment({ replicas: 2, maxUnavailable: 5, maxSurge: 0 })), 2);
    assert.equal(maxUnavailable(newDeployment({ replicas: 0 })), 0);
    const recreate = newDeployment({ replicas: 4, strategy: 'Recreate' });
    assert.equal(maxUnavailable(recreate), 0);
    assert.equal(maxSurge(recreate), 0);
    assert.equal(minAvailable(recreate), 0);
    assert.equal(minAvailable(newDeployment({ replicas: 10, maxUnavailable: 2 })), 8);
  });

  it('rejects values that are neither integers nor percentages', () => {
    assert.throws(() => resolveFenceposts('abc', 1, 10), /invalid value for IntOrString/);
  });
});

describe('new replica set size', () => {
  it('grows the new replica set only as far as maxSurge allows', () => {
    const d = newDeployment({ replicas: 10, maxSurge: 3, maxUnavailable: 2 });
    const old = newReplicaSet({ name: 'old', replicas: 10 });
    const fresh = newReplicaSet({ name: 'new', replicas: 0 });
    assert.equal(newRSNewReplicas(d, [old, fresh], fresh), 3);
    const old8 = newReplicaSet({ name: 'old', replicas: 8 });
    const new3 = newReplicaSet({ name: 'new', replicas: 3 });
    assert.equal(newRSNewReplicas(d, [old8, new3], new3), 5);
    const new5 = newReplicaSet({ name: 'new', replicas: 5 });
    assert.equal(newRSNewReplicas(d, [old8, new5], new5), 5, 'already at spec.replicas + maxSurge');
  });

  it('never grows the new replica set beyond spec.replicas', () => {
    const d = newDeployment({ replicas: 3, maxSurge: 10 });
    const fresh = newReplicaSet({ name: 'new', replicas: 1 });
    assert.equal(newRSNewReplicas(d, [fresh], fresh), 3);
  });

  it('sizes the new replica set of a Recreate deployment at spec.replicas', () => {
    const d = newDeployment({ replicas: 4, strategy: 'Recreate' });
    const fresh = newReplicaSet({ name: 'new', replicas: 0 });
    assert.equal(newRSNewReplicas(d, [fresh], fresh), 4);
  });

  it('calls a replica set saturated only when size, desired-replicas and availability all match', () => {
    const d = newDeployment({ replicas: 3 });
    assert.equal(isSaturated(d, newReplicaSet({ name: 'a', replicas: 3, desired: 3 })), true);
    assert.equal(isSaturated(d, newReplicaSet({ name: 'a', replicas: 3, desired: 2 })), false);
    assert.equal(isSaturated(d, newReplicaSet({ name: 'a', replicas: 3, desired: 3, available: 2 })), false);
    assert.equal(isSaturated(d, newReplicaSet({ name: 'a', replicas: 3 })), false, 'no annotation');
    assert.equal(isSaturated(d, undefined), false);
  });
});

describe('proportional scaling', () => {
  it('spreads a scale-up from 10 to 30 over a stuck rollout of 8 old and 5 new as 20 and 13', () => {
    const d = newDeployment({ replicas: 30, maxSurge: 3, maxUnavailable: 2 });
    const old = newReplicaSet({ name: 'old', replicas: 8, desired: 10, max: 13, created: '2024-01-01T00:00:00Z' });
    const fresh = newReplicaSet({ name: 'new', replicas: 5, available: 0, desired: 10, max: 13, created: '2024-01-01T00:05:00Z' });
    const plan = proportionalScale(d, [old, fresh]);
    assert.equal(plan.operation, 'up');
    assert.deepEqual(plan.targets.map((t) => [t.rs.metadata?.name, t.size]), [['old', 20], ['new', 13]]);
  });

  it('scales down larger and older replica sets first and gives rounding leftovers to the largest', () => {
    const d = newDeployment({ replicas: 5, maxSurge: 1, maxUnavailable: 0 });
    const a = newReplicaSet({ name: 'a', replicas: 5, max: 11, created: '2024-01-01T00:00:00Z' });
    const b = newReplicaSet({ name: 'b', replicas: 6, max: 11, created: '2024-01-01T00:01:00Z' });
    const plan = proportionalScale(d, [a, b]);
    assert.equal(plan.operation, 'down');
    const sizes = Object.fromEntries(plan.targets.map((t) => [t.rs.metadata?.name, t.size]));
    assert.equal(sizes.a! + sizes.b!, 6, 'total is spec.replicas + maxSurge');
    assert.equal(plan.targets[0]!.rs.metadata?.name, 'b', 'the larger replica set comes first');
    assert.deepEqual(sizes, { a: 3, b: 3 });
  });

  it('scales every replica set to zero when the deployment scales to zero', () => {
    const d = newDeployment({ replicas: 0, maxSurge: 3, maxUnavailable: 2 });
    const plan = proportionalScale(d, [newReplicaSet({ name: 'a', replicas: 8, max: 13 }), newReplicaSet({ name: 'b', replicas: 5, max: 13 })]);
    assert.deepEqual(plan.targets.map((t) => t.size), [0, 0]);
  });

  it('falls back to the deployment status size when max-replicas is missing', () => {
    const d = newDeployment({ replicas: 20, maxSurge: 0, maxUnavailable: 1 });
    d.status = { replicas: 10 };
    const plan = proportionalScale(d, [newReplicaSet({ name: 'a', replicas: 6 }), newReplicaSet({ name: 'b', replicas: 4, created: '2024-01-02T00:00:00Z' })]);
    assert.deepEqual(plan.targets.map((t) => [t.rs.metadata?.name, t.size]), [['a', 12], ['b', 8]]);
  });

  it('leaves sizes alone when the total already matches', () => {
    const d = newDeployment({ replicas: 10, maxSurge: 3, maxUnavailable: 2 });
    const plan = proportionalScale(d, [newReplicaSet({ name: 'a', replicas: 8, max: 13 }), newReplicaSet({ name: 'b', replicas: 5, max: 13 })]);
    assert.equal(plan.operation, '');
    assert.deepEqual(plan.targets.map((t) => t.size).sort(), [5, 8]);
  });
});
