import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse, ShellSyntaxError } from './parser.js';
import { out, run } from './testutil.js';

describe('parser', () => {
  it('parses lists, pipelines, and-or lists and background jobs', () => {
    const l = parse('a; b | c && d || ! e &\nf');
    assert.equal(l.items.length, 3);
    assert.equal(l.items[1]!.ao.first.cmds.length, 2);
    assert.equal(l.items[1]!.ao.rest.length, 2);
    assert.equal(l.items[1]!.ao.rest[1]!.p.neg, true);
    assert.equal(l.items[1]!.bg, true);
  });

  it('parses compound commands', () => {
    const l = parse('if a; then b; elif c; then d; else e; fi; while x; do y; done; until x; do y; done; for i in 1 2; do :; done; case $x in a|b) :;; *) :;; esac; (s); { g; }; [[ -f x ]]; f() { :; }');
    assert.deepEqual(
      l.items.map((i) => i.ao.first.cmds[0]!.t),
      ['if', 'loop', 'loop', 'for', 'case', 'subshell', 'group', 'cond', 'func'],
    );
  });

  it('reports syntax errors with a line number', () => {
    assert.throws(() => parse('if true; then echo'), ShellSyntaxError);
    assert.throws(() => parse('echo "unterminated'), ShellSyntaxError);
    assert.throws(() => parse('done'), ShellSyntaxError);
    assert.throws(() => parse('a &&'), ShellSyntaxError);
    // found by fuzzing: used to loop forever inside [[ ]]
    assert.throws(() => parse('[[ "b c" 2>&1 f()'), ShellSyntaxError);
    assert.throws(() => parse('[[ -f x'), ShellSyntaxError);
    try {
      parse('echo a\nfi');
    } catch (e) {
      assert.ok(e instanceof ShellSyntaxError);
      assert.equal(e.line, 2);
    }
  });

  it('a syntax error prints a message and exits 2', () => {
    const r = run('echo a; if; then');
    assert.equal(r.exitCode, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^sh: line 1: syntax error/);
  });

  it('comments, line continuations and reserved words as arguments', () => {
    assert.equal(out('echo a # comment\necho b#c \\\n d'), 'a\nb#c d\n');
    assert.equal(out('echo if then fi done }'), 'if then fi done }\n');
    assert.equal(out('{ echo a; echo b; } | wc -l'), '2\n');
  });

  it('multi-line scripts as in YAML block scalars', () => {
    const s = `
      set -e
      for i in 1 2
      do
        if [ "$i" = 2 ]
        then
          echo two
        else
          echo other
        fi
      done
    `;
    assert.equal(out(s), 'other\ntwo\n');
  });
});

describe('quoting', () => {
  it('single, double quotes and backslashes', () => {
    assert.equal(out(`echo 'a  $X "b"' "c  \\$X \\"d\\" \\\\ 'e'" f\\ g \\$h`), `a  $X "b" c  $X "d" \\ 'e' f g $h\n`);
  });
  it('adjacent quoted and unquoted pieces form one word', () => {
    assert.equal(out(`X=1; printf '[%s]\\n' a"b"'c'$X "$X"d`), '[abc1]\n[1d]\n');
  });
  it('empty quoted strings are arguments, empty expansions are not', () => {
    assert.equal(out(`printf '[%s]' "" $NOPE "$NOPE"; echo`), '[][]\n');
  });
  it("$'...' strings", () => {
    assert.equal(out(`echo $'a\\tb\\n'c`), 'a\tb\nc\n');
  });
  it('backslash-newline inside double quotes joins lines', () => {
    assert.equal(out('echo "a\\\nb"'), 'ab\n');
  });
});
