/**
 * Resource quantities with apimachinery's resource.Quantity semantics.
 *
 * A Quantity is an exact count of nano-units (bigint) plus the format it was
 * written in. Parsing rounds any finer precision up to 1n (as Kubernetes
 * does: asking for some resource gets at least some). Canonical strings
 * match Quantity.String() except that a leading '+' is never kept.
 */

export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

export interface Quantity {
  /** The value in units of 1e-9, exact. */
  readonly nanos: bigint;
  readonly format: QuantityFormat;
}

/** What API objects hold: a string (`500m`), or a plain JSON number. */
export type QuantityLike = Quantity | string | number;

/** A string that is not a quantity; the message is apimachinery's. */
export class QuantityParseError extends Error {
  override readonly name = 'QuantityParseError';
}

export const ERR_FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const ERR_NUMERIC = 'unable to parse numeric part of quantity';
export const ERR_SUFFIX = "unable to parse quantity's suffix";

const NANO = 1_000_000_000n;
/** BinarySI quantities are capped at the int64 maximum, as upstream. */
const MAX_INT64 = 2n ** 63n - 1n;

const decimalSuffixes: ReadonlyMap<string, number> = new Map(Object.entries({ n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 }));
const binarySuffixes: ReadonlyMap<string, number> = new Map(Object.entries({ Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 }));
const decimalExponentToSuffix = new Map([...decimalSuffixes].map(([s, e]) => [e, s]));
const binaryExponentToSuffix = new Map([...binarySuffixes].map(([s, e]) => [e, s]));

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

function ceilDiv(a: bigint, b: bigint): bigint {
  // a >= 0, b > 0
  return (a + b - 1n) / b;
}

/** Splits a quantity string like parseQuantityString: sign, integer digits, fraction digits, suffix. */
function split(str: string): { positive: boolean; num: string; denom: string; suffix: string } {
  let pos = 0;
  const end = str.length;
  let positive = true;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  let i = pos;
  while (i < end && str[i]! >= '0' && str[i]! <= '9') i++;
  let num = str.slice(pos, i);
  pos = i;
  if (num.length === 0) num = '0';
  let denom = '';
  if (pos < end && str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && str[i]! >= '0' && str[i]! <= '9') i++;
    denom = str.slice(pos, i);
    pos = i;
  }
  const suffixStart = pos;
  while (pos < end && 'eEinumkKMGTP'.includes(str[pos]!)) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && str[pos]! >= '0' && str[pos]! <= '9') pos++;
  if (pos < end) throw new QuantityParseError(ERR_FORMAT_WRONG);
  return { positive, num, denom, suffix: str.slice(suffixStart) };
}

function interpretSuffix(suffix: string): { base: 2 | 10; exponent: number; format: QuantityFormat } {
  const dec = decimalSuffixes.get(suffix);
  if (dec !== undefined) return { base: 10, exponent: dec, format: 'DecimalSI' };
  const bin = binarySuffixes.get(suffix);
  if (bin !== undefined) return { base: 2, exponent: bin, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const rest = suffix.slice(1);
    if (/^[+-]?[0-9]+$/.test(rest)) {
      const e = Number(rest);
      // Bound the exponent so a hostile string cannot allocate a huge bigint.
      if (Math.abs(e) <= 1000) return { base: 10, exponent: e, format: 'DecimalExponent' };
    }
  }
  throw new QuantityParseError(ERR_SUFFIX);
}

/** Parses a quantity string (resource.ParseQuantity); throws QuantityParseError. */
export function parseQuantity(str: string): Quantity {
  if (str.length === 0) throw new QuantityParseError(ERR_FORMAT_WRONG);
  if (str === '0') return Object.freeze({ nanos: 0n, format: 'DecimalSI' });
  const { positive, num, denom, suffix } = split(str);
  let { base, exponent, format } = interpretSuffix(suffix);
  // value = (num.denom) * base^exponent, as an exact fraction numer / denomScale.
  let numer = BigInt(num + denom);
  let denomScale = pow10(denom.length);
  if (base === 10) {
    if (exponent >= 0) numer *= pow10(exponent);
    else denomScale *= pow10(-exponent);
  } else {
    numer <<= BigInt(exponent);
  }
  // Round the magnitude up to a whole number of nano-units.
  let nanos = ceilDiv(numer * NANO, denomScale);
  if (format === 'BinarySI' && nanos > MAX_INT64 * NANO) nanos = MAX_INT64 * NANO;
  if (format === 'BinarySI' && nanos < 1024n * NANO && nanos !== 0n && (denom.length > 0 || exponent < 0)) {
    // Small binary values with a fraction are shown in decimal, as upstream.
    format = 'DecimalSI';
  }
  return Object.freeze({ nanos: positive ? nanos : -nanos, format });
}

/** Converts a string, number or Quantity into a Quantity. */
export function toQuantity(q: QuantityLike): Quantity {
  if (typeof q === 'string') return parseQuantity(q);
  if (typeof q === 'number') {
    if (!Number.isFinite(q)) throw new QuantityParseError(ERR_NUMERIC);
    return parseQuantity(String(q));
  }
  return q;
}

/** A quantity of `value` whole units. */
export function newQuantity(value: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
  return Object.freeze({ nanos: toBigInt(value) * NANO, format });
}

/** A quantity of `milli` thousandths (e.g. CPU millicores). */
export function newMilliQuantity(milli: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
  return Object.freeze({ nanos: toBigInt(milli) * 1_000_000n, format });
}

function toBigInt(v: number | bigint): bigint {
  if (typeof v === 'bigint') return v;
  if (!Number.isInteger(v)) throw new RangeError(`not an integer: ${v}`);
  return BigInt(v);
}

/** Removes factors of `factor`, returning the rest and how many were removed. */
function removeFactors(v: bigint, factor: bigint): [bigint, number] {
  let times = 0;
  while (v !== 0n && v % factor === 0n) {
    v /= factor;
    times++;
  }
  return [v, times];
}

/** Quantity.String(): `1Gi`, `1500m`, `2k`, `1e3`, `0`. */
export function quantityToString(input: QuantityLike): string {
  const q = toQuantity(input);
  if (q.nanos === 0n) return '0';
  const negative = q.nanos < 0n;
  const abs = negative ? -q.nanos : q.nanos;
  const sign = negative ? '-' : '';
  let format = q.format;
  if (format === 'BinarySI' && (abs < 1024n * NANO || abs % NANO !== 0n)) {
    // Avoid rounding: small or fractional binary values print in decimal.
    format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    const [mantissa, times] = removeFactors(abs / NANO, 1024n);
    const suffix = binaryExponentToSuffix.get(times * 10);
    if (suffix !== undefined) return `${sign}${mantissa}${suffix}`;
    // Beyond Ei: fall back to decimal.
    format = 'DecimalSI';
  }
  let [mantissa, times] = removeFactors(abs, 10n);
  let exponent = times - 9;
  // Make the exponent a multiple of 3.
  const r = ((exponent % 3) + 3) % 3;
  if (r !== 0) {
    mantissa *= pow10(r);
    exponent -= r;
  }
  if (format === 'DecimalSI') {
    const suffix = decimalExponentToSuffix.get(exponent);
    if (suffix !== undefined) return `${sign}${mantissa}${suffix}`;
  }
  return exponent === 0 ? `${sign}${mantissa}` : `${sign}${mantissa}e${exponent}`;
}

/** Canonical form of a quantity string, e.g. `1024Mi` -> `1Gi`, `1000m` -> `1`. */
export function canonicalQuantity(s: string): string {
  return quantityToString(parseQuantity(s));
}

/** ceil(|nanos| / unit) with the sign kept: Kubernetes rounds away from zero. */
function scaled(nanos: bigint, unit: bigint): bigint {
  if (nanos >= 0n) return ceilDiv(nanos, unit);
  return -ceilDiv(-nanos, unit);
}

/** The value in thousandths, rounded away from zero (Quantity.MilliValue). */
export function milliValue(q: QuantityLike): number {
  return Number(scaled(toQuantity(q).nanos, 1_000_000n));
}

/** The value in whole units, rounded away from zero (Quantity.Value). */
export function value(q: QuantityLike): number {
  return Number(scaled(toQuantity(q).nanos, NANO));
}

/** value() as an exact bigint. */
export function valueBigInt(q: QuantityLike): bigint {
  return scaled(toQuantity(q).nanos, NANO);
}

/** -1, 0 or 1. */
export function compare(a: QuantityLike, b: QuantityLike): -1 | 0 | 1 {
  const x = toQuantity(a).nanos;
  const y = toQuantity(b).nanos;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Whether two quantities are numerically equal (`1Gi` equals `1024Mi`). */
export function quantityEquals(a: QuantityLike, b: QuantityLike): boolean {
  return compare(a, b) === 0;
}

/** a + b, in a's format (b's when a is zero), as Quantity.Add. */
export function add(a: QuantityLike, b: QuantityLike): Quantity {
  const x = toQuantity(a);
  const y = toQuantity(b);
  return Object.freeze({ nanos: x.nanos + y.nanos, format: x.nanos === 0n ? y.format : x.format });
}

/** a - b, in a's format (b's when a is zero), as Quantity.Sub. */
export function sub(a: QuantityLike, b: QuantityLike): Quantity {
  const x = toQuantity(a);
  const y = toQuantity(b);
  return Object.freeze({ nanos: x.nanos - y.nanos, format: x.nanos === 0n ? y.format : x.format });
}

/** -q */
export function neg(q: QuantityLike): Quantity {
  const x = toQuantity(q);
  return Object.freeze({ nanos: -x.nanos, format: x.format });
}

/** True for zero. */
export function isZero(q: QuantityLike): boolean {
  return toQuantity(q).nanos === 0n;
}

/** Whether a string parses as a quantity. */
export function isValidQuantity(s: string): boolean {
  try {
    parseQuantity(s);
    return true;
  } catch {
    return false;
  }
}
