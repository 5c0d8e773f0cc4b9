import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FileSystem, FsError, atomicDirName, buildAtomicVolume, createStandardFs, fsTemplate, newDir, updateAtomicVolume, dirname, basename, type FsNode } from './fs.js';
import { T0, run } from './testutil.js';

describe('FileSystem', () => {
  it('files, directories, symlinks, errors', () => {
    const fs = new FileSystem();
    fs.mkdirp('/a/b');
    fs.writeFile('/a/b/f', 'x');
    fs.writeFile('/a/b/f', 'y', { append: true });
    assert.equal(fs.readText('/a/b/f'), 'xy');
    fs.symlink('b/f', '/a/l');
    assert.equal(fs.readText('/a/l'), 'xy');
    assert.equal(fs.readlink('/a/l'), 'b/f');
    assert.equal(fs.realpath('/a/l'), '/a/b/f');
    assert.deepEqual(fs.readdir('/a'), ['b', 'l']);
    assert.throws(() => fs.readText('/nope'), (e: unknown) => e instanceof FsError && e.code === 'ENOENT');
    assert.throws(() => fs.readText('/a'), (e: unknown) => e instanceof FsError && e.code === 'EISDIR');
    assert.throws(() => fs.writeFile('/a/b/f/x', ''), (e: unknown) => e instanceof FsError && e.code === 'ENOTDIR');
    assert.throws(() => fs.remove('/a'), (e: unknown) => e instanceof FsError && e.code === 'EISDIR');
    fs.remove('/a', { recursive: true });
    assert.equal(fs.exists('/a'), false);
  });

  it('symlink loops are errors, not hangs', () => {
    const fs = new FileSystem();
    fs.symlink('/y', '/x');
    fs.symlink('/x', '/y');
    assert.throws(() => fs.readText('/x'), (e: unknown) => e instanceof FsError && e.code === 'ELOOP');
  });

  it('read-only mounts refuse writes with Read-only file system', () => {
    const fs = createStandardFs();
    const d = newDir();
    d.entries.set('f', { type: 'file', data: Buffer.from('v'), mode: 0o644, mtime: 0 });
    fs.mount('/ro', d, { readOnly: true });
    assert.equal(fs.readText('/ro/f'), 'v');
    for (const op of [() => fs.writeFile('/ro/f', 'w'), () => fs.writeFile('/ro/g', 'w'), () => fs.mkdir('/ro/d'), () => fs.remove('/ro/f'), () => fs.chmod('/ro/f', 0o600)]) {
      assert.throws(op, (e: unknown) => e instanceof FsError && e.code === 'EROFS' && e.message === 'Read-only file system');
    }
    assert.equal(fs.isReadOnly('/ro/f'), true);
    assert.equal(fs.isReadOnly('/tmp'), false);
    assert.throws(() => fs.remove('/ro', { recursive: true }), (e: unknown) => e instanceof FsError && e.code === 'EBUSY');
  });

  it('two file systems can share an emptyDir', () => {
    const shared = newDir(0o777);
    const a = createStandardFs();
    const b = createStandardFs();
    a.mount('/cache', shared);
    b.mount('/data', shared, { readOnly: true });
    a.writeFile('/cache/x', 'hello');
    assert.equal(b.readText('/data/x'), 'hello');
    assert.throws(() => b.writeFile('/data/y', ''), (e: unknown) => e instanceof FsError && e.code === 'EROFS');
    assert.equal(a.mountedAt('/cache'), shared);
    // through the shell too
    const r = run('echo from-shell > /cache/y; ls /cache', { fs: a });
    assert.equal(r.stdout, 'x\ny\n');
    assert.equal(b.readText('/data/y'), 'from-shell\n');
  });

  it('standard files', () => {
    const fs = createStandardFs({ hostname: 'h1' });
    assert.equal(fs.readText('/etc/hostname'), 'h1\n');
    assert.match(fs.readText('/etc/hosts'), /127\.0\.0\.1\th1\n$/);
    assert.match(fs.readText('/etc/resolv.conf'), /nameserver/);
    assert.equal(fs.stat('/tmp')?.type, 'dir');
    assert.equal(fs.stat('/dev/null')?.type, 'dev');
    fs.writeFile('/dev/null', 'discarded');
    assert.equal(fs.readText('/dev/null'), '');
    assert.equal(fs.exists('/usr/share/nginx/html/index.html'), false);
  });

  it('basename and dirname', () => {
    assert.deepEqual([basename('/a/b/'), basename('/'), basename('x'), dirname('/a/b/'), dirname('/a'), dirname('a')], ['b', '/', 'x', '/a', '/', '.']);
  });
});

/** Every node of a tree with its path (through `entries`, so every directory is copied from its template). */
function walk(n: FsNode, path = ''): Array<[string, FsNode]> {
  const out: Array<[string, FsNode]> = [[path || '/', n]];
  if (n.type === 'dir') for (const [k, c] of n.entries) out.push(...walk(c, `${path}/${k}`));
  return out;
}

describe('file systems made from a shared template', () => {
  let seeds = 0;
  const seed = (fs: FileSystem): void => {
    seeds++;
    fs.mkdirp('/srv/www');
    fs.writeFile('/srv/www/index.html', 'hello\n');
    fs.writeFile('/usr/bin/tool', 'ELF', { mode: 0o755 });
    fs.mkdirp('/etc/app');
  };
  const tpl = fsTemplate(seed, 'fs.test image');

  it('builds a seeded template once per key, and never lets it change', () => {
    assert.equal(fsTemplate(seed, 'fs.test image'), tpl);
    assert.equal(seeds, 1);
    assert.notEqual(fsTemplate(seed), tpl, 'a seed without a key is run each time');
    assert.throws(() => {
      (tpl as { mode: number }).mode = 0o700;
    }, TypeError);
  });

  it('a change in one container is seen neither by another nor by a container made later', () => {
    const a = createStandardFs({ template: tpl, hostname: 'a', now: T0 });
    const b = createStandardFs({ template: tpl, hostname: 'b', now: T0 + 5000 });
    assert.equal(a.readText('/etc/hostname'), 'a\n');
    assert.equal(b.readText('/etc/hostname'), 'b\n');
    a.now = T0 + 1000;
    a.writeFile('/srv/www/index.html', 'changed\n');
    a.writeFile('/srv/www/new.html', 'new\n');
    a.chmod('/usr/bin/tool', 0o700);
    a.rename('/usr/bin/tool', '/usr/bin/tool2');
    a.remove('/etc/passwd');
    a.remove('/etc/app', { recursive: true });
    a.mkdir('/srv/www/sub');
    a.mkdirp('/opt/x/y');
    a.symlink('/srv/www', '/www');
    a.touch('/srv');
    a.chmod('/tmp', 0o755);
    assert.equal(a.readText('/srv/www/index.html'), 'changed\n');
    assert.deepEqual(a.readdir('/srv/www'), ['index.html', 'new.html', 'sub']);
    assert.equal(a.stat('/usr/bin/tool2')!.mode, 0o700);
    assert.equal(a.stat('/srv')!.mtime, T0 + 1000);
    for (const fs of [b, createStandardFs({ template: tpl, hostname: 'c', now: T0 + 9000 })]) {
      assert.equal(fs.readText('/srv/www/index.html'), 'hello\n');
      assert.deepEqual(fs.readdir('/srv/www'), ['index.html']);
      assert.equal(fs.stat('/usr/bin/tool')!.mode, 0o755);
      assert.equal(fs.exists('/usr/bin/tool2'), false);
      assert.equal(fs.readText('/etc/passwd').startsWith('root:x:0:0:'), true);
      assert.equal(fs.stat('/etc/app')?.type, 'dir');
      assert.equal(fs.exists('/opt/x'), false);
      assert.equal(fs.exists('/www'), false);
      assert.equal(fs.stat('/tmp')!.mode, 0o1777);
    }
    // The bytes of a file nobody wrote are shared, not copied.
    assert.equal(b.readFile('/srv/www/index.html'), createStandardFs({ template: tpl }).readFile('/srv/www/index.html'));
  });

  it('every node starts with the creation time as mtime, whatever was built when', () => {
    for (const now of [T0, T0 + 123_456]) {
      const fs = createStandardFs({ template: tpl, now });
      const nodes = walk(fs.root);
      assert.ok(nodes.length > 25);
      assert.deepEqual(nodes.filter(([, n]) => n.mtime !== now).map(([p]) => p), []);
    }
  });

  it('copies a directory one entry at a time on lookups, keeping the nodes and the listing order', () => {
    const fs = createStandardFs({ template: tpl, now: T0 });
    const passwd = fs.stat('/etc/passwd')!;
    fs.chmod('/etc/passwd', 0o600);
    assert.equal(fs.stat('/etc/passwd'), passwd, 'the same node on each lookup');
    fs.writeFile('/etc/zz', 'z');
    assert.equal(fs.stat('/etc/passwd'), passwd, 'still the same node once all entries are copied');
    assert.equal(passwd.mode, 0o600);
    const etc = fs.stat('/etc')!;
    assert.equal(etc.type, 'dir');
    if (etc.type === 'dir') assert.deepEqual([...etc.entries.keys()], ['hostname', 'hosts', 'resolv.conf', 'passwd', 'group', 'app', 'zz']);
    assert.deepEqual([...fs.root.entries.keys()], ['bin', 'sbin', 'usr', 'etc', 'root', 'home', 'var', 'proc', 'sys', 'dev', 'run', 'opt', 'srv', 'mnt', 'tmp']);
  });

  it('the runtime-managed files replace what a seed put there', () => {
    const t = fsTemplate((fs) => {
      fs.writeFile('/etc/hosts', 'image hosts\n');
      fs.remove('/etc/hostname');
      fs.mkdirp('/etc/hostname/oops');
    }, 'fs.test managed files');
    const fs = createStandardFs({ template: t, hostname: 'web-0', podIP: '10.0.0.9', now: T0 });
    assert.equal(fs.readText('/etc/hostname'), 'web-0\n');
    assert.match(fs.readText('/etc/hosts'), /^# Kubernetes-managed hosts file\.\n[^]*10\.0\.0\.9\tweb-0\n$/);
  });
});

describe('AtomicWriter volumes', () => {
  it('names data directories like kubelet', () => {
    assert.equal(atomicDirName(Date.UTC(2026, 10, 26, 18, 2, 7, 123)), '..2026_11_26_18_02_07.123000000');
  });

  it('builds the ..data layout and ls -la shows it', () => {
    const fs = createStandardFs({ now: T0 });
    fs.mount('/etc/config', buildAtomicVolume({ 'game.properties': { content: 'lives=3\n' }, 'ui.properties': { content: 'color=red\n' } }, T0), { readOnly: true });
    const r = run('ls -la /etc/config; cat /etc/config/game.properties; ls /etc/config', { fs });
    assert.equal(
      r.stdout,
      [
        'total 0',
        'drwxrwxrwt    3 root     root          4096 Nov 26 18:02 .',
        'drwxr-xr-x    3 root     root          4096 Nov 26 18:02 ..',
        'drwxr-xr-x    2 root     root          4096 Nov 26 18:02 ..2026_11_26_18_02_07.000000000',
        'lrwxrwxrwx    1 root     root            31 Nov 26 18:02 ..data -> ..2026_11_26_18_02_07.000000000',
        'lrwxrwxrwx    1 root     root            22 Nov 26 18:02 game.properties -> ..data/game.properties',
        'lrwxrwxrwx    1 root     root            20 Nov 26 18:02 ui.properties -> ..data/ui.properties',
        'lives=3',
        'game.properties',
        'ui.properties',
        '',
      ].join('\n'),
    );
  });

  it('update writes a new data dir, swaps ..data, adds and removes keys', () => {
    const vol = buildAtomicVolume({ a: { content: '1' }, b: { content: '2' } }, T0);
    const fs = createStandardFs();
    fs.mount('/v', vol, { readOnly: true });
    assert.equal(updateAtomicVolume(vol, { a: { content: '1' }, b: { content: '2' } }, T0 + 1000), false, 'unchanged payload is a no-op');
    assert.equal(updateAtomicVolume(vol, { a: { content: 'one' }, c: { content: '3', mode: 0o400 } }, T0 + 60_000), true);
    assert.equal(fs.readText('/v/a'), 'one');
    assert.equal(fs.readText('/v/c'), '3');
    assert.equal(fs.exists('/v/b'), false);
    assert.equal(fs.readlink('/v/..data'), '..2026_11_26_18_03_07.000000000');
    assert.deepEqual(fs.readdir('/v'), ['..2026_11_26_18_03_07.000000000', '..data', 'a', 'c']);
    assert.equal(fs.stat('/v/c')?.mode, 0o400);
    // a process that reads in a loop sees the new content after the swap
    const r = run('cat /v/a; echo; stat -c %a /v/..data/c', { fs });
    assert.equal(r.stdout, 'one\n400\n');
  });

  it('keys with directories link their top-level name', () => {
    const vol = buildAtomicVolume({ 'dir/file': { content: 'x' } }, T0);
    const fs = new FileSystem();
    fs.mount('/m', vol);
    assert.equal(fs.readText('/m/dir/file'), 'x');
    assert.equal(fs.readlink('/m/dir'), '..data/dir');
  });
});
