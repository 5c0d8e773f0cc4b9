import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { T0, out, run } from './testutil.js';
import { formatDate, parseDuration } from './builtins.js';
import type { HttpHandler } from './interpreter.js';
import { createStandardFs } from './fs.js';

describe('output builtins', () => {
  it('echo -n -e', () => {
    assert.equal(out('echo a b; echo -n c; echo -e "d\\te"; echo "f\\n"; echo -e "g\\c" h; echo -- -x'), 'a b\ncd\te\nf\\n\ng-- -x\n');
  });
  it('printf %s %d %q, padding, reuse of the format', () => {
    assert.equal(out(`printf '%s=%d\\n' a 1 b 2`), 'a=1\nb=2\n');
    assert.equal(out(`printf '[%5s][%-5s][%05d][%x][%.2f][%c]\\n' ab cd 42 255 3.14159 xyz`), '[   ab][cd   ][00042][ff][3.14][x]\n');
    assert.equal(out(`printf '%q\\n' "a b" 'c'`), 'a\\ b\nc\n');
    assert.equal(out(`printf 'no newline'; printf '%%\\n'`), 'no newline%\n');
  });
  it('env and printenv', () => {
    const r = run('env; printenv FOO; printenv NOPE; echo $?', { env: { FOO: 'bar' } });
    assert.equal(r.stdout, 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nHOSTNAME=pod-1\nFOO=bar\nHOME=/root\nbar\n1\n');
    assert.equal(out('env A=1 sh -c \'echo $A\'; X=2 printenv X; export Y=3; env | grep ^Y'), '1\n2\nY=3\n');
  });
  it('hostname, id, whoami, uname, nproc, pwd, date', () => {
    assert.equal(out('hostname; whoami; id -u; uname; uname -n; nproc; pwd'), 'pod-1\nroot\n0\nLinux\npod-1\n2\n/\n');
    assert.equal(out('date; date +%s; date -u "+%Y-%m-%dT%H:%M:%SZ"'), `Thu Nov 26 18:02:07 UTC 2026\n${T0 / 1000}\n2026-11-26T18:02:07Z\n`);
    assert.equal(formatDate(Date.UTC(2026, 0, 5, 1, 2, 3)), 'Mon Jan  5 01:02:03 UTC 2026');
  });
});

describe('file builtins', () => {
  it('cat of files and stdin, errors', () => {
    const r = run('echo a > /tmp/a; echo b | cat /tmp/a - ; cat /nope /tmp/a; echo $?; cat /tmp');
    assert.equal(r.stdout, 'a\nb\na\n1\n');
    assert.equal(r.stderr, "cat: can't open '/nope': No such file or directory\ncat: read error: Is a directory\n");
  });
  it('touch, rm, rm -f, rm -r, mkdir -p, rmdir', () => {
    const r = run('touch /tmp/t; test -f /tmp/t && echo t; rm /tmp/t; rm /tmp/t; echo $?; rm -f /tmp/t; echo $?; mkdir /a/b; echo $?; mkdir -p /a/b/c; mkdir /a; rm /a; rmdir /a; rm -rf /a; test -e /a || echo gone');
    assert.equal(r.stdout, 't\n1\n0\n1\ngone\n');
    assert.equal(
      r.stderr,
      [
        "rm: can't remove '/tmp/t': No such file or directory",
        "mkdir: can't create directory '/a/b': No such file or directory",
        "mkdir: can't create directory '/a': File exists",
        "rm: '/a' is a directory",
        "rmdir: '/a': Directory not empty",
        '',
      ].join('\n'),
    );
  });
  it('mv, cp, cp -r, mv -v', () => {
    const r = run('echo x > /tmp/a; cp /tmp/a /tmp/b; mv /tmp/a /tmp/c; cat /tmp/b /tmp/c; test -e /tmp/a || echo moved; mkdir -p /s/d; echo y > /s/d/f; cp -r /s /t; cat /t/d/f; cp /s /u; mv -v /tmp/c /s/; mv /nope /tmp/; cp /nope /tmp/');
    assert.equal(r.stdout, "x\nx\nmoved\ny\nrenamed '/tmp/c' -> '/s/c'\n");
    assert.equal(r.stderr, "cp: omitting directory '/s'\nmv: can't rename '/nope': No such file or directory\ncp: can't stat '/nope': No such file or directory\n");
  });
  it('the nginx conformance mv (missing file, || true)', () => {
    const r = run('mv -v /usr/share/nginx/html/index.html /tmp/ || true');
    assert.equal(r.exitCode, 0);
    assert.equal(r.stderr, "mv: can't rename '/usr/share/nginx/html/index.html': No such file or directory\n");
    const r2 = run('mkdir -p /usr/share/nginx/html; echo hi > /usr/share/nginx/html/index.html; mv -v /usr/share/nginx/html/index.html /tmp/ || true; cat /tmp/index.html');
    assert.equal(r2.stdout, "renamed '/usr/share/nginx/html/index.html' -> '/tmp/index.html'\nhi\n");
  });
  it('ls, ls -1, ls -a, ls -l, ls -d, missing', () => {
    const r = run('mkdir /d; touch /d/b /d/a /d/.h; mkdir /d/sub; ls /d; ls -1 /d; ls -a /d; ls -d /d; ls /nope; echo $?; ls /d/a /d/b');
    assert.equal(r.stdout, 'a\nb\nsub\na\nb\nsub\n.\n..\n.h\na\nb\nsub\n/d\n1\n/d/a\n/d/b\n');
    assert.equal(r.stderr, 'ls: /nope: No such file or directory\n');
    const l = out('mkdir /d; echo hello > /d/f; chmod 755 /d/f; ln -s /d/f /d/l; ls -l /d');
    assert.equal(l, 'total 4\n-rwxr-xr-x    1 root     root             6 Nov 26 18:02 f\nlrwxrwxrwx    1 root     root             4 Nov 26 18:02 l -> /d/f\n');
  });
  it('ln -s, readlink, realpath, symlinks followed by cat', () => {
    assert.equal(out('mkdir /x; echo v > /x/f; ln -s f /x/l; ln -s /x /y; cat /x/l /y/l; readlink /x/l; readlink -f /y/l'), 'v\nv\nf\n/x/f\n');
  });
  it('chmod stores modes; test -x', () => {
    assert.equal(out('touch /f; test -x /f || echo no; chmod +x /f; test -x /f && echo yes; chmod 600 /f; stat -c %a /f; chmod u+x,g+r /f; stat -c "%a %A" /f'), 'no\nyes\n600\n740 -rwxr-----\n');
  });
  it('tee, head, tail, wc', () => {
    assert.equal(out('seq 1 5 | tee /tmp/s | tail -n 2; head -n 2 /tmp/s; head -1 /tmp/s; tail -n +4 /tmp/s; wc -l /tmp/s; wc -l < /tmp/s; echo hello | wc -c; tail -c 2 /tmp/s'), '4\n5\n1\n2\n1\n4\n5\n5 /tmp/s\n5\n6\n5\n');
  });
  it('basename, dirname', () => {
    assert.equal(out('basename /a/b/c.txt; basename /a/b/c.txt .txt; dirname /a/b/c.txt; dirname c; dirname /'), 'c.txt\nc\n/a/b\n.\n/\n');
  });
});

describe('text builtins', () => {
  it('grep -q -v -c -i -E -F, exit codes, missing file', () => {
    assert.equal(out('printf "foo\\nbar\\nFOO\\n" > /t; grep foo /t; grep -i foo /t; grep -v foo /t; grep -c -i foo /t; grep -q bar /t && echo q; grep -E "^(b|F)" /t; grep -F "." /t; echo $?; grep "o\\+" /t'), 'foo\nfoo\nFOO\nbar\nFOO\n2\nq\nbar\nFOO\n1\nfoo\n');
    const r = run('grep x /nope; echo $?');
    assert.equal(r.stdout, '2\n');
    assert.equal(r.stderr, 'grep: /nope: No such file or directory\n');
  });
  it('sed s///g, addresses, d, -n p, -i', () => {
    assert.equal(out('echo "a-b-c" | sed "s/-/+/"; echo "a-b-c" | sed "s/-/+/g"; printf "1\\n2\\n3\\n" | sed 2d; printf "1\\n2\\n" | sed -n 2p; echo abc | sed -e "s/\\(b\\)/[\\1]/" -e "s/a/&&/"'), 'a+b-c\na+b+c\n1\n3\n2\naa[b]c\n');
    assert.equal(out('echo hello > /f; sed -i "s/hello/bye/" /f; cat /f'), 'bye\n');
  });
  it('tr, cut, sort, uniq', () => {
    assert.equal(out('echo hello | tr a-z A-Z; echo "a  b" | tr -s " "; echo abc | tr -d b; echo a:b:c | cut -d: -f2; echo abcdef | cut -c2-3'), 'HELLO\na b\nac\nb\nbc\n');
    assert.equal(out('printf "b\\na\\nb\\n10\\n9\\n" | sort; printf "3\\n10\\n2\\n" | sort -n; printf "3\\n10\\n2\\n" | sort -rn; printf "a\\na\\nb\\n" | uniq -c'), '10\n9\na\nb\nb\n2\n3\n10\n10\n3\n2\n      2 a\n      1 b\n');
  });
  it('seq, expr, base64, sha256sum, md5sum', () => {
    assert.equal(out('seq 3; seq 2 4; seq 0 5 10; seq -s, 1 3; expr 1 + 2; expr 6 / 4; expr length abc; expr 2 = 3; echo $?'), '1\n2\n3\n2\n3\n4\n0\n5\n10\n1,2,3\n3\n1\n3\n0\n1\n');
    assert.equal(out('echo -n hi | base64; echo aGk= | base64 -d; echo; echo -n abc | md5sum; echo -n abc | sha256sum'), 'aGk=\nhi\n900150983cd24fb0d6963f7d28e17f72  -\nba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  -\n');
  });
});

describe('test and [', () => {
  it('file, string and integer tests', () => {
    const s = '[ -e /tmp ] && echo e; [ -d /tmp ] && echo d; [ -f /tmp ] || echo nf; [ -z "" ] && echo z; [ -n x ] && echo n; [ a = a ] && echo eq; [ a != b ] && echo ne; [ 2 -lt 10 ] && echo lt; [ 3 -ge 3 ] && echo ge; [ ! -e /nope ] && echo not; [ -e /tmp -a -e /nope ] || echo and; [ -e /tmp -o -e /nope ] && echo or; [ x ] && echo one; [ ] || echo empty; test "(" a = a ")" && echo paren';
    assert.equal(out(s), 'e\nd\nnf\nz\nn\neq\nne\nlt\nge\nnot\nand\nor\none\nempty\nparen\n');
  });
  it('-s, -r, -w on read-only mounts', () => {
    assert.equal(out('touch /e; echo x > /f; [ -s /e ] || echo empty; [ -s /f ] && echo full; [ -r /f ] && echo r; [ -w /f ] && echo w'), 'empty\nfull\nr\nw\n');
  });
  it('errors exit 2', () => {
    const r = run('[ 1 -eq ]; echo $?; [ a -eq 1 ]; echo $?; [ x; echo $?');
    assert.equal(r.stdout, '2\n2\n2\n');
    assert.match(r.stderr, /missing \]/);
  });
  it('test -e /tmp/file && echo yes (conformance)', () => {
    assert.equal(out('test -e /tmp/file && echo yes'), '');
    assert.equal(out('touch /tmp/file; test -e /tmp/file && echo yes'), 'yes\n');
  });
});

describe('shell builtins', () => {
  it('export, unset, readonly, set', () => {
    assert.equal(out('X=1; sh -c "echo [\\$X]"; export X; sh -c "echo [\\$X]"; unset X; echo "[${X-unset}]"'), '[]\n[1]\n[unset]\n');
    const r = run('readonly R=1; R=2; echo $R');
    assert.match(r.stderr, /R: is read only/);
  });
  it('eval, ., shift, read, command -v, type', () => {
    assert.equal(out('eval "A=1; echo \\$A"; echo "B=2" > /tmp/s; . /tmp/s; echo $B; set -- a b c; shift; echo $@; shift 2; echo $#'), '1\n2\nb c\n0\n');
    assert.equal(out('command -v sleep; command -v cd; command -v nope || echo none; type echo'), '/bin/sleep\ncd\nnone\necho is /bin/echo\n');
  });
  it('sh -c with $0 and arguments, nested', () => {
    assert.equal(out(`sh -c 'echo $0 $1 $#' zero one two; bash -c "exit 3"; echo $?`), 'zero one 2\n3\n');
  });
  it('cd and pwd, cd -', () => {
    assert.equal(out('cd /etc; pwd; cd ..; pwd; cd -; cd /tmp && echo $PWD'), '/etc\n/\n/etc\n/tmp\n');
  });
});

describe('sleep', () => {
  it('accepts N, N.5, Ns, Nm and sums arguments', () => {
    assert.equal(parseDuration('2'), 2000);
    assert.equal(parseDuration('1.5'), 1500);
    assert.equal(parseDuration('1s'), 1000);
    assert.equal(parseDuration('1m'), 60000);
    assert.equal(parseDuration('x'), undefined);
    const r = run('sleep 1 1m; date +%s', { ms: 120_000 });
    assert.equal(r.stdout, `${T0 / 1000 + 61}\n`);
  });
  it('rejects bad durations', () => {
    const r = run('sleep abc; echo $?');
    assert.equal(r.stdout, '1\n');
    assert.equal(r.stderr, "sleep: invalid number 'abc'\n");
  });
});

describe('wget and curl', () => {
  const http: HttpHandler = (req) => {
    if (req.url.includes('nohost')) return { error: 'dns' };
    if (req.url.includes('refused')) return { error: 'refused' };
    if (req.url.includes('slow')) return { status: 200, body: 'late', durationMs: 30_000 };
    if (req.url.endsWith('/missing')) return { status: 404, body: 'not found\n' };
    return { status: 200, body: `hello from ${req.url}\n`, durationMs: 100 };
  };
  it('wget -qO-, -O file, errors, -T timeout', () => {
    const r = run('wget -qO- http://svc:8080/x; wget -q -O /tmp/f svc/y; cat /tmp/f; wget -qO- http://nohost/; echo $?; wget -qO- http://refused/; echo $?; wget -qO- http://svc/missing; echo $?; wget -T 5 -qO- http://slow/; echo $?; date +%s', { http });
    assert.equal(r.stdout, `hello from http://svc:8080/x\nhello from http://svc/y\n1\n1\n1\n1\n${T0 / 1000 + 5}\n`);
    assert.equal(r.stderr, "wget: bad address 'nohost'\nwget: can't connect to remote host (refused): Connection refused\nwget: server returned error: HTTP/1.1 404 Not Found\nwget: download timed out\n");
  });
  it('curl -s, -f, -o, -w %{http_code}, error codes', () => {
    const r = run('curl -s http://svc/a; curl -s -o /dev/null -w "%{http_code}" http://svc/missing; echo; curl -sf http://svc/missing; echo $?; curl -s http://nohost/; echo $?; curl http://refused/; echo $?; curl -fsS http://svc/missing; echo $?', { http });
    assert.equal(r.stdout, 'hello from http://svc/a\n404\n22\n6\n7\n22\n');
    assert.equal(r.stderr, "curl: (7) Failed to connect to refused port 80 after 0 ms: Couldn't connect to server\ncurl: (22) The requested URL returned error: 404\n");
  });
  it('without an http callback every host is unknown', () => {
    assert.equal(run('wget -qO- http://x/').exitCode, 1);
  });
  it('nslookup through the dns callback', () => {
    const r = run('nslookup kubernetes.default; nslookup nope; echo $?', { dns: (n) => (n === 'kubernetes.default' ? ['10.96.0.1'] : undefined) });
    assert.equal(r.stdout, "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\nName:\tkubernetes.default\nAddress: 10.96.0.1\n\nServer:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n** server can't find nope: NXDOMAIN\n\n1\n");
  });
});

describe('id as another user', () => {
  it('prints the securityContext user and groups', () => {
    const user = { uid: 65534, gid: 65534, groups: [2000] };
    assert.equal(out('id -u; id -g; id -G; whoami', { user }), '65534\n65534\n65534 2000\nnobody\n');
    assert.equal(out('id', { user: { uid: 1000, gid: 0, groups: [] } }), 'uid=1000 gid=0(root) groups=0(root)\n');
  });
});

describe('hexdump', () => {
  it('hexdump -C prints bytes as stored, with the ASCII column and the length', () => {
    const fs = createStandardFs({ now: T0 });
    fs.writeFile('/dump.bin', Buffer.from([0xde, 0xca, 0xfe, 0xba, 0xd0, 0xfe, 0xff]));
    assert.equal(out('hexdump -C /dump.bin', { fs }), '00000000  de ca fe ba d0 fe ff                              |.......|\n00000007\n');
    assert.equal(out('printf "hello world, 0123456789" | hexdump -C'), '00000000  68 65 6c 6c 6f 20 77 6f  72 6c 64 2c 20 30 31 32  |hello world, 012|\n00000010  33 34 35 36 37 38 39                              |3456789|\n00000017\n');
  });
});
