/** Golden files of the proxy's tests: read from the source tree (src/proxy/testdata), rewritten with UPDATE_GOLDEN=1. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from dist/src/proxy/testdata/golden.js. */
const root = fileURLToPath(new URL('../../../../', import.meta.url));
export const testdataDir = join(root, 'src', 'proxy', 'testdata');

export function assertGolden(name: string, actual: string): void {
  const file = join(testdataDir, name);
  if (process.env.UPDATE_GOLDEN === '1') {
    writeFileSync(file, actual);
    return;
  }
  assert.ok(existsSync(file), `golden file ${file} is missing (run with UPDATE_GOLDEN=1 to write it)`);
  assert.equal(actual, readFileSync(file, 'utf8'), `output differs from ${file} (UPDATE_GOLDEN=1 rewrites it)`);
}
