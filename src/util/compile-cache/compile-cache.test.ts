import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { defaultCacheDir, loadBundle, privateDir } from './compile-cache.js';

/**
 * Loads `bundle` in a new process (V8 keeps what it compiled in memory, so a second load in one process never
 * reads the cache) and returns what loadBundle said of the cache; `save` writes it afterwards.
 */
function loadInChild(bundle: URL, cacheDir: string, save = false): string {
  const script = `
    import { loadBundle } from ${JSON.stringify(new URL('./compile-cache.js', import.meta.url).href)};
    const b = loadBundle(new URL(${JSON.stringify(bundle.href)}), { cacheDir: ${JSON.stringify(cacheDir)} });
    if (b.exports.add(2, 2) !== 4) process.exit(3);
    process.stdout.write(b.cache + (${save} ? ' saved=' + b.saveCache() : ''));`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
}

describe('compile cache', () => {
  let dir: string;
  let bundle: URL;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kcm-compile-cache-'));
    const file = join(dir, 'b.cjs');
    writeFileSync(
      file,
      [
        "const { basename } = require('node:path');",
        'exports.name = basename(__filename);',
        'exports.add = function add(a, b) { return a + b; };',
        'exports.where = () => new Error().stack.split("\\n")[1];',
        'module.exports.self = module.exports;',
      ].join('\n'),
    );
    bundle = pathToFileURL(file);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs the file as CommonJS: require, __filename, exports and module.exports, stack frames at its own lines', () => {
    const b = loadBundle(bundle, { cacheDir: null });
    assert.equal(b.cache, 'off');
    assert.equal(b.exports.name, 'b.cjs');
    assert.equal((b.exports.add as (a: number, b: number) => number)(2, 3), 5);
    assert.equal(b.exports.self, b.exports);
    assert.match((b.exports.where as () => string)(), /b\.cjs:4:/);
    assert.equal(b.saveCache(), false);
  });

  it('misses, writes the cache on request, then compiles from it; a corrupt cache is rejected and rewritten', () => {
    const cacheDir = join(dir, 'cache');
    mkdirSync(cacheDir, { mode: 0o700 });
    assert.equal(loadInChild(bundle, cacheDir), 'miss');
    assert.deepEqual(readdirSync(cacheDir), []);
    assert.equal(loadInChild(bundle, cacheDir, true), 'miss saved=true');
    const [file] = readdirSync(cacheDir);
    assert.ok(file?.endsWith('.bin'));
    assert.equal(statSync(join(cacheDir, file)).mode & 0o777, 0o600);
    assert.equal(loadInChild(bundle, cacheDir), 'hit');

    writeFileSync(join(cacheDir, file), Buffer.alloc(64, 7));
    assert.equal(loadInChild(bundle, cacheDir, true), 'rejected saved=true');
    assert.equal(loadInChild(bundle, cacheDir), 'hit');
  });

  it('keys the cache by the text: a changed bundle misses', () => {
    const cacheDir = join(dir, 'cache2');
    mkdirSync(cacheDir, { mode: 0o700 });
    assert.ok(loadBundle(bundle, { cacheDir }).saveCache());
    const other = join(dir, 'c.cjs');
    writeFileSync(other, 'exports.add = (a, b) => a + b; // another text');
    assert.equal(loadInChild(pathToFileURL(other), cacheDir, true), 'miss saved=true');
    assert.equal(loadInChild(bundle, cacheDir), 'hit');
    const before = readdirSync(cacheDir).sort();
    assert.equal(before.length, 2);
    assert.match(before[0]!, /^b\.cjs-[0-9a-f]{40}\.bin$/);
    assert.match(before[1]!, /^c\.cjs-[0-9a-f]{40}\.bin$/);
    // a new text of c.cjs: its cache replaces the old text's, b's stays
    writeFileSync(other, 'exports.add = (a, b) => a + b; // a third text');
    assert.equal(loadInChild(pathToFileURL(other), cacheDir, true), 'miss saved=true');
    const after = readdirSync(cacheDir).sort();
    assert.equal(after.length, 2);
    assert.equal(after[0], before[0]);
    assert.notEqual(after[1], before[1]);
    assert.equal(loadInChild(pathToFileURL(other), cacheDir), 'hit');
  });

  it('uses only a directory no one else can write, and none with KCM_COMPILE_CACHE=0', () => {
    const open = join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    assert.equal(privateDir(open), undefined);
    const made = privateDir(join(dir, 'made', 'deep'));
    assert.ok(made);
    assert.equal(statSync(made).mode & 0o777, 0o700);
    assert.equal(defaultCacheDir({ XDG_CACHE_HOME: join(dir, 'xdg') }), join(dir, 'xdg', 'kcm', 'v8-cache'));
    assert.equal(defaultCacheDir({ XDG_CACHE_HOME: join(dir, 'xdg'), KCM_COMPILE_CACHE: '0' }), undefined);
  });
});
