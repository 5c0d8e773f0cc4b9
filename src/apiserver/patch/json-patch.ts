/**
 * JSON Patch (RFC 6902) with JSON Pointers (RFC 6901), as kube-apiserver
 * applies it (evanphx/json-patch v4): operations run in order on a copy; the
 * first failing operation fails the whole patch and nothing is changed.
 *
 * Errors: a body that is not a list of operations -> PatchError 400 (decode);
 * an operation that does not apply -> PatchError 422.
 */
import { PatchError } from './patch-errors.js';
import { copyWithSize, isObject, jsonEqual } from './json-value.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: unknown;
}

/** Checks the shape of a JSON patch document. Throws PatchError(400). */
export function decodeJsonPatch(body: unknown): JsonPatchOperation[] {
  if (!Array.isArray(body)) {
    const t = isObject(body) ? 'object' : body === null ? 'null' : typeof body;
    throw new PatchError(`json: cannot unmarshal ${t} into Go value of type jsonpatch.Patch`, 400);
  }
  return body.map((op, i) => {
    if (!isObject(op)) throw new PatchError(`json: cannot unmarshal ${Array.isArray(op) ? 'array' : typeof op} into Go value of type jsonpatch.Operation`, 400);
    if (typeof op.op !== 'string') throw new PatchError(`operation ${i} is missing "op"`, 400);
    if (op.path !== undefined && typeof op.path !== 'string') throw new PatchError(`operation ${i}: "path" must be a string`, 400);
    return op as unknown as JsonPatchOperation;
  });
}

/** Splits a JSON pointer into unescaped tokens ('' is the whole document). */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError(`JSON pointer must be empty or start with a "/": ${JSON.stringify(pointer)}`, 422);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

/** Resolves the parent container of `tokens` or throws `missing`. */
function parentOf(doc: unknown, tokens: string[], path: string, opName: string): Container {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) {
      const i = arrayIndex(t, cur.length, false);
      cur = i === undefined ? undefined : cur[i];
    } else if (isObject(cur)) {
      cur = Object.prototype.hasOwnProperty.call(cur, t) ? cur[t] : undefined;
    } else cur = undefined;
    if (cur === undefined) throw missing(opName, path);
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw missing(opName, path);
  return cur;
}

function missing(opName: string, path: string): PatchError {
  // evanphx/json-patch v4 (what kube-apiserver vendors) quotes the path for add and remove, not for replace.
  const shown = opName === 'replace' ? path : `"${path}"`;
  return new PatchError(`${opName} operation does not apply: doc is missing path: ${shown}: missing value`, 422);
}

/** A valid array index for reading (< len) or inserting (<= len); undefined if invalid. */
function arrayIndex(token: string, len: number, forInsert: boolean): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
  const i = Number(token);
  return i < len || (forInsert && i === len) ? i : undefined;
}

function invalidIndex(token: string): PatchError {
  return new PatchError(`Unable to access invalid index: ${token}: invalid index referenced`, 422);
}

function getAt(doc: unknown, path: string, opName: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return doc;
  const parent = parentOf(doc, tokens, path, opName);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const i = arrayIndex(last, parent.length, false);
    if (i === undefined) throw invalidIndex(last);
    return parent[i];
  }
  if (!Object.prototype.hasOwnProperty.call(parent, last)) throw missing(opName, path);
  return parent[last];
}

function addAt(doc: unknown, path: string, value: unknown, opName: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens, path, opName);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    if (last === '-') parent.push(value);
    else {
      const i = arrayIndex(last, parent.length, true);
      if (i === undefined) throw invalidIndex(last);
      parent.splice(i, 0, value);
    }
  } else parent[last] = value;
  return doc;
}

function removeAt(doc: unknown, path: string, opName: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) throw new PatchError(`${opName} operation does not apply: cannot remove the whole document`, 422);
  const parent = parentOf(doc, tokens, path, opName);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const i = arrayIndex(last, parent.length, false);
    if (i === undefined) throw invalidIndex(last);
    parent.splice(i, 1);
  } else {
    if (!Object.prototype.hasOwnProperty.call(parent, last)) throw new PatchError(`Unable to remove nonexistent key: ${last}: missing value`, 422);
    delete parent[last];
  }
  return doc;
}

function replaceAt(doc: unknown, path: string, value: unknown): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens, path, 'replace');
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const i = arrayIndex(last, parent.length, false);
    if (i === undefined) throw invalidIndex(last);
    parent[i] = value;
  } else {
    if (!Object.prototype.hasOwnProperty.call(parent, last)) throw new PatchError(`replace operation does not apply: doc is missing key: ${path}: missing value`, 422);
    parent[last] = value;
  }
  return doc;
}

function requireValue(op: JsonPatchOperation, i: number): unknown {
  if (!Object.prototype.hasOwnProperty.call(op, 'value')) throw new PatchError(`${op.op} operation ${i} is missing "value"`, 422);
  return deepCopy(op.value);
}

function requireString(v: unknown, what: string, op: string): string {
  if (typeof v !== 'string') throw new PatchError(`${op} operation does not apply: ${what} is missing`, 422);
  return v;
}

/**
 * What kube-apiserver lets the copies of one JSON patch add up to (its
 * --json-patch-max-copy-bytes, the request body limit): a few copy
 * operations could otherwise double the document again and again.
 */
export const maxJsonPatchCopyBytes = 3 * 1024 * 1024;

/**
 * Applies `ops` to a copy of `doc` and returns the result; `doc` is not
 * changed. Nothing here recurses over values (copies and tests are
 * iterative), so the document may nest deeper than the server accepts while
 * operations run; the caller checks the result.
 */
export function applyJsonPatch(doc: unknown, ops: readonly JsonPatchOperation[]): unknown {
  let cur = deepCopy(doc);
  let copied = 0;
  ops.forEach((op, i) => {
    switch (op.op) {
      case 'add':
        cur = addAt(cur, requireString(op.path, 'path', 'add'), requireValue(op, i), 'add');
        break;
      case 'remove':
        cur = removeAt(cur, requireString(op.path, 'path', 'remove'), 'remove');
        break;
      case 'replace':
        cur = replaceAt(cur, requireString(op.path, 'path', 'replace'), requireValue(op, i));
        break;
      case 'move': {
        const from = requireString(op.from, 'from', 'move');
        const path = requireString(op.path, 'path', 'move');
        if (path !== from && path.startsWith(`${from}/`)) throw new PatchError(`move operation does not apply: cannot move "${from}" into its own child "${path}"`, 422);
        const v = getAt(cur, from, 'move');
        cur = removeAt(cur, from, 'move');
        cur = addAt(cur, path, v, 'move');
        break;
      }
      case 'copy': {
        const { copy, size } = copyWithSize(getAt(cur, requireString(op.from, 'from', 'copy'), 'copy'));
        copied += size;
        if (copied > maxJsonPatchCopyBytes) {
          throw new PatchError(`Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${maxJsonPatchCopyBytes}`, 422);
        }
        cur = addAt(cur, requireString(op.path, 'path', 'copy'), copy, 'copy');
        break;
      }
      case 'test': {
        const path = requireString(op.path, 'path', 'test');
        let actual: unknown;
        try {
          actual = getAt(cur, path, 'test');
        } catch (err) {
          if (!(err instanceof PatchError)) throw err;
          actual = undefined;
        }
        const expected = op.value === undefined ? null : op.value;
        if (!jsonEqual(actual === undefined ? null : actual, expected) || (actual === undefined && op.value !== null && op.value !== undefined)) {
          throw new PatchError(`testing value ${path} failed: test failed`, 422);
        }
        break;
      }
      default:
        throw new PatchError(`Unexpected kind: ${String((op as { op: unknown }).op)}`, 422);
    }
  });
  return cur;
}
