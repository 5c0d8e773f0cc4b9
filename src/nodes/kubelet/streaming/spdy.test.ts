import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import * as zlib from 'node:zlib';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  FLAG_FIN,
  FrameDecoder,
  HeaderCompressor,
  HeaderDecompressor,
  SPDY_DICTIONARY,
  SpdySession,
  type SpdyFrame,
  type SpdyStream,
  decodeHeaderBlock,
  encodeFrame,
  encodeHeaderBlock,
} from './spdy.js';

/** Frames captured from kubectl 1.32 (client-go spdystream): SYN_STREAM 1 {streamtype: error}, SYN_STREAM 3 {streamtype: stdout}. */
const KUBECTL_SYN_1 = '80030001000000290000000100000000000078f9e3c6a7c26260606004a7b392a2d4c45c6851c29a0a0a6800000000ffff';
const KUBECTL_SYN_3 = '800300010000001900000003000000000000c22ac5565c92925f5a02000000ffff';

describe('SPDY/3 dictionary', () => {
  it('is the 1423-byte SPDY/3 dictionary (adler32 id e3c6a7c2, as in client-go zlib headers)', () => {
    assert.equal(SPDY_DICTIONARY.length, 1423);
    // zlib's DICTID is the adler32 of the dictionary
    let a = 1;
    let b = 0;
    for (const c of SPDY_DICTIONARY) {
      a = (a + c) % 65521;
      b = (b + a) % 65521;
    }
    assert.equal(((b << 16) | a) >>> 0, 0xe3c6a7c2);
    assert.ok(SPDY_DICTIONARY.subarray(0, 20).toString('latin1').includes('options'));
    assert.equal(createHash('sha1').update(SPDY_DICTIONARY).digest('hex').length, 40);
  });
});

describe('SPDY frames', () => {
  it('decodes real client-go SYN_STREAM frames with the shared inflate context', () => {
    const dec = new FrameDecoder(new HeaderDecompressor());
    const frames = [...dec.push(Buffer.from(KUBECTL_SYN_1, 'hex')), ...dec.push(Buffer.from(KUBECTL_SYN_3, 'hex'))];
    assert.deepEqual(frames, [
      { type: 'syn_stream', streamId: 1, assocStreamId: 0, priority: 0, flags: 0, headers: { streamtype: 'error' } },
      { type: 'syn_stream', streamId: 3, assocStreamId: 0, priority: 0, flags: 0, headers: { streamtype: 'stdout' } },
    ]);
  });

  it('the second captured frame cannot be read without the first (one context per direction)', () => {
    const dec = new FrameDecoder(new HeaderDecompressor());
    assert.throws(() => dec.push(Buffer.from(KUBECTL_SYN_3, 'hex')));
  });

  it('round-trips every frame type, split at every byte boundary', () => {
    const frames: SpdyFrame[] = [
      { type: 'syn_stream', streamId: 5, assocStreamId: 0, priority: 3, flags: FLAG_FIN, headers: { streamtype: 'data', port: '80', requestid: '0' } },
      { type: 'syn_reply', streamId: 5, flags: 0, headers: {} },
      { type: 'headers', streamId: 5, flags: 0, headers: { a: 'x\0y' } },
      { type: 'data', streamId: 5, flags: FLAG_FIN, data: Buffer.from('hello') },
      { type: 'data', streamId: 7, flags: 0, data: Buffer.alloc(70000, 7) },
      { type: 'rst_stream', streamId: 5, status: 5 },
      { type: 'settings', flags: 0, entries: [{ flags: 1, id: 7, value: 65536 }] },
      { type: 'ping', id: 0xfffffffe },
      { type: 'goaway', lastGoodStreamId: 9, status: 0 },
      { type: 'window_update', streamId: 5, delta: 1024 },
    ];
    const comp = new HeaderCompressor();
    const wire = Buffer.concat(frames.map((f) => encodeFrame(f, comp)));
    for (const step of [1, 7, wire.length]) {
      const dec = new FrameDecoder(new HeaderDecompressor());
      const got: SpdyFrame[] = [];
      for (let i = 0; i < wire.length; i += step) got.push(...dec.push(wire.subarray(i, i + step)));
      assert.deepEqual(got, frames);
    }
  });

  it('decodes header blocks compressed by a real zlib deflater with the dictionary, shared across frames', async () => {
    const deflate = zlib.createDeflate({ dictionary: SPDY_DICTIONARY, level: 9 });
    const compress = async (b: Buffer): Promise<Buffer> => {
      const chunks: Buffer[] = [];
      const on = (c: Buffer): number => chunks.push(c);
      deflate.on('data', on);
      deflate.write(b);
      await new Promise<void>((r) => deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => r()));
      await new Promise((r) => setImmediate(r));
      deflate.off('data', on);
      return Buffer.concat(chunks);
    };
    const dec = new HeaderDecompressor();
    for (const h of [{ streamtype: 'stdin' }, { streamtype: 'stdout' }, { streamtype: 'stdout', x: 'y' }] as Record<string, string>[]) {
      assert.deepEqual(decodeHeaderBlock(dec.decompress(await compress(encodeHeaderBlock(h)))), h);
    }
    deflate.close();
  });

  it('writes header blocks a plain zlib inflater reads as one stream', () => {
    const comp = new HeaderCompressor();
    const a = comp.compress(encodeHeaderBlock({ a: '1' }));
    const b = comp.compress(encodeHeaderBlock({ b: '2' }));
    const all = zlib.inflateSync(Buffer.concat([a, b]), { dictionary: SPDY_DICTIONARY, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    assert.deepEqual(all, Buffer.concat([encodeHeaderBlock({ a: '1' }), encodeHeaderBlock({ b: '2' })]));
  });
});

describe('SpdySession', () => {
  it('replies to SYN_STREAM, echoes PING, delivers DATA until FIN and sends FIN on end()', async () => {
    const wireIn = new PassThrough();
    const wireOut = new PassThrough();
    // a Duplex whose writes go to wireOut and reads come from wireIn
    const { Duplex } = await import('node:stream');
    const sock = new Duplex({
      read() {},
      write(c, _e, cb) {
        wireOut.write(c);
        cb();
      },
    });
    wireIn.on('data', (c: Buffer) => sock.push(c));
    const session = new SpdySession(sock);
    const streams: SpdyStream[] = [];
    session.on('stream', (s: SpdyStream) => streams.push(s));
    const clientComp = new HeaderCompressor();
    const serverDec = new FrameDecoder(new HeaderDecompressor());
    const received: SpdyFrame[] = [];
    wireOut.on('data', (c: Buffer) => received.push(...serverDec.push(c)));
    wireIn.write(encodeFrame({ type: 'syn_stream', streamId: 1, assocStreamId: 0, priority: 0, flags: 0, headers: { streamtype: 'stdin' } }, clientComp));
    wireIn.write(encodeFrame({ type: 'ping', id: 42 }, clientComp));
    wireIn.write(encodeFrame({ type: 'data', streamId: 1, flags: 0, data: Buffer.from('ab') }, clientComp));
    wireIn.write(encodeFrame({ type: 'data', streamId: 1, flags: FLAG_FIN, data: Buffer.from('c') }, clientComp));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(streams.length, 1);
    assert.equal(streams[0]!.headers.streamtype, 'stdin');
    let text = '';
    streams[0]!.on('data', (c: Buffer) => (text += c.toString()));
    await new Promise((r) => streams[0]!.once('end', r));
    assert.equal(text, 'abc');
    streams[0]!.end('bye');
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(
      received.map((f) => f.type),
      ['syn_reply', 'ping', 'data', 'data'],
    );
    assert.deepEqual(received[2], { type: 'data', streamId: 1, flags: 0, data: Buffer.from('bye') });
    assert.deepEqual(received[3], { type: 'data', streamId: 1, flags: FLAG_FIN, data: Buffer.alloc(0) });
    session.close();
  });
});
