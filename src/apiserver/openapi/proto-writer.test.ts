import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { float64, readFields, toInt64, toUint64 } from '../protobuf/wire.js';
import { newProtoWriter } from './proto-writer.js';

describe('the protobuf writer', () => {
  it('writes varints, int64, bools, doubles and strings that the wire reader reads back', () => {
    const w = newProtoWriter();
    w.uint(1, 300);
    w.int64(2, -2);
    w.int64(3, 2n ** 62n);
    w.bool(4, true);
    w.double(5, -1.25);
    w.string(6, 'héllo');
    w.bytes(7, Uint8Array.of(1, 2));
    const f = readFields(w.finish());
    assert.deepEqual(f.map((x) => [x.no, x.wt]), [[1, 0], [2, 0], [3, 0], [4, 0], [5, 1], [6, 2], [7, 2]]);
    assert.equal(f[0]!.wt === 0 && toUint64(f[0]!.v), 300);
    assert.equal(f[1]!.wt === 0 && toInt64(f[1]!.v), -2);
    assert.equal(f[2]!.wt === 0 && toUint64(f[2]!.v), 2 ** 62);
    assert.equal(f[4]!.wt === 1 && float64(f[4]!.v), -1.25);
    assert.equal(Buffer.from(f[5]!.v as Uint8Array).toString(), 'héllo');
  });

  it('writes a negative int64 as ten bytes, as Go does', () => {
    const w = newProtoWriter();
    w.int64(1, -1);
    assert.deepEqual([...w.finish()], [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  });

  it('prefixes nested messages with their length, also past one length byte and when empty', () => {
    const w = newProtoWriter();
    w.begin(1);
    w.begin(2);
    w.string(3, 'x'.repeat(200));
    w.end();
    w.begin(4);
    w.end();
    w.end();
    w.uint(5, 1);
    const out = w.finish();
    const [outer, last] = readFields(out);
    assert.equal(outer!.no, 1);
    assert.deepEqual(last, { no: 5, wt: 0, v: { lo: 1, hi: 0 } });
    const inner = readFields(outer!.v as Uint8Array);
    assert.deepEqual(inner.map((x) => [x.no, (x.v as Uint8Array).length]), [[2, 203], [4, 0]]);
    assert.equal(Buffer.from(readFields(inner[0]!.v as Uint8Array)[0]!.v as Uint8Array).toString(), 'x'.repeat(200));
  });

  it('refuses to finish with a message still open', () => {
    const w = newProtoWriter();
    w.begin(1);
    assert.throws(() => w.finish(), /still open/);
  });
});
