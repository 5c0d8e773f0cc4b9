/**
 * The committed OpenAPI data (data/openapi/*.json.gz, written by
 * scripts/gen-openapi.mjs), loaded lazily on first use and cached for the
 * process. The data folder is found by walking up from this module, so the
 * same code works from src/ (ts) and from dist/src/ (compiled).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

/** Strategic-merge and field-ownership facts of one field of a definition. */
export interface FieldMeta {
  /** The definition of an object-valued field. */
  ref?: string;
  /** List items: a definition name, a primitive type ('string', 'integer', ...) or 'scalar'. */
  items?: string;
  /** Map values (additionalProperties): a definition name or 'scalar'. */
  map?: string;
  /** x-kubernetes-patch-merge-key */
  mergeKey?: string;
  /** x-kubernetes-patch-strategy, e.g. 'merge', 'merge,retainKeys', 'replace' */
  strategy?: string;
  /** x-kubernetes-list-type: 'atomic' | 'set' | 'map' */
  listType?: string;
  /** x-kubernetes-list-map-keys */
  mapKeys?: string[];
}

export interface PatchMetaTable {
  /** `group/version/Kind` (group '' for core) -> definition name. */
  kinds: Record<string, string>;
  /** definition name -> field name -> meta (fields without any meta are absent). */
  defs: Record<string, Record<string, FieldMeta>>;
}

/** An OpenAPI v2 document (only the parts we touch are typed). */
export interface SwaggerDocument {
  swagger: string;
  info: Record<string, unknown>;
  paths: Record<string, Record<string, unknown>>;
  definitions: Record<string, Record<string, unknown>>;
  [k: string]: unknown;
}

let dataDir: string | undefined;

/** The `data/openapi` folder of the package; throws when it cannot be found. */
export function openApiDataDir(): string {
  if (dataDir) return dataDir;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'data', 'openapi');
    if (existsSync(join(candidate, 'patch-meta.json.gz'))) return (dataDir = candidate);
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`data/openapi not found above ${dirname(fileURLToPath(import.meta.url))}; run scripts/gen-openapi.mjs`);
    dir = parent;
  }
}

function loadGz<T>(name: string): T {
  const file = join(openApiDataDir(), name);
  try {
    return JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as T;
  } catch (err) {
    throw new Error(`cannot load ${file}: ${(err as Error).message}`, { cause: err });
  }
}

let patchMeta: PatchMetaTable | undefined;
let swagger: SwaggerDocument | undefined;

/** The patch-meta table; shared, read-only. */
export function patchMetaTable(): PatchMetaTable {
  return (patchMeta ??= loadGz<PatchMetaTable>('patch-meta.json.gz'));
}

/**
 * The built-in OpenAPI v2 document; shared, read-only (clone before changing).
 * Its `paths`, three quarters of it and needed only to serve /openapi, are
 * read on first use from a file of their own: decoding the first write's body
 * needs only the definitions, and parsing the whole document cost the API
 * server a tenth of a second at start and 15 MB of heap.
 */
export function builtinSwagger(): SwaggerDocument {
  return (swagger ??= withLazyPaths(loadGz<SwaggerDocument>('swagger.json.gz'), () => loadGz('swagger-paths.json.gz')));
}

/**
 * Makes `doc.paths` an enumerable getter that calls `load` once, in the
 * position `paths` has in `doc` (JSON.stringify sees the same document).
 * Spread and rest copies read it; copy with `Object.getOwnPropertyDescriptors`
 * to keep it lazy.
 */
export function withLazyPaths(doc: SwaggerDocument, load: () => SwaggerDocument['paths']): SwaggerDocument {
  let paths: SwaggerDocument['paths'] | undefined;
  Object.defineProperty(doc, 'paths', { enumerable: true, configurable: true, get: () => (paths ??= load()) });
  return doc;
}
