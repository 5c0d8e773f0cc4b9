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
 * Entries: the command (kcm.js), code-split: commands and controller modules
 * are lazy chunks (the registry imports a controller only when enabled). Two
 * processes that must start fast are single files instead, built apart:
 * kcm up's controller side (controller-side-main, which supervisor.ts forks
 * from beside itself) and what kcm up loads after forking it (up-entry:
 * flags, API server, supervisor). Through Node's ESM loader a split graph
 * costs per chunk (resolve, stat, read, link: a few hundred imports), which
 * was more than compiling the code. The two are CommonJS (`.cjs`), loaded by
 * load-cached.js (src/util/compile-cache) with V8's code cache, behind an
 * ES module shim of the entry's name. kcm.js marks up-entry.js external, so
 * the up command reaches it; the builds share no module state (kcm.js's up
 * chunk keeps only the fork, whose handle it passes on). Every file is
 * written in ASCII. better-sqlite3 is native and stays external. bin/kcm.js
 * runs the bundle when it is at least as new as dist/src (a `tsc` after it
 * makes it stale, and dist/src is used).
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
const common = {
  absWorkingDir: root,
  write: false,
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // No keepNames: it wraps every function and class, closures included, in a call that defines its `name`
  // property each time one is created. At 1,000 nodes and 30,000 pods that was 30 MB of the controller side's
  // heap and about a quarter of its CPU (178 s to 140 s). keepNames kept only functions' and classes' own names:
  // an error's `name` is the one its class sets, else Error's, either way; CEL's object classes set theirs. Only
  // classes esbuild renames to avoid a clash (two bundled libraries' `Parser`) show the new name when inspected.
  keepNames: false,
  external: ['better-sqlite3'],
  // The CommonJS packages bundled (undici, prom-client, yaml) call require() for Node's modules.
  banner: { js: "import { createRequire as __kcmCreateRequire } from 'node:module'; const require = __kcmCreateRequire(import.meta.url);" },
  logLevel: 'warning',
};
/** kcm up's second stage, built as its own file below. */
const upEntry = {
  name: 'up-entry',
  setup(b) {
    b.onResolve({ filter: /\/up-entry\.js$/ }, () => ({ path: './up-entry.js', external: true }));
  },
};
const split = await build({
  ...common,
  // The API server's TLS thread (tls-front.ts) loads tls-front-worker.js from beside the code that starts it.
  entryPoints: { kcm: 'dist/src/cmd/kcm.js', 'tls-front-worker': 'dist/src/apiserver/serve/tls-front-worker.js' },
  splitting: true,
  chunkNames: 'chunk-[hash]',
  plugins: [upEntry],
});
// The two single files are CommonJS, loaded by load-cached.js with V8's code cache; an ES module shim of the same
// name (what kcm.js imports and supervisor.ts forks) loads each and re-exports what it exports.
const singleEntries = { 'up-entry': 'dist/src/up/up-entry.js', 'controller-side-main': 'dist/src/up/controller-side-main.js' };
const single = await build({
  ...common,
  entryPoints: singleEntries,
  splitting: false,
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  metafile: true,
  define: { 'import.meta.url': '__kcmImportMetaUrl' },
  banner: { js: "const __kcmImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
});
// Their export names, from an unbundled ES module build of the entries (a CommonJS output lists none).
const probe = await build({ absWorkingDir: root, write: false, outdir, format: 'esm', entryPoints: singleEntries, metafile: true, logLevel: 'warning' });
const exportsOf = new Map(Object.values(probe.metafile.outputs).map((o) => [o.entryPoint, o.exports]));
const shims = Object.entries(singleEntries).map(([name, entry]) => {
  const names = (exportsOf.get(entry) ?? []).filter((e) => e !== 'default');
  const text =
    `// kcm's ${name}: loads ${name}.cjs (scripts/bundle.mjs) with V8's code cache.\n` +
    `import { loadCached } from './load-cached.js';\n` +
    `const m = loadCached(new URL('./${name}.cjs', import.meta.url));\n` +
    names.map((e) => `export const ${e} = m.${e};\n`).join('');
  return { path: join(outdir, `${name}.js`), contents: Buffer.from(text) };
});
// src/util/compile-cache/compile-cache.ts as tsc compiled it (it imports only Node's modules).
const loader = { path: join(outdir, 'load-cached.js'), contents: readFileSync(`${root}dist/src/util/compile-cache/compile-cache.js`) };
const result = { outputFiles: [...split.outputFiles, ...single.outputFiles, ...shims, loader] };

// esbuild leaves a few non-ASCII characters (in regular expressions, comments); one makes V8 hold the whole file as a
// two-byte string, decoded and scanned at twice the cost (30 ms for up-entry.cjs). Escaped, the files are ASCII.
const ascii = (bytes) => {
  const text = Buffer.from(bytes).toString('utf8');
  return /[^\x00-\x7f]/.test(text) ? Buffer.from(text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)) : bytes;
};
const files = new Map(result.outputFiles.map((f) => [basename(f.path), ascii(f.contents)]));
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
