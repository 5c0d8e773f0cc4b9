import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Taint } from 'kubernetes-types/core/v1.js';
import { doNotScheduleTaint, findUntoleratedTaint, getMatchingTolerations, matchTaint, taintExists, toleratesTaint, tolerationsTolerateTaint } from './taints.js';

describe('taints and tolerations', () => {
  const taint: Taint = { key: 'k', value: 'v', effect: 'NoSchedule' };

  it('treats an empty operator as Equal, comparing values', () => {
    assert.equal(toleratesTaint({ key: 'k', operator: '', value: 'v' }, taint), true);
    assert.equal(toleratesTaint({ key: 'k', operator: '', value: 'w' }, taint), false);
    assert.equal(toleratesTaint({ key: 'k', value: 'v', effect: 'NoSchedule' }, taint), true);
  });

  it('lets Exists with an empty key tolerate every taint of the effect', () => {
    assert.equal(toleratesTaint({ operator: 'Exists', effect: 'NoSchedule' }, taint), true);
    assert.equal(toleratesTaint({ operator: 'Exists', effect: 'NoExecute' }, taint), false);
  });

  it('tolerates nothing with an unknown operator', () => {
    assert.equal(toleratesTaint({ key: 'k', operator: 'Gt', value: 'v' }, taint), false);
  });

  it('finds the first untolerated taint the filter accepts', () => {
    const taints: Taint[] = [
      { key: 'a', effect: 'PreferNoSchedule' },
      { key: 'b', effect: 'NoSchedule' },
      { key: 'c', effect: 'NoExecute' },
    ];
    assert.deepEqual(findUntoleratedTaint(taints, [], doNotScheduleTaint), taints[1]);
    assert.deepEqual(findUntoleratedTaint(taints, [{ key: 'b', operator: 'Exists' }], doNotScheduleTaint), taints[2]);
    assert.equal(findUntoleratedTaint(undefined, undefined, doNotScheduleTaint), undefined);
    assert.equal(tolerationsTolerateTaint(undefined, taint), false);
  });

  it('returns the tolerations used only when every taint is tolerated', () => {
    const taints: Taint[] = [{ key: 'a', effect: 'NoExecute' }, { key: 'b', effect: 'NoExecute' }];
    assert.deepEqual(getMatchingTolerations([], undefined), [true, []]);
    assert.deepEqual(getMatchingTolerations(taints, [{ key: 'a', operator: 'Exists' }]), [false, []]);
    assert.deepEqual(getMatchingTolerations(taints, [{ operator: 'Exists' }]), [true, [{ operator: 'Exists' }, { operator: 'Exists' }]]);
  });

  it('matches taints by key and effect only', () => {
    assert.equal(matchTaint({ key: 'a', value: 'x', effect: 'NoSchedule' }, { key: 'a', effect: 'NoSchedule' }), true);
    assert.equal(matchTaint({ key: 'a', effect: 'NoSchedule' }, { key: 'a', effect: 'NoExecute' }), false);
    assert.equal(taintExists([{ key: 'a', effect: 'NoExecute' }], { key: 'a', effect: 'NoExecute', value: 'y' }), true);
    assert.equal(taintExists(undefined, { key: 'a', effect: 'NoExecute' }), false);
  });
});
