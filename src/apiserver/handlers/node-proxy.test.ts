import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { startTestServer, type TestServer } from '../test-server.js';
import { KUBELET_ENDPOINT_ANNOTATION, splitSchemeNamePort, proxyRestPath } from './node-proxy.js';

const podPath = '/api/v1/namespaces/default/pods';

interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A fake kubelet: records requests; serves logs (in chunks), a 101 echo, the pod proxy and /healthz. */
async function startFakeKubelet() {
  const requests: Recorded[] = [];
  let releaseFollow: () => void = () => undefined;
  const followReleased = new Promise<void>((r) => (releaseFollow = r));
  let followClosed: () => void = () => undefined;
  const followGone = new Promise<void>((r) => (followClosed = r));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      requests.push(rec);
      const u = new URL(rec.url, 'http://kubelet');
      if (u.pathname.startsWith('/containerLogs/default/missing/')) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'container "c" in pod "missing" is waiting to start', reason: 'NotFound', code: 404 }));
        return;
      }
      if (u.pathname.startsWith('/containerLogs/')) {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('line 1\n');
        if (u.searchParams.get('follow') === 'true') {
          res.on('close', () => followClosed());
          // Holds the stream open until the test saw the first line through the API server (bounded).
          const t = setTimeout(() => res.end('late\n'), 5000);
          followReleased.then(() => {
            clearTimeout(t);
            if (!res.destroyed) res.end('line 2\n');
          });
          return;
        }
        setTimeout(() => res.end('line 2\n'), 20);
        return;
      }
      if (u.pathname.startsWith('/kcm/podProxy/')) {
        res.writeHead(201, { 'Content-Type': 'application/json', 'X-From': 'pod' });
        res.end(JSON.stringify({ method: rec.method, url: rec.url, body: rec.body }));
        return;
      }
      if (u.pathname === '/healthz') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end('ok');
        return;
      }
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'not found', reason: 'NotFound', code: 404 }));
    });
  });
  const sockets = new Set<Duplex>();
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.add(socket);
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: '' });
    socket.on('error', () => undefined);
    if ((req.url ?? '').includes('/reject/')) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}');
      return;
    }
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${req.headers.upgrade}\r\nX-Stream-Protocol-Version: ${req.headers['x-stream-protocol-version'] ?? ''}\r\n\r\n`);
    if (head.length) socket.write(head);
    socket.pipe(socket);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    releaseFollow: () => releaseFollow(),
    followGone,
    last: (prefix: string) => [...requests].reverse().find((r) => r.url.startsWith(prefix)),
    async close() {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Sends a raw upgrade request; resolves with the response head and a socket to talk on. */
function rawUpgrade(base: string, method: string, path: string, headers: Record<string, string>): Promise<{ head: string; rest: Buffer; socket: net.Socket }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname, () => {
      const lines = [`${method} ${path} HTTP/1.1`, `Host: ${u.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    let buf: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no response head within 5 s: ${buf.toString()}`));
    }, 5000);
    const onData = (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      const i = buf.indexOf('\r\n\r\n');
      if (i < 0) return;
      clearTimeout(timer);
      socket.off('data', onData);
      resolve({ head: buf.subarray(0, i).toString(), rest: buf.subarray(i + 4), socket });
    };
    socket.on('data', onData);
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** Reads from `socket` until `n` bytes arrived (bounded). */
function readBytes(socket: net.Socket, n: number, initial: Buffer = Buffer.alloc(0)): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buf: Buffer = initial;
    if (buf.length >= n) return resolve(buf);
    const timer = setTimeout(() => reject(new Error(`only ${buf.length} of ${n} bytes within 5 s`)), 5000);
    const onData = (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (buf.length >= n) {
        clearTimeout(timer);
        socket.off('data', onData);
        resolve(buf);
      }
    };
    socket.on('data', onData);
  });
}

/** Reads the rest of a response after its head (Content-Length bodies). */
async function bodyAfter(r: { head: string; rest: Buffer; socket: net.Socket }): Promise<any> {
  const len = Number(/content-length: (\d+)/i.exec(r.head)?.[1] ?? 0);
  const b = await readBytes(r.socket, len, r.rest);
  r.socket.destroy();
  return JSON.parse(b.subarray(0, len).toString());
}

describe('node streaming endpoints (pods/log, exec, attach, portforward, proxies)', () => {
  let t: TestServer;
  let kubelet: Awaited<ReturnType<typeof startFakeKubelet>>;

  const node = (name: string, endpoint: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, annotations: { [KUBELET_ENDPOINT_ANNOTATION]: endpoint } } });
  async function podOn(name: string, nodeName: string | undefined, containers: string[] = ['c'], podIP = '10.244.0.5', ports: { name?: string; containerPort: number }[] = []) {
    const created = await t.request('POST', podPath, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } },
      spec: { containers: containers.map((c, i) => ({ name: c, image: 'nginx', ...(i === 0 && ports.length ? { ports } : {}) })) },
    });
    assert.equal(created.status, 201, created.text);
    if (!nodeName) return;
    assert.equal((await t.request('POST', `${podPath}/${name}/binding`, { metadata: { name }, target: { name: nodeName } })).status, 201);
    const cur = (await t.request('GET', `${podPath}/${name}`)).body;
    cur.status = { ...cur.status, phase: 'Running', podIP, podIPs: [{ ip: podIP }] };
    assert.equal((await t.request('PUT', `${podPath}/${name}/status`, cur)).status, 200);
  }

  before(async () => {
    kubelet = await startFakeKubelet();
    t = await startTestServer({ kubelet: { token: 'kubelet-secret' } });
    await t.request('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'default' } });
    assert.equal((await t.request('POST', '/api/v1/nodes', node('n1', kubelet.url))).status, 201);
    assert.equal((await t.request('POST', '/api/v1/nodes', node('dead', 'http://127.0.0.1:1'))).status, 201);
    await podOn('p1', 'n1', ['c'], '10.244.0.5', [{ name: 'http', containerPort: 8080 }]);
    await podOn('p2', 'n1', ['c'], '10.244.0.6');
    await podOn('multi', 'n1', ['a', 'b']);
    await podOn('missing', 'n1');
    await podOn('pending', undefined);
    await podOn('far', 'dead');
  });
  after(async () => {
    await t.close();
    await kubelet.close();
  });

  it('proxies pods/log to the kubelet with the translated path, query and bearer token', async () => {
    const res = await t.request('GET', `${podPath}/p1/log?timestamps=true&tailLines=10&limitBytes=500&sinceSeconds=60&previous=1`, undefined, { Authorization: 'Bearer client-token' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, 'line 1\nline 2\n');
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    const rec = kubelet.last('/containerLogs/')!;
    assert.equal(rec.url, '/containerLogs/default/p1/c?limitBytes=500&previous=true&sinceSeconds=60&tailLines=10&timestamps=true');
    assert.equal(rec.headers.authorization, 'Bearer kubelet-secret', 'the kubelet token replaces the client credentials');
  });

  it('streams follow=true logs: the first chunk arrives before the kubelet ends, and a client disconnect closes the kubelet request', async () => {
    const u = new URL(t.base);
    const first = await new Promise<{ chunk: string; req: http.ClientRequest; res: http.IncomingMessage }>((resolve, reject) => {
      const req = http.get({ host: u.hostname, port: u.port, path: `${podPath}/p1/log?follow=true&container=c`, agent: false }, (res) => {
        res.once('data', (c: Buffer) => resolve({ chunk: c.toString(), req, res }));
      });
      req.on('error', reject);
      req.setTimeout(5000, () => req.destroy(new Error('no first chunk within 5 s')));
    });
    assert.equal(first.res.statusCode, 200);
    assert.equal(first.chunk, 'line 1\n');
    assert.equal(first.res.headers['transfer-encoding'], 'chunked');
    assert.equal(kubelet.last('/containerLogs/')!.url, '/containerLogs/default/p1/c?follow=true');
    first.req.destroy();
    await Promise.race([kubelet.followGone, new Promise((_, rej) => setTimeout(() => rej(new Error('kubelet request not closed')), 3000))]);
    kubelet.releaseFollow();
  });

  it('validates log options and the container as upstream', async () => {
    const multi = await t.request('GET', `${podPath}/multi/log`);
    assert.equal(multi.status, 400);
    assert.equal(multi.body.message, 'a container name must be specified for pod multi, choose one of: [a b]');
    const bad = await t.request('GET', `${podPath}/p1/log?container=nope`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, 'container nope is not valid for pod p1');
    const neg = await t.request('GET', `${podPath}/p1/log?tailLines=-1`);
    assert.equal(neg.status, 422);
    assert.equal(neg.body.message, 'PodLogOptions "p1" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0');
    const both = await t.request('GET', `${podPath}/p1/log?sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z`);
    assert.equal(both.status, 422);
    assert.match(both.body.message, /at most one of `sinceTime` or `sinceSeconds` may be specified/);
    assert.equal((await t.request('GET', `${podPath}/nosuch/log`)).status, 404);
    const pending = await t.request('GET', `${podPath}/pending/log`);
    assert.equal(pending.status, 200, 'a pod without a node has an empty log');
    assert.equal(pending.text, '');
  });

  it('passes the kubelet Status through and reports an unreachable kubelet', async () => {
    const missing = await t.request('GET', `${podPath}/missing/log`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'container "c" in pod "missing" is waiting to start');
    const far = await t.request('GET', `${podPath}/far/log`);
    assert.equal(far.status, 500);
    assert.equal(far.body.message, 'Get "http://127.0.0.1:1/containerLogs/default/far/c": dial tcp 127.0.0.1:1: connect: connection refused');
    assert.equal(far.body.reason, undefined, 'a dial error is no Status: StatusReasonUnknown');
  });

  it('splices an exec upgrade to the kubelet: 101 passed through, raw bytes both ways', async () => {
    const r = await rawUpgrade(t.base, 'POST', `${podPath}/p1/exec?command=ls&command=-l&stdin=true&stdout=true&stderr=true&tty=false`, {
      Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'v4.channel.k8s.io', Authorization: 'Bearer client-token',
    });
    try {
      assert.match(r.head, /^HTTP\/1\.1 101 /);
      assert.match(r.head, /X-Stream-Protocol-Version: v4\.channel\.k8s\.io/);
      const rec = kubelet.last('/exec/')!;
      assert.equal(rec.method, 'POST');
      assert.equal(rec.url, '/exec/default/p1/c?command=ls&command=-l&error=1&input=1&output=1');
      assert.equal(rec.headers.authorization, 'Bearer kubelet-secret');
      assert.equal(rec.headers.upgrade, 'SPDY/3.1');
      r.socket.write(Buffer.from([0, 1, 2, 255]));
      r.socket.write('hello');
      const echoed = await readBytes(r.socket, 9, r.rest);
      assert.deepEqual([...echoed.subarray(0, 4)], [0, 1, 2, 255]);
      assert.equal(echoed.subarray(4, 9).toString(), 'hello');
    } finally {
      r.socket.destroy();
    }
  });

  it('translates attach and portforward upgrades (websocket headers kept)', async () => {
    const a = await rawUpgrade(t.base, 'GET', `${podPath}/multi/attach?container=b&stdout=1&tty=true`, {
      Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Protocol': 'v5.channel.k8s.io',
    });
    a.socket.destroy();
    assert.match(a.head, /^HTTP\/1\.1 101 /);
    const rec = kubelet.last('/attach/')!;
    assert.equal(rec.url, '/attach/default/multi/b?output=1&tty=1');
    assert.equal(rec.headers['sec-websocket-key'], 'dGhlIHNhbXBsZSBub25jZQ==');
    assert.equal(rec.headers['sec-websocket-protocol'], 'v5.channel.k8s.io');
    const pf = await rawUpgrade(t.base, 'POST', `${podPath}/p1/portforward?ports=8080&ports=9090`, { Connection: 'Upgrade', Upgrade: 'SPDY/3.1' });
    pf.socket.destroy();
    assert.match(pf.head, /^HTTP\/1\.1 101 /);
    assert.equal(kubelet.last('/portForward/')!.url, '/portForward/default/p1?port=8080%2C9090');
  });

  it('refuses streaming requests as upstream: no upgrade, no host, bad container, dead kubelet', async () => {
    const plain = await t.request('POST', `${podPath}/p1/exec?command=ls`);
    assert.equal(plain.status, 400);
    assert.equal(plain.body.message, 'Upgrade request required');
    const up = { Connection: 'Upgrade', Upgrade: 'SPDY/3.1' };
    const pending = await rawUpgrade(t.base, 'POST', `${podPath}/pending/exec?command=ls`, up);
    assert.match(pending.head, /^HTTP\/1\.1 400 /);
    assert.equal((await bodyAfter(pending)).message, 'pod pending does not have a host assigned');
    const multi = await rawUpgrade(t.base, 'POST', `${podPath}/multi/exec?command=ls`, up);
    assert.match(multi.head, /^HTTP\/1\.1 400 /);
    assert.equal((await bodyAfter(multi)).message, 'a container name must be specified for pod multi, choose one of: [a b]');
    const far = await rawUpgrade(t.base, 'POST', `${podPath}/far/exec?command=ls`, up);
    assert.match(far.head, /^HTTP\/1\.1 500 /);
    assert.equal((await bodyAfter(far)).message, 'error dialing backend: dial tcp 127.0.0.1:1: connect: connection refused');
    const none = await rawUpgrade(t.base, 'POST', `${podPath}/nosuch/exec?command=ls`, up);
    assert.match(none.head, /^HTTP\/1\.1 404 /);
    none.socket.destroy();
  });

  it('serves an upgrade request to a non-streaming path as a plain request', async () => {
    const r = await rawUpgrade(t.base, 'GET', `${podPath}/p1`, { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' });
    assert.match(r.head, /^HTTP\/1\.1 200 /);
    const len = /content-length: (\d+)/i.exec(r.head);
    const body = len ? (await readBytes(r.socket, Number(len[1]), r.rest)).toString() : await new Promise<string>((resolve) => {
      let b = r.rest.toString();
      r.socket.on('data', (c: Buffer) => (b += c.toString()));
      r.socket.on('end', () => resolve(b));
    });
    r.socket.destroy();
    assert.match(body, /"name":"p1"/);
  });

  it('proxies pods/NAME[:PORT]/proxy through the kubelet, any verb, body and query kept', async () => {
    const res = await t.request('POST', `${podPath}/p1:8080/proxy/api/items?x=1&y=2`, 'payload', { 'Content-Type': 'text/plain' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers['x-from'], 'pod');
    assert.deepEqual(res.body, { method: 'POST', url: '/kcm/podProxy/default/p1/8080/api/items?x=1&y=2', body: 'payload' });
    assert.equal(kubelet.last('/kcm/podProxy/')!.headers.authorization, 'Bearer kubelet-secret');
    const named = await t.request('GET', `${podPath}/https:p1:http/proxy/`);
    assert.equal(named.body.url, '/kcm/podProxy/default/p1/8080/', 'a named container port resolves');
    const dflt = await t.request('GET', `${podPath}/p1/proxy`);
    assert.equal(dflt.body.url, '/kcm/podProxy/default/p1/8080/', 'the first declared container port');
    const noIP = await t.request('GET', `${podPath}/pending:80/proxy/`);
    assert.equal(noIP.status, 400);
    assert.equal(noIP.body.message, 'address not allowed');
  });

  it('proxies services/NAME:PORT/proxy to a ready endpoint of that port, 503 without one', async () => {
    const svc = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
    assert.equal((await t.request('POST', '/api/v1/namespaces/default/services', svc('web'))).status, 201);
    const ep = await t.request('POST', '/api/v1/namespaces/default/endpoints', {
      apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web' },
      subsets: [{ addresses: [{ ip: '10.244.0.5', targetRef: { kind: 'Pod', name: 'p1', namespace: 'default' } }], notReadyAddresses: [{ ip: '10.244.0.6', targetRef: { kind: 'Pod', name: 'p2', namespace: 'default' } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
    });
    assert.equal(ep.status, 201, ep.text);
    for (const id of ['web:80', 'web:http', 'http:web:80']) {
      const res = await t.request('GET', `/api/v1/namespaces/default/services/${id}/proxy/hello?q=1`);
      assert.equal(res.status, 201, `${id}: ${res.text}`);
      assert.equal(res.body.url, '/kcm/podProxy/default/p1/8080/hello?q=1');
    }
    const noPort = await t.request('GET', '/api/v1/namespaces/default/services/web:81/proxy/');
    assert.equal(noPort.status, 503);
    assert.equal(noPort.body.message, 'no service port 81 found for service "web"');
    // EndpointSlices only: the not-ready endpoint is skipped.
    assert.equal((await t.request('POST', '/api/v1/namespaces/default/services', svc('sliced'))).status, 201);
    const slice = await t.request('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'sliced-abc', labels: { 'kubernetes.io/service-name': 'sliced' } }, addressType: 'IPv4',
      endpoints: [{ addresses: ['10.244.0.6'], conditions: { ready: false }, targetRef: { kind: 'Pod', name: 'p2', namespace: 'default' } }, { addresses: ['10.244.0.5'], conditions: { ready: true }, targetRef: { kind: 'Pod', name: 'p1', namespace: 'default' } }],
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    });
    assert.equal(slice.status, 201, slice.text);
    for (let i = 0; i < 4; i++) assert.equal((await t.request('GET', '/api/v1/namespaces/default/services/sliced:80/proxy/x')).body.url, '/kcm/podProxy/default/p1/8080/x');
    assert.equal((await t.request('POST', '/api/v1/namespaces/default/services', svc('empty'))).status, 201);
    const empty = await t.request('GET', '/api/v1/namespaces/default/services/empty:http/proxy/');
    assert.equal(empty.status, 503);
    assert.equal(empty.body.message, 'no endpoints available for service "empty"');
  });

  it('proxies nodes/NAME/proxy/... to the kubelet itself', async () => {
    const res = await t.request('GET', '/api/v1/nodes/n1/proxy/healthz');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, 'ok');
    assert.equal(kubelet.last('/healthz')!.headers.authorization, 'Bearer kubelet-secret');
    const dead = await t.request('GET', '/api/v1/nodes/dead/proxy/healthz');
    assert.equal(dead.status, 500);
    assert.equal(dead.body.message, 'dial tcp 127.0.0.1:1: connect: connection refused');
    assert.equal((await t.request('GET', '/api/v1/nodes/nosuch/proxy/healthz')).status, 404);
  });

  it('serves discovery for pods/attach and pods/proxy', async () => {
    const list = (await t.request('GET', '/api/v1')).body;
    const names = list.resources.map((r: any) => r.name).filter((n: string) => n.startsWith('pods/'));
    for (const n of ['pods/attach', 'pods/exec', 'pods/log', 'pods/portforward', 'pods/proxy']) assert.ok(names.includes(n), n);
  });
});

describe('node streaming endpoints under RBAC', () => {
  it('authorizes nodes/proxy and pods/exec by their first subresource segment and the request verb (impersonated users)', async () => {
    const kubelet = await startFakeKubelet();
    const t = await startTestServer({ kubelet: {}, authorizationMode: 'RBAC' });
    try {
      await t.request('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'default' } });
      await t.request('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', annotations: { [KUBELET_ENDPOINT_ANNOTATION]: kubelet.url } } });
      await t.request('POST', podPath, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }] } });
      const rbac = '/apis/rbac.authorization.k8s.io/v1';
      assert.equal((await t.request('POST', `${rbac}/clusterroles`, { metadata: { name: 'streams' }, rules: [{ apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] }, { apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] }] })).status, 201);
      assert.equal((await t.request('POST', `${rbac}/clusterrolebindings`, { metadata: { name: 'bob-streams' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'streams' }, subjects: [{ kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.k8s.io' }] })).status, 201);
      const asBob = { 'Impersonate-User': 'bob' };
      const health = await t.request('GET', '/api/v1/nodes/n1/proxy/healthz', undefined, asBob);
      assert.equal(health.status, 200, health.text);
      assert.equal(kubelet.last('/healthz')!.headers.authorization, undefined, 'no kubelet token configured: no header');
      assert.equal(kubelet.last('/healthz')!.headers['impersonate-user'], undefined, 'impersonation headers are not forwarded');
      const post = await t.request('POST', '/api/v1/nodes/n1/proxy/healthz', '', asBob);
      assert.equal(post.status, 403);
      assert.match(post.body.message, /cannot create resource "nodes\/proxy"/);
      const exec = await rawUpgrade(t.base, 'POST', `${podPath}/p1/exec?command=ls&stdout=1`, { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', ...asBob });
      exec.socket.destroy();
      assert.match(exec.head, /^HTTP\/1\.1 101 /);
      const denied = await rawUpgrade(t.base, 'GET', `${podPath}/p1/exec?command=ls&stdout=1`, { Connection: 'Upgrade', Upgrade: 'websocket', ...asBob });
      assert.match(denied.head, /^HTTP\/1\.1 403 /);
      assert.match((await bodyAfter(denied)).message, /cannot get resource "pods\/exec"/);
    } finally {
      await t.close();
      await kubelet.close();
    }
  });
});

describe('node-proxy helpers', () => {
  it('splits scheme:name:port as utilnet.SplitSchemeNamePort', () => {
    assert.deepEqual(splitSchemeNamePort('web'), { scheme: '', name: 'web', port: '' });
    assert.deepEqual(splitSchemeNamePort('web:80'), { scheme: '', name: 'web', port: '80' });
    assert.deepEqual(splitSchemeNamePort('https:web:443'), { scheme: 'https', name: 'web', port: '443' });
    assert.equal(splitSchemeNamePort('ftp:web:21'), undefined);
    assert.equal(splitSchemeNamePort(':80'), undefined);
    assert.equal(splitSchemeNamePort('a:b:c:d'), undefined);
  });
  it('keeps the path after /proxy as sent', () => {
    assert.equal(proxyRestPath('/api/v1/namespaces/ns/pods/p:80/proxy'), '');
    assert.equal(proxyRestPath('/api/v1/namespaces/ns/pods/p/proxy/'), '/');
    assert.equal(proxyRestPath('/api/v1/nodes/n/proxy/a//b/'), '/a//b/');
  });
});
