import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { newCA, newSignedCert } from '../../util/cert/cert.js';
import { newLogger, setLogOutput } from '../../util/log/logger.js';
import { bootTlsFront, FrontListenError, startTlsFront, type BootedFront } from './tls-front.js';

const dir = mkdtempSync(join(tmpdir(), 'kcm-front-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const log = newLogger('test');
const ca = newCA('front-ca');
const serving = newSignedCert(ca, { commonName: 'localhost', usage: 'server', ipAddresses: ['127.0.0.1'] });
const tls = { key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, host: '127.0.0.1', port: 0 };

describe('startTlsFront', () => {
  it('fails, closing its HTTP server, when the TLS thread exits before it listens', async () => {
    const worker = new Worker('process.exit(3)', { eval: true });
    const ended = new Promise<Error>((resolve) => worker.once('exit', (code) => resolve(new Error(`the TLS thread exited with code ${code}`))));
    const boot: BootedFront = { worker, ended };
    const server = createServer(() => undefined);
    await assert.rejects(startTlsFront({ ...tls, boot, server, socketPath: join(dir, 'exit.sock'), logger: log }), /exited with code 3/);
    assert.equal(server.listening, false);
  });

  it('fails with the listen error when the TLS port is taken, and logs no failure of the thread it then stops', async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const lines: string[] = [];
    const restore = setLogOutput((l) => lines.push(l));
    try {
      const boot = bootTlsFront(log)!;
      const exited = new Promise((resolve) => boot.worker.once('exit', resolve));
      const server = createServer(() => undefined);
      const port = (taken.address() as AddressInfo).port;
      await assert.rejects(startTlsFront({ ...tls, port, boot, server, socketPath: join(dir, 'taken.sock'), logger: log }), (err: unknown) => err instanceof FrontListenError && err.code === 'EADDRINUSE');
      await exited;
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(lines.filter((l) => l.includes('TLS thread')), []);
      assert.equal(server.listening, false);
    } finally {
      setLogOutput(restore);
      taken.close();
    }
  });

  it('cuts a connection to its socket whose first line never ends', async () => {
    const boot = bootTlsFront(log)!;
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.end();
    });
    const socketPath = join(dir, 'long.sock');
    const front = await startTlsFront({ ...tls, boot, server, socketPath, logger: log });
    try {
      const sock = connect(socketPath);
      sock.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => sock.once('close', () => resolve()));
      // More than the 256 KiB a preamble may take, without a newline.
      const chunk = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 5; i++) sock.write(chunk);
      await closed;
      assert.deepEqual(requests, []);
    } finally {
      server.close();
      await front.close(1000);
    }
  });
});
