import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { maxRevision, setDeploymentRevision, setNewReplicaSetAnnotations } from './annotations.js';
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
    assert.equal(maxRevision([a, b, newReplicaSet({ name: 'c', replicas: 0 })]), 4);
  });

  it('reports whether the deployment revision changed', () => {
    const d = newDeployment();
    assert.equal(setDeploymentRevision(d, '1'), true);
    assert.equal(setDeploymentRevision(d, '1'), false);
  });
});
