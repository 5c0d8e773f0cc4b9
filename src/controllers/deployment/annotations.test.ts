import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareByRevision, desiredReplicasAnnotation, lastRevision, maxReplicasAnnotation, maxRevision, setDeploymentAnnotationsTo, setDeploymentRevision, setNewReplicaSetAnnotations } from './annotations.js';
import { newDeployment, newReplicaSet } from './testing.js';
import { REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION } from './types.js';

describe('revision annotations', () => {
  it('gives a replica set about to be created the revision, the deployment annotations and the replica annotations', () => {
    const d = newDeployment({ replicas: 10, maxSurge: 3 });
    d.metadata!.annotations = { team: 'a', [REVISION_ANNOTATION]: '7', 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
    const rs = newReplicaSet({ name: 'web-x', replicas: 0 });
    assert.equal(setNewReplicaSetAnnotations(d, rs, '3', false), true);
    assert.deepEqual(rs.metadata?.annotations, {
      team: 'a',
      [REVISION_ANNOTATION]: '3',
      'deployment.kubernetes.io/desired-replicas': '10',
      'deployment.kubernetes.io/max-replicas': '13',
    });
  });

  it('moves an old revision into revision-history when a rollback reuses the replica set', () => {
    const d = newDeployment();
    const rs = newReplicaSet({ name: 'web-x', replicas: 0 });
    rs.metadata!.annotations![REVISION_ANNOTATION] = '1';
    assert.equal(setNewReplicaSetAnnotations(d, rs, '3', true), true);
    assert.equal(rs.metadata?.annotations?.[REVISION_ANNOTATION], '3');
    assert.equal(rs.metadata?.annotations?.[REVISION_HISTORY_ANNOTATION], '1');
    assert.equal(setNewReplicaSetAnnotations(d, rs, '5', true), true);
    assert.equal(rs.metadata?.annotations?.[REVISION_HISTORY_ANNOTATION], '1,3');
    assert.equal(setNewReplicaSetAnnotations(d, rs, '4', true), false, 'a lower revision is not applied');
  });

  it('drops the oldest history entries to stay under the length limit', () => {
    const d = newDeployment();
    const rs = newReplicaSet({ name: 'web-x', replicas: 0 });
    rs.metadata!.annotations![REVISION_ANNOTATION] = '9';
    rs.metadata!.annotations![REVISION_HISTORY_ANNOTATION] = '1,3,5';
    setNewReplicaSetAnnotations(d, rs, '10', true, undefined, 6);
    assert.equal(rs.metadata?.annotations?.[REVISION_HISTORY_ANNOTATION], '3,5,9');
  });

  it('finds the highest revision and skips unparsable ones', () => {
    const a = newReplicaSet({ name: 'a', replicas: 0 });
    a.metadata!.annotations![REVISION_ANNOTATION] = '4';
    const b = newReplicaSet({ name: 'b', replicas: 0 });
    b.metadata!.annotations![REVISION_ANNOTATION] = 'x';
    assert.equal(maxRevision([a, b, newReplicaSet({ name: 'c', replicas: 0 })]), 4n);
  });

  it('reports whether the deployment revision changed', () => {
    const d = newDeployment();
    assert.equal(setDeploymentRevision(d, '1'), true);
    assert.equal(setDeploymentRevision(d, '1'), false);
  });

  it('keeps int64 revisions above 2^53 exact', () => {
    const rev = (name: string, v: string) => {
      const rs = newReplicaSet({ name, replicas: 0 });
      rs.metadata!.annotations![REVISION_ANNOTATION] = v;
      return rs;
    };
    const big = rev('big', '3546343826724305832');
    const bigger = rev('bigger', '3546343826724305833');
    assert.equal(maxRevision([rev('a', '1'), big]), 3546343826724305832n);
    assert.equal(maxRevision([bigger, big]), 3546343826724305833n);
    assert.equal(lastRevision([bigger, rev('a', '1'), big]), 3546343826724305832n);
    assert.equal(maxRevision([rev('over', '9223372036854775808')]), 0n, 'beyond int64 is unparsable, as in Go');
    // Number() would see these two as equal.
    assert.ok(compareByRevision(bigger, big) > 0);
    assert.ok(compareByRevision(big, bigger) < 0);

    const d = newDeployment();
    const rs = rev('x', '3546343826724305832');
    assert.equal(setNewReplicaSetAnnotations(d, rs, '3546343826724305833', true), true);
    assert.equal(rs.metadata?.annotations?.[REVISION_ANNOTATION], '3546343826724305833');
    assert.equal(rs.metadata?.annotations?.[REVISION_HISTORY_ANNOTATION], '3546343826724305832');
    assert.equal(setNewReplicaSetAnnotations(d, rs, '3546343826724305832', true), false, 'a lower revision is not applied');
  });

  it('finds the last revision as the second highest', () => {
    const rev = (name: string, v: string | undefined) => {
      const rs = newReplicaSet({ name, replicas: 0 });
      if (v !== undefined) rs.metadata!.annotations![REVISION_ANNOTATION] = v;
      return rs;
    };
    assert.equal(lastRevision([rev('a', '3'), rev('b', '5'), rev('c', '4'), rev('d', 'x'), undefined]), 4n);
    assert.equal(lastRevision([rev('a', '3')]), 0n);
  });

  it('reads desired-replicas and max-replicas as int32(Atoi(value))', () => {
    const rs = newReplicaSet({ name: 'a', replicas: 0 });
    rs.metadata!.annotations!['deployment.kubernetes.io/desired-replicas'] = '4294967299';
    rs.metadata!.annotations!['deployment.kubernetes.io/max-replicas'] = '12';
    assert.equal(desiredReplicasAnnotation(rs), 3);
    assert.equal(maxReplicasAnnotation(rs), 12);
    rs.metadata!.annotations!['deployment.kubernetes.io/max-replicas'] = '1e3';
    assert.equal(maxReplicasAnnotation(rs), undefined);
  });

  it('gives the deployment the annotations of the replica set rolled back to, keeping its own managed ones', () => {
    const d = newDeployment();
    d.metadata!.annotations = { [REVISION_ANNOTATION]: '4', 'kubernetes.io/change-cause': 'edit', other: 'x' };
    const rs = newReplicaSet({ name: 'a', replicas: 0 });
    rs.metadata!.annotations = { [REVISION_ANNOTATION]: '1', 'kubernetes.io/change-cause': 'create', 'deployment.kubernetes.io/desired-replicas': '1' };
    setDeploymentAnnotationsTo(d, rs);
    assert.deepEqual(d.metadata?.annotations, { [REVISION_ANNOTATION]: '4', 'kubernetes.io/change-cause': 'create' });
  });
});
