/**
 * The data directory holds everything an attacker on the same machine
 * wants: the database (every Secret), the CA and service-account keys, the
 * admin kubeconfig. It is kept private whatever mode the directory had when
 * kcm found it (a data dir made by `mkdir -p` is 0755): folders 0700, files
 * 0600 (certificates, which are public, may be 0644), looser modes
 * tightened at start with a log line each. New files are
 * private from the start: the server process creates files with umask 077
 * (SQLite gives its -wal and -shm files the database file's mode).
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../util/log/logger.js';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** What kcm keeps in a data dir: these are made private, recursively (other entries are left alone). */
const OWNED = ['db', 'pki', 'kubeconfig'];

/** A mode change made to keep a path private. */
export interface Tightened {
  path: string;
  from: number;
  to: number;
}

function tighten(path: string, want: number, log: Logger | undefined, out: Tightened[]): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return; // never follow links out of the data dir
  const mode = st.mode & 0o777;
  if ((mode & 0o077) === 0) return; // no group or other access: private already
  chmodSync(path, want);
  out.push({ path, from: mode, to: want });
  log?.info({ path, from: `0${mode.toString(8)}`, to: `0${want.toString(8)}` }, 'tightened the permissions of a data dir entry other users could read');
}

function walk(path: string, log: Logger | undefined, out: Tightened[], depth: number): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    tighten(path, PRIVATE_DIR_MODE, log, out);
    if (depth > 8) return;
    for (const name of readdirSync(path)) walk(join(path, name), log, out, depth + 1);
  } else if (st.isFile() && !path.endsWith('.crt')) {
    // Certificates are public (0644, as kubeadm writes them); they sit in a 0700 folder anyway.
    tighten(path, PRIVATE_FILE_MODE, log, out);
  }
}

/**
 * Creates `dataDir` (0700) if needed and makes it and kcm's entries in it
 * (db/, pki/, kubeconfig) private. Returns the changes it made.
 */
export function securePrivateDataDir(dataDir: string, log?: Logger): Tightened[] {
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const out: Tightened[] = [];
  tighten(dataDir, PRIVATE_DIR_MODE, log, out);
  for (const name of OWNED) {
    const p = join(dataDir, name);
    if (existsSync(p)) walk(p, log, out, 0);
  }
  return out;
}

/** Makes files the process creates from now on private (umask 077). Returns the previous umask. */
export function usePrivateUmask(): number {
  return process.umask(0o077);
}
