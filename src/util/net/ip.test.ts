import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatIPv4, formatIPv6, parseIPv4 } from './ip.js';

describe('IP text forms', () => {
  it('parses dotted IPv4 and refuses malformed addresses', () => {
    assert.equal(parseIPv4('10.0.0.1'), 10 * 2 ** 24 + 1);
    assert.equal(parseIPv4('255.255.255.255'), 2 ** 32 - 1);
    assert.equal(parseIPv4('256.0.0.1'), undefined);
    assert.equal(parseIPv4('1.2.3'), undefined);
    assert.equal(parseIPv4('1.2.3.0004'), undefined);
    assert.equal(parseIPv4('a.b.c.d'), undefined);
  });

  it('formats IPv4 numbers back to dotted text', () => {
    assert.equal(formatIPv4(parseIPv4('192.168.1.254')!), '192.168.1.254');
    assert.equal(formatIPv4(2 ** 32 - 1), '255.255.255.255');
    assert.equal(formatIPv4(0), '0.0.0.0');
  });

  it('compresses the longest run of two or more zero groups as Go does', () => {
    assert.equal(formatIPv6([0xfd00, 0, 0, 0, 0, 0, 0, 1]), 'fd00::1');
    assert.equal(formatIPv6([0, 0, 0, 0, 0, 0, 0, 0]), '::');
    assert.equal(formatIPv6([1, 0, 2, 3, 4, 5, 6, 7]), '1:0:2:3:4:5:6:7');
    assert.equal(formatIPv6([1, 0, 0, 2, 0, 0, 3, 4]), '1::2:0:0:3:4');
    assert.equal(formatIPv6([1, 0, 0, 2, 0, 0, 0, 4]), '1:0:0:2::4');
    assert.equal(formatIPv6([0xabcd, 0xef, 0, 0, 0, 0, 0, 0]), 'abcd:ef::');
  });
});
