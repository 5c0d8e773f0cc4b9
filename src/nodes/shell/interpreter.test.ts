import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { T0, out, run } from './testutil.js';
import { startProcess } from './process.js';

describe('expansions', () => {
  it('variables, braces and defaults', () => {
    assert.equal(out('X=1; echo $X ${X} ${Y:-def} ${Y-d2} ${X:+alt} ${Y:+alt}.'), '1 1 def d2 alt .\n');
    assert.equal(out('E=; echo "[${E:-a}] [${E-b}]"; echo ${Z:=set} $Z'), '[a] []\nset set\n');
  });
  it('${X:?} exits the shell with its message', () => {
    const r = run('echo ${NOPE:?is required}; echo after');
    assert.equal(r.exitCode, 2);
    assert.equal(r.stderr, 'sh: NOPE: is required\n');
    assert.equal(r.stdout, '');
  });
  it('length, prefix/suffix removal, substitution, substring', () => {
    assert.equal(out('P=/a/b/c.tar.gz; echo ${#P} ${P##*/} ${P#*/} ${P%.*} ${P%%.*} ${P/b/B} ${P//\\//_} ${P:1:3}'), '13 c.tar.gz a/b/c.tar.gz /a/b/c.tar /a/b/c /a/B/c.tar.gz _a_b_c.tar.gz a/b\n');
  });
  it('special parameters', () => {
    const r = run('echo "$0 $# $1 $2 $@"; echo $$; false; echo $?', { args: ['myname', 'x', 'y z'] });
    assert.equal(r.stdout, 'myname 2 x y z x y z\n1\n1\n');
  });
  it('"$@" keeps arguments, $* and unquoted $@ split', () => {
    assert.equal(out(`set -- "a b" c; for x in "$@"; do echo "<$x>"; done; for x in $*; do echo "[$x]"; done; echo "$*"`), '<a b>\n<c>\n[a]\n[b]\n[c]\na b c\n');
    assert.equal(out('set --; for x in "$@"; do echo no; done; echo ok'), 'ok\n');
  });
  it('command substitution with $(...) and backticks, nested, trailing newlines stripped', () => {
    assert.equal(out('echo "$(echo a; echo b)" `echo c` $(echo $(echo d))'), 'a\nb c d\n');
    assert.equal(out('X=$(printf "x\\n\\n\\n"); echo "[$X]"'), '[x]\n');
    assert.equal(out('echo "$(echo ")")"'), ')\n');
  });
  it('the status of a bare assignment is that of its command substitution', () => {
    assert.equal(out('X=$(false); echo $?; X=$(true); echo $?'), '1\n0\n');
  });
  it('arithmetic', () => {
    assert.equal(out('i=3; echo $((i+1)) $(( i * 2 - 1 )) $((10/3)) $((10%3)) $((2**5)) $((i>2)) $((i==3 && 0)) $(( (1+2)*3 )) $((-i)) $(($i+1))'), '4 5 3 1 32 1 0 9 -3 4\n');
    assert.equal(out('i=0; : $((i+=5)); echo $i; ((i++)); echo $i; (( i > 3 )) && echo big'), '5\n6\nbig\n');
    const r = run('echo $((1/0)); echo after');
    assert.equal(r.exitCode, 2);
    assert.equal(r.stderr, 'sh: divide by zero\n');
  });
  it('field splitting of unquoted expansions, none of quoted ones', () => {
    assert.equal(out('A="1  2 3"; for x in $A; do echo $x; done; for x in "$A"; do echo "$x"; done'), '1\n2\n3\n1  2 3\n');
    assert.equal(out('IFS=:; P=a:b:c; for x in $P; do echo $x; done'), 'a\nb\nc\n');
  });
  it('pathname expansion, sorted; no match keeps the pattern; quoted is literal', () => {
    assert.equal(out('mkdir /d; touch /d/b.txt /d/a.txt /d/c.log /d/.h; echo /d/*.txt; echo /d/*.none; echo "/d/*"; cd /d; echo *'), '/d/a.txt /d/b.txt\n/d/*.none\n/d/*\na.txt b.txt c.log\n');
  });
  it('tilde is HOME', () => {
    assert.equal(out('echo ~ ~/x'), '/root /root/x\n');
  });
});

describe('control flow', () => {
  it('if / elif / else', () => {
    const s = (x: string): string => out(`X=${x}; if [ $X = a ]; then echo A; elif [ $X = b ]; then echo B; else echo C; fi`);
    assert.equal(s('a'), 'A\n');
    assert.equal(s('b'), 'B\n');
    assert.equal(s('z'), 'C\n');
  });
  it('while, until, break, continue', () => {
    assert.equal(out('i=0; while true; do i=$((i+1)); [ $i -eq 2 ] && continue; [ $i -gt 4 ] && break; echo $i; done'), '1\n3\n4\n');
    assert.equal(out('i=0; until [ $i -ge 3 ]; do echo $i; i=$((i+1)); done'), '0\n1\n2\n');
    assert.equal(out('for a in 1 2; do for b in x y; do [ $b = y ] && continue 2; echo $a$b; done; done'), '1x\n2x\n');
  });
  it('for over words, globs and positional parameters', () => {
    assert.equal(out('for i in $(seq 1 3); do echo $i; done'), '1\n2\n3\n');
    assert.equal(out('set -- p q; for i; do echo $i; done'), 'p\nq\n');
  });
  it('case with *, |, [..] and quoted patterns', () => {
    const s = (x: string): string => out(`case "${x}" in start|begin) echo S;; *.log) echo LOG;; [0-9]*) echo NUM;; "*") echo STAR;; *) echo OTHER;; esac`);
    assert.equal(s('begin'), 'S\n');
    assert.equal(s('a.log'), 'LOG\n');
    assert.equal(s('42'), 'NUM\n');
    assert.equal(s('*'), 'STAR\n');
    assert.equal(s('zz'), 'OTHER\n');
  });
  it('&&, ||, ! and exit statuses', () => {
    assert.equal(out('true && echo a; false && echo b; false || echo c; ! false && echo d; ! true; echo $?'), 'a\nc\nd\n1\n');
  });
  it('subshells do not change the parent; groups do', () => {
    assert.equal(out('X=1; (X=2; cd /tmp; exit 3); echo $? $X $(pwd); { X=4; }; echo $X'), '3 1 /\n4\n');
  });
  it('functions with arguments, return and local', () => {
    assert.equal(out('f() { local v=in; echo "$1-$#-$v"; return 4; }; v=out; f a b; echo $? $v'), 'a-2-in\n4 out\n');
    assert.equal(out('function g { echo g$1; }; g 1'), 'g1\n');
  });
  it('exit ends the script with its code', () => {
    const r = run('echo a; exit 7; echo b');
    assert.equal(r.stdout, 'a\n');
    assert.equal(r.exitCode, 7);
    assert.equal(run('false; exit').exitCode, 1);
    assert.equal(run('exit abc').exitCode, 2);
  });
  it('the script exit status is that of its last command', () => {
    assert.equal(run('true; false').exitCode, 1);
    assert.equal(run('false; true').exitCode, 0);
  });
});

describe('set -e', () => {
  it('exits on a failing command', () => {
    const r = run('set -e; echo a; false; echo b');
    assert.equal(r.stdout, 'a\n');
    assert.equal(r.exitCode, 1);
  });
  it('is not triggered by conditions, && / || operands or !', () => {
    const r = run('set -e; if false; then :; fi; false || true; false && true; ! true; while false; do :; done; echo survived');
    assert.equal(r.stdout, 'survived\n');
    assert.equal(r.exitCode, 0);
  });
  it('is triggered by the last command of an && list and by failing subshells', () => {
    assert.equal(run('set -e; true && false; echo no').stdout, '');
    assert.equal(run('set -e; (false); echo no').exitCode, 1);
    assert.equal(run('set -e; cat /nope; echo no').exitCode, 1);
  });
  it('sh -e and set +e', () => {
    const p = startProcess({ argv: ['sh', '-ec', 'false; echo no'], clock: T0 });
    assert.equal(p.advance(T0).exitCode, 1);
    assert.equal(out('set -e; set +e; false; echo yes'), 'yes\n');
  });
  it('set -o pipefail', () => {
    assert.equal(out('false | true; echo $?; set -o pipefail; false | true; echo $?'), '0\n1\n');
  });
});

describe('pipelines and redirections', () => {
  it('pipes stdout into stdin', () => {
    assert.equal(out('printf "b\\na\\nc\\n" | sort | head -n 2 | tr a-z A-Z'), 'A\nB\n');
    assert.equal(out('env | grep FOO', { env: { FOO: 'bar', OTHER: 'x' } }), 'FOO=bar\n');
  });
  it('the status of a pipeline is that of its last command', () => {
    assert.equal(out('false | true; echo $?; true | false; echo $?'), '0\n1\n');
  });
  it('> truncates, >> appends, < reads', () => {
    assert.equal(out('echo 1 > /tmp/f; echo 2 > /tmp/f; echo 3 >> /tmp/f; cat < /tmp/f'), '2\n3\n');
  });
  it('2>&1, 2>/dev/null, >/dev/null, &>', () => {
    const r = run('cat /nope 2>&1 | sed s/cat/CAT/; cat /nope 2>/dev/null; echo hidden >/dev/null; cat /nope &>/tmp/both; cat /tmp/both; ls /nope >/tmp/x 2>&1; cat /tmp/x');
    assert.equal(r.stdout, "CAT: can't open '/nope': No such file or directory\ncat: can't open '/nope': No such file or directory\nls: /nope: No such file or directory\n");
    assert.equal(r.stderr, '');
  });
  it('redirection errors', () => {
    const r = run('echo x > /no/dir/f; echo $?; cat < /nope; echo $?');
    assert.equal(r.stdout, '1\n1\n');
    assert.equal(r.stderr, "sh: can't create /no/dir/f: nonexistent directory\nsh: can't open /nope: no such file\n");
  });
  it('redirections on compound commands and here-documents', () => {
    assert.equal(out('for i in 1 2; do echo $i; done > /tmp/l; cat /tmp/l; { echo a; echo b; } | wc -l'), '1\n2\n2\n');
    assert.equal(out("X=v; cat <<EOF\na $X\nEOF\ncat <<'EOF'\nb $X\nEOF\ncat <<-EOF\n\tc\n\tEOF"), 'a v\nb $X\nc\n');
    assert.equal(out('read a b <<< "x y z"; echo "$a|$b"'), 'x|y z\n');
  });
  it('while read loops', () => {
    assert.equal(out('printf "1 a\\n2 b\\n" | while read n w; do echo "$w$n"; done'), 'a1\nb2\n');
  });
  it('stdout and stderr are separate streams', () => {
    const r = run('echo out; echo err >&2; echo out2');
    assert.deepEqual(r.output.map((c) => c.stream), ['stdout', 'stderr', 'stdout']);
  });
});

describe('[[ ]]', () => {
  it('file tests, strings, numbers, globs, && || ! and parentheses', () => {
    assert.equal(out('[[ -r /etc/hosts ]] && echo r; [[ -d /tmp && ! -f /tmp ]] && echo d; [[ abc == a* ]] && echo glob; [[ abc == "a*" ]] || echo quoted'), 'r\nd\nglob\nquoted\n');
    assert.equal(out('X="a b"; [[ $X == "a b" ]] && echo eq; [[ -z $NOPE ]] && echo z; [[ 10 -gt 9 ]] && echo gt; [[ b > a ]] && echo str; [[ ( 1 -eq 2 ) || 2 -eq 2 ]] && echo or'), 'eq\nz\ngt\nstr\nor\n');
    assert.equal(out('[[ abc123 =~ ^[a-z]+([0-9]+)$ ]] && echo re'), 're\n');
  });
  it('the upstream conformance probe', () => {
    const s = 'if [[ -r /data/foo ]]; then exit 0; else exit 1; fi';
    assert.equal(run(s).exitCode, 1);
    assert.equal(run(`mkdir /data; echo x > /data/foo; ${s}`).exitCode, 0);
  });
});

describe('more shell behaviour', () => {
  it('return outside a function ends the script; in a sourced file it ends the file', () => {
    assert.deepEqual([run('echo a; return 4; echo b').stdout, run('return 4').exitCode], ['a\n', 4]);
    assert.equal(out('printf "echo in\\nreturn 3\\necho no\\n" > /tmp/s; . /tmp/s; echo $?'), 'in\n3\n');
  });
  it('set -u and set -x', () => {
    const r = run('set -u; echo ${DEFINED:-ok}; echo $NOPE; echo after');
    assert.deepEqual([r.stdout, r.stderr, r.exitCode], ['ok\n', 'sh: NOPE: parameter not set\n', 2]);
    const x = run('set -x; echo hi');
    assert.deepEqual([x.stdout, x.stderr], ['hi\n', '+ echo hi\n']);
  });
  it('kill -0 checks processes', () => {
    assert.equal(out('sleep 5 & kill -0 $!; echo $?; kill -0 999; echo $?; kill -0 $$; echo $?'), '0\n1\n0\n');
  });
  it('prefix assignments are for the one command only', () => {
    assert.equal(out('A=1 sh -c \'echo $A\'; echo "[$A]"'), '1\n[]\n');
  });
  it('functions see and change globals', () => {
    assert.equal(out('n=0; inc() { n=$((n+1)); }; inc; inc; echo $n'), '2\n');
  });
});

describe('errors in subshells', () => {
  it('a fatal expansion error in a subshell ends only the subshell', () => {
    const r = run('(for i in $((1/0)); do :; done); echo after $?');
    assert.equal(r.stdout, 'after 2\n');
    assert.equal(r.stderr, 'sh: divide by zero\n');
  });
});
