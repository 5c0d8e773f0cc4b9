/**
 * The API server benchmarks' load generator (bench/lib/api-load.ts): its own
 * HTTP/1.1 framing on TLS, and a run of both clients against an HTTPS server.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { parseResponse, RawClient, runLoad } from '../../bench/lib/api-load.js';
import { newCA, newSignedCert } from '../../src/util/cert/cert.js';

describe('parseResponse', () => {
  it('frames a Content-Length body and waits for all of it', () => {
    const full = Buffer.from('HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}HTTP/1.1');
    assert.equal(parseResponse(full.subarray(0, 30)), undefined);
    assert.equal(parseResponse(full.subarray(0, full.indexOf('{') + 3)), undefined);
    const r = parseResponse(full)!;
    assert.equal(r.status, 201);
    assert.equal(r.body.toString(), '{"a":1}');
    assert.equal(full.subarray(r.end).toString(), 'HTTP/1.1');
  });

  it('frames a chunked body, header names in any case', () => {
    const text = 'HTTP/1.1 200 OK\r\ntransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\na\r\n0123456789\r\n0\r\n\r\n';
    const full = Buffer.from(text);
    for (const cut of [20, text.indexOf('abc'), text.indexOf('0123'), text.length - 2]) assert.equal(parseResponse(full.subarray(0, cut)), undefined, `cut at ${cut}`);
    const r = parseResponse(full)!;
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'abc0123456789');
    assert.equal(r.end, full.length);
  });

  it('refuses what is not an HTTP/1.1 response or has no framing', () => {
    assert.throws(() => parseResponse(Buffer.from('SSH-2.0\r\n\r\n')), /not an HTTP\/1.1 response/);
    assert.throws(() => parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody')), /neither Content-Length nor chunked/);
    assert.equal(parseResponse(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'))!.body.length, 0);
  });
});

describe('the load generator over TLS', () => {
  const ca = newCA('load-test-ca');
  const serving = newSignedCert(ca, { commonName: 'localhost', ipAddresses: ['127.0.0.1'], usage: 'server' });

  /** An HTTPS server that creates and gets "configmaps" in memory, answering some responses chunked. */
  async function startServer() {
    const objects = new Map<string, string>();
    const seen: string[] = [];
    const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
        if (req.url === '/version') return void res.end('{"major":"1"}');
        const m = /^\/api\/v1\/namespaces\/ns\/configmaps(?:\/(.+))?$/.exec(req.url ?? '');
        if (!m) return void res.writeHead(404).end('{"kind":"Status"}');
        if (req.method === 'POST') {
          const body = Buffer.concat(chunks).toString();
          const name = (JSON.parse(body) as { metadata: { name: string } }).metadata.name;
          if (objects.has(name)) return void res.writeHead(409).end('{"reason":"AlreadyExists"}');
          objects.set(name, body);
          res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
          return;
        }
        const body = objects.get(m[1]!);
        if (body === undefined) return void res.writeHead(404).end('{"reason":"NotFound"}');
        // no Content-Length: Node sends it chunked
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(body.slice(0, 10));
        res.end(body.slice(10));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { url, objects, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it('sends requests one at a time on a kept-alive connection and reads each response', async () => {
    const s = await startServer();
    const c = await RawClient.open(s.url, ca.certPem);
    try {
      const created = await c.send('POST', '/api/v1/namespaces/ns/configmaps', 'Content-Type: application/json\r\n', '{"metadata":{"name":"é"}}');
      assert.equal(created.status, 201);
      assert.equal(created.body.toString(), '{"metadata":{"name":"é"}}');
      const got = await c.send('GET', '/api/v1/namespaces/ns/configmaps/%C3%A9', '');
      assert.equal(got.status, 404);
      const again = await c.send('POST', '/api/v1/namespaces/ns/configmaps', '', '{"metadata":{"name":"é"}}');
      assert.equal(again.status, 409);
      await assert.rejects(Promise.all([c.send('GET', '/version', ''), c.send('GET', '/version', '')]), /in flight/);
    } finally {
      c.close();
      await s.close();
    }
  });

  for (const client of ['raw', 'undici'] as const) {
    it(`runs creates, then gets, with the ${client} client, counting failures`, async () => {
      const s = await startServer();
      try {
        const job = { url: s.url, caPem: ca.certPem, token: 't0k', namespace: 'ns', count: 40, concurrency: 4, prefix: 'cm-', warmup: 8, client };
        const created = await runLoad({ ...job, op: 'create' });
        assert.equal(created.failures, 0, created.firstFailure);
        assert.ok(created.rate > 0 && created.p50 <= created.p99 && created.clientCpuUs > 0);
        assert.equal(s.objects.size, 48);
        assert.ok(s.objects.has('cm-39') && s.objects.has('cm-warm-7'));
        assert.ok(s.seen.every((l) => l.endsWith('Bearer t0k')));
        const got = await runLoad({ ...job, op: 'get' });
        assert.equal(got.failures, 0, got.firstFailure);
        const missing = await runLoad({ ...job, op: 'get', prefix: 'nope-' });
        assert.equal(missing.failures, 48); // the warm-up's too
        assert.match(missing.firstFailure!, /^get nope-\d+: HTTP 404 \{"reason":"NotFound"\}/);
      } finally {
        await s.close();
      }
    });
  }
});
