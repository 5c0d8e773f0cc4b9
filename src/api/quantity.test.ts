import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  add,
  canonicalQuantity,
  compare,
  ERR_FORMAT_WRONG,
  ERR_SUFFIX,
  isValidQuantity,
  milliValue,
  newMilliQuantity,
  newQuantity,
  parseQuantity,
  quantityEquals,
  quantityToString,
  QuantityParseError,
  sub,
  value,
  valueBigInt,
} from './quantity.js';

describe('parseQuantity and canonical strings', () => {
  const cases: [string, string][] = [
    ['0', '0'],
    ['1024Mi', '1Gi'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['2000', '2k'],
    ['1200', '1200'],
    ['0.5', '500m'],
    ['0.1', '100m'],
    ['1.0', '1'],
    ['1e3', '1e3'],
    ['10e3', '10e3'],
    ['1000e3', '1e6'],
    ['1E3', '1e3'],
    ['5e+3', '5e3'],
    ['1e-3', '1e-3'],
    ['1E', '1E'],
    ['1.5Gi', '1536Mi'],
    ['100Mi', '100Mi'],
    ['8Ki', '8Ki'],
    ['1024Ki', '1Mi'],
    ['0.5Ki', '512'],
    ['1536', '1536'],
    ['12000', '12k'],
    ['+1', '1'],
    ['-1', '-1'],
    ['-1500m', '-1500m'],
    ['0.1n', '1n'],
    ['1.0001m', '1000100n'],
    ['1u', '1u'],
    ['007', '7'],
    ['1.G', '1G'],
    ['1Ei', '1Ei'],
  ];
  for (const [input, want] of cases) {
    it(`writes ${input} as ${want}`, () => {
      assert.equal(canonicalQuantity(input), want);
    });
  }

  it('caps binary quantities at the int64 maximum', () => {
    assert.equal(canonicalQuantity('16Ei'), '9223372036854775807');
  });

  it('keeps values exact where floats would drift', () => {
    assert.equal(quantityToString(add('0.1', '0.2')), '300m');
    assert.equal(parseQuantity('123456789.123456789').nanos, 123456789123456789n);
  });

  it('accepts JSON numbers', () => {
    assert.equal(quantityToString(2), '2');
    assert.equal(quantityToString(0.25), '250m');
    assert.equal(quantityToString(1e21), '1e21');
  });

  it('rejects malformed strings with apimachinery messages', () => {
    for (const bad of ['', 'abc', '1.5.5', 'x1']) {
      assert.throws(() => parseQuantity(bad), (e: Error) => e instanceof QuantityParseError && e.message === ERR_FORMAT_WRONG, bad);
    }
    for (const bad of ['1K', '1e', '1Ki5', '1kk', '--1']) {
      assert.throws(() => parseQuantity(bad), (e: Error) => e instanceof QuantityParseError && e.message === ERR_SUFFIX, bad);
    }
    assert.equal(isValidQuantity('250m'), true);
    assert.equal(isValidQuantity('250M '), false);
  });
});

describe('quantity values', () => {
  it('rounds milli and unit values up, away from zero', () => {
    assert.equal(milliValue('1.5'), 1500);
    assert.equal(milliValue('0.1m'), 1);
    assert.equal(milliValue('250m'), 250);
    assert.equal(milliValue(1), 1000);
    assert.equal(value('1500m'), 2);
    assert.equal(value('-1500m'), -2);
    assert.equal(value('1Gi'), 1073741824);
    assert.equal(value('2k'), 2000);
    assert.equal(valueBigInt('8Ei'), 9223372036854775807n);
  });

  it('compares numerically across formats', () => {
    assert.equal(compare('1Gi', '1024Mi'), 0);
    assert.equal(compare('1', '999m'), 1);
    assert.equal(compare('100Mi', '1G'), -1);
    assert.equal(quantityEquals('1k', '1000'), true);
  });

  it('adds and subtracts in the first operand format', () => {
    assert.equal(quantityToString(add('1Gi', '512Mi')), '1536Mi');
    assert.equal(quantityToString(add('100m', '200m')), '300m');
    assert.equal(quantityToString(add('0', '1Gi')), '1Gi', 'a zero receiver takes the other format');
    assert.equal(quantityToString(sub('1', '1500m')), '-500m');
    assert.equal(quantityToString(sub('2Gi', '1Gi')), '1Gi');
  });

  it('constructs quantities from integers', () => {
    assert.equal(quantityToString(newQuantity(3)), '3');
    assert.equal(quantityToString(newQuantity(2048, 'BinarySI')), '2Ki');
    assert.equal(quantityToString(newMilliQuantity(1500)), '1500m');
    assert.throws(() => newQuantity(1.5), RangeError);
  });
});
