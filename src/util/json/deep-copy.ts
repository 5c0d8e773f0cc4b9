/**
 * A deep copy of JSON-shaped data (API objects as decoded from JSON): plain
 * objects and arrays are copied member by member, primitives returned as
 * they are. Anything else inside (a Map, a Uint8Array, a class instance) is
 * copied by structuredClone, so the result is what structuredClone gives for
 * such data, at a fraction of its cost: structuredClone serializes and
 * deserializes through V8's value serializer, which for a Pod takes several
 * times longer than walking it (bench: about 8x). Not for cyclic data.
 */
export function deepCopy<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return structuredClone(v);
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) if (i in v) out[i] = deepCopy(v[i] as unknown);
    return out as T;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const k in v) {
    const x = deepCopy((v as Record<string, unknown>)[k]);
    // JSON.parse makes "__proto__" an own member; assigning it would set the copy's prototype instead.
    if (k === '__proto__') Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
    else out[k] = x;
  }
  return out as T;
}
