#!/usr/bin/env node
// Links the example packages to this checkout (what `npm install` in
// examples/operator does for its "kcm": "file:../.." dependency), so they
// build and test against the kcm in this tree through its public exports.
// Their other imports (typebox, kubernetes-types, @types/node) resolve from
// the root node_modules.
import { existsSync, lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
for (const example of ['examples/operator', 'examples/lab']) {
  const modules = join(root, example, 'node_modules');
  const link = join(modules, 'kcm');
  const target = '../../..';
  mkdirSync(modules, { recursive: true });
  if (existsSync(link) || lstatSync(link, { throwIfNoEntry: false })) {
    const st = lstatSync(link);
    if (st.isSymbolicLink() && readlinkSync(link) === target) continue;
    rmSync(link, { recursive: true, force: true });
  }
  symlinkSync(target, link, 'dir');
}
