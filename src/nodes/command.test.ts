import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseProgram, parseSleepArg } from './command.js';

describe('parseProgram', () => {
  it('runs forever without a command', () => {
    assert.deepEqual(parseProgram(undefined, undefined), { kind: 'forever' });
    assert.deepEqual(parseProgram(['nginx', '-g', 'daemon off;'], undefined), { kind: 'forever' });
  });
  it('reads sleep N as running N seconds then exiting 0', () => {
    assert.deepEqual(parseProgram(['sleep', '30'], undefined), { kind: 'exits', afterMs: 30_000, exitCode: 0 });
    assert.deepEqual(parseProgram(['sleep'], ['1.5']), { kind: 'exits', afterMs: 1500, exitCode: 0 });
    assert.deepEqual(parseProgram(['/bin/sleep', '2m'], undefined), { kind: 'exits', afterMs: 120_000, exitCode: 0 });
  });
  it('combines sleeps and the first exit of a shell script', () => {
    assert.deepEqual(parseProgram(['sh', '-c', 'sleep 2; exit 1'], undefined), { kind: 'exits', afterMs: 2000, exitCode: 1 });
    assert.deepEqual(parseProgram(['sh', '-c'], ['sleep 1 && sleep 2; exit 3; sleep 100']), { kind: 'exits', afterMs: 3000, exitCode: 3 });
    assert.deepEqual(parseProgram(['sh', '-c', 'exit 0'], undefined), { kind: 'exits', afterMs: 0, exitCode: 0 });
  });
  it('reads true and false as immediate exits', () => {
    assert.deepEqual(parseProgram(['true'], undefined), { kind: 'exits', afterMs: 0, exitCode: 0 });
    assert.deepEqual(parseProgram(['sh', '-c', 'false'], undefined), { kind: 'exits', afterMs: 0, exitCode: 1 });
  });
  it('treats sleep infinity and loops as running until stopped', () => {
    assert.deepEqual(parseProgram(['sleep', 'infinity'], undefined), { kind: 'forever' });
    assert.deepEqual(parseProgram(['sh', '-c', 'while true; do sleep 5; done'], undefined), { kind: 'forever' });
  });
  it('reads one-shot tools and scripts without sleeps as exiting at once, as the docs examples do', () => {
    const done = { kind: 'exits', afterMs: 0, exitCode: 0 };
    assert.deepEqual(parseProgram(['echo', 'Hello World'], undefined), done);
    assert.deepEqual(parseProgram(undefined, ['date']), done);
    assert.deepEqual(parseProgram(['perl', '-Mbignum=bpi', '-wle', 'print bpi(2000)'], undefined), done);
    assert.deepEqual(parseProgram(['/bin/sh', '-c', 'date; echo Hello from the Kubernetes cluster'], undefined), done);
    assert.deepEqual(parseProgram(['sh', '-c', 'echo hi'], undefined), done);
    assert.deepEqual(parseProgram(['bash', '-ec', 'echo start; sleep 1'], undefined), { kind: 'exits', afterMs: 1000, exitCode: 0 });
    assert.deepEqual(parseProgram(['python3', '-c', 'print(1)'], undefined), done);
  });
  it('ends a script with the status of its last command', () => {
    assert.deepEqual(parseProgram(['sh', '-c', 'echo x; false'], undefined), { kind: 'exits', afterMs: 0, exitCode: 1 });
    assert.deepEqual(parseProgram(['sh', '-c', 'false; exit'], undefined), { kind: 'exits', afterMs: 0, exitCode: 1 });
    assert.deepEqual(parseProgram(['sh', '-c', 'if [ -f /x ]; then exit 4; fi'], undefined), { kind: 'exits', afterMs: 0, exitCode: 4 });
  });
  it('treats servers, tail -f and unknown programs run directly as running until stopped', () => {
    assert.deepEqual(parseProgram(['sh', '-c', 'echo starting; exec nginx -g "daemon off;"'], undefined), { kind: 'forever' });
    assert.deepEqual(parseProgram(['sh', '-c', 'touch /tmp/x; tail -f /dev/null'], undefined), { kind: 'forever' });
    assert.deepEqual(parseProgram(['sh', '-c', 'nc -lk -p 8080'], undefined), { kind: 'forever' });
    assert.deepEqual(parseProgram(['ping', 'example.com'], undefined), { kind: 'forever' });
    assert.deepEqual(parseProgram(undefined, ['netexec', '--http-port=8080']), { kind: 'forever' });
    assert.deepEqual(parseProgram(['/app/server'], ['--port', '80']), { kind: 'forever' });
    assert.deepEqual(parseProgram(['sh', '-c', 'echo starting; /app/server --port 80'], undefined), { kind: 'forever' });
    assert.deepEqual(parseProgram(['sh', '-c', 'python app.py'], undefined), { kind: 'forever' });
  });
  it('lets builtins, assignments and closing keywords end a script', () => {
    const done = { kind: 'exits', afterMs: 0, exitCode: 0 };
    assert.deepEqual(parseProgram(['sh', '-c', 'set -e; X=1; export X; cd /tmp; echo $X'], undefined), done);
    assert.deepEqual(parseProgram(['sh', '-c', 'python -c "print(1)"; echo done'], undefined), done);
  });
  it('parses GNU sleep durations', () => {
    assert.equal(parseSleepArg('10'), 10_000);
    assert.equal(parseSleepArg('1h'), 3_600_000);
    assert.equal(parseSleepArg('abc'), undefined);
  });
});
