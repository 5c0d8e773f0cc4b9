import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FlagError, flagUsage, formatDuration, loggingFlags, parseDuration, parseFlags, type FlagSpec } from './flags.js';

const spec = {
  'data-dir': { type: 'string', default: './.kcm', usage: 'where state lives', section: 'Storage' },
  'secure-port': { type: 'int', default: 6443, usage: 'HTTPS port' },
  storage: { type: 'string', default: 'sqlite', oneOf: ['sqlite', 'memory'], usage: 'backend', section: 'Storage' },
  leader: { type: 'bool', default: true, usage: 'elect a leader' },
  verbose: { type: 'bool', default: false, usage: 'chatty', short: 'x' },
  controllers: { type: 'stringList', default: ['*'], usage: 'controllers to run' },
  timeout: { type: 'duration', default: 15_000, usage: 'how long' },
  ...loggingFlags,
} as const satisfies FlagSpec;

describe('parseFlags', () => {
  it('returns the defaults when no flag is given', () => {
    const p = parseFlags(spec, []);
    assert.equal(p.values['data-dir'], './.kcm');
    assert.equal(p.values['secure-port'], 6443);
    assert.equal(p.values.leader, true);
    assert.deepEqual(p.values.controllers, ['*']);
    assert.equal(p.values.timeout, 15_000);
    assert.equal(p.values.v, 0);
    assert.equal(p.changed.size, 0);
    assert.equal(p.help, false);
  });

  it('accepts --name=value and --name value forms', () => {
    const p = parseFlags(spec, ['--data-dir=/tmp/a', '--secure-port', '0', 'pos']);
    assert.equal(p.values['data-dir'], '/tmp/a');
    assert.equal(p.values['secure-port'], 0);
    assert.deepEqual(p.positional, ['pos']);
    assert.deepEqual([...p.changed].sort(), ['data-dir', 'secure-port']);
  });

  it('treats a bare boolean flag as true without consuming the next word', () => {
    const p = parseFlags(spec, ['--verbose', 'next', '--leader=false']);
    assert.equal(p.values.verbose, true);
    assert.equal(p.values.leader, false);
    assert.deepEqual(p.positional, ['next']);
  });

  it('splits list flags on commas and appends repeated ones', () => {
    const p = parseFlags(spec, ['--controllers=a,b', '--controllers', 'c']);
    assert.deepEqual(p.values.controllers, ['a', 'b', 'c']);
  });

  it('parses Go durations into milliseconds', () => {
    assert.equal(parseFlags(spec, ['--timeout=1h30m']).values.timeout, 5_400_000);
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('2m'), 120_000);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration('-3s'), -3000);
    assert.equal(parseDuration('0'), 0);
    assert.equal(parseDuration('10us'), 0.01);
    assert.throws(() => parseDuration('10'), /missing unit in duration "10"/);
    assert.throws(() => parseDuration('3d'), /unknown unit "d"/);
    assert.throws(() => parseDuration(''), /invalid duration ""/);
  });

  it('formats durations as Go prints them', () => {
    assert.equal(formatDuration(15_000), '15s');
    assert.equal(formatDuration(120_000), '2m0s');
    assert.equal(formatDuration(5_400_000), '1h30m0s');
    assert.equal(formatDuration(500), '500ms');
    assert.equal(formatDuration(0), '0s');
    assert.equal(formatDuration(1500), '1.5s');
  });

  it('accepts -v=4, -v 4, -v4 and --v=4', () => {
    for (const args of [['-v=4'], ['-v', '4'], ['-v4'], ['--v=4'], ['--v', '4']]) {
      assert.equal(parseFlags(spec, args).values.v, 4, args.join(' '));
    }
  });

  it('rejects an unknown flag with pflag wording', () => {
    assert.throws(() => parseFlags(spec, ['--x']), (err: unknown) => err instanceof FlagError && err.message === 'unknown flag: --x');
    assert.throws(() => parseFlags(spec, ['-q']), { message: "unknown shorthand flag: 'q' in -q" });
  });

  it('rejects a bad value naming the flag and the parse error', () => {
    assert.throws(() => parseFlags(spec, ['--secure-port=x']), {
      message: 'invalid argument "x" for "--secure-port" flag: strconv.ParseInt: parsing "x": invalid syntax',
    });
    assert.throws(() => parseFlags(spec, ['--leader=maybe']), {
      message: 'invalid argument "maybe" for "--leader" flag: strconv.ParseBool: parsing "maybe": invalid syntax',
    });
    assert.throws(() => parseFlags(spec, ['--timeout=soon']), { message: /^invalid argument "soon" for "--timeout" flag: time: invalid duration "soon"$/ });
    assert.throws(() => parseFlags(spec, ['-v=high']), { message: /^invalid argument "high" for "-v, --v" flag/ });
    assert.throws(() => parseFlags(spec, ['--storage=etcd']), { message: /invalid argument "etcd" for "--storage" flag: must be one of "sqlite", "memory"/ });
  });

  it('requires a value for a non-boolean flag at the end', () => {
    assert.throws(() => parseFlags(spec, ['--data-dir']), { message: 'flag needs an argument: --data-dir' });
  });

  it('accepts integers in Go bases and rejects out-of-range values', () => {
    assert.equal(parseFlags(spec, ['--secure-port=0x10']).values['secure-port'], 16);
    assert.throws(() => parseFlags(spec, ['--secure-port=99999999999999999999']), /value out of range/);
  });

  it('reports --help and -h instead of failing', () => {
    assert.equal(parseFlags(spec, ['--help']).help, true);
    assert.equal(parseFlags(spec, ['-h']).help, true);
  });

  it('stops parsing flags after --', () => {
    const p = parseFlags(spec, ['--', '--data-dir=x']);
    assert.deepEqual(p.positional, ['--data-dir=x']);
    assert.equal(p.values['data-dir'], './.kcm');
  });
});

describe('flagUsage', () => {
  it('groups flags by section and shows non-zero defaults', () => {
    const text = flagUsage(spec, 'kcm apiserver [flags]');
    assert.match(text, /Usage:\n {2}kcm apiserver \[flags\]\n/);
    const generic = text.indexOf('Generic flags:');
    const storage = text.indexOf('Storage flags:');
    const logs = text.indexOf('Logs flags:');
    assert.ok(storage >= 0 && generic > storage && logs > generic, text);
    assert.match(text, / {6}--data-dir string +where state lives \(default "\.\/\.kcm"\)/);
    assert.match(text, / {6}--timeout duration +how long \(default 15s\)/);
    assert.match(text, / {2}-x, --verbose +chatty\n/);
    assert.match(text, / {2}-v, --v Level +number for the log level verbosity\n/);
    assert.match(text, /--controllers strings +controllers to run \(default \[\*\]\)/);
  });
});
