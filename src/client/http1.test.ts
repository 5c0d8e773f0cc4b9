import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { createSecureContext } from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newHttp1Agent, type Http1Agent } from './http1.js';
import { newCA, newSignedCert } from '../util/cert/cert.js';
import { waitFor } from './testing/wait-for.js';

/** A request as the raw server read it. */
interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** Which connection (0, 1, ...) and the how-manieth request on it. */
  conn: number;
  seq: number;
}

type Answer = (req: RawRequest, socket: Socket) => void;

/** A server that reads HTTP/1.1 requests (Content-Length bodies) and lets each test write the answer's raw bytes. */
async function rawServer(answer: Answer, opts: { tls?: { cert: string; key: string }; path?: string } = {}) {
  const requests: RawRequest[] = [];
  let conns = 0;
  const closed: number[] = [];
  const sockets = new Set<Socket>();
  const onConnection = (socket: Socket) => {
    const conn = conns++;
    sockets.add(socket);
    let seq = 0;
    let buf = Buffer.alloc(0);
    socket.on('close', () => {
      closed.push(conn);
      sockets.delete(socket);
    });
    socket.on('error', () => undefined);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = buf.toString('latin1', 0, end).split('\r\n');
        const [method, path] = lines[0]!.split(' ');
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
        const len = Number(headers['content-length'] ?? 0);
        if (buf.length < end + 4 + len) return;
        const req = { method: method!, path: path!, headers, body: buf.subarray(end + 4, end + 4 + len), conn, seq: seq++ };
        buf = buf.subarray(end + 4 + len);
        requests.push(req);
        answer(req, socket);
      }
    });
  };
  const server: Server = opts.tls ? createTlsServer({ cert: opts.tls.cert, key: opts.tls.key }, onConnection) : createNetServer(onConnection);
  await new Promise<void>((resolve) => (opts.path ? server.listen(opts.path, resolve) : server.listen(0, '127.0.0.1', resolve)));
  const port = opts.path ? 0 : (server.address() as { port: number }).port;
  const handle = {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    connections: () => conns,
    closed,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(handle);
  return handle;
}
const servers: Array<{ close(): Promise<void> }> = [];

const ok = (body: string, extra = '') => `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

/** Writes `text` in pieces cut at the given byte offsets, each on a later turn of the event loop. */
function writeInPieces(socket: Socket, bytes: Buffer, cuts: number[]): void {
  const points = [...new Set(cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    pieces.push(bytes.subarray(from, p));
    from = p;
  }
  const next = () => {
    const p = pieces.shift();
    if (!p) return;
    socket.write(p);
    setImmediate(next);
  };
  next();
}

const agents: Http1Agent[] = [];
const agent = (opts: Partial<Parameters<typeof newHttp1Agent>[0]> = {}) => {
  const a = newHttp1Agent({ connections: 4, ...opts });
  agents.push(a);
  return a;
};
after(async () => {
  await Promise.all(agents.map((a) => a.destroy()));
  // Those a failed test left open (closing twice is harmless here: close() only destroys sockets and stops listening).
  await Promise.all(servers.map((s) => s.close().catch(() => undefined)));
});

describe('http1 agent', () => {
  it('reads Content-Length answers cut anywhere, with headers lower-cased and repeated ones as arrays, on one kept connection', async () => {
    const s = await rawServer((req, socket) => {
      const body = JSON.stringify({ path: req.path, seq: req.seq, sent: req.body.toString('utf8') });
      const bytes = Buffer.from(ok(body, 'Warning: 299 - "one"\r\nwarning: 299 - "two"\r\nX-Empty:\r\n'), 'utf8');
      writeInPieces(socket, bytes, [1, 5, 17, bytes.indexOf('\r\n\r\n') + 1, bytes.indexOf('\r\n\r\n') + 3, bytes.length - 1]);
    });
    const a = agent();
    for (let i = 0; i < 3; i++) {
      const res = await a.request(`${s.url}/api/v1/pods?labelSelector=a%3Db&i=${i}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{"ü":1}' });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(JSON.parse(res.body.toString('utf8')), { path: `/api/v1/pods?labelSelector=a%3Db&i=${i}`, seq: i, sent: '{"ü":1}' });
      assert.deepEqual(res.headers.warning, ['299 - "one"', '299 - "two"']);
      assert.equal(res.headers['x-empty'], '');
      assert.equal(res.headers['content-type'], 'application/json');
    }
    assert.equal(s.connections(), 1);
    const r = s.requests[0]!;
    assert.equal(r.headers['host'], new URL(s.url).host);
    assert.equal(r.headers['content-length'], String(Buffer.byteLength('{"ü":1}')));
    assert.equal(r.headers['accept'], 'application/json');
    await s.close();
  });

  it('decodes chunked answers (extensions, trailers) cut at random points, and keeps the connection', async () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const bodies: string[] = [];
    const s = await rawServer((req, socket) => {
      const body = bodies[req.seq]!;
      let text = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
      let i = 0;
      while (i < body.length) {
        const n = 1 + rand(300);
        const part = Buffer.from(body).subarray(i, i + n);
        text += `${part.length.toString(16)}${rand(3) === 0 ? ';ext=1' : ''}\r\n${part.toString('latin1')}\r\n`;
        i += n;
      }
      text += rand(2) === 0 ? '0\r\n\r\n' : '0\r\nX-Trailer: t\r\n\r\n';
      const bytes = Buffer.from(text, 'latin1');
      writeInPieces(socket, bytes, Array.from({ length: 1 + rand(12) }, () => rand(bytes.length)));
    });
    const a = agent();
    for (let round = 0; round < 40; round++) {
      bodies.push('x'.repeat(rand(2000)) + 'é\r\n0\r\n' + String(round));
      const res = await a.request(`${s.url}/c`, { method: 'GET', headers: {} });
      assert.equal(res.body.toString('latin1'), Buffer.from(bodies[round]!).toString('latin1'));
    }
    assert.equal(s.connections(), 1);
    await s.close();
  });

  it('reads an answer without length to the end of the connection, and opens a new one for the next', async () => {
    const s = await rawServer((_req, socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nall of it'));
    const a = agent();
    assert.equal((await a.request(`${s.url}/x`, { method: 'GET', headers: {} })).body.toString(), 'all of it');
    assert.equal((await a.request(`${s.url}/x`, { method: 'GET', headers: {} })).body.toString(), 'all of it');
    assert.equal(s.connections(), 2);
    await s.close();
  });

  it('skips informational answers and reads none of a body after HEAD, 204 and 304', async () => {
    const s = await rawServer((req, socket) => {
      if (req.path === '/head') socket.write('HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n');
      else if (req.path === '/204') socket.write('HTTP/1.1 204 No Content\r\n\r\n');
      else if (req.path === '/304') socket.write('HTTP/1.1 304 Not Modified\r\ncontent-length: 9\r\n\r\n');
      else socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n' + ok('{"a":1}'));
    });
    const a = agent({ connections: 1 });
    const head = await a.request(`${s.url}/head`, { method: 'HEAD', headers: {} });
    assert.deepEqual([head.statusCode, head.body.length, head.headers['content-length']], [200, 0, '50']);
    assert.equal((await a.request(`${s.url}/204`, { method: 'DELETE', headers: {} })).statusCode, 204);
    assert.equal((await a.request(`${s.url}/304`, { method: 'GET', headers: {} })).statusCode, 304);
    const res = await a.request(`${s.url}/after`, { method: 'GET', headers: {} });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers.link, undefined);
    assert.deepEqual(JSON.parse(res.body.toString()), { a: 1 });
    assert.equal(s.connections(), 1);
    await s.close();
  });

  it('opens at most `connections` connections and queues the rest in order', async () => {
    const held: Array<() => void> = [];
    const s = await rawServer((req, socket) => held.push(() => socket.write(ok(JSON.stringify(req.path)))));
    const a = agent({ connections: 2 });
    const order: string[] = [];
    const all = Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        a.request(`${s.url}/r${i}`, { method: 'GET', headers: {} }).then((r) => {
          order.push(JSON.parse(r.body.toString()) as string);
        }),
      ),
    );
    await waitFor(() => held.length === 2, 5000, 'two requests at the server');
    assert.equal(s.connections(), 2);
    while (order.length < 6) {
      await waitFor(() => held.length > 0, 5000, 'a request at the server');
      held.shift()!();
      await waitFor(() => held.length > 0 || order.length === 6, 5000, 'the next request');
    }
    await all;
    assert.deepEqual(
      s.requests.map((r) => r.path),
      ['/r0', '/r1', '/r2', '/r3', '/r4', '/r5'],
    );
    assert.equal(s.connections(), 2);
    await s.close();
  });

  it('sends a GET again on a new connection when a kept one closes unanswered, but fails a POST with ECONNRESET', async () => {
    const s = await rawServer((req, socket) => {
      // Every connection answers its first request only, as if it closed as idle when the second arrived.
      if (req.seq > 0) socket.destroy();
      else socket.write(ok('{}'));
    });
    const a = agent({ connections: 1 });
    await a.request(`${s.url}/first`, { method: 'GET', headers: {} });
    assert.equal((await a.request(`${s.url}/again`, { method: 'GET', headers: {} })).statusCode, 200);
    assert.deepEqual(
      s.requests.map((r) => [r.path, r.conn]),
      [
        ['/first', 0],
        ['/again', 0],
        ['/again', 1],
      ],
    );
    await assert.rejects(a.request(`${s.url}/post`, { method: 'POST', headers: {}, body: '{}' }), (e: NodeJS.ErrnoException) => e.code === 'ECONNRESET' && /closed before a response/.test(e.message));
    assert.equal(s.requests.filter((r) => r.path === '/post').length, 1);
    await s.close();
  });

  it('drops connections the server closes while idle, after `connection: close`, and after a Keep-Alive hint of a second', async () => {
    const s = await rawServer((req, socket) => {
      if (req.path === '/end') socket.end(ok('{}'));
      else if (req.path === '/close') socket.write(ok('{}', 'Connection: close\r\n'));
      else if (req.path === '/hint') socket.write(ok('{}', 'Keep-Alive: timeout=1\r\n'));
      else socket.write(ok('{}'));
    });
    for (const path of ['/end', '/close', '/hint']) {
      const a = agent({ connections: 1 });
      const [conns, closed] = [s.connections(), s.closed.length];
      await a.request(`${s.url}${path}`, { method: 'GET', headers: {} });
      await waitFor(() => s.closed.length === closed + 1, 5000, `the connection closed after ${path}`);
      await a.request(`${s.url}/plain`, { method: 'GET', headers: {} });
      assert.equal(s.connections(), conns + 2, path);
    }
    // The idle timeout.
    const b = agent({ connections: 1, keepAliveTimeoutMs: 1 });
    const before = s.closed.length;
    await b.request(`${s.url}/plain`, { method: 'GET', headers: {} });
    await waitFor(() => s.closed.length === before + 1, 5000, 'the idle connection closed');
    await s.close();
  });

  it('aborts a request in flight (its connection closes) and one still queued (never sent)', async () => {
    const s = await rawServer(() => undefined);
    const a = agent({ connections: 1 });
    const first = new AbortController();
    const second = new AbortController();
    const p1 = a.request(`${s.url}/slow`, { method: 'GET', headers: {}, signal: first.signal });
    const p2 = a.request(`${s.url}/queued`, { method: 'GET', headers: {}, signal: second.signal });
    await waitFor(() => s.requests.length === 1, 5000, 'the first request at the server');
    second.abort(new Error('not needed'));
    await assert.rejects(p2, /not needed/);
    first.abort(new Error('gave up'));
    await assert.rejects(p1, /gave up/);
    await waitFor(() => s.closed.length === 1, 5000, 'the connection closed');
    assert.deepEqual(
      s.requests.map((r) => r.path),
      ['/slow'],
    );
    await assert.rejects(a.request(`${s.url}/x`, { method: 'GET', headers: {}, signal: AbortSignal.abort(new Error('before')) }), /before/);
    await s.close();
  });

  it('rejects bad answers and bad requests with clear errors', async () => {
    const s = await rawServer((req, socket) => {
      if (req.path === '/garbage') socket.write('SMTP ready\r\n\r\n');
      else if (req.path === '/length') socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1x\r\n\r\n');
      else if (req.path === '/chunk') socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n');
      else socket.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf');
      if (req.path === '/short') socket.end();
    });
    const a = agent();
    await assert.rejects(a.request(`${s.url}/garbage`, { method: 'GET', headers: {} }), (e: NodeJS.ErrnoException) => e.code === 'HPE_INVALID_CONSTANT' && /SMTP ready/.test(e.message));
    await assert.rejects(a.request(`${s.url}/length`, { method: 'GET', headers: {} }), (e: NodeJS.ErrnoException) => e.code === 'HPE_INVALID_CONTENT_LENGTH');
    await assert.rejects(a.request(`${s.url}/chunk`, { method: 'GET', headers: {} }), (e: NodeJS.ErrnoException) => e.code === 'HPE_INVALID_CHUNK_SIZE');
    await assert.rejects(a.request(`${s.url}/short`, { method: 'GET', headers: {} }), (e: NodeJS.ErrnoException) => e.code === 'ECONNRESET' && /before the response was complete/.test(e.message));
    const sent = s.requests.length;
    await assert.rejects(a.request(`${s.url}/x`, { method: 'GET', headers: { authorization: 'Bearer a\r\nx-injected: 1' } }), /invalid value for header authorization/);
    await assert.rejects(a.request(`${s.url}/x`, { method: 'GET', headers: { 'bad name': 'v' } }), /invalid header name/);
    await assert.rejects(a.request('ftp://127.0.0.1/x', { method: 'GET', headers: {} }), /unsupported protocol/);
    assert.equal(s.requests.length, sent);
    await s.close();
    await assert.rejects(a.request(`${s.url}/x`, { method: 'GET', headers: {} }), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
  });

  it('sends obs-text header values as latin1 bytes', async () => {
    const s = await rawServer((_req, socket) => socket.write(ok('{}')));
    const a = agent();
    await a.request(`${s.url}/x`, { method: 'PUT', headers: { 'x-name': 'café' }, body: Buffer.from('{"b":"ü"}') });
    assert.equal(s.requests[0]!.headers['x-name'], 'café');
    assert.equal(s.requests[0]!.body.toString('utf8'), '{"b":"ü"}');
    // A value checked once is not taken for a checked name, nor is a bad value remembered.
    await a.request(`${s.url}/x`, { method: 'GET', headers: { 'x-note': 'a b' } });
    await assert.rejects(a.request(`${s.url}/x`, { method: 'GET', headers: { 'a b': 'v' } }), /invalid header name/);
    for (let i = 0; i < 2; i++) await assert.rejects(a.request(`${s.url}/x`, { method: 'GET', headers: { 'x-bad': 'v\n' } }), /invalid value for header x-bad/);
    assert.equal(s.requests.length, 2);
    await s.close();
  });

  it('speaks TLS with the given secure context and server name, and refuses an unknown certificate authority', async () => {
    const ca = newCA('test-ca');
    const serving = newSignedCert(ca, { commonName: 'api', dnsNames: ['kube.test'], ipAddresses: ['127.0.0.1'], usage: 'server' });
    const s = await rawServer((req, socket) => socket.write(ok(JSON.stringify({ servername: (socket as unknown as { servername?: string }).servername ?? null, path: req.path }))), { tls: { cert: serving.certPem, key: serving.keyPem } });
    const secureContext = createSecureContext({ ca: ca.certPem });
    const byIp = await agent({ tls: { secureContext } }).request(`${s.url}/ip`, { method: 'GET', headers: {} });
    assert.deepEqual(JSON.parse(byIp.body.toString()), { servername: false, path: '/ip' });
    const byName = await agent({ tls: { secureContext, servername: 'kube.test' } }).request(`${s.url}/name`, { method: 'GET', headers: {} });
    assert.deepEqual(JSON.parse(byName.body.toString()), { servername: 'kube.test', path: '/name' });
    await assert.rejects(agent().request(`${s.url}/x`, { method: 'GET', headers: {} }), (e: NodeJS.ErrnoException) => /certificate/i.test(`${e.code} ${e.message}`));
    const insecure = await agent({ tls: { rejectUnauthorized: false } }).request(`${s.url}/insecure`, { method: 'GET', headers: {} });
    assert.equal(insecure.statusCode, 200);
    await s.close();
  });

  it('connects through a Unix socket', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kcm-http1-'));
    try {
      const path = join(dir, 'api.sock');
      const s = await rawServer((req, socket) => socket.write(ok(JSON.stringify(req.headers['host']))), { path });
      const res = await agent({ socketPath: path }).request('http://localhost/api', { method: 'GET', headers: {} });
      assert.equal(JSON.parse(res.body.toString()), 'localhost');
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('streams a body chunk by chunk on a connection of its own, beside the pool', async () => {
    let watchSocket: Socket | undefined;
    const s = await rawServer((req, socket) => {
      if (req.path === '/watch') {
        watchSocket = socket;
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n');
      } else socket.write(ok('{}'));
    });
    const a = agent({ connections: 1 });
    const res = await a.stream(`${s.url}/watch`, { method: 'GET', headers: {} });
    assert.equal(res.statusCode, 200);
    const it = res.body[Symbol.asyncIterator]();
    const chunk = (text: string) => watchSocket!.write(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`);
    chunk('{"a":1}\n');
    assert.equal(String((await it.next()).value), '{"a":1}\n');
    // The pool's one connection is free for other requests while the stream is open.
    assert.equal((await a.request(`${s.url}/other`, { method: 'GET', headers: {} })).statusCode, 200);
    // A reader that falls behind gets every chunk, in order.
    for (let i = 0; i < 100; i++) chunk(`{"i":${i}}`);
    watchSocket!.write('0\r\n\r\n');
    let rest = '';
    for (;;) {
      const r = await it.next();
      if (r.done) break;
      rest += String(r.value);
    }
    assert.equal(rest, Array.from({ length: 100 }, (_, i) => `{"i":${i}}`).join(''));
    await waitFor(() => s.closed.includes(0), 5000, 'the stream connection closed at its end');
    await s.close();
  });

  it('fails a stream whose connection breaks, and ends one aborted (abort() or its signal)', async () => {
    const s = await rawServer((req, socket) => {
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n');
      if (req.path === '/break') setImmediate(() => socket.destroy());
    });
    const a = agent();
    const broken = await a.stream(`${s.url}/break`, { method: 'GET', headers: {} });
    const got: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const c of broken.body) got.push(String(c));
      })(),
      (e: NodeJS.ErrnoException) => e.code === 'ECONNRESET',
    );
    assert.deepEqual(got, ['hello']);

    const aborted = await a.stream(`${s.url}/held`, { method: 'GET', headers: {} });
    const reading = (async () => {
      for await (const _ of aborted.body) aborted.abort();
    })();
    await assert.rejects(reading, (e: NodeJS.ErrnoException) => e.code === 'ABORT_ERR');

    const ac = new AbortController();
    const signalled = await a.stream(`${s.url}/held`, { method: 'GET', headers: {}, signal: ac.signal });
    const it = signalled.body[Symbol.asyncIterator]();
    assert.equal(String((await it.next()).value), 'hello');
    const next = it.next();
    ac.abort(new Error('watch stopped'));
    await assert.rejects(next, /watch stopped/);
    await waitFor(() => s.closed.length === 3, 5000, 'every stream connection closed');
    await s.close();
  });

  it('close() answers what is in flight and queued, then refuses; destroy() fails what is left', async () => {
    const held: Array<() => void> = [];
    const s = await rawServer((req, socket) => held.push(() => socket.write(ok(JSON.stringify(req.path)))));
    const a = newHttp1Agent({ connections: 1 });
    const p1 = a.request(`${s.url}/one`, { method: 'GET', headers: {} });
    const p2 = a.request(`${s.url}/two`, { method: 'GET', headers: {} });
    await waitFor(() => held.length === 1, 5000, 'the first request');
    let closed = false;
    const closing = a.close().then(() => (closed = true));
    await assert.rejects(a.request(`${s.url}/late`, { method: 'GET', headers: {} }), /closed/);
    held.shift()!();
    await waitFor(() => held.length === 1, 5000, 'the queued request');
    assert.equal(closed, false);
    held.shift()!();
    assert.deepEqual([JSON.parse((await p1).body.toString()), JSON.parse((await p2).body.toString())], ['/one', '/two']);
    await closing;
    await waitFor(() => s.closed.length === 1, 5000, 'the connection closed');

    const b = newHttp1Agent({ connections: 1 });
    const q1 = b.request(`${s.url}/three`, { method: 'GET', headers: {} });
    const q2 = b.request(`${s.url}/four`, { method: 'GET', headers: {} });
    await waitFor(() => held.length === 1, 5000, 'the third request');
    await b.destroy();
    await assert.rejects(q1, (e: NodeJS.ErrnoException) => e.code === 'ECONNRESET');
    await assert.rejects(q2, /destroyed/);
    await s.close();
  });
});
