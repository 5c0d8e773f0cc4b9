/**
 * Locates src/client/testdata (PEM fixtures, the exec plugin) from compiled
 * tests wherever they were built: up from this module, else from the cwd.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function clientTestdataDir(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const cand = path.join(dir, 'src', 'client', 'testdata');
    if (existsSync(path.join(cand, 'ca.crt'))) return (cached = cand);
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  const cand = path.join(process.cwd(), 'src', 'client', 'testdata');
  if (existsSync(path.join(cand, 'ca.crt'))) return (cached = cand);
  throw new Error('cannot find src/client/testdata; run tests from the repository root');
}

/** Reads a fixture file as text. */
export function clientTestdata(name: string): string {
  return readFileSync(path.join(clientTestdataDir(), name), 'utf8');
}
