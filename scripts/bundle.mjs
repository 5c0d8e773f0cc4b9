#!/usr/bin/env node
/**
 * Bundles the `kcm` command from the compiled dist/src into dist/bundle
 * (esbuild): one module graph of a few files instead of some 900 modules and
 * three CommonJS packages, which Node reads, resolves and compiles one by one.
 * That loading was most of `kcm up`'s start (about 0.7 s per process on two
 * cores); bundled it is about a third of that.
 *
 * Then it builds the dashboard page (web/dashboard/build.mjs) into dist/web/dashboard.
 *
 * Entries: the command (kcm.js) and kcm up's controller side
 * (controller-side-main.js, which supervisor.ts forks from beside itself:
 * every output file sits in dist/bundle). Controller modules stay lazy
 * chunks (the registry imports them only when enabled). better-sqlite3 is
 * native and stays external. bin/kcm.js runs the bundle when it is at least
 * as new as dist/src (a `tsc` after it makes it stale, and dist/src is used).
 * The library (kcm/client, kcm/runtime, ...) is dist/src, not the bundle.
 *
 * Running kcm processes may be reading dist/bundle (tests run beside a
 * `prepare` that `npm install <kcm checkout>` triggers): an unchanged bundle
 * is left as it is (only its mtime is renewed), and a changed one is written
 * beside it and swapped in by renaming.
 */
import { build } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/bundle`;
const result = await build({
  absWorkingDir: root,
  write: false,
  entryPoints: { kcm: 'dist/src/cmd/kcm.js', 'controller-side-main': 'dist/src/up/controller-side-main.js' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunk-[hash]',
  // Error names and logged class names stay as written.
  keepNames: true,
  external: ['better-sqlite3'],
  // The CommonJS packages bundled (undici, prom-client, yaml) call require() for Node's modules.
  banner: { js: "import { createRequire as __kcmCreateRequire } from 'node:module'; const require = __kcmCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});

const files = new Map(result.outputFiles.map((f) => [basename(f.path), f.contents]));
const unchanged =
  existsSync(outdir) &&
  readdirSync(outdir).length === files.size &&
  [...files].every(([name, bytes]) => existsSync(join(outdir, name)) && Buffer.compare(readFileSync(join(outdir, name)), bytes) === 0);
if (unchanged) {
  const now = new Date();
  utimesSync(join(outdir, 'kcm.js'), now, now);
} else {
  const fresh = `${outdir}.new-${process.pid}`;
  const old = `${outdir}.old-${process.pid}`;
  rmSync(fresh, { recursive: true, force: true });
  mkdirSync(fresh, { recursive: true });
  for (const [name, bytes] of files) writeFileSync(join(fresh, name), bytes);
  if (existsSync(outdir)) renameSync(outdir, old);
  renameSync(fresh, outdir);
  rmSync(old, { recursive: true, force: true });
}

// The dashboard's page (web/dashboard): dist/web/dashboard, which src/dashboard/server.ts serves.
const { buildDashboard } = await import('../web/dashboard/build.mjs');
await buildDashboard(`${root}dist/web/dashboard`);
