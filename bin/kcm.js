#!/usr/bin/env node
// The kcm command. The TypeScript sources compile to dist/ on `npm install` (prepare).
import { main } from '../dist/src/cmd/kcm.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`kcm: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
