/**
 * The few quantity operations strategies need, on the string form objects
 * carry, over src/api/quantity.ts. Inputs must be valid (check isQuantity).
 */
import { compare, add, quantityToString, isValidQuantity, parseQuantity } from '../../api/quantity.js';

export function isQuantity(s: string): boolean {
  return isValidQuantity(s);
}

/** -1, 0 or 1 as a < b, a = b, a > b. */
export function compareQuantities(a: string, b: string): number {
  return compare(a, b);
}

/** a + b in canonical string form. */
export function addQuantities(a: string, b: string): string {
  return quantityToString(add(a, b));
}

const MILLI = 1_000_000n;

/**
 * SetDefaults_ResourceList: quantities finer than milli-units are rounded up
 * to them (`0.0001` becomes `1m`). Values that are not quantities are left
 * for validation. Mutates list.
 */
export function roundUpResourceList(list: unknown): void {
  if (!list || typeof list !== 'object' || Array.isArray(list)) return;
  const l = list as Record<string, unknown>;
  for (const [k, v] of Object.entries(l)) {
    if (typeof v !== 'string' && typeof v !== 'number') continue;
    let q;
    try {
      q = parseQuantity(String(v));
    } catch {
      continue;
    }
    const rest = q.nanos % MILLI;
    if (rest === 0n) continue;
    const nanos = q.nanos > 0n ? q.nanos - rest + MILLI : q.nanos - rest - MILLI;
    l[k] = quantityToString({ nanos, format: q.format });
  }
}
