import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseInt64 } from './parse-int.js';
import { StatusError } from './status.js';

function refusal(s: string): string {
  try {
    parseInt64(s);
  } catch (err) {
    assert.ok(err instanceof StatusError);
    assert.equal(err.code, 400);
    return err.message;
  }
  assert.fail(`accepted ${s}`);
}

describe('parseInt64', () => {
  it('reads what strconv.ParseInt(s, 10, 64) reads', () => {
    assert.equal(parseInt64('30'), 30);
    assert.equal(parseInt64('-1'), -1);
    assert.equal(parseInt64('+7'), 7);
    assert.equal(parseInt64('9223372036854775807'), 9223372036854775807);
  });

  it('refuses anything else with strconv\'s words', () => {
    assert.equal(refusal('1.5'), 'strconv.ParseInt: parsing "1.5": invalid syntax');
    assert.equal(refusal(''), 'strconv.ParseInt: parsing "": invalid syntax');
    assert.equal(refusal('1e3'), 'strconv.ParseInt: parsing "1e3": invalid syntax');
    assert.equal(refusal(' 1'), 'strconv.ParseInt: parsing " 1": invalid syntax');
    assert.equal(refusal('9223372036854775808'), 'strconv.ParseInt: parsing "9223372036854775808": value out of range');
  });
});
