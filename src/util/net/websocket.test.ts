import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import { FrameDecoder, OP_BINARY, OP_CLOSE, OP_CONT, OP_PING, OP_PONG, OP_TEXT, WebSocketConn, acceptKey, encodeFrame, messageDuplex } from './websocket.js';

/** A socket pair: what the server writes is decoded into `out`; `feed` sends raw client bytes. */
function pair(): { sock: Duplex; feed: (b: Buffer) => void; out: { opcode: number; payload: Buffer; fin: boolean }[]; ended: () => boolean } {
  const dec = new FrameDecoder();
  const out: { opcode: number; payload: Buffer; fin: boolean }[] = [];
  let ended = false;
  const sock = new Duplex({
    read() {},
    write(c: Buffer, _e, cb) {
      out.push(...dec.push(c));
      cb();
    },
    final(cb) {
      ended = true;
      cb();
    },
  });
  return { sock, feed: (b) => sock.push(b), out, ended: () => ended };
}
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 10));

describe('websocket framing', () => {
  it('computes the RFC 6455 accept key (section 1.3 example)', () => {
    assert.equal(acceptKey('dGhlIHNhbXBsZSBub25jZQ=='), 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  });

  it('encodes the RFC 6455 section 5.7 examples', () => {
    assert.equal(encodeFrame(OP_TEXT, Buffer.from('Hello')).toString('hex'), '810548656c6c6f');
    assert.equal(encodeFrame(OP_TEXT, Buffer.from('Hello'), { mask: Buffer.from('37fa213d', 'hex') }).toString('hex'), '818537fa213d7f9f4d5158');
    assert.equal(encodeFrame(OP_TEXT, Buffer.from('Hel'), { fin: false }).toString('hex'), '010348656c');
    assert.equal(encodeFrame(OP_CONT, Buffer.from('lo')).toString('hex'), '80026c6f');
    assert.deepEqual(encodeFrame(OP_BINARY, Buffer.alloc(256)).subarray(0, 4), Buffer.from('827e0100', 'hex'));
    assert.deepEqual(encodeFrame(OP_BINARY, Buffer.alloc(65536)).subarray(0, 10), Buffer.from('827f0000000000010000', 'hex'));
  });

  it('decodes masked frames of all length forms split byte by byte', () => {
    const payloads = [Buffer.from('x'), Buffer.alloc(300, 1), Buffer.alloc(70000, 2)];
    const wire = Buffer.concat(payloads.map((p) => encodeFrame(OP_BINARY, p, { mask: true })));
    const dec = new FrameDecoder();
    const got = [];
    for (let i = 0; i < wire.length; i += 997) got.push(...dec.push(wire.subarray(i, i + 997)));
    assert.deepEqual(got.map((f) => f.payload), payloads);
  });
});

describe('WebSocketConn', () => {
  it('reassembles fragments around an interleaved ping, answers pong, and closes on close', async () => {
    const p = pair();
    const ws = new WebSocketConn(p.sock, 'x');
    const msgs: [string, boolean][] = [];
    ws.on('message', (d: Buffer, bin: boolean) => msgs.push([d.toString(), bin]));
    let closed: number | undefined;
    ws.on('close', (code: number) => (closed = code));
    p.feed(encodeFrame(OP_TEXT, Buffer.from('Hel'), { fin: false, mask: true }));
    p.feed(encodeFrame(OP_PING, Buffer.from('p1'), { mask: true }));
    p.feed(encodeFrame(OP_CONT, Buffer.from('lo'), { mask: true }));
    p.feed(encodeFrame(OP_BINARY, Buffer.from([1, 2]), { mask: true }));
    await tick();
    assert.deepEqual(msgs, [
      ['Hello', false],
      ['\x01\x02', true],
    ]);
    assert.deepEqual(p.out[0], { fin: true, opcode: OP_PONG, payload: Buffer.from('p1') });
    const cp = Buffer.alloc(2);
    cp.writeUInt16BE(1000);
    p.feed(encodeFrame(OP_CLOSE, cp, { mask: true }));
    await tick();
    assert.equal(closed, 1000);
    assert.equal(p.out.at(-1)!.opcode, OP_CLOSE);
    assert.equal(p.out.at(-1)!.payload.readUInt16BE(0), 1000);
    assert.ok(p.ended());
  });

  it('messageDuplex turns binary messages into a byte stream and writes into messages', async () => {
    const p = pair();
    const ws = new WebSocketConn(p.sock, 'SPDY/3.1+portforward.k8s.io');
    const d = messageDuplex(ws);
    const chunks: string[] = [];
    d.on('data', (c: Buffer) => chunks.push(c.toString()));
    p.feed(encodeFrame(OP_BINARY, Buffer.from('ab'), { mask: true }));
    p.feed(encodeFrame(OP_BINARY, Buffer.from('cd'), { mask: true }));
    d.write(Buffer.from('xyz'));
    await tick();
    assert.equal(chunks.join(''), 'abcd');
    assert.deepEqual(p.out[0], { fin: true, opcode: OP_BINARY, payload: Buffer.from('xyz') });
  });
});
