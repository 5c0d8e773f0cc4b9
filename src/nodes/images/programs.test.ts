import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildAtomicVolume, createStandardFs, runToCompletion, startProcess, updateAtomicVolume } from '../shell/index.js';
import { knownPrograms, seedImageFiles, silentServer } from './index.js';

const T0 = Date.UTC(2026, 10, 26, 18, 2, 7);

function run(argv: string[], o: { fs?: ReturnType<typeof createStandardFs>; ms?: number; fsType?: (p: string) => 'tmpfs' | number | undefined } = {}) {
  const fs = o.fs ?? createStandardFs({ hostname: 'pod-1', now: T0 });
  const st = runToCompletion({ argv, fs, clock: T0, hostname: 'pod-1', external: knownPrograms({ podName: 'pod-1', podIP: '10.244.0.5', hostname: 'pod-1', fsType: o.fsType }) }, o.ms ?? 60_000);
  const stdout = st.output.filter((c) => c.stream === 'stdout').map((c) => c.data).join('');
  const stderr = st.output.filter((c) => c.stream === 'stderr').map((c) => c.data).join('');
  return { ...st, stdout, stderr };
}

test('entrypoint-tester prints os.Args', () => {
  const r = run(['/agnhost', 'entrypoint-tester', 'override', 'arguments']);
  assert.equal(r.stdout, '[/agnhost entrypoint-tester override arguments]\n');
  assert.equal(r.exitCode, 0);
  assert.equal(run(['/agnhost-2', 'entrypoint-tester']).stdout, '[/agnhost-2 entrypoint-tester]\n');
});

test('mounttest on a ConfigMap-like atomic volume', () => {
  const fs = createStandardFs({ hostname: 'pod-1', now: T0 });
  fs.mount('/etc/configmap-volume', buildAtomicVolume({ 'data-1': { content: 'value-1' }, 'path/to/data-2': { content: 'value-2', mode: 0o400 } }, T0), { readOnly: true });
  const r = run(['/agnhost', 'mounttest', '--file_content=/etc/configmap-volume/data-1', '--file_mode=/etc/configmap-volume/path/to/data-2', '--file_perm=/etc/configmap-volume/data-1'], { fs });
  assert.equal(
    r.stdout,
    'mode of file "/etc/configmap-volume/path/to/data-2": -r--------\n' + 'perms of file "/etc/configmap-volume/data-1": -rw-r--r--\n' + 'content of file "/etc/configmap-volume/data-1": value-1\n',
  );
  assert.equal(r.exitCode, 0);
  // --file_owner, missing file
  const o = run(['agnhost', 'mounttest', '--file_owner', '/etc/configmap-volume/data-1', '--file_content=/nope'], { fs });
  assert.equal(o.stdout, 'owner UID of "/etc/configmap-volume/data-1": 0\nowner GID of "/etc/configmap-volume/data-1": 0\nerror reading file content for "/nope": open /nope: no such file or directory\n');
  assert.equal(o.exitCode, 1);
  // new file on a read-only volume
  const ro = run(['/agnhost', 'mounttest', '--new_file_0644=/etc/configmap-volume/x'], { fs });
  assert.equal(ro.stdout, 'error writing new file "/etc/configmap-volume/x": open /etc/configmap-volume/x: read-only file system\n');
  assert.equal(ro.exitCode, 1);
});

test('mounttest emptyDir: fs type, new file perms, directory mode with sticky/setgid', () => {
  const fs = createStandardFs({ hostname: 'pod-1', now: T0 });
  fs.mkdirp('/test-volume');
  fs.chmod('/test-volume', 0o3777);
  const r = run(['/agnhost', 'mounttest', '--fs_type=/test-volume', '--new_file_0660=/test-volume/test-file', '--file_perm=/test-volume/test-file'], {
    fs,
    fsType: (p) => (p === '/test-volume' ? 'tmpfs' : undefined),
  });
  assert.equal(
    r.stdout,
    'mount type of "/test-volume": tmpfs\n' + 'content of file "/test-volume/test-file": mount-tester new file\n\n' + 'perms of file "/test-volume/test-file": -rw-rw----\n',
  );
  const m = run(['/agnhost', 'mounttest', '--fs_type=/tmp', '--file_mode=/test-volume', '--file_perm=/test-volume', '--file_mode=/test-volume'], { fs });
  assert.equal(m.stdout, 'mount type of "/tmp": 61267\nmode of file "/test-volume": dgtrwxrwxrwx\nperms of file "/test-volume": -rwxrwxrwx\n');
  const bad = run(['/agnhost', 'mounttest', '--bogus=1']);
  assert.equal(bad.stderr, 'Error: unknown flag: --bogus\n');
  assert.equal(bad.exitCode, 1);
});

test('mounttest --file_content_in_loop sees a volume update on virtual time', () => {
  const fs = createStandardFs({ hostname: 'pod-1', now: T0 });
  const vol = buildAtomicVolume({ 'data-1': { content: 'value-1' } }, T0);
  fs.mount('/etc/cm', vol, { readOnly: true });
  const p = startProcess({
    argv: ['/agnhost', 'mounttest', '--break_on_expected_content=false', '--retry_time=120', '--file_content_in_loop=/etc/cm/data-1'],
    fs,
    clock: T0,
    hostname: 'pod-1',
    external: knownPrograms({ hostname: 'pod-1' }),
  });
  const a = p.advance(T0 + 3000);
  assert.equal(a.state, 'sleeping');
  assert.deepEqual(
    a.output.map((c) => [c.data, c.atMs - T0]),
    [
      ['content of file "/etc/cm/data-1": value-1\n', 0],
      ['content of file "/etc/cm/data-1": value-1\n', 2000],
    ],
  );
  updateAtomicVolume(vol, { 'data-1': { content: 'value-2' } }, T0 + 3500);
  const b = p.advance(T0 + 5000);
  assert.deepEqual(b.output.map((c) => c.data), ['content of file "/etc/cm/data-1": value-2\n']);
  assert.equal(b.output[0]!.atMs, T0 + 4000);
  const end = p.advance(T0 + 200_000);
  assert.equal(end.state, 'exited');
  assert.equal(end.exitCode, 0);
  assert.equal(end.exitedAt, T0 + 120_000);
  assert.equal(end.output.length, 57); // reads at 6 s .. 118 s
});

test('mounttest loop breaks on the expected content, reports read errors', () => {
  const fs = createStandardFs({ hostname: 'pod-1', now: T0 });
  fs.mkdirp('/vol');
  const p = startProcess({ argv: ['/agnhost', 'mounttest', '--file_content_in_loop=/vol/f', '--retry_time=10'], fs, clock: T0, external: knownPrograms() });
  const a = p.advance(T0 + 1000);
  assert.equal(a.output.map((c) => c.data).join(''), 'Error reading file /vol/f: open /vol/f: no such file or directory, retrying\n');
  fs.now = T0 + 1500;
  fs.writeFile('/vol/f', 'other');
  const b = p.advance(T0 + 3000);
  assert.equal(b.output.map((c) => c.data).join(''), 'content of file "/vol/f": other\nUnexpected content. Expected: mount-tester new file\n. Retrying');
  fs.writeFile('/vol/f', 'mount-tester new file\n');
  const c = p.advance(T0 + 60_000);
  assert.equal(c.output.map((x) => x.data).join(''), 'content of file "/vol/f": mount-tester new file\n\n');
  assert.equal(c.exitCode, 0);
  assert.equal(c.exitedAt, T0 + 4000);
  // never appears: exit 1 after the retry time
  const q = startProcess({ argv: ['/agnhost', 'mounttest', '--file_content_in_loop=/vol/none', '--retry_time=5'], fs, clock: T0, external: knownPrograms() });
  const end = q.advance(T0 + 60_000);
  assert.equal(end.output.length, 3);
  assert.equal(end.exitCode, 1);
  assert.equal(end.exitedAt, T0 + 6000);
});

test('agnhost pause, netexec, serve-hostname, dns-suffix, unknown subcommand', () => {
  const ext = knownPrograms({ hostname: 'pod-1' });
  const start = (argv: string[]) => startProcess({ argv, clock: T0, hostname: 'pod-1', external: ext });
  const pause = start(['/agnhost', 'pause']);
  assert.deepEqual(pause.advance(T0 + 1000).output.map((c) => c.data), ['Paused\n']);
  const t = pause.signal('TERM', T0 + 2000);
  assert.equal(t.exitCode, 2);

  const net = start(['/agnhost', 'netexec', '--http-port=8080', '--udp-port=8081']);
  const s = net.advance(T0 + 1000);
  assert.equal(s.state, 'forever');
  assert.equal(s.output.map((c) => c.data).join(''), '2026/11/26 18:02:07 Started HTTP server on port 8080\n2026/11/26 18:02:07 Started UDP server on port 8081\n');
  assert.equal(net.signal('TERM', T0 + 2000).exitCode, 2);

  const sh = start(['/agnhost', 'serve-hostname']);
  assert.equal(sh.advance(T0 + 1000).output.map((c) => c.data).join(''), '2026/11/26 18:02:07 Serving on port 9376.\n');
  assert.equal(sh.signal('TERM', T0 + 2000).handled, 'ignored');
  const udp = run(['/agnhost', 'serve-hostname', '--udp']);
  assert.equal(udp.exitCode, 1);
  assert.equal(udp.stderr, "2026/11/26 18:02:07 Can't server TCP/UDP mode and HTTP mode at the same time\n");
  assert.equal(start(['/agnhost', 'serve-hostname', '--udp', '--http=false', '--port', '12345']).advance(T0 + 1000).state, 'forever');

  assert.equal(run(['/agnhost', 'dns-suffix']).stdout, 'default.svc.cluster.local,svc.cluster.local,cluster.local\n');
  assert.equal(run(['/agnhost', 'dns-server-list']).stdout, '10.96.0.10\n');
  const bogus = run(['/agnhost', 'bogus']);
  assert.equal(bogus.stderr, 'Error: unknown command "bogus" for "agnhost"\nRun \'agnhost --help\' for usage.\n');
  assert.equal(bogus.exitCode, 1);
  assert.equal(knownPrograms()(['/agnhost', 'webhook'], { cwd: '/', env: {}, fs: createStandardFs(), now: T0, stdin: '', hostname: 'x' }), undefined);
  assert.equal(knownPrograms()(['mystery'], { cwd: '/', env: {}, fs: createStandardFs(), now: T0, stdin: '', hostname: 'x' }), undefined);
});

test('nginx, httpd, pause and entrypoint scripts as container commands', () => {
  const ext = knownPrograms({ image: 'docker.io/library/nginx:1.14-alpine' });
  const ng = startProcess({ argv: ['nginx', '-g', 'daemon off;'], clock: T0, external: ext });
  assert.equal(ng.advance(T0 + 1000).state, 'forever');
  assert.equal(ng.signal('TERM', T0 + 2000).exitCode, 0);
  assert.equal(run(['/usr/sbin/nginx']).exitCode, 0); // daemonizes
  const v = runToCompletion({ argv: ['nginx', '-v'], clock: T0, external: ext }, 1000);
  assert.deepEqual(v.output.map((c) => c.data), ['nginx version: nginx/1.14.2\n']);
  const dep = startProcess({ argv: ['/docker-entrypoint.sh', 'nginx', '-g', 'daemon off;'], clock: T0, external: ext });
  assert.equal(dep.advance(T0 + 1000).state, 'forever');
  assert.equal(dep.signal('TERM', T0 + 2000).exitCode, 0);

  // httpd-foreground seeded as a binary stub
  const fs = createStandardFs({ now: T0 });
  seedImageFiles('httpd:2.4.38-alpine', fs);
  const h = startProcess({ argv: ['/usr/local/bin/httpd-foreground'], fs, clock: T0, external: knownPrograms() });
  assert.equal(h.advance(T0 + 1000).state, 'forever');
  assert.equal(h.signal('TERM', T0 + 2000).exitCode, 0);
  const h2 = startProcess({ argv: ['httpd-foreground'], clock: T0, external: knownPrograms() });
  assert.equal(h2.advance(T0 + 1000).state, 'forever');

  const fsP = createStandardFs({ now: T0 });
  seedImageFiles('k8s.gcr.io/pause:3.2', fsP);
  const pz = startProcess({ argv: ['/pause'], fs: fsP, clock: T0, external: knownPrograms() });
  assert.equal(pz.advance(T0 + 1000).state, 'forever');
  assert.equal(pz.signal('TERM', T0 + 2000).exitCode, 0);
});

test('agnhost logs-generator prints its lines as klog over the run duration', () => {
  const p = startProcess({ argv: ['/agnhost', 'logs-generator', '--log-lines-total', '100', '--run-duration', '20s'], clock: T0, external: knownPrograms({ podName: 'logs-generator' }) });
  const st = p.advance(T0 + 30_000);
  assert.equal(st.state, 'exited');
  const lines = st.output.map((c) => c.data);
  assert.equal(lines.length, 100);
  assert.ok(st.output.every((c) => c.stream === 'stderr'));
  assert.match(lines[0]!, /^I1126 18:02:07\.000000 {7}1 logs_generator\.go:76\] 0 (GET|POST|PUT) \/api\/v1\/namespaces\/kube-system\/pods\/\w{3,4} \d{3}\n$/);
  assert.equal(st.output[99]!.atMs - T0, 99 * 200);
});

describe('silentServer', () => {
  it('knows the servers that block at once without output, through docker-entrypoint.sh', () => {
    assert.equal(silentServer(['/docker-entrypoint.sh', 'nginx', '-g', 'daemon off;'], 'nginx'), true);
    assert.equal(silentServer(['nginx', '-g', 'daemon off;'], 'nginx:1.14-alpine'), true);
    assert.equal(silentServer(['httpd-foreground'], 'httpd:2.4'), true);
    assert.equal(silentServer(['/pause'], 'k8s.gcr.io/pause:3.2'), true);
    assert.equal(silentServer(['nginx'], 'nginx'), false, 'without daemon off; it daemonizes and exits');
    assert.equal(silentServer(['nginx', '-v'], 'nginx'), false);
    assert.equal(silentServer(['/docker-entrypoint.sh'], 'nginx'), false);
    assert.equal(silentServer(['sleep', '3600'], 'busybox'), false);
    assert.equal(silentServer(['/agnhost', 'netexec'], 'agnhost:2.21'), false);
    assert.equal(silentServer([], 'nginx'), false);
  });
});
