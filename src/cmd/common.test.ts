import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandLine, reportFlagError } from './common.js';
import { FlagError, type FlagSpec } from './flags.js';

const spec = {
  name: { type: 'string', default: 'x', usage: 'A name.' },
} as const satisfies FlagSpec;

/** Runs `fn` with stdout and stderr captured. */
function captured<T>(fn: () => T): { result: T; out: string; err: string } {
  let out = '';
  let err = '';
  const w1 = process.stdout.write;
  const w2 = process.stderr.write;
  process.stdout.write = ((s: string) => ((out += s), true)) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => ((err += s), true)) as typeof process.stderr.write;
  try {
    return { result: fn(), out, err };
  } finally {
    process.stdout.write = w1;
    process.stderr.write = w2;
  }
}

const opts = { command: 'kcm test', usageLine: 'kcm test [flags]', description: 'A test command.' };

describe('command line', () => {
  it('returns the parsed flags when nothing is wrong', () => {
    const r = captured(() => parseCommandLine(spec, ['--name', 'y'], opts));
    assert.notEqual(typeof r.result, 'number');
    assert.equal((r.result as Exclude<typeof r.result, number>).values.name, 'y');
  });

  it('prints the usage and returns 0 for --help', () => {
    const r = captured(() => parseCommandLine(spec, ['--help'], opts));
    assert.equal(r.result, 0);
    assert.match(r.out, /kcm test \[flags\]/);
    assert.match(r.out, /A test command\./);
  });

  it('reports an unknown flag and an unexpected word with exit code 1', () => {
    const bad = captured(() => parseCommandLine(spec, ['--nope'], opts));
    assert.equal(bad.result, 1);
    assert.match(bad.err, /^Error: .*nope/);
    const word = captured(() => parseCommandLine(spec, ['extra'], opts));
    assert.equal(word.result, 1);
    assert.equal(word.err, 'Error: unknown command "extra" for "kcm test"\n');
    const allowed = captured(() => parseCommandLine(spec, ['extra'], { ...opts, allowPositional: true }));
    assert.notEqual(typeof allowed.result, 'number');
  });

  it('reports a FlagError of validate before looking at --help', () => {
    const r = captured(() =>
      parseCommandLine(spec, ['--help'], {
        ...opts,
        validate: () => {
          throw new FlagError('invalid argument "z"');
        },
      }),
    );
    assert.equal(r.result, 1);
    assert.equal(r.err, 'Error: invalid argument "z"\n');
  });

  it('rethrows errors that are not flag errors', () => {
    class Other extends Error {}
    assert.throws(() => reportFlagError(new Error('boom')), /boom/);
    const r = captured(() => reportFlagError(new Other('listed'), Other));
    assert.equal(r.result, 1);
    assert.equal(r.err, 'Error: listed\n');
  });
});
