import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startProcess, runToCompletion } from './process.js';
import { createStandardFs, buildAtomicVolume } from './fs.js';
import { T0, run } from './testutil.js';

const S = 1000;

describe('virtual time', () => {
  it('while true; do date; sleep 1; done advanced 5 s prints 6 stamped lines', () => {
    const p = startProcess({ script: 'while true; do date; sleep 1; done', clock: T0 });
    const st = p.advance(T0 + 5 * S);
    assert.equal(st.state, 'sleeping');
    assert.equal(st.wakeAt, T0 + 6 * S);
    assert.deepEqual(
      st.output.map((c) => [c.atMs - T0, c.data]),
      [0, 1, 2, 3, 4, 5].map((k) => [k * S, `Thu Nov 26 18:02:${String(7 + k).padStart(2, '0')} UTC 2026\n`]),
    );
    // resumes where it stopped
    const st2 = p.advance(T0 + 7 * S);
    assert.deepEqual(st2.output.map((c) => c.atMs - T0), [6 * S, 7 * S]);
  });

  it('a sleep inside a while inside an if inside a function resumes correctly', () => {
    const s = `
      f() {
        if [ -n "$1" ]; then
          i=0
          while [ $i -lt 3 ]; do
            echo "tick $i"
            sleep 10
            i=$((i+1))
          done
          echo "loop done"
        fi
      }
      f go
      echo end
      exit 4`;
    const p = startProcess({ script: s, clock: T0 });
    const a = p.advance(T0 + 15 * S);
    assert.deepEqual(a.output.map((c) => c.data), ['tick 0\n', 'tick 1\n']);
    const b = p.advance(T0 + 100 * S);
    assert.deepEqual(b.output.map((c) => [c.atMs - T0, c.data]), [[20 * S, 'tick 2\n'], [30 * S, 'loop done\nend\n']]);
    assert.equal(b.state, 'exited');
    assert.equal(b.exitCode, 4);
    assert.equal(b.exitedAt, T0 + 30 * S);
  });

  it('the liveness demo: a file exists from 0 s to 10 s', () => {
    const fs = createStandardFs({ hostname: 'p' });
    const p = startProcess({ script: 'echo ok >/tmp/health; sleep 10; rm -rf /tmp/health; sleep 600', clock: T0, fs });
    p.advance(T0 + 9 * S);
    assert.equal(fs.readText('/tmp/health'), 'ok\n');
    const st = p.advance(T0 + 10 * S);
    assert.equal(fs.exists('/tmp/health'), false);
    assert.equal(st.state, 'sleeping');
    assert.equal(st.wakeAt, T0 + 610 * S);
    // an exec probe against the same file system
    assert.equal(runToCompletion({ argv: ['cat', '/tmp/health'], fs, clock: T0 + 10 * S }, 1000).exitCode, 1);
  });

  it('mtimes come from virtual time', () => {
    const fs = createStandardFs();
    startProcess({ script: 'sleep 5; touch /tmp/x', clock: T0, fs }).advance(T0 + 10 * S);
    assert.equal(fs.stat('/tmp/x')?.mtime, T0 + 5 * S);
  });

  it('sleep infinity and unknown programs block forever', () => {
    assert.equal(run('sleep infinity').state, 'forever');
    const r = run('echo start; nginx -g "daemon off;"; echo never');
    assert.equal(r.state, 'forever');
    assert.equal(r.stdout, 'start\n');
    assert.equal(run('tail -f /dev/null').state, 'forever');
  });

  it('a loop without sleep is cut off and reported busy, not hung', () => {
    const p = startProcess({ script: 'while true; do :; done', clock: T0, maxSteps: 1000 });
    assert.equal(p.advance(T0 + S).state, 'busy');
    assert.equal(p.advance(T0 + 2 * S).state, 'busy');
    assert.equal(p.now, T0 + 2 * S);
    // a long but finite loop finishes over several advances
    const q = startProcess({ script: 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; echo $i', clock: T0, maxSteps: 1000 });
    let st = q.advance(T0);
    for (let k = 0; k < 20 && st.state === 'busy'; k++) st = q.advance(T0);
    assert.equal(st.state, 'exited');
    assert.equal(st.output.map((c) => c.data).join(''), '3000\n');
  });

  it('advancing an exited process is a no-op', () => {
    const p = startProcess({ script: 'exit 3', clock: T0 });
    assert.equal(p.advance(T0).exitCode, 3);
    const st = p.advance(T0 + 100 * S);
    assert.deepEqual([st.state, st.exitCode, st.exitedAt, st.output.length], ['exited', 3, T0, 0]);
  });
});

describe('background jobs and wait', () => {
  it('cmd & runs concurrently; wait waits', () => {
    const p = startProcess({ script: '(sleep 2; echo bg) & echo fg; wait; echo after', clock: T0 });
    const st = p.advance(T0 + 10 * S);
    assert.deepEqual(st.output.map((c) => [c.atMs - T0, c.data]), [[0, 'fg\n'], [2 * S, 'bg\nafter\n']]);
    assert.equal(st.exitCode, 0);
  });
  it('a background loop keeps writing while the main shell waits forever', () => {
    const p = startProcess({ script: 'while true; do echo x; sleep 1; done & sleep infinity', clock: T0 });
    const st = p.advance(T0 + 2 * S);
    assert.equal(st.output.map((c) => c.data).join(''), 'x\nx\nx\n');
    assert.equal(st.state, 'sleeping');
  });
  it('the main shell exiting ends background jobs', () => {
    const st = run('sleep 100 & echo $!; exit 0');
    assert.equal(st.state, 'exited');
    assert.equal(st.stdout, '2\n');
  });
  it('wait PID returns its status', () => {
    assert.equal(run('(exit 5) & wait $!; echo $?').stdout, '5\n');
  });
});

describe('signals', () => {
  it('a shell as PID 1 without a trap ignores TERM', () => {
    const p = startProcess({ script: 'sleep 600', clock: T0 });
    const r = p.signal('TERM', T0 + S);
    assert.deepEqual([r.handled, r.ended, r.state], ['ignored', false, 'sleeping']);
    const k = p.kill(T0 + 31 * S);
    assert.deepEqual([k.state, k.exitCode, k.exitedAt], ['exited', 137, T0 + 31 * S]);
  });
  it('trap TERM: recorded, runs at once (interrupting sleep), exit code from the trap', () => {
    const p = startProcess({ script: "trap 'echo bye; exit 0' TERM; echo up; sleep 600", clock: T0 });
    p.advance(T0);
    assert.equal(p.hasTrap('TERM'), true);
    assert.equal(p.hasTrap('SIGTERM'), true);
    assert.equal(p.trapAction('15'), 'echo bye; exit 0');
    const r = p.signal('SIGTERM', T0 + 5 * S);
    assert.deepEqual([r.handled, r.ended, r.exitCode, r.exitedAt], ['trap', true, 0, T0 + 5 * S]);
    assert.deepEqual(r.output.map((c) => c.data), ['bye\n']);
  });
  it('a trap without exit lets the script go on after the interrupted command', () => {
    const p = startProcess({ script: "trap 'echo got' TERM; sleep 600; echo status $?; sleep 5; echo end", clock: T0 });
    const r = p.signal('TERM', T0 + S);
    assert.equal(r.ended, false);
    assert.equal(r.output.map((c) => c.data).join(''), 'got\nstatus 143\n');
    const st = p.advance(T0 + 10 * S);
    assert.deepEqual([st.state, st.exitCode, st.exitedAt], ['exited', 0, T0 + 6 * S]);
  });
  it("trap '' TERM ignores it; trap - TERM resets", () => {
    const p = startProcess({ script: "trap '' TERM; sleep 600", clock: T0 });
    assert.equal(p.signal('TERM', T0).handled, 'ignored');
    assert.equal(p.hasTrap('TERM'), true);
    const q = startProcess({ script: "trap 'exit 1' TERM; trap - TERM; sleep 600", clock: T0 });
    assert.equal(q.signal('TERM', T0).handled, 'ignored');
    assert.equal(q.hasTrap('TERM'), false);
  });
  it('trap EXIT runs at exit', () => {
    assert.equal(run("trap 'echo cleanup' EXIT; echo work; exit 3").stdout, 'work\ncleanup\n');
    assert.equal(run("trap 'echo cleanup' 0; echo work").exitCode, 0);
  });
  it('trap with wait on a background sleep (the graceful pattern)', () => {
    const p = startProcess({ script: "trap 'exit 0' TERM; sleep 600 & wait", clock: T0 });
    const r = p.signal('TERM', T0 + 3 * S);
    assert.deepEqual([r.ended, r.exitCode], [true, 0]);
  });
  it('a trapped signal in a busy loop is handled', () => {
    const p = startProcess({ script: "trap 'exit 9' TERM; while :; do :; done", clock: T0, maxSteps: 500 });
    assert.equal(p.advance(T0).state, 'busy');
    assert.equal(p.signal('TERM', T0 + S).exitCode, 9);
  });
  it('trapInterruptsSleep=false: the trap runs when the sleep ends', () => {
    const p = startProcess({ script: "trap 'echo t; exit 2' TERM; sleep 10; echo no", clock: T0, trapInterruptsSleep: false });
    const r = p.signal('TERM', T0 + S);
    assert.equal(r.ended, false);
    const st = p.advance(T0 + 20 * S);
    assert.deepEqual([st.exitCode, st.exitedAt, st.output.map((c) => c.data).join('')], [2, T0 + 10 * S, 't\n']);
  });
  it('programs run directly: sleep ignores TERM as PID 1, unknown servers exit 0', () => {
    const s = startProcess({ argv: ['sleep', '3600'], clock: T0 });
    assert.equal(s.signal('TERM', T0 + S).handled, 'ignored');
    const n = startProcess({ argv: ['nginx'], clock: T0 });
    const r = n.signal('TERM', T0 + S);
    assert.deepEqual([r.handled, r.exitCode], ['terminated', 0]);
  });
  it('exec makes the program PID 1 and drops traps', () => {
    const p = startProcess({ script: "trap 'exit 7' TERM; echo pre; exec nginx -g 'daemon off;'", clock: T0 });
    assert.equal(p.advance(T0).state, 'forever');
    assert.equal(p.hasTrap('TERM'), false);
    assert.equal(p.signal('TERM', T0 + S).exitCode, 0);
    const q = startProcess({ script: 'exec sleep 5; echo never', clock: T0 });
    const st = q.advance(T0 + 10 * S);
    assert.deepEqual([st.exitCode, st.exitedAt, st.output.length], [0, T0 + 5 * S, 0]);
  });
  it('the external hook decides how a program takes TERM', () => {
    const p = startProcess({ argv: ['server'], clock: T0, external: () => ({ forever: true, stdout: 'listening\n', sigterm: 'exit', sigtermExitCode: 143 }) });
    assert.equal(p.advance(T0).output[0]!.data, 'listening\n');
    assert.equal(p.signal('TERM', T0 + S).exitCode, 143);
  });
  it('not PID 1: an unhandled TERM terminates with 143', () => {
    const p = startProcess({ script: 'sleep 100', clock: T0, pid1: false });
    assert.equal(p.signal('TERM', T0).exitCode, 143);
  });
  it('signalling an exited process reports not-running', () => {
    const p = startProcess({ script: 'true', clock: T0 });
    assert.equal(p.signal('TERM', T0 + S).handled, 'not-running');
  });
});

describe('argv forms and the external hook', () => {
  it('runs sh -c with $0 and args, /bin/sh, bash -c', () => {
    const r = runToCompletion({ argv: ['/bin/sh', '-c', 'echo $0 $1; exit 3', 'zero', 'one'], clock: T0 }, 1000);
    assert.deepEqual([r.stdout, r.exitCode], ['zero one\n', 3]);
    assert.equal(runToCompletion({ argv: ['bash', '-c', 'echo ${BASH:-b}'], clock: T0 }, 1000).stdout, 'b\n');
  });
  it('runs a builtin directly (exec probe) with timeout', () => {
    const fs = createStandardFs();
    fs.writeFile('/tmp/healthy', '');
    assert.equal(runToCompletion({ argv: ['cat', '/tmp/healthy'], fs, clock: T0 }, 1000).exitCode, 0);
    const t = runToCompletion({ argv: ['sleep', '10'], clock: T0 }, 1000);
    assert.deepEqual([t.timedOut, t.state], [true, 'sleeping']);
  });
  it('external results: exit code, output, duration, not found', () => {
    const external = (argv: string[]) =>
      argv[0] === 'agnhost' ? { exitCode: 0, stdout: `agnhost ${argv[1]}\n`, durationMs: 2000 } : argv[0] === 'nope' ? { notFound: true as const } : undefined;
    const r = run('agnhost netexec; echo $?; date +%s; nope; echo $?', { external });
    assert.equal(r.stdout, `agnhost netexec\n0\n${T0 / 1000 + 2}\n127\n`);
    assert.equal(r.stderr, 'sh: nope: not found\n');
  });
  it('the external hook sees argv, env, cwd and stdin', () => {
    let seen: unknown;
    run('cd /tmp; echo data | X=1 prog a b', {
      external: (argv, ctx) => {
        seen = { argv, x: ctx.env['X'], cwd: ctx.cwd, stdin: ctx.stdin };
        return { exitCode: 0 };
      },
    });
    assert.deepEqual(seen, { argv: ['prog', 'a', 'b'], x: '1', cwd: '/tmp', stdin: 'data\n' });
  });
});

describe('conformance scripts', () => {
  it('cat /etc/secret-volume/data-1', () => {
    const fs = createStandardFs();
    fs.mount('/etc/secret-volume', buildAtomicVolume({ 'data-1': { content: 'value-1\n', mode: 0o400 } }, T0), { readOnly: true });
    const r = runToCompletion({ argv: ['sh', '-c', 'cat /etc/secret-volume/data-1'], fs, clock: T0 }, 1000);
    assert.deepEqual([r.stdout, r.exitCode], ['value-1\n', 0]);
  });
  it('env | grep FOO', () => {
    assert.equal(run('env | grep FOO', { env: { FOO: 'foo-value', BAR: 'x' } }).stdout, 'FOO=foo-value\n');
  });
  it('for i in $(seq 1 3); do echo $i; done', () => {
    assert.equal(run('for i in $(seq 1 3); do echo $i; done').stdout, '1\n2\n3\n');
  });
  it('/etc/hostname, /etc/hosts, /etc/resolv.conf from the context', () => {
    const fs = createStandardFs({ hostname: 'web-0', podIP: '10.1.2.3', resolvConf: 'nameserver 10.0.0.10\n' });
    const r = runToCompletion({ script: 'cat /etc/hostname; grep web-0 /etc/hosts; cat /etc/resolv.conf', fs, clock: T0, hostname: 'web-0' }, 1000);
    assert.equal(r.stdout, 'web-0\n10.1.2.3\tweb-0\nnameserver 10.0.0.10\n');
  });
});

describe('more commands on virtual time', () => {
  it('timeout kills a command that blocks past its deadline', () => {
    const r = run('timeout 5 sleep 10; echo $? $(date +%s); timeout 5 sleep 1; echo $?; timeout 2 nginx; echo $?');
    assert.equal(r.stdout, `124 ${T0 / 1000 + 5}\n0\n124\n`);
  });
  it('shell scripts in the file system run (e.g. from a ConfigMap volume)', () => {
    const fs = createStandardFs();
    fs.mkdirp('/scripts');
    fs.writeFile('/scripts/run.sh', '#!/bin/sh\necho "run $1"\nexit 3\n', { mode: 0o755 });
    fs.writeFile('/scripts/noexec.sh', '#!/bin/sh\necho x\n', { mode: 0o644 });
    const r = run('/scripts/run.sh arg; echo $?; /scripts/noexec.sh; echo $?; sh /scripts/noexec.sh', { fs });
    assert.equal(r.stdout, 'run arg\n3\n126\nx\n');
    assert.equal(r.stderr, 'sh: /scripts/noexec.sh: Permission denied\n');
    assert.equal(runToCompletion({ argv: ['/scripts/run.sh', 'direct'], fs, clock: T0 }, 1000).stdout, 'run direct\n');
  });
  it('exec >file redirects the rest of the script', () => {
    const fs = createStandardFs();
    const r = run('echo before; exec >/tmp/log 2>&1; echo after; ls /nope', { fs });
    assert.equal(r.stdout, 'before\n');
    assert.equal(fs.readText('/tmp/log'), 'after\nls: /nope: No such file or directory\n');
  });
  it('$RANDOM is deterministic', () => {
    assert.equal(run('echo $RANDOM $RANDOM').stdout, run('echo $RANDOM $RANDOM').stdout);
    assert.match(run('echo $RANDOM').stdout, /^\d+\n$/);
  });
});

describe('traps at the end of a script', () => {
  it('a signal during the last pipeline is handled before exit', () => {
    const p = startProcess({ script: "trap 'echo bye' TERM; sleep 600 | cat", clock: T0 });
    const r = p.signal('TERM', T0 + S);
    assert.deepEqual([r.ended, r.exitCode, r.output.map((c) => c.data).join('')], [true, 0, 'bye\n']);
  });
});

describe('programs simulated by scripts (external hook `script`)', () => {
  it('runs the script with the program arguments on the same clock, and takes SIGTERM as told', () => {
    const p = startProcess({
      argv: ['/agnhost', 'loop', '3'],
      clock: T0,
      external: (argv) => (argv[0] === '/agnhost' ? { script: 'i=0; while [ $i -lt "$2" ]; do echo "$1 $i $X"; i=$((i+1)); sleep 1; done; sleep infinity', env: { X: 'x' }, sigterm: 'exit', sigtermExitCode: 2 } : undefined),
    });
    const st = p.advance(T0 + 10 * S);
    assert.deepEqual(st.output.map((c) => [c.atMs - T0, c.data]), [[0, 'loop 0 x\n'], [S, 'loop 1 x\n'], [2 * S, 'loop 2 x\n']]);
    assert.equal(st.state, 'forever');
    const r = p.signal('TERM', T0 + 11 * S);
    assert.equal(r.ended, true);
    assert.equal(r.exitCode, 2);
  });
});

describe('a job blocked for good', () => {
  // An image entrypoint as kcm simulates it (`exec "$@"`; as PID 1 it exits 3 on a signal), then a server that runs until stopped.
  const external = (argv: string[]) =>
    argv[0] === '/docker-entrypoint.sh'
      ? { script: 'exec "$@"', arg0: argv[0], args: argv.slice(1), sigterm: 'exit' as const, sigtermExitCode: 3 }
      : argv[0] === 'server'
        ? { forever: true as const, stdout: 'up\n', sigterm: 'exit' as const, sigtermExitCode: 3 }
        : undefined;

  it('a program exec’d by an entrypoint script still takes signals as PID 1', () => {
    const p = startProcess({ argv: ['/docker-entrypoint.sh', 'server'], env: { A: '1' }, clock: T0, external });
    const st = p.advance(T0 + S);
    assert.deepEqual([st.state, st.output.map((c) => c.data)], ['forever', ['up\n']]);
    assert.equal(p.getVar('A'), '1');
    assert.equal(p.hasTrap('TERM'), false);
    assert.deepEqual([p.signal('HUP', T0 + 2 * S).exitCode, p.signal('TERM', T0 + 3 * S).exitCode], [3, 3]);
    const q = startProcess({ argv: ['/docker-entrypoint.sh', 'server'], clock: T0, external });
    q.advance(T0);
    assert.deepEqual([q.signal('WINCH', T0 + S).ended, q.kill(T0 + 2 * S).exitCode], [false, 137]);
  });

  it('background jobs go on while the main one is blocked for good', () => {
    const p = startProcess({ argv: ['sh', '-c', '(sleep 2; echo bg; sleep infinity) & exec server'], clock: T0, external });
    const st = p.advance(T0 + 5 * S);
    assert.deepEqual([st.state, st.output.map((c) => [c.atMs - T0, c.data])], ['forever', [[0, 'up\n'], [2 * S, 'bg\n']]]);
    assert.equal(p.signal('TERM', T0 + 6 * S).exitCode, 3);
  });

  it('a shell blocked on a program keeps its trap, or ignores TERM without one', () => {
    const t = startProcess({ script: "trap 'echo bye; exit 4' TERM; server; echo never", clock: T0, external });
    assert.equal(t.advance(T0).state, 'forever');
    const r = t.signal('TERM', T0 + S);
    assert.deepEqual([r.exitCode, r.output.map((c) => c.data)], [4, ['bye\n']]);
    const u = startProcess({ script: 'server; echo never', clock: T0, external });
    assert.equal(u.advance(T0).state, 'forever');
    assert.deepEqual([u.signal('TERM', T0 + S).handled, u.advance(T0 + 2 * S).state, u.kill(T0 + 3 * S).exitCode], ['ignored', 'forever', 137]);
  });
});
