/**
 * Integer query parameters as kube-apiserver decodes them into ListOptions,
 * DeleteOptions and friends: Go's strconv.ParseInt(s, 10, 64), whose errors
 * it returns as a 400 with the text as it is.
 */
import { badRequest, type StatusError } from './status.js';

const int64Max = 2n ** 63n - 1n;
const int64Min = -(2n ** 63n);

/** The value of `s` as strconv.ParseInt(s, 10, 64) reads it; throws the 400 for anything else. */
export function parseInt64(s: string): number {
  if (!/^[+-]?[0-9]+$/.test(s)) throw parseIntError(s, 'invalid syntax');
  const n = BigInt(s);
  if (n > int64Max || n < int64Min) throw parseIntError(s, 'value out of range');
  return Number(n);
}

function parseIntError(s: string, why: string): StatusError {
  return badRequest(`strconv.ParseInt: parsing ${JSON.stringify(s)}: ${why}`);
}
