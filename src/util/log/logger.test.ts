import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { newLogger, setLogOutput, setVerbosity, setLogFormat } from './logger.js';

describe('logger', () => {
  let restore: ((l: string) => void) | undefined;
  afterEach(() => {
    if (restore) setLogOutput(restore);
    setVerbosity(0);
    setLogFormat('text');
  });

  it('writes klog-style text lines with structured fields', () => {
    const lines: string[] = [];
    restore = setLogOutput((l) => lines.push(l));
    newLogger('replicaset').info({ key: 'ns/a', n: 3 }, 'synced');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^I\d{4} \d\d:\d\d:\d\d\.\d{6} replicaset\] "synced" key="ns\/a" n=3$/);
  });

  it('hides verbose lines until the verbosity allows them', () => {
    const lines: string[] = [];
    restore = setLogOutput((l) => lines.push(l));
    const log = newLogger('x');
    log.v(4).info('hidden');
    setVerbosity(4);
    log.v(4).info('shown');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /"shown"/);
  });

  it('always writes errors, with the error message, and supports json', () => {
    const lines: string[] = [];
    restore = setLogOutput((l) => lines.push(l));
    setLogFormat('json');
    newLogger('x').child({ controller: 'job' }).v(9).error(new Error('boom'), { key: 'k' }, 'failed');
    const obj = JSON.parse(lines[0]!);
    assert.equal(obj.msg, 'failed');
    assert.equal(obj.err, 'boom');
    assert.equal(obj.controller, 'job');
    assert.equal(obj.severity, 'error');
  });
});
