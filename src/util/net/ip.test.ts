import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { formatIPv4, formatIPv6, ipBytes, ipFamily, parseIPv4, parseIPv6 } from './ip.js';

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

  it('parses IPv6 with ::, an IPv4 tail and either case, and refuses what node:net refuses', () => {
    assert.deepEqual(parseIPv6('::1'), [0, 0, 0, 0, 0, 0, 0, 1]);
    assert.deepEqual(parseIPv6('::'), [0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(parseIPv6('FD00:1::'), [0xfd00, 1, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(parseIPv6('1:2:3:4:5:6:7:8'), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(parseIPv6('::ffff:10.0.0.1'), [0, 0, 0, 0, 0, 0xffff, 0x0a00, 1]);
    const samples = ['::1', '::', '1::', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7::', '::ffff:1.2.3.4', '1:2:3:4:5:6:1.2.3.4', 'fe80::a:b', '10.0.0.1',
      '1:2:3:4:5:6:7:8:9', '1::2::3', ':1::', '1:2:3:4:5:6:7', '12345::', 'g::1', '::1.2.3', '::ffff:1.2.3.256', '1:2:3:4:5:6:7:1.2.3.4', 'localhost', ''];
    for (const ip of samples) assert.equal(ipFamily(ip), isIP(ip), ip);
  });

  it('gives the 4 or 16 bytes a certificate carries, and refuses a name', () => {
    assert.deepEqual([...ipBytes('127.0.0.1')], [127, 0, 0, 1]);
    assert.deepEqual([...ipBytes('::1')], [...Array<number>(15).fill(0), 1]);
    assert.equal(ipBytes('fd00::1:2').toString('hex'), 'fd000000000000000000000000010002');
    assert.throws(() => ipBytes('kubernetes'), /not an IP address: "kubernetes"/);
  });
});
