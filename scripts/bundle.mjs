#!/usr/bin/env node
/**
 * Bundles the `kcm` command from the compiled dist/src into dist/bundle
 * (esbuild): one module graph of a few files instead of some 900 modules and
 * three CommonJS packages, which Node reads, resolves and compiles one by one.
 * That loading was most of `kcm up`'s start (about 0.7 s per process on two
 * cores); bundled it is about a third of that.
 *
 * Entries: the command (kcm.js) and kcm up's controller side
 * (controller-side-main.js, which supervisor.ts forks from beside itself:
 * every output file sits in dist/bundle). Controller modules stay lazy
 * chunks (the registry imports them only when enabled). better-sqlite3 is
 * native and stays external. bin/kcm.js runs the bundle when it is at least
 * as new as dist/src (a `tsc` after it makes it stale, and dist/src is used).
 * The library (kcm/client, kcm/runtime, ...) is dist/src, not the bundle.
 */
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/bundle`;
rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
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
