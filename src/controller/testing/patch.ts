/**
 * Patch application for the fake client: RFC 7396 merge patch, RFC 6902 JSON
 * patch, and a small strategic merge patch that knows the merge keys of the
 * lists controllers patch (ownerReferences by uid, conditions by type,
 * containers by name, finalizers as a set, ...) and the `$patch: delete` /
 * `$patch: replace` directives and `$deleteFromPrimitiveList/<field>`.
 * Not a full strategic merge: unknown lists are replaced, as in a merge patch.
 */
import { StatusError, newStatus } from '../../client/errors.js';
import { deepCopy } from '../../util/json/deep-copy.js';

type Json = unknown;
type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function badRequest(message: string): StatusError {
  return new StatusError(newStatus(400, 'BadRequest', message));
}

function unprocessable(message: string): StatusError {
  return new StatusError(newStatus(422, 'Invalid', message));
}

/** RFC 7396: objects merge recursively, null deletes, anything else replaces. */
export function applyMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return deepCopy(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw unprocessable(`invalid JSON pointer ${JSON.stringify(path)}`);
  return path.slice(1).split('/').map(unescapePointer);
}

function getAt(doc: Json, tokens: string[]): Json {
  let cur: Json = doc;
  for (const t of tokens) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else return undefined;
  }
  return cur;
}

function parentOf(doc: Json, tokens: string[], op: string): { parent: JsonObject | Json[]; last: string } {
  const parent = getAt(doc, tokens.slice(0, -1));
  if (!Array.isArray(parent) && !isObject(parent)) {
    throw unprocessable(`${op} operation does not apply: doc is missing path: /${tokens.join('/')}`);
  }
  return { parent, last: tokens[tokens.length - 1]! };
}

function arrayIndex(arr: Json[], token: string, allowEnd: boolean): number {
  if (token === '-' && allowEnd) return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw unprocessable(`invalid array index ${token}`);
  const i = Number(token);
  if (i > arr.length || (!allowEnd && i === arr.length)) throw unprocessable(`array index ${i} out of bounds`);
  return i;
}

function addAt(doc: Json, tokens: string[], value: Json): Json {
  if (tokens.length === 0) return deepCopy(value);
  const { parent, last } = parentOf(doc, tokens, 'add');
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true), 0, deepCopy(value));
  else parent[last] = deepCopy(value);
  return doc;
}

function removeAt(doc: Json, tokens: string[]): Json {
  const { parent, last } = parentOf(doc, tokens, 'remove');
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, false), 1);
  else {
    if (!(last in parent)) throw unprocessable(`remove operation does not apply: doc is missing key: /${tokens.join('/')}`);
    delete parent[last];
  }
  return doc;
}

function deepEqual(a: Json, b: Json): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k]);
  return out;
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

/** RFC 6902: add, remove, replace, move, copy, test. A failing test fails the whole patch. */
export function applyJsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw badRequest('json patch must be an array of operations');
  let doc: Json = deepCopy(target);
  for (const raw of ops as JsonPatchOp[]) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') throw badRequest('invalid json patch operation');
    const tokens = parsePointer(raw.path);
    switch (raw.op) {
      case 'add':
        doc = addAt(doc, tokens, raw.value);
        break;
      case 'remove':
        doc = removeAt(doc, tokens);
        break;
      case 'replace':
        if (tokens.length === 0) doc = deepCopy(raw.value);
        else {
          if (getAt(doc, tokens) === undefined) throw unprocessable(`replace operation does not apply: doc is missing key: ${raw.path}`);
          doc = removeAt(doc, tokens);
          doc = addAt(doc, tokens, raw.value);
        }
        break;
      case 'move': {
        const from = parsePointer(raw.from ?? '');
        const v = getAt(doc, from);
        if (v === undefined) throw unprocessable(`move operation does not apply: doc is missing from path: ${raw.from}`);
        doc = removeAt(doc, from);
        doc = addAt(doc, tokens, v);
        break;
      }
      case 'copy': {
        const v = getAt(doc, parsePointer(raw.from ?? ''));
        if (v === undefined) throw unprocessable(`copy operation does not apply: doc is missing from path: ${raw.from}`);
        doc = addAt(doc, tokens, v);
        break;
      }
      case 'test':
        if (!deepEqual(getAt(doc, tokens), raw.value)) throw unprocessable(`testing value ${raw.path} failed`);
        break;
      default:
        throw badRequest(`unknown json patch operation ${JSON.stringify(raw.op)}`);
    }
  }
  return doc;
}

/** Merge keys of object lists, by field name (the patchMergeKey tags of the types controllers patch). */
const MERGE_KEYS: Record<string, string> = {
  ownerReferences: 'uid',
  conditions: 'type',
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  containerStatuses: 'name',
  initContainerStatuses: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  taints: 'key',
  addresses: 'type',
  resourceClaims: 'name',
};

/** Lists of scalars merged as sets (patchStrategy:"merge" on a primitive list). */
const PRIMITIVE_MERGE_LISTS = new Set(['finalizers']);

/**
 * A strategic merge patch limited to the lists in MERGE_KEYS and
 * PRIMITIVE_MERGE_LISTS; everything else behaves as a merge patch.
 */
export function applyStrategicMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) throw badRequest('strategic merge patch must be an object');
  return mergeObject(isObject(target) ? target : {}, patch);
}

function mergeObject(target: JsonObject, patch: JsonObject): JsonObject {
  if (patch.$patch === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return stripDirectives(rest) as JsonObject;
  }
  if (patch.$patch === 'delete') return {};
  const out: JsonObject = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const drop = new Set(Array.isArray(v) ? v.map((x) => JSON.stringify(x)) : []);
      const cur = out[field];
      if (Array.isArray(cur)) out[field] = cur.filter((x) => !drop.has(JSON.stringify(x)));
      continue;
    }
    if (k.startsWith('$setElementOrder/') || k === '$retainKeys' || k === '$patch') continue;
    if (v === null) {
      delete out[k];
      continue;
    }
    const cur = out[k];
    if (Array.isArray(v)) {
      const merged = mergeList(k, Array.isArray(cur) ? cur : [], v);
      // Kubernetes lists are omitempty: a list emptied by the patch disappears.
      if (merged.length === 0 && v.length > 0) delete out[k];
      else out[k] = merged;
    } else if (isObject(v)) {
      out[k] = mergeObject(isObject(cur) ? cur : {}, v);
    } else {
      out[k] = v;
    }
  }
  return out;
}

function mergeList(field: string, cur: Json[], patch: Json[]): Json[] {
  const mergeKey = MERGE_KEYS[field];
  if (PRIMITIVE_MERGE_LISTS.has(field)) {
    const out = [...cur];
    for (const x of patch) if (!out.some((y) => deepEqual(x, y))) out.push(x);
    return out;
  }
  if (!mergeKey) {
    // $patch: replace as a list element means "replace the list"; plain lists are replaced.
    return patch.filter((x) => !(isObject(x) && x.$patch)).map(stripDirectives);
  }
  if (patch.some((x) => isObject(x) && x.$patch === 'replace')) {
    return patch.filter((x) => !(isObject(x) && x.$patch === 'replace')).map(stripDirectives);
  }
  const out: Json[] = cur.map((x) => x);
  for (const item of patch) {
    if (!isObject(item)) {
      out.push(item);
      continue;
    }
    const keyValue = item[mergeKey];
    const idx = out.findIndex((x) => isObject(x) && keyValue !== undefined && deepEqual(x[mergeKey], keyValue));
    if (item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = mergeObject(out[idx] as JsonObject, item);
    else out.push(stripDirectives(item));
  }
  return out;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('$')) continue;
    out[k] = stripDirectives(x);
  }
  return out;
}
