import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { readBody } from './body.js';

/** A request body stream with the given headers. */
function request(headers: Record<string, string> = {}): PassThrough & { headers: Record<string, string> } {
  return Object.assign(new PassThrough(), { headers });
}
const asReq = (r: PassThrough) => r as unknown as IncomingMessage;

describe('readBody', () => {
  it('reads every chunk of the body, in order', async () => {
    const r = request();
    const body = readBody(asReq(r));
    r.write('{"a":');
    setImmediate(() => r.end('1}'));
    assert.equal((await body).toString(), '{"a":1}');
    assert.equal(r.listenerCount('data') + r.listenerCount('end') + r.listenerCount('close') + r.listenerCount('error'), 0, 'its listeners are gone');
  });

  it('reads an empty body, and a body already read', async () => {
    const r = request();
    const body = readBody(asReq(r));
    r.end();
    assert.equal((await body).length, 0);
    assert.equal((await readBody(asReq(r))).length, 0);
  });

  it('answers 413 past the limit, draining the rest without keeping it', async () => {
    const r = request();
    const body = readBody(asReq(r), 10);
    r.write('0123456789');
    r.write('abc');
    r.end('def');
    await assert.rejects(body, (err: unknown) => (err as { status?: { code?: number; message?: string } }).status?.code === 413);
    assert.ok(r.readableEnded, 'drained to the end');
  });

  it('answers 413 at once when the declared length is past the limit', async () => {
    const r = request({ 'content-length': '11' });
    await assert.rejects(readBody(asReq(r), 10), (err: unknown) => /limit is 10 bytes/.test((err as { status?: { message?: string } }).status?.message ?? ''));
  });

  it('fails when the client goes away before the end, or the stream errs', async () => {
    const r = request();
    const body = readBody(asReq(r));
    r.write('{"a":');
    r.destroy();
    await assert.rejects(body, (err: unknown) => (err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE');
    const e = request();
    const failed = readBody(asReq(e));
    e.destroy(new Error('socket hang up'));
    await assert.rejects(failed, /socket hang up/);
  });
});
