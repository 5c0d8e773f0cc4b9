import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ContainerLog, defaultSpawn, fallbackPrograms, formatLogTime, piDigits, toLines } from './container-process.js';
import { runtimeHarness, runtimePod as pod } from './runtime-harness.js';
import { FakeClock } from '../util/clock/clock.js';
import { PodRuntime } from './pod-runtime.js';
import { newRestartBackoff } from './restart-backoff.js';

const T0 = Date.UTC(2026, 10, 26, 18, 2, 7);

describe('ContainerLog', () => {
  it('reads lines with timestamps, since a time, the last N and at most N bytes', () => {
    const log = new ContainerLog();
    log.append([
      { stream: 'stdout', data: 'one\ntw', atMs: T0 },
      { stream: 'stderr', data: 'err\n', atMs: T0 + 500 },
      { stream: 'stdout', data: 'o\nthree\n', atMs: T0 + 1000 },
    ]);
    assert.equal(log.read(), 'one\ntwo\nerr\nthree\n');
    assert.deepEqual(toLines(log.chunks).map((l) => [l.stream, l.text]), [['stdout', 'one\n'], ['stdout', 'two\n'], ['stderr', 'err\n'], ['stdout', 'three\n']]);
    assert.equal(log.read({ tailLines: 1 }), 'three\n');
    assert.equal(log.read({ sinceMs: T0 + 500 }), 'err\nthree\n');
    assert.equal(log.read({ timestamps: true, tailLines: 1 }), '2026-11-26T18:02:08.000000000Z three\n');
    assert.equal(log.read({ limitBytes: 5 }), 'one\nt');
    assert.equal(formatLogTime(T0 + 7), '2026-11-26T18:02:07.007000000Z');
  });

  it('follows until the instance ends', () => {
    const log = new ContainerLog();
    const seen: string[] = [];
    let ended = false;
    log.follow((c) => seen.push(c.data), () => (ended = true));
    log.append([{ stream: 'stdout', data: 'a\n', atMs: T0 }]);
    log.end();
    log.append([{ stream: 'stdout', data: 'b\n', atMs: T0 }]);
    assert.deepEqual(seen, ['a\n']);
    assert.equal(ended, true);
  });
});

describe('ContainerRun', () => {
  it('runs the command on the clock: output is the log, the script ends with its exit code', () => {
    const run = defaultSpawn({ name: 'c', command: ['sh', '-c', 'echo start; sleep 2; echo done >&2; exit 3'] }, T0);
    assert.deepEqual(run.advance(T0), { wakeAt: T0 + 2000 });
    assert.deepEqual(run.advance(T0 + 2000), { exited: { code: 3, at: T0 + 2000 } });
    assert.equal(run.log.read({ timestamps: true }), '2026-11-26T18:02:07.000000000Z start\n2026-11-26T18:02:09.000000000Z done\n');
  });

  it('a container without a command runs until stopped and exits 0 on SIGTERM; sleep as PID 1 ignores it', () => {
    const server = defaultSpawn({ name: 'web', image: 'nginx' }, T0);
    assert.deepEqual(server.advance(T0 + 60_000), {});
    assert.deepEqual(server.term(T0 + 61_000), { code: 0, at: T0 + 61_000 });
    const sleeper = defaultSpawn({ name: 's', command: ['sleep', '3600'] }, T0);
    assert.equal(sleeper.term(T0 + 1000), undefined);
    assert.deepEqual(sleeper.kill(T0 + 31_000), { code: 137, at: T0 + 31_000 });
  });

  it('exec sees the files the main process wrote by then, and times out', () => {
    const run = defaultSpawn({ name: 'c', command: ['sh', '-c', 'touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600'] }, T0);
    assert.equal(run.exec(['cat', '/tmp/healthy'], T0 + 10_000, 1000).exitCode, 0);
    const gone = run.exec(['cat', '/tmp/healthy'], T0 + 31_000, 1000);
    assert.equal(gone.exitCode, 1);
    assert.equal(gone.output, "cat: can't open '/tmp/healthy': No such file or directory\n");
    const slow = run.exec(['sh', '-c', 'sleep 5'], T0 + 40_000, 1000);
    assert.equal(slow.timedOut, true);
  });
});

describe('fallback programs', () => {
  it('perl bpi prints pi as Perl bignum does; one-shot tools exit 0; servers run', () => {
    assert.equal(piDigits(10), '3.141592654');
    assert.equal(piDigits(50), '3.1415926535897932384626433832795028841971693993751');
    assert.deepEqual(fallbackPrograms(['perl', '-Mbignum=bpi', '-wle', 'print bpi(5)'], undefined as never), { exitCode: 0, stdout: '3.1416\n' });
    assert.deepEqual(fallbackPrograms(['find', '/'], undefined as never), { exitCode: 0 });
    assert.equal(fallbackPrograms(['python3', '-m', 'http.server'], undefined as never), undefined);
    assert.equal(fallbackPrograms(['redis-server'], undefined as never), undefined);
  });
});

describe('PodRuntime with the shell', () => {
  it('a script that tests a file exits 1 when it is missing (a Job container), with its output as the log', async () => {
    const h = runtimeHarness(pod([{ name: 'c', image: 'busybox', command: ['sh', '-c', 'echo checking; if [[ -r /data/foo ]]; then exit 0; else exit 1; fi'] }], { restartPolicy: 'Never' }));
    await h.at(2);
    assert.equal(h.state('c').terminated!.exitCode, 1);
    assert.equal(h.status().phase, 'Failed');
    assert.equal(h.rt.containers[0]!.log!.read(), 'checking\n');
  });

  it('a restarted container keeps the previous instance log', async () => {
    const h = runtimeHarness(pod([{ name: 'c', image: 'busybox', command: ['sh', '-c', 'date +%s; sleep 1; exit 2'] }]));
    await h.at(5);
    const c = h.rt.containers[0]!;
    assert.ok(c.restartCount >= 1);
    assert.match(c.previousLog!.read(), /^\d+\n$/);
    assert.notEqual(c.previousLog, c.log);
  });
});

describe('termination messages and HTTP through the network', () => {
  it('reads terminationMessagePath, or the log tail with FallbackToLogsOnError on failure', async () => {
    const h = runtimeHarness(
      pod(
        [
          { name: 'file', image: 'busybox', command: ['sh', '-c', 'printf DONE > /dev/termination-log'] },
          { name: 'custom', image: 'busybox', command: ['sh', '-c', 'echo -n custom > /tmp/msg/log'], terminationMessagePath: '/tmp/msg/log' },
          { name: 'logs', image: 'busybox', command: ['sh', '-c', 'echo one; echo two; exit 1'], terminationMessagePolicy: 'FallbackToLogsOnError' },
          { name: 'quiet', image: 'busybox', command: ['sh', '-c', 'echo three; exit 1'] },
        ],
        { restartPolicy: 'Never' },
      ),
    );
    await h.at(2);
    assert.equal(h.state('file').terminated!.message, 'DONE');
    assert.equal(h.state('custom').terminated!.message, 'custom');
    assert.equal(h.state('logs').terminated!.message, 'one\ntwo\n');
    assert.equal(h.state('quiet').terminated!.message, undefined);
  });
});

describe('mini awk', () => {
  it('prints columns of files and stdin, with -F and a pattern', () => {
    const run = defaultSpawn({ name: 'c', command: ['sh', '-c', 'echo hello >> /tmp/f; echo hello >> /tmp/f; wc -l /tmp/f | awk {\'print $1\'}; echo "a:b:c" | awk -F: \'{print $3, $1}\'; printf "x 1\\ny 2\\n" | awk \'/y/ {print $NF}\''] }, T0);
    assert.ok(run.advance(T0).exited);
    assert.equal(run.log.read(), '2\nc a\n2\n');
  });
});

describe('container configuration errors', () => {
  it('a spawn error leaves the container waiting with CreateContainerConfigError, retried after 10 s or on a pod update', async () => {
    let broken = true;
    const clock = new FakeClock();
    const events: string[] = [];
    const p = pod([{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }]);
    const rt = new PodRuntime(p, clock.now(), {
      backoff: newRestartBackoff({ clock }),
      emit: (type, reason, message) => events.push(`${type} ${reason} ${message}`),
      spawn: (c, _pod, now) => (broken ? { error: 'configmap "cfg" not found' } : defaultSpawn(c.spec, now)),
    });
    let r = rt.step(clock.now());
    assert.deepEqual(rt.containers[0]!.state, { kind: 'waiting', reason: 'CreateContainerConfigError', message: 'configmap "cfg" not found' });
    assert.ok(events.includes('Warning Failed Error: configmap "cfg" not found'));
    assert.equal(r.nextAt, clock.now() + 10_000);
    const count = events.length;
    rt.step(clock.now() + 5000);
    assert.equal(events.length, count, 'no retry before 10 s');
    broken = false;
    rt.updatePod({ ...p });
    r = rt.step(clock.now() + 6000);
    assert.equal(rt.containers[0]!.state.kind, 'running');
    assert.equal(rt.containers[0]!.restartCount, 0);
  });
});

describe('exec of programs kcm does not know', () => {
  it('end at once with 0 (a probe of pg_isready passes), while the main process would run until stopped', () => {
    const run = defaultSpawn({ name: 'db', command: ['postgres'] }, T0);
    assert.deepEqual(run.advance(T0 + 60_000), {});
    const r = run.exec(['sh', '-c', 'pg_isready -h localhost && echo ok'], T0 + 60_000, 1000);
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, 'ok\n');
  });
});
