/**
 * IntOrString helpers (apimachinery util/intstr), for fields such as
 * maxSurge, maxUnavailable, minAvailable: a JSON number or a string.
 */

/** A JSON int or string, as it appears in API objects. */
export type IntOrString = number | string;

/** The integer or percentage an IntOrString holds; throws on anything else. */
export function getIntOrPercentValue(v: IntOrString): { value: number; isPercent: boolean } {
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new Error(`invalid value ${v}: not an integer`);
    return { value: v, isPercent: false };
  }
  if (typeof v !== 'string') throw new Error('invalid type: neither int nor percentage');
  if (!v.endsWith('%')) throw new Error('invalid type: string is not a percentage');
  const s = v.slice(0, -1);
  if (!/^[+-]?[0-9]+$/.test(s)) {
    throw new Error(`invalid value ${JSON.stringify(v)}: strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  }
  return { value: Number.parseInt(s, 10), isPercent: true };
}

/**
 * intstr.GetScaledValueFromIntOrPercent: an int as is; a percentage of
 * `total`, rounded up (ceil) when roundUp, else down (floor). Errors read
 * `invalid value for IntOrString: ...` as upstream.
 */
export function getScaledValueFromIntOrPercent(v: IntOrString | null | undefined, total: number, roundUp: boolean): number {
  if (v === null || v === undefined) throw new Error('nil value for IntOrString');
  let parsed: { value: number; isPercent: boolean };
  try {
    parsed = getIntOrPercentValue(v);
  } catch (err) {
    throw new Error(`invalid value for IntOrString: ${(err as Error).message}`, { cause: err });
  }
  if (!parsed.isPercent) return parsed.value;
  // Same float64 arithmetic and order as upstream, so results agree exactly.
  const scaled = (parsed.value * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

/** The string form: `5` -> "5", `"25%"` -> "25%". */
export function intOrStringToString(v: IntOrString): string {
  return typeof v === 'number' ? String(v) : v;
}
