/**
 * kcm as an npm package: pack the tarball, check what it ships, install it
 * into a scratch project as `"kcm": "file:<tgz>"`, compile a consumer with
 * tsc --strict (library checks on) and run it against kcm/testing.
 *
 * The install uses npm's cache first (--prefer-offline: `npm ci` already
 * downloaded every dependency) and skips install scripts, so better-sqlite3
 * is not compiled again: the consumer runs the in-memory test API server.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = new URL('../../../', import.meta.url).pathname;
const fixture = join(root, 'test', 'package', 'consumer');

function version(pkg: string): string {
  return (JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
}

interface PackResult {
  filename: string;
  files: { path: string }[];
}

describe('kcm as an npm package', () => {
  let dir: string;
  let pack: PackResult;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kcm-consumer-'));
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    pack = (JSON.parse(stdout) as PackResult[])[0]!;
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ships compiled code, the bundled command, declarations, the API data the embedded server reads, README, LICENSE and docs; no tests, sources, maps or test data', () => {
    const paths = pack.files.map((f) => f.path);
    for (const p of ['LICENSE', 'README.md', 'package.json', 'bin/kcm.js', 'dist/bundle/kcm.js', 'dist/bundle/controller-side-main.js', 'dist/bundle/controller-side-main.cjs', 'dist/bundle/up-entry.js', 'dist/bundle/up-entry.cjs', 'dist/bundle/load-cached.js', 'docs/runtime.md', 'data/openapi/swagger.json.gz', 'data/openapi/swagger-paths.json.gz', 'data/proto/schema.json.gz']) {
      assert.ok(paths.includes(p), `${p} is shipped`);
    }
    for (const sub of ['client', 'cache', 'workqueue', 'leaderelection', 'record', 'runtime', 'testing', 'api']) {
      assert.ok(paths.includes(`dist/src/public/${sub}.js`), `${sub}.js`);
      assert.ok(paths.includes(`dist/src/public/${sub}.d.ts`), `${sub}.d.ts`);
    }
    const unwanted = paths.filter(
      (p) => /\.test\.(js|d\.ts)$/.test(p) || p.endsWith('.map') || p.endsWith('.ts') && !p.endsWith('.d.ts') || /^(src|test|bench|scripts|examples|dist\/test|dist\/bench)\//.test(p) || p.includes('.kcm/') || (p.startsWith('data/') && !/^data\/(openapi\/[^/]+\.json\.gz|proto\/schema\.json\.gz)$/.test(p)),
    );
    assert.deepEqual(unwanted, []);
  });

  it('installs into a scratch project, compiles a strict consumer of every subpath and runs it', async () => {
    const project = join(dir, 'project');
    cpSync(fixture, project, { recursive: true });
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify(
        {
          name: 'kcm-consumer',
          private: true,
          type: 'module',
          dependencies: { kcm: `file:${join(dir, pack.filename)}` },
          devDependencies: { typescript: version('typescript'), '@types/node': version('@types/node') },
        },
        null,
        2,
      ),
    );
    await run('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project, maxBuffer: 16 * 1024 * 1024 });
    try {
      await run(process.execPath, [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: project });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      assert.fail(`the consumer does not compile:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
    const { stdout } = await run(process.execPath, [join(project, 'dist', 'main.js')], { cwd: project, timeout: 60_000 });
    assert.match(stdout, /consumer ok/);
  });
});
