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
  it('parses GNU sleep durations', () => {
    assert.equal(parseSleepArg('10'), 10_000);
    assert.equal(parseSleepArg('1h'), 3_600_000);
    assert.equal(parseSleepArg('abc'), undefined);
  });
});
