import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStandardFs, runToCompletion } from '../shell/index.js';
import { NGINX_INDEX_HTML, httpServer, knownPrograms, seedImageFiles, servedPorts, type ServerRequest } from './index.js';

const T0 = Date.UTC(2026, 10, 26, 18, 2, 7);

function get(path: string, extra: Partial<ServerRequest> = {}): ServerRequest {
  const u = new URL(path, 'http://x');
  return { method: 'GET', path: u.pathname, query: u.searchParams, headers: {}, clientIP: '10.244.1.7', ...extra };
}

const NGINX_404 =
  '<html>\r\n<head><title>404 Not Found</title></head>\r\n<body bgcolor="white">\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.14.2</center>\r\n</body>\r\n</html>\r\n';

test('nginx serves its html directory; 403 without index, 404 for missing files', () => {
  const image = 'docker.io/library/nginx:1.14-alpine';
  const fs = createStandardFs({ hostname: 'web-0', now: T0 });
  seedImageFiles(image, fs);
  const argv = ['nginx', '-g', 'daemon off;'];
  assert.deepEqual(servedPorts(argv), [80]);
  const serve = httpServer(argv, { fs, hostname: 'web-0', podIP: '10.244.0.5', env: {}, now: T0 + 5000, image })!;
  const r = serve(get('/'));
  assert.equal(r.status, 200);
  assert.equal(r.body, NGINX_INDEX_HTML);
  assert.deepEqual(r.headers, {
    Server: 'nginx/1.14.2',
    Date: 'Thu, 26 Nov 2026 18:02:12 GMT',
    'Content-Type': 'text/html',
    'Content-Length': '612',
    'Last-Modified': 'Thu, 26 Nov 2026 18:02:07 GMT',
    Connection: 'keep-alive',
    ETag: `"${(T0 / 1000).toString(16)}-264"`,
    'Accept-Ranges': 'bytes',
  });
  const head = serve(get('/index.html', { method: 'HEAD' }));
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers['Content-Length'], '612');
  const nf = serve(get('/nope.html'));
  assert.equal(nf.status, 404);
  assert.equal(nf.body, NGINX_404);
  assert.equal(nf.headers['Content-Length'], String(NGINX_404.length));
  assert.equal(serve(get('/index.html', { method: 'POST' })).status, 405);

  // `mv /usr/share/nginx/html/index.html /tmp/` as kubectl exec would
  const mv = runToCompletion({ argv: ['sh', '-c', 'mv /usr/share/nginx/html/index.html /tmp/'], fs, clock: T0 + 6000 }, 1000);
  assert.equal(mv.exitCode, 0);
  const forbidden = serve(get('/'));
  assert.equal(forbidden.status, 403);
  assert.match(forbidden.body, /<title>403 Forbidden<\/title>/);
  assert.equal(serve(get('/index.html')).status, 404);
  // a directory without a slash redirects
  fs.mkdirp('/usr/share/nginx/html/sub');
  const red = serve(get('/sub', { headers: { host: '10.244.0.5' } }));
  assert.equal(red.status, 301);
  assert.equal(red.headers['Location'], 'http://10.244.0.5/sub/');
});

test('httpd serves htdocs: It works!, 404 with the URL, autoindex', () => {
  const image = 'docker.io/library/httpd:2.4.38-alpine';
  const fs = createStandardFs({ now: T0 });
  seedImageFiles(image, fs);
  const serve = httpServer(['httpd-foreground'], { fs, hostname: 'h', env: {}, now: T0, image })!;
  const r = serve(get('/'));
  assert.equal(r.status, 200);
  assert.equal(r.body, '<html><body><h1>It works!</h1></body></html>\n');
  assert.equal(r.headers['Server'], 'Apache/2.4.38 (Unix)');
  assert.equal(r.headers['Content-Type'], 'text/html');
  const nf = serve(get('/x'));
  assert.equal(nf.status, 404);
  assert.equal(
    nf.body,
    '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n<p>The requested URL /x was not found on this server.</p>\n</body></html>\n',
  );
  fs.remove('/usr/local/apache2/htdocs/index.html');
  const idx = serve(get('/'));
  assert.equal(idx.status, 200);
  assert.match(idx.body, /<title>Index of \/<\/title>/);
});

test('netexec: /echo, /hostname, /, /clientip, /exit, /shell, /dial', () => {
  const fs = createStandardFs({ hostname: 'netserver-0', now: T0 });
  const argv = ['/agnhost', 'netexec', '--http-port=8083', '--udp-port=8081'];
  assert.deepEqual(servedPorts(argv), [8083]);
  let now = T0 + 2500;
  const serve = httpServer(argv, {
    fs,
    hostname: 'netserver-0',
    podIP: '10.244.0.5',
    env: {},
    now: () => now,
    startedAt: T0,
    runShell: (cmd) => {
      const st = runToCompletion({ argv: ['/bin/sh', '-c', cmd], fs, clock: now, hostname: 'netserver-0' }, 5000);
      return { output: st.output.map((c) => c.data).join(''), exitCode: st.exitCode ?? 137 };
    },
    fetch: (ip, port, path) => (ip === '10.244.1.9' && port === 8080 && path === '/hostname' ? { status: 200, body: 'netserver-1' } : { error: 'refused' }),
  })!;
  const echo = serve(get('/echo?msg=hello%20world'));
  assert.equal(echo.status, 200);
  assert.equal(echo.body, 'hello world');
  assert.deepEqual(echo.headers, { 'Content-Type': 'text/plain; charset=utf-8', Date: 'Thu, 26 Nov 2026 18:02:09 GMT', 'Content-Length': '11' });
  assert.equal(serve(get('/echo?msg=x&code=503')).status, 503);
  assert.equal(serve(get('/hostname')).body, 'netserver-0');
  assert.equal(serve(get('/hostName')).body, 'netserver-0');
  assert.equal(serve(get('/')).body, 'NOW: 2026-11-26 18:02:09.5 +0000 UTC m=+2.500000000');
  now = T0 + 3000;
  assert.equal(serve(get('/anything')).body, 'NOW: 2026-11-26 18:02:10 +0000 UTC m=+3.000000000');
  assert.equal(serve(get('/clientip', { clientPort: 51234 })).body, '10.244.1.7:51234');
  const hz = serve(get('/healthz'));
  assert.equal(hz.status, 200);
  assert.equal(hz.body, '');
  assert.deepEqual(serve(get('/exit?code=3')).exit, { code: 3, afterMs: 0, reset: true });
  assert.deepEqual(serve(get('/exit?code=0&timeout=5s&wait=1s')).exit, { code: 0, afterMs: 1000, reset: false });
  assert.equal(serve(get('/shell?cmd=echo%20hi')).body, '{"output":"hi\\n"}');
  assert.equal(serve(get('/shell?cmd=echo%20%22%3Cx%3E%22;%20exit%203')).body, '{"error":"exit status 3","output":"\\u003cx\\u003e\\n"}');
  assert.equal(serve(get('/dial?request=hostname&protocol=http&host=10.244.1.9&port=8080&tries=1')).body, '{"responses":["netserver-1"]}');
  assert.equal(
    serve(get('/dial?request=hostname&protocol=http&host=10.244.1.8&port=8080&tries=2')).body,
    '{"errors":["Get \\"http://10.244.1.8:8080/hostname\\": dial tcp 10.244.1.8:8080: connect: connection refused","Get \\"http://10.244.1.8:8080/hostname\\": dial tcp 10.244.1.8:8080: connect: connection refused"]}',
  );
  const bad = serve(get('/dial?host=1.2.3.4&port=80'));
  assert.equal(bad.status, 400);
  assert.equal(bad.body, 'request parameter not specified. <nil>\n');
  const redirect = serve(get('/redirect?location=/echo%3Fmsg%3Dfoobar&code=307'));
  assert.equal(redirect.status, 307);
  assert.equal(redirect.headers['Location'], '/echo?msg=foobar');
  assert.equal(redirect.body, '<a href="/echo?msg=foobar">Temporary Redirect</a>.\n\n');
});

test('serve-hostname, liveness, test-webserver, porter', () => {
  const fs = createStandardFs({ hostname: 'sh-0', now: T0 });
  const sh = httpServer(['/agnhost', 'serve-hostname'], { fs, hostname: 'sh-0', env: {}, now: T0 })!;
  assert.deepEqual(servedPorts(['/agnhost', 'serve-hostname', '--port=9377']), [9377]);
  assert.equal(servedPorts(['/agnhost', 'serve-hostname', '--udp', '--http=false']).length, 0);
  const r = sh(get('/whatever'));
  assert.equal(r.status, 200);
  assert.equal(r.body, 'sh-0');

  let now = T0 + 5000;
  const live = httpServer(['/agnhost', 'liveness'], { fs, hostname: 'l', env: {}, now: () => now, startedAt: T0 })!;
  assert.deepEqual(servedPorts(['/agnhost', 'liveness']), [8080]);
  assert.deepEqual([live(get('/healthz')).status, live(get('/healthz')).body], [200, 'ok']);
  now = T0 + 10_000;
  assert.equal(live(get('/healthz')).status, 200);
  now = T0 + 10_500;
  assert.deepEqual([live(get('/healthz')).status, live(get('/healthz')).body], [500, 'error: 10.5']);
  assert.equal(live(get('/started')).body, '10.5s');
  assert.equal(live(get('/redirect?loc=%2Fhealthz')).headers['Location'], '/healthz');
  assert.deepEqual([live(get('/x')).status, live(get('/x')).body], [404, '404 page not found\n']);

  const tw = httpServer(['/agnhost', 'test-webserver'], { fs, hostname: 't', env: {}, now: T0 })!;
  assert.deepEqual(servedPorts(['/agnhost', 'test-webserver']), [80]);
  const hosts = tw(get('/etc/hostname'));
  assert.equal(hosts.status, 200);
  assert.equal(hosts.body, 'sh-0\n');
  assert.equal(hosts.headers['Access-Control-Allow-Origin'], '*');
  assert.equal(tw(get('/nope')).status, 404);

  const env = { SERVE_PORT_9080: 'foo', SERVE_PORT_9081: 'bar' };
  const container = { name: 'porter', image: 'agnhost', env: Object.entries(env).map(([name, value]) => ({ name, value })) };
  assert.deepEqual(servedPorts(['/agnhost', 'porter'], container), [9080, 9081]);
  assert.equal(httpServer(['/agnhost', 'porter'], { fs, hostname: 'p', env, now: T0, port: 9081 })!(get('/')).body, 'bar');
  assert.equal(httpServer(['/agnhost', 'porter', '--json-response'], { fs, hostname: 'p', env, now: T0, port: 9080 })!(get('/')).body, '{"Method":"GET","Body":"foo"}');
  assert.equal(httpServer(['/agnhost', 'porter'], { fs, hostname: 'p', env, now: T0, port: 1 }), undefined);
  assert.equal(httpServer(['sleep', '3600'], { fs, hostname: 'p', env, now: T0 }), undefined);
  assert.deepEqual(servedPorts(['/agnhost', 'pause']), []);
});

test('seeded binaries are handed to the programs handler', () => {
  const fs = createStandardFs({ now: T0 });
  seedImageFiles('k8s.gcr.io/e2e-test-images/agnhost:2.21', fs);
  const st = runToCompletion({ argv: ['sh', '-c', 'ls /agnhost && /agnhost entrypoint-tester a b'], fs, clock: T0, external: knownPrograms() }, 1000);
  assert.equal(st.output.map((c) => c.data).join(''), '/agnhost\n[/agnhost entrypoint-tester a b]\n');
});

test('agnhost nettest counts /write contacts and reports them on /read as Go indents JSON', () => {
  const fs = createStandardFs({ now: T0 });
  const argv = ['/agnhost', 'nettest'];
  assert.deepEqual(servedPorts(argv), [8080]);
  const h = httpServer(argv, { fs, hostname: 'server', env: {}, now: T0 })!;
  assert.equal(h({ ...get('/write'), method: 'POST', body: '{"Source": "prestop"}' }).body, '{"Hostname":"server"}\n');
  const read = h(get('/read')).body;
  assert.equal(read, '{\n\t"Hostname": "server",\n\t"Sent": null,\n\t"Received": {\n\t\t"prestop": 1\n\t},\n\t"Errors": null,\n\t"Log": null,\n\t"StillContactingPeers": true\n}');
  assert.deepEqual(JSON.parse(read).Received, { prestop: 1 });
});
