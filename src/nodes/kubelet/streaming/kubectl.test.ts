/**
 * Real-client tests: the installed kubectl (v1.32) against a tiny fake API
 * server whose exec and portforward upgrades are served by this library.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseExecQuery, serveRemoteCommand, type ExecOutcome, type ExecStreams } from './remotecommand.js';
import { servePortForward } from './portforward.js';

const DEBUG = !!process.env.STREAMING_TEST_DEBUG;
const log = (...a: unknown[]): void => {
  if (DEBUG) console.error('[fake-apiserver]', ...a);
};

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p1', namespace: 'default', uid: 'u1', resourceVersion: '1' },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
  status: { phase: 'Running' },
};

const coreResources = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'v1',
  resources: [
    { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['get', 'list'], shortNames: ['po'] },
    { name: 'pods/exec', singularName: '', namespaced: true, kind: 'PodExecOptions', verbs: ['create', 'get'] },
    { name: 'pods/attach', singularName: '', namespaced: true, kind: 'PodAttachOptions', verbs: ['create', 'get'] },
    { name: 'pods/portforward', singularName: '', namespaced: true, kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
  ],
};

/** The fake pod's command: `echo-upper EXIT` copies stdin uppercased to stdout, writes "err:" to stderr, exits EXIT. */
async function runCommand(s: ExecStreams, command: string[]): Promise<ExecOutcome> {
  const [name, arg] = command;
  if (name === 'fail') return { error: 'container not running' };
  if (name === 'size') {
    const size = await new Promise<{ width: number; height: number }>((resolve) => s.onResize(resolve));
    s.stdout?.(`size ${size.width}x${size.height}\n`);
    return { exitCode: 0 };
  }
  s.stdout?.('hello\n');
  s.stderr?.('err:oops\n');
  if (s.stdin) for await (const chunk of s.stdin) s.stdout?.(chunk.toString().toUpperCase());
  s.stdout?.(`tty=${s.tty}\n`);
  return { exitCode: Number(arg ?? 0) };
}

/** The pod's port 80: a one-shot HTTP server on an in-memory pair. */
function podPort(port: number): Duplex | string {
  if (port !== 80) return `error forwarding port ${port} to pod p1, uid u1: connection refused`;
  let buf = '';
  const d: Duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _e, cb) {
      buf += chunk.toString();
      if (buf.includes('\r\n\r\n')) {
        const body = 'hello from pod port 80';
        d.push(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
        d.push(null);
      }
      cb();
    },
    final(cb) {
      cb();
    },
  });
  return d;
}

let server: http.Server;
let dir: string;
let kubeconfig: string;
const children = new Set<ChildProcess>();
const requests: string[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    log(req.method, req.url, req.headers.upgrade ?? '');
    requests.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (code: number, body: unknown): void => {
      res.writeHead(code, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    switch (url.pathname) {
      case '/version':
        return json(200, { major: '1', minor: '32', gitVersion: 'v1.32.0', platform: 'linux/amd64' });
      case '/api':
        return json(200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }] });
      case '/apis':
        return json(200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
      case '/api/v1':
        return json(200, coreResources);
      case '/api/v1/namespaces/default/pods/p1':
        return json(200, pod);
      default:
        return json(404, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'not found', reason: 'NotFound', code: 404 });
    }
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    log('upgrade', req.method, req.url, req.headers.upgrade, req.headers['sec-websocket-protocol'] ?? req.headers['x-stream-protocol-version']);
    requests.push(`UPGRADE ${req.method} ${req.url} ${req.headers.upgrade} ${req.headers['sec-websocket-protocol'] ?? req.headers['x-stream-protocol-version']}`);
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/api/v1/namespaces/default/pods/p1/exec' || url.pathname === '/api/v1/namespaces/default/pods/p1/attach') {
      const opts = parseExecQuery(url.searchParams);
      serveRemoteCommand(req, socket, head, opts, (s) => runCommand(s, opts.command));
    } else if (url.pathname === '/api/v1/namespaces/default/pods/p1/portforward') {
      servePortForward(req, socket, head, url.searchParams.getAll('ports').map(Number), podPort);
    } else socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  dir = mkdtempSync(join(tmpdir(), 'kcm-streaming-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "http://127.0.0.1:' + port + '"}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]',
      'current-context: x',
      '',
    ].join('\n'),
  );
});

after(() => {
  for (const c of children) c.kill('SIGKILL');
  server?.closeAllConnections();
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function kubectl(args: string[], opts: { env?: Record<string, string>; stdin?: string; timeoutMs?: number } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], {
      env: { ...process.env, HOME: dir, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kubectl ${args.join(' ')} timed out; stdout=${JSON.stringify(stdout)} stderr=${JSON.stringify(stderr)} requests=${JSON.stringify(requests)}`));
    }, opts.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
    if (opts.stdin !== undefined) child.stdin.end(opts.stdin);
    else child.stdin.end();
  });
}

const SPDY = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' };
const WS = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'true' };

for (const [name, env] of [
  ['websocket (v5.channel.k8s.io)', WS],
  ['SPDY (v4.channel.k8s.io)', SPDY],
] as const) {
  describe(`kubectl exec over ${name}`, () => {
    it('streams stdout and stderr and succeeds with exit 0', async () => {
      const r = await kubectl(['exec', 'p1', '--', 'echo-upper', '0'], { env });
      assert.equal(r.stdout, 'hello\ntty=false\n', r.stderr);
      assert.equal(r.stderr, 'err:oops\n');
      assert.equal(r.code, 0);
    });

    it('passes the exit code through', async () => {
      const r = await kubectl(['exec', 'p1', '--', 'echo-upper', '3'], { env });
      assert.equal(r.stdout, 'hello\ntty=false\n');
      assert.match(r.stderr, /command terminated with exit code 3/);
      assert.equal(r.code, 3);
    });

    it('streams stdin with -i until the client closes it', async () => {
      const r = await kubectl(['exec', '-i', 'p1', '--', 'echo-upper', '0'], { env, stdin: 'abc\ndef\n' });
      assert.equal(r.stdout, 'hello\nABC\nDEF\ntty=false\n', r.stderr);
      assert.equal(r.stderr, 'err:oops\n');
      assert.equal(r.code, 0);
    });

    it('attaches (kubectl attach) to the same streams', async () => {
      const r = await kubectl(['attach', 'p1'], { env });
      assert.equal(r.stdout, 'hello\ntty=false\n', r.stderr);
      assert.ok(r.stderr.endsWith('err:oops\n'), r.stderr); // after kubectl's "If you don't see a command prompt" hint
      assert.equal(r.code, 0);
      assert.ok(requests.some((q) => q.includes('/pods/p1/attach?')));
    });

    it('reports a non-exit-code failure', async () => {
      const r = await kubectl(['exec', 'p1', '--', 'fail'], { env });
      assert.match(r.stderr, /error executing command in container: container not running/);
      assert.equal(r.code, 1);
    });
  });
}

/** Runs a command line under `script` so kubectl sees a terminal (100x40). */
function kubectlInTerminal(args: string[], env: Record<string, string>): Promise<Result> {
  const line = ['stty cols 100 rows 40;', 'kubectl', '--kubeconfig', kubeconfig, ...args].join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', line, '/dev/null'], { env: { ...process.env, HOME: dir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`script ${line} timed out; output=${JSON.stringify(stdout)}`));
    }, 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

for (const [name, env] of [
  ['websocket', WS],
  ['SPDY', SPDY],
] as const) {
  it(`kubectl exec -it over ${name} gets a tty and the terminal size`, async () => {
    const r = await kubectlInTerminal(['exec', '-it', 'p1', '--', 'size'], env);
    assert.match(r.stdout, /size 100x40/);
    assert.equal(r.code, 0, r.stdout);
  });
}

/** Starts `kubectl port-forward pod/p1 :80`, waits for its local port, fetches /, kills it. */
async function portForwardFetch(env: Record<string, string>, remotePort = 80): Promise<string[]> {
  const child = spawn('kubectl', ['--kubeconfig', kubeconfig, 'port-forward', 'pod/p1', `:${remotePort}`], {
    env: { ...process.env, HOME: dir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  try {
    let out = '';
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const localPort = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`kubectl port-forward did not start: ${out}`)), 20_000);
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /Forwarding from 127\.0\.0\.1:(\d+) -> \d+/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      child.on('exit', () => reject(new Error(`kubectl port-forward exited: ${out}`)));
    });
    const bodies: string[] = [];
    if (remotePort !== 80) {
      // the pod refuses: the local connection fails and kubectl prints the kubelet's error
      await new Promise<void>((resolve) => {
        const req = http.get({ host: '127.0.0.1', port: localPort, path: '/', agent: false, timeout: 10_000 }, () => resolve());
        req.on('error', () => resolve());
        req.on('timeout', () => req.destroy());
      });
      const deadline = Date.now() + 10_000;
      while (!out.includes('error forwarding port') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      return [out];
    }
    // two requests in a row: one SPDY stream pair each, on the same session
    for (let i = 0; i < 2; i++) {
      bodies.push(
        await new Promise<string>((resolve, reject) => {
          const req = http.get({ host: '127.0.0.1', port: localPort, path: '/', agent: false, timeout: 10_000 }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve(body));
            res.on('error', reject);
          });
          req.on('timeout', () => req.destroy(new Error(`port-forward fetch timed out: ${out}`)));
          req.on('error', reject);
        }),
      );
    }
    return bodies;
  } finally {
    child.kill('SIGKILL');
    children.delete(child);
  }
}

describe('kubectl port-forward', () => {
  it('works over SPDY (portforward.k8s.io)', async () => {
    const before = requests.length;
    assert.deepEqual(await portForwardFetch({ KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }), ['hello from pod port 80', 'hello from pod port 80']);
    assert.ok(requests.slice(before).some((r) => r.startsWith('UPGRADE POST /api/v1/namespaces/default/pods/p1/portforward SPDY/3.1')), JSON.stringify(requests.slice(before)));
  });

  it('works over the websocket SPDY tunnel (SPDY/3.1+portforward.k8s.io)', async () => {
    const before = requests.length;
    assert.deepEqual(await portForwardFetch({ KUBECTL_PORT_FORWARD_WEBSOCKETS: 'true' }), ['hello from pod port 80', 'hello from pod port 80']);
    assert.ok(requests.slice(before).some((r) => r.includes('websocket SPDY/3.1+portforward.k8s.io')), JSON.stringify(requests.slice(before)));
  });

  for (const [name, env] of [
    ['SPDY', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }],
    ['the websocket tunnel', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'true' }],
  ] as const) {
    it(`shows the error written on the error stream over ${name}`, async () => {
      const [out] = await portForwardFetch(env, 81);
      assert.match(out!, /error forwarding port 81 to pod p1, uid u1: connection refused/);
    });
  }
});
