import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { getIntOrPercentValue, getScaledValueFromIntOrPercent } from './intstr.js';

describe('getScaledValueFromIntOrPercent', () => {
  it('returns integers unchanged', () => {
    assert.equal(getScaledValueFromIntOrPercent(5, 100, true), 5);
    assert.equal(getScaledValueFromIntOrPercent(0, 10, false), 0);
  });

  it('rounds percentages up or down as asked', () => {
    assert.equal(getScaledValueFromIntOrPercent('25%', 3, true), 1, 'default maxSurge of 3 replicas');
    assert.equal(getScaledValueFromIntOrPercent('25%', 3, false), 0, 'default maxUnavailable of 3 replicas');
    assert.equal(getScaledValueFromIntOrPercent('25%', 10, true), 3);
    assert.equal(getScaledValueFromIntOrPercent('25%', 10, false), 2);
    assert.equal(getScaledValueFromIntOrPercent('10%', 10, true), 1);
    assert.equal(getScaledValueFromIntOrPercent('100%', 7, false), 7);
    assert.equal(getScaledValueFromIntOrPercent('0%', 7, true), 0);
  });

  it('rejects strings that are not percentages with the upstream messages', () => {
    assert.throws(() => getScaledValueFromIntOrPercent('abc', 10, true), {
      message: 'invalid value for IntOrString: invalid type: string is not a percentage',
    });
    assert.throws(() => getScaledValueFromIntOrPercent('10', 10, true), {
      message: 'invalid value for IntOrString: invalid type: string is not a percentage',
    });
    assert.throws(() => getScaledValueFromIntOrPercent('abc%', 10, true), {
      message: 'invalid value for IntOrString: invalid value "abc%": strconv.Atoi: parsing "abc": invalid syntax',
    });
    assert.throws(() => getScaledValueFromIntOrPercent(undefined, 10, true), { message: 'nil value for IntOrString' });
  });

  it('reports whether a value is a percentage', () => {
    assert.deepEqual(getIntOrPercentValue('30%'), { value: 30, isPercent: true });
    assert.deepEqual(getIntOrPercentValue(3), { value: 3, isPercent: false });
    assert.throws(() => getIntOrPercentValue(1.5));
  });
});
