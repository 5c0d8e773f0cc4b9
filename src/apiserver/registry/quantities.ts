/**
 * The few quantity operations strategies need, on the string form objects
 * carry, over src/api/quantity.ts. Inputs must be valid (check isQuantity).
 */
import { compare, add, quantityToString, isValidQuantity } from '../../api/quantity.js';

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
