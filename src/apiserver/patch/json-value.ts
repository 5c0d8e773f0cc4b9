/** Helpers over plain JSON values. */

export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep equality of JSON values (key order does not matter); iterative, so any depth is fine. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const pending: [unknown, unknown][] = [[a, b]];
  while (pending.length) {
    const [x, y] = pending.pop()!;
    if (x === y) continue;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) pending.push([x[i], y[i]]);
      continue;
    }
    if (!isObject(x) || !isObject(y)) return false;
    const kx = Object.keys(x);
    if (kx.length !== Object.keys(y).length) return false;
    for (const k of kx) {
      if (!Object.prototype.hasOwnProperty.call(y, k)) return false;
      pending.push([x[k], y[k]]);
    }
  }
  return true;
}

/**
 * A deep copy of a JSON value and the length of its JSON text in bytes (what
 * evanphx/json-patch's deepCopy measures); iterative, so any depth is fine.
 */
export function copyWithSize(v: unknown): { copy: unknown; size: number } {
  let size = 0;
  let copy: unknown;
  const pending: [unknown, (c: unknown) => void][] = [[v, (c) => (copy = c)]];
  while (pending.length) {
    const [x, put] = pending.pop()!;
    if (Array.isArray(x)) {
      const out: unknown[] = new Array(x.length).fill(null);
      put(out);
      size += 2 + Math.max(0, x.length - 1);
      x.forEach((item, i) => pending.push([item, (c) => (out[i] = c)]));
    } else if (isObject(x)) {
      const out: JsonObject = {};
      put(out);
      const entries = Object.entries(x).filter(([, item]) => item !== undefined);
      size += 2 + Math.max(0, entries.length - 1);
      for (const [k, item] of entries) {
        size += Buffer.byteLength(JSON.stringify(k)) + 1;
        out[k] = null;
        pending.push([item, (c) => (out[k] = c)]);
      }
    } else {
      put(x);
      size += Buffer.byteLength(JSON.stringify(x) ?? 'null');
    }
  }
  return { copy, size };
}

/** Go's %v-ish rendering for error messages. */
export function describe(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}
