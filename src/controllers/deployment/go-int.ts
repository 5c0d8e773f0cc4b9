/**
 * Integers as Go's strconv parses them. Annotations such as
 * `deployment.kubernetes.io/revision` are int64 upstream; JavaScript numbers
 * lose precision above 2^53, so they are parsed, compared and incremented as
 * bigint and written back with String().
 */

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/** strconv.ParseInt(s, 10, 64): undefined when not a base-10 integer or out of int64 range. */
export function parseInt64(s: string | undefined): bigint | undefined {
  if (s === undefined || !/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

/** Go's int64 addition (wraps around on overflow, as `max + 1` does upstream). */
export function addInt64(a: bigint, b: bigint): bigint {
  return BigInt.asIntN(64, a + b);
}

/**
 * `int32(strconv.Atoi(s))` as upstream's getIntFromAnnotation does: Atoi is a
 * 64-bit ParseInt, the conversion to int32 keeps the low 32 bits.
 */
export function atoiInt32(s: string | undefined): number | undefined {
  const n = parseInt64(s);
  return n === undefined ? undefined : Number(BigInt.asIntN(32, n));
}
