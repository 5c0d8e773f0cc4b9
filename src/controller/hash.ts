/**
 * Template hashes for names and labels (`pod-template-hash`, ...), shaped like
 * pkg/controller ComputeHash: FNV-32a, the collision count appended as 8
 * bytes (little-endian uint32 then zeros), the decimal uint32 encoded with
 * apimachinery's rand.SafeEncodeString.
 *
 * Deliberate difference: upstream hashes Go's spew dump of the struct; we hash
 * a canonical JSON serialisation (object keys sorted, undefined dropped). Equal
 * templates give equal hashes and the output has upstream's shape, but the
 * values are not upstream's.
 */

/** apimachinery's alphabet: no vowels (no words), no 0/1/3 (confusable). */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** apimachinery rand.SafeEncodeString: every character c becomes alphabet[code(c) % 27]. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += SAFE_ALPHABET[s.charCodeAt(i) % SAFE_ALPHABET.length];
  return out;
}

/** JSON with object keys sorted at every level and undefined members dropped. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return '[' + value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',') + ']';
  const obj = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(obj).sort()) {
    const v = obj[k];
    if (v === undefined || typeof v === 'function') continue;
    parts.push(JSON.stringify(k) + ':' + canonicalJson(v));
  }
  return '{' + parts.join(',') + '}';
}

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** A running FNV-32a hash. */
export interface Fnv32a {
  write(bytes: Uint8Array): void;
  sum32(): number;
}

export function newFnv32a(): Fnv32a {
  let h = FNV32_OFFSET;
  return {
    write(bytes) {
      for (let i = 0; i < bytes.length; i++) {
        h ^= bytes[i]!;
        h = Math.imul(h, FNV32_PRIME) >>> 0;
      }
    },
    sum32: () => h >>> 0,
  };
}

/** FNV-32a of the canonical JSON of `obj` (hashutil.DeepHashObject with our serialisation). */
export function deepHashObject(hasher: Fnv32a, obj: unknown): void {
  hasher.write(new TextEncoder().encode(canonicalJson(obj)));
}

/**
 * The hash of a pod template (or any object), with the collision count
 * mixed in when given, as a short safe string (e.g. `5d4f8c9b7`).
 */
export function computeHash(template: unknown, collisionCount?: number | null): string {
  const hasher = newFnv32a();
  deepHashObject(hasher, template);
  if (collisionCount !== undefined && collisionCount !== null) {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setUint32(0, collisionCount >>> 0, true);
    hasher.write(bytes);
  }
  return safeEncodeString(String(hasher.sum32()));
}
