/**
 * Whether `a` and `b` encode to the same JSON up to the order of object
 * members: what comparing their canonical (sorted-key) JSON texts says,
 * without building them. Members whose value is undefined count as absent;
 * undefined as an array element or as the whole value counts as null, as
 * JSON.stringify writes them. (patch/json-value's jsonEqual is for decoded
 * JSON, where no member is undefined, and counts such members as present.)
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return (a ?? null) === (b ?? null);
  const arrays = Array.isArray(a);
  if (arrays !== Array.isArray(b)) return false;
  if (arrays) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!jsonEqual(x[i], y[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let members = 0;
  for (const k in x) {
    const v = x[k];
    if (v === undefined) continue;
    members++;
    const w = y[k];
    if (w === undefined || !jsonEqual(v, w)) return false;
  }
  for (const k in y) if (y[k] !== undefined) members--;
  return members === 0;
}
