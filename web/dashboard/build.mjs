// Builds the dashboard page: src/main.ts → <outdir>/app.js, plus index.html and app.css.
// Usage: node web/dashboard/build.mjs [outdir]   (default: dist/web/dashboard)
// dev-server.mjs is a development harness and is not part of the build.
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** @param {string} outdir @param {{ minify?: boolean }} [opts] */
export async function buildDashboard(outdir, opts = {}) {
  const out = resolve(outdir);
  await mkdir(out, { recursive: true });
  await build({
    entryPoints: [join(here, 'src/main.ts')],
    outfile: join(out, 'app.js'),
    bundle: true,
    format: 'iife',
    target: 'es2022',
    platform: 'browser',
    minify: opts.minify ?? true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  await Promise.all(['index.html', 'app.css'].map((f) => copyFile(join(here, f), join(out, f))));
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildDashboard(process.argv[2] ?? resolve(here, '../../dist/web/dashboard'));
  console.log(`dashboard built into ${out}`);
}
