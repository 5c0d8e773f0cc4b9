/**
 * Protocol tests with a raw client (no kubectl): WebSocket channel protocols
 * for exec (v4 base64, pre-v4 text status, v5 close signal) and port-forward
 * (v4.channel.k8s.io port prefix), and the plain HTTP error answers.
 */
import * as http from 'node:http';
import * as net from 'node:net';
import { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeChannelMessage, parseExecQuery, serveRemoteCommand, outcomeStatus } from './remotecommand.js';
import { parsePortForwardQuery, servePortForward } from './portforward.js';
import { FrameDecoder, OP_BINARY, OP_CLOSE, OP_TEXT, encodeFrame, type WsFrame } from '../../../util/net/websocket.js';

let server: http.Server;
let port = 0;

before(async () => {
  server = http.createServer((_req, res) => res.end());
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/exec') {
      const opts = parseExecQuery(url.searchParams);
      serveRemoteCommand(req, socket, head, opts, async (s) => {
        let input = '';
        if (s.stdin) for await (const c of s.stdin) input += c.toString();
        s.stdout?.(`in=${input}`);
        const code = Number(opts.command[1] ?? 0);
        return opts.command[0] === 'fail' ? { error: 'boom' } : { exitCode: code };
      });
    } else {
      servePortForward(req, socket, head, parsePortForwardQuery(url.searchParams), (p) => {
        if (p !== 8080) return `refused ${p}`;
        const d: Duplex = new Duplex({
          read() {},
          write(c: Buffer, _e, cb) {
            d.push(Buffer.from(c.toString().toUpperCase()));
            cb();
          },
        });
        return d;
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as net.AddressInfo).port;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

interface Client {
  status: number;
  headers: string;
  body: string;
  frames: WsFrame[];
  send(opcode: number, payload: Buffer): void;
  closed: Promise<void>;
  sock: net.Socket;
}

function connect(path: string, headers: Record<string, string>): Promise<Client> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('handshake timed out'));
    }, 5000);
    let buf = Buffer.alloc(0);
    let client: Client | undefined;
    const dec = new FrameDecoder();
    let closedResolve!: () => void;
    const closed = new Promise<void>((r) => (closedResolve = r));
    sock.on('close', () => {
      closedResolve();
      if (!client) {
        clearTimeout(timer);
        const text = buf.toString();
        const [head = '', body = ''] = text.split('\r\n\r\n');
        resolve({ status: Number(head.split(' ')[1]), headers: head, body, frames: [], send: () => {}, closed, sock });
      }
    });
    sock.on('data', (c: Buffer) => {
      if (client) {
        client.frames.push(...dec.push(c));
        return;
      }
      buf = Buffer.concat([buf, c]);
      const i = buf.indexOf('\r\n\r\n');
      if (i < 0) return;
      const head = buf.subarray(0, i).toString();
      const status = Number(head.split(' ')[1]);
      if (status !== 101) return; // wait for the whole error body until close
      clearTimeout(timer);
      client = { status, headers: head, body: '', frames: [], send: (op, p) => sock.write(encodeFrame(op, p, { mask: true })), closed, sock };
      client.frames.push(...dec.push(buf.subarray(i + 4)));
      resolve(client);
    });
    const lines = [`GET ${path} HTTP/1.1`, 'Host: x', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''];
    sock.write(lines.join('\r\n'));
  });
}

const wsHeaders = (protocol: string): Record<string, string> => ({
  Connection: 'Upgrade',
  Upgrade: 'websocket',
  'Sec-WebSocket-Version': '13',
  'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
  'Sec-WebSocket-Protocol': protocol,
});

async function withTimeout<T>(p: Promise<T>, ms = 5000): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<T>((_, rej) => (t = setTimeout(() => rej(new Error('timed out')), ms)))]);
  } finally {
    clearTimeout(t);
  }
}

describe('parseExecQuery', () => {
  it('reads kubelet and API server names; drops stderr with a tty', () => {
    assert.deepEqual(parseExecQuery(new URLSearchParams('command=sh&command=-c&command=ls&input=1&output=1&error=1')), { stdin: true, stdout: true, stderr: true, tty: false, command: ['sh', '-c', 'ls'] });
    assert.deepEqual(parseExecQuery(new URLSearchParams('command=ls&stdin=true&stdout=true&stderr=true&tty=true')), { stdin: true, stdout: true, stderr: false, tty: true, command: ['ls'] });
  });
  it('formats the kubelet statuses', () => {
    assert.equal(
      JSON.stringify(outcomeStatus({ exitCode: 3 }, ['sh', '-c', 'exit 3'])),
      '{"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}',
    );
    assert.equal(JSON.stringify(outcomeStatus({ exitCode: 0 }, [])), '{"metadata":{},"status":"Success"}');
  });
});

describe('exec over raw websockets', () => {
  it('v4.base64.channel.k8s.io: ready signal, base64 text channels, JSON status, close', async () => {
    const c = await connect('/exec?command=echo&command=2&output=1', wsHeaders('v4.base64.channel.k8s.io'));
    assert.equal(c.status, 101);
    assert.match(c.headers, /Sec-WebSocket-Protocol: v4.base64.channel.k8s.io/);
    await withTimeout(c.closed);
    const texts = c.frames.filter((f) => f.opcode === OP_TEXT).map((f) => f.payload.toString());
    assert.equal(texts.length, 3);
    assert.equal(texts[0], '1');
    assert.equal(texts[1], '1' + Buffer.from('in=').toString('base64'));
    assert.equal(texts[2]![0], '3');
    assert.equal(JSON.parse(Buffer.from(texts[2]!.slice(1), 'base64').toString()).reason, 'NonZeroExitCode');
    assert.ok(c.frames.some((f) => f.opcode === OP_CLOSE));
  });

  it('v5.channel.k8s.io: the close signal [255, 0] ends stdin; status on channel 3', async () => {
    const c = await connect('/exec?command=echo&command=2&stdin=true&stdout=true', wsHeaders('v5.channel.k8s.io, v4.channel.k8s.io'));
    assert.match(c.headers, /Sec-WebSocket-Protocol: v5.channel.k8s.io/);
    c.send(OP_BINARY, Buffer.from([0, ...Buffer.from('xy')]));
    c.send(OP_BINARY, Buffer.from([255, 0]));
    await withTimeout(c.closed);
    const msgs = c.frames.filter((f) => f.opcode === OP_BINARY).map((f) => [f.payload[0], f.payload.subarray(1).toString()]);
    assert.deepEqual(msgs.slice(0, 2), [
      [1, ''],
      [1, 'in=xy'],
    ]);
    const st = JSON.parse(String(msgs[2]![1]));
    assert.equal(st.reason, 'NonZeroExitCode');
    assert.equal(st.details.causes[0].message, '2');
    const close = c.frames.find((f) => f.opcode === OP_CLOSE)!;
    assert.equal(close.payload.readUInt16BE(0), 1000);
  });

  it('channel.k8s.io (pre-v4): a failure is plain text on channel 3, success writes nothing', async () => {
    const c = await connect('/exec?command=fail&output=1', wsHeaders('channel.k8s.io'));
    await withTimeout(c.closed);
    const msgs = c.frames.filter((f) => f.opcode === OP_BINARY).map((f) => [f.payload[0], f.payload.subarray(1).toString()]);
    assert.deepEqual(msgs, [
      [1, ''],
      [1, 'in='],
      [3, 'Internal error occurred: error executing command in container: boom'],
    ]);
    const ok = await connect('/exec?command=echo&command=0&output=1', wsHeaders('channel.k8s.io'));
    await withTimeout(ok.closed);
    assert.deepEqual(
      ok.frames.filter((f) => f.opcode === OP_BINARY).map((f) => f.payload[0]),
      [1, 1],
    );
  });

  it('answers 400 with a Status when no streaming protocol is requested, and when no stream is', async () => {
    const c = await connect('/exec?command=ls&output=1', { Connection: 'Upgrade', Upgrade: 'h2c' });
    assert.equal(c.status, 400);
    assert.equal(JSON.parse(c.body).kind, 'Status');
    const d = await connect('/exec?command=ls', wsHeaders('v4.channel.k8s.io'));
    assert.equal(d.status, 400);
    assert.equal(JSON.parse(d.body).message, 'you must specify at least 1 of stdin, stdout, stderr');
  });

  it('answers 403 when no SPDY subprotocol matches', async () => {
    const c = await connect('/exec?command=ls&output=1', { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'v9.channel.k8s.io' });
    assert.equal(c.status, 403);
    assert.match(c.body, /unable to negotiate protocol: client supports \[v9.channel.k8s.io\]/);
  });
});

describe('port-forward over raw websockets (v4.channel.k8s.io)', () => {
  it('sends the port first on both channels, forwards data, reports errors per port', async () => {
    const c = await connect('/portforward?port=8080&port=9090', wsHeaders('v4.channel.k8s.io'));
    assert.equal(c.status, 101);
    c.send(OP_BINARY, Buffer.from([0, ...Buffer.from('ping')]));
    await new Promise((r) => setTimeout(r, 100));
    const msgs = c.frames.filter((f) => f.opcode === OP_BINARY).map((f) => [f.payload[0], f.payload.subarray(1)]);
    const p8080 = Buffer.from([0x90, 0x1f]);
    const p9090 = Buffer.from([0x82, 0x23]);
    assert.deepEqual(msgs.slice(0, 4), [
      [0, p8080],
      [1, p8080],
      [2, p9090],
      [3, p9090],
    ]);
    assert.deepEqual(
      msgs.slice(4).map(([ch, d]) => [ch, d!.toString()]),
      [
        [3, 'refused 9090'],
        [0, 'PING'],
      ],
    );
    c.sock.destroy();
  });

  it('rejects a bad port query', () => {
    assert.throws(() => parsePortForwardQuery(new URLSearchParams('')), /query parameter "port" is required/);
    assert.throws(() => parsePortForwardQuery(new URLSearchParams('port=0')), /must be > 0/);
    assert.deepEqual(parsePortForwardQuery(new URLSearchParams('port=80&port=443')), [80, 443]);
  });
});

describe('channel messages', () => {
  it('decodes k8s channels in binary and base64 forms', () => {
    assert.deepEqual(decodeChannelMessage(Buffer.from('0aGk='), false, true), { channel: 0, data: Buffer.from('hi') });
    assert.deepEqual(decodeChannelMessage(Buffer.from([4, 0x7b]), true, false), { channel: 4, data: Buffer.from('{') });
    assert.equal(decodeChannelMessage(Buffer.alloc(0), true, false), undefined);
  });
});
