/**
 * Loads a single-file CommonJS bundle with V8's code cache: kcm up's two
 * processes (scripts/bundle.mjs builds dist/bundle/up-entry.cjs and
 * controller-side-main.cjs, and copies this module beside them as
 * load-cached.js, so it imports nothing but Node's modules). A start after
 * the first skips compiling the bundle: its top level and every function
 * that had run when the cache was written, a few seconds after the load, by
 * which time kcm up is ready. Node 20 caches no compiled code itself
 * (module.enableCompileCache came in 22.1).
 *
 * The cache is one file per bundle text, Node version and architecture
 * (`<bundle name>-<hash>.bin`; writing one removes the bundle's others), in
 * $XDG_CACHE_HOME/kcm/v8-cache (default ~/.cache), made 0700. A directory
 * that another user owns, or that group or others may write, is not used:
 * V8 checks a cache against its source's length, not its text, so whoever
 * can write the cache can change the code that runs. V8 rejects a cache made
 * by another V8 version or with other flags, and the bundle then compiles as
 * if there were none (and the cache is written again). KCM_COMPILE_CACHE=0
 * turns the cache off; failing to read or write it only costs compile time.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/** How long after the load the cache is written: kcm up is ready by then, its start-up code compiled. */
export const SAVE_AFTER_MS = 5000;

export interface LoadOptions {
  /** Where cache files live; null: no cache. Default: defaultCacheDir(). */
  cacheDir?: string | null;
  /** Write the cache this long after the load (an unref'd timer) when it was missing or rejected; default none. */
  saveAfterMs?: number;
}

export interface LoadedBundle {
  exports: Record<string, unknown>;
  /** hit: compiled from the cache; miss: no cache file; rejected: V8 refused the file; off: no cache directory. */
  cache: 'hit' | 'miss' | 'rejected' | 'off';
  /** Writes the cache now (what has been compiled so far); false when there is no directory or the write failed. */
  saveCache(): boolean;
}

/** $XDG_CACHE_HOME/kcm/v8-cache or ~/.cache/kcm/v8-cache, created 0700; undefined when off or not safe to use. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.KCM_COMPILE_CACHE === '0') return undefined;
  let base = env.XDG_CACHE_HOME;
  if (!base) {
    let home = '';
    try {
      home = homedir();
    } catch {
      home = '';
    }
    if (!home) return undefined;
    base = join(home, '.cache');
  }
  return privateDir(join(base, 'kcm', 'v8-cache'));
}

/** `dir`, created 0700 if missing, when only this user can write it. */
export function privateDir(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/** Runs the CommonJS file at `url` as Node would require it and returns its exports, with V8's code cache. */
export function loadBundle(url: URL, opts: LoadOptions = {}): LoadedBundle {
  const file = fileURLToPath(url);
  const bytes = readFileSync(file);
  // scripts/bundle.mjs writes the bundles in ASCII, for which latin1 is the cheapest exact decoding.
  const source = bytes.toString('latin1');
  const dir = opts.cacheDir === undefined ? defaultCacheDir() : (opts.cacheDir ?? undefined);
  const name = basename(file);
  const key = dir
    ? join(dir, `${name}-${createHash('sha256').update(bytes).update(`\0${process.version}\0${process.arch}`).digest('hex').slice(0, 40)}.bin`)
    : undefined;
  let cachedData: Buffer | undefined;
  if (key) {
    try {
      cachedData = readFileSync(key);
    } catch {
      cachedData = undefined;
    }
  }
  // Node's CommonJS wrapper, so line 1 of the file is line 1 of the script for stack traces.
  const wrapper = `(function (exports, require, module, __filename, __dirname) { ${source}\n})`;
  const script = new Script(wrapper, { filename: file, ...(cachedData ? { cachedData } : {}) });
  const cache: LoadedBundle['cache'] = !key ? 'off' : !cachedData ? 'miss' : script.cachedDataRejected ? 'rejected' : 'hit';
  const saveCache = (): boolean => {
    if (!key) return false;
    try {
      const tmp = `${key}.${process.pid}.tmp`;
      writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
      renameSync(tmp, key);
      // the caches of this bundle's earlier texts (or of another Node) will not be read again
      for (const f of readdirSync(dir!)) {
        if (f.startsWith(`${name}-`) && f.endsWith('.bin') && join(dir!, f) !== key) rmSync(join(dir!, f), { force: true });
      }
      return true;
    } catch {
      return false;
    }
  };
  const module = { exports: {} as Record<string, unknown> };
  const fn = script.runInThisContext() as (e: unknown, r: NodeJS.Require, m: unknown, f: string, d: string) => void;
  fn.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  if ((cache === 'miss' || cache === 'rejected') && opts.saveAfterMs !== undefined) setTimeout(saveCache, opts.saveAfterMs).unref();
  return { exports: module.exports, cache, saveCache };
}

/** The bundle shims' entry: loadBundle with the default directory, the cache written SAVE_AFTER_MS after a miss. */
export function loadCached(url: URL): Record<string, unknown> {
  return loadBundle(url, { saveAfterMs: SAVE_AFTER_MS }).exports;
}
