/**
 * The RFC 6902 JSON patch that turns one JSON value into another, as a
 * mutating webhook answers (controller-runtime's admission.PatchResponse
 * from the original and the mutated object).
 *
 * Objects are diffed key by key; lists of equal length element by element,
 * lists whose length changed are replaced whole (always correct, and short
 * for the lists webhooks usually touch).
 */
import { deepEqual } from '../../api/equality.js';

export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace';
  path: string;
  value?: unknown;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON pointer token: `~` as `~0`, `/` as `~1`. */
function token(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

function diff(from: unknown, to: unknown, path: string, out: JsonPatchOperation[]): void {
  if (deepEqual(from, to)) return;
  if (isObject(from) && isObject(to)) {
    for (const k of Object.keys(from)) {
      if (from[k] !== undefined && (!(k in to) || to[k] === undefined)) out.push({ op: 'remove', path: `${path}/${token(k)}` });
    }
    for (const [k, v] of Object.entries(to)) {
      if (v === undefined) continue;
      if (!(k in from) || from[k] === undefined) out.push({ op: 'add', path: `${path}/${token(k)}`, value: v });
      else diff(from[k], v, `${path}/${token(k)}`, out);
    }
    return;
  }
  if (Array.isArray(from) && Array.isArray(to) && from.length === to.length) {
    for (let i = 0; i < to.length; i++) diff(from[i], to[i], `${path}/${i}`, out);
    return;
  }
  out.push({ op: 'replace', path, value: to });
}

/** The operations turning `from` into `to` (empty when they are equal). */
export function createJsonPatch(from: unknown, to: unknown): JsonPatchOperation[] {
  const out: JsonPatchOperation[] = [];
  diff(from, to, '', out);
  return out;
}
