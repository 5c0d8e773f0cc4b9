import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FileSystem, FsError, atomicDirName, buildAtomicVolume, createStandardFs, newDir, updateAtomicVolume, dirname, basename } from './fs.js';
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
