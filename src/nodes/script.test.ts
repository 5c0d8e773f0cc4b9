import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileExists, fileTimeline, parseScript, runExec, sigtermBehaviour } from './script.js';

describe('fileTimeline', () => {
  it('reads the classic liveness demo: /tmp/healthy exists from 0 s to 30 s', () => {
    const files = fileTimeline(['/bin/sh', '-c', 'touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600'], undefined);
    assert.deepEqual(files, [
      { atMs: 0, path: '/tmp/healthy', exists: true },
      { atMs: 30_000, path: '/tmp/healthy', exists: false },
    ]);
    assert.equal(fileExists(files, '/tmp/healthy', 29_999), true);
    assert.equal(fileExists(files, '/tmp/healthy', 30_000), false);
  });

  it('follows redirections, mkdir, mv and cp, timed by the sleeps before them', () => {
    const files = fileTimeline(['sh', '-c'], ['sleep 5; echo ok > /tmp/ready; mkdir -p /data/x; sleep 2; mv /tmp/ready /tmp/done; cp /etc/hosts /tmp/h; sleep infinity']);
    assert.equal(fileExists(files, '/tmp/ready', 4_999), false);
    assert.equal(fileExists(files, '/tmp/ready', 5_000), true);
    assert.equal(fileExists(files, '/data/x', 5_000), true);
    assert.equal(fileExists(files, '/tmp/ready', 7_000), false);
    assert.equal(fileExists(files, '/tmp/done', 7_000), true);
    assert.equal(fileExists(files, '/tmp/h', 7_000), true);
  });

  it('treats a file the script never creates as missing, except files every container has and mount points', () => {
    assert.equal(fileExists([], '/tmp/healthy', 0), false);
    assert.equal(fileExists([], '/etc/hostname', 0), true);
    assert.equal(fileExists([], '/config/app.yaml', 0, ['/config']), true);
  });

  it('keeps the existing Program API', () => {
    assert.deepEqual(parseScript(['sh', '-c', 'sleep 2; exit 1'], undefined).program, { kind: 'exits', afterMs: 2000, exitCode: 1 });
  });
});

describe('sigtermBehaviour', () => {
  it('has sleep and shell scripts (PID 1 without a handler) ignore SIGTERM', () => {
    assert.deepEqual(sigtermBehaviour(['sleep', '3600'], undefined), { kind: 'ignore' });
    assert.deepEqual(sigtermBehaviour(['sh', '-c', 'sleep 3600'], undefined), { kind: 'ignore' });
    assert.deepEqual(sigtermBehaviour(undefined, ['/bin/sh', '-c', 'while true; do sleep 1; done']), { kind: 'ignore' });
  });

  it('has servers, unknown programs and image entrypoints end at once with 0', () => {
    assert.deepEqual(sigtermBehaviour(['nginx', '-g', 'daemon off;'], undefined), { kind: 'exit', exitCode: 0 });
    assert.deepEqual(sigtermBehaviour(['/app/server'], undefined), { kind: 'exit', exitCode: 0 });
    assert.deepEqual(sigtermBehaviour(undefined, undefined), { kind: 'exit', exitCode: 0 });
    assert.deepEqual(sigtermBehaviour(['sh', '-c', 'exec nginx'], undefined), { kind: 'exit', exitCode: 0 });
  });

  it('has a script with a TERM trap end at once with the trap exit code', () => {
    assert.deepEqual(sigtermBehaviour(['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"], undefined), { kind: 'exit', exitCode: 0 });
    assert.deepEqual(sigtermBehaviour(['sh', '-c', 'trap "echo bye" SIGTERM; sleep 3600'], undefined), { kind: 'exit', exitCode: 143 });
  });
});

describe('runExec', () => {
  const present = (p: string) => p === '/tmp/ok';
  it('runs true, false, exit N and their combinations', () => {
    assert.equal(runExec(['true'], present).exitCode, 0);
    assert.equal(runExec(['false'], present).exitCode, 1);
    assert.equal(runExec(['sh', '-c', 'exit 0'], present).exitCode, 0);
    assert.equal(runExec(['sh', '-c', 'exit 1'], present).exitCode, 1);
    assert.equal(runExec(['sh', '-c', 'false || true'], present).exitCode, 0);
    assert.equal(runExec(['sh', '-c', 'true && false'], present).exitCode, 1);
    assert.equal(runExec(['sh', '-c', '! test -f /tmp/ok'], present).exitCode, 1);
  });

  it('checks files with cat, ls, test and [ with busybox error texts', () => {
    assert.deepEqual(runExec(['cat', '/tmp/healthy'], present), { exitCode: 1, output: "cat: can't open '/tmp/healthy': No such file or directory\n", durationMs: 0 });
    assert.equal(runExec(['cat', '/tmp/ok'], present).exitCode, 0);
    assert.equal(runExec(['ls', '/tmp/nope'], present).output, 'ls: /tmp/nope: No such file or directory\n');
    assert.equal(runExec(['test', '-f', '/tmp/ok'], present).exitCode, 0);
    assert.equal(runExec(['sh', '-c', '[ -e /tmp/nope ]'], present).exitCode, 1);
  });

  it('adds up sleeps as the duration', () => {
    assert.equal(runExec(['sh', '-c', 'sleep 3; echo done'], present).durationMs, 3000);
    assert.equal(runExec(['sleep', '5'], present).durationMs, 5000);
  });
});
