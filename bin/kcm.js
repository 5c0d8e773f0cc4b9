#!/usr/bin/env node
// The kcm command. The TypeScript sources compile to dist/src on `npm install` (prepare), and scripts/bundle.mjs bundles
// the command into dist/bundle, which loads in a third of the time. The bundle runs unless a `tsc` wrote dist/src after
// it (tsc rewrites dist/.tsbuildinfo whenever it emits; the file is absent from a published package); KCM_BUNDLE=0 runs
// dist/src.
import { statSync } from 'node:fs';

const src = new URL('../dist/src/cmd/kcm.js', import.meta.url);
const bundle = new URL('../dist/bundle/kcm.js', import.meta.url);
const compiled = new URL('../dist/.tsbuildinfo', import.meta.url);
const mtime = (u) => {
  try {
    return statSync(u).mtimeMs;
  } catch {
    return -1;
  }
};
const entry = process.env.KCM_BUNDLE !== '0' && mtime(bundle) >= mtime(compiled) ? bundle : src;
const { main } = await import(entry.href);

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`kcm: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
