import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WireError, WireReader, readFields, toInt32, toInt64, toUint64, zigzag32, zigzag64 } from './wire.js';
import { fixed32f, key, lf, varint, vf } from './test-encoder.js';

function readVarint(bytes: number[]) {
  return new WireReader(Uint8Array.from(bytes)).varint();
}

describe('protobuf wire reader', () => {
  it('reads one-byte and multi-byte varints', () => {
    assert.equal(toUint64(readVarint([0x01])), 1);
    assert.equal(toUint64(readVarint([0xac, 0x02])), 300);
    assert.equal(toUint64(readVarint(varint(2 ** 31))), 2 ** 31);
    assert.equal(toUint64(readVarint(varint(2 ** 40 + 5))), 2 ** 40 + 5);
  });

  it('reads a negative int32 written as a ten-byte varint', () => {
    const bytes = varint(-5);
    assert.equal(bytes.length, 10);
    assert.equal(toInt32(readVarint(bytes)), -5);
    assert.equal(toInt32(readVarint(varint(-2147483648))), -2147483648);
  });

  it('reads negative and large int64 values exactly within the safe range', () => {
    assert.equal(toInt64(readVarint(varint(-1))), -1);
    assert.equal(toInt64(readVarint(varint(-62135596800))), -62135596800);
    assert.equal(toInt64(readVarint(varint(Number.MAX_SAFE_INTEGER))), Number.MAX_SAFE_INTEGER);
    assert.equal(toInt64(readVarint(varint(-Number.MAX_SAFE_INTEGER))), -Number.MAX_SAFE_INTEGER);
    assert.equal(toInt64(readVarint(varint(2n ** 32n))), 2 ** 32);
  });

  it('decodes zigzag-encoded sint32 and sint64', () => {
    assert.equal(zigzag32(readVarint([0x03])), -2);
    assert.equal(zigzag32(readVarint([0x04])), 2);
    assert.equal(zigzag64(readVarint(varint(2n * 2n ** 40n - 1n))), -(2 ** 40));
  });

  it('splits a message into fields of every wire type in order', () => {
    const buf = Uint8Array.from([...vf(1, 150), ...lf(2, 'hi'), ...fixed32f(3, 7), ...key(4, 1), 1, 0, 0, 0, 0, 0, 0, 0]);
    const fields = readFields(buf);
    assert.deepEqual(fields.map((f) => [f.no, f.wt]), [[1, 0], [2, 2], [3, 5], [4, 1]]);
    assert.equal(Buffer.from(fields[1]!.v as Uint8Array).toString(), 'hi');
  });

  it('rejects truncated data, field number zero and group wire types', () => {
    assert.throws(() => readFields(Uint8Array.from([...key(1, 2), 5, 1, 2])), WireError);
    assert.throws(() => readFields(Uint8Array.from([0x80])), WireError);
    assert.throws(() => readFields(Uint8Array.from([0x00, 0x01])), /field number 0/);
    assert.throws(() => readFields(Uint8Array.from(key(1, 3))), /wire type 3/);
    assert.throws(() => readVarint([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), /longer than 10 bytes/);
  });
});
