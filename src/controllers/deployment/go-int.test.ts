import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addInt64, atoiInt32, parseInt64 } from './go-int.js';

describe('Go integers', () => {
  it('parses int64 values beyond 2^53 exactly', () => {
    assert.equal(parseInt64('3546343826724305832'), 3546343826724305832n);
    assert.equal(parseInt64('9223372036854775807'), 9223372036854775807n);
    assert.equal(parseInt64('-9223372036854775808'), -9223372036854775808n);
    assert.equal(parseInt64('+007'), 7n);
  });

  it('refuses what strconv.ParseInt refuses', () => {
    for (const s of ['', ' 1', '1 ', '1_000', '0x10', '1.0', '9223372036854775808', '-9223372036854775809', 'x']) {
      assert.equal(parseInt64(s), undefined, s);
    }
    assert.equal(parseInt64(undefined), undefined);
  });

  it('adds with int64 wrap-around', () => {
    assert.equal(addInt64(3546343826724305832n, 1n), 3546343826724305833n);
    assert.equal(addInt64(9223372036854775807n, 1n), -9223372036854775808n);
  });

  it('converts Atoi results to int32 keeping the low bits', () => {
    assert.equal(atoiInt32('12'), 12);
    assert.equal(atoiInt32('4294967297'), 1);
    assert.equal(atoiInt32('2147483648'), -2147483648);
    assert.equal(atoiInt32('abc'), undefined);
  });
});
