/**
 * Kubernetes' quantity library (library/quantity.go) over kcm's
 * resource.Quantity port (src/api/quantity.ts): quantity, isQuantity,
 * sign, isGreaterThan, isLessThan, compareTo, asApproximateFloat,
 * asInteger, isInteger, add, sub.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { add, compare, newQuantity, parseQuantity, sub, type Quantity } from '../../../api/quantity.js';
import { celError, type CelLibrary } from './library.js';

const NANO = 1_000_000_000n;
const MAX_INT64 = 9223372036854775807n;
const MIN_INT64 = -9223372036854775808n;

/** A quantity value (apiservercel.Quantity). */
export class CelQuantity {
  readonly celTypeName = 'kubernetes.Quantity';
  constructor(readonly q: Quantity) {}

  celEquals(other: unknown): boolean {
    return other instanceof CelQuantity && compare(this.q, other.q) === 0;
  }

  /** AsInt64: the value when it is a whole number that fits in int64. */
  asInt64(): bigint | undefined {
    if (this.q.nanos % NANO !== 0n) return undefined;
    const v = this.q.nanos / NANO;
    return v > MAX_INT64 || v < MIN_INT64 ? undefined : v;
  }
}

function toQuantity(s: string): CelQuantity {
  try {
    return new CelQuantity(parseQuantity(s));
  } catch (err) {
    return celError((err as Error).message);
  }
}

const T = 'kubernetes.Quantity';

export const quantityLibrary: CelLibrary = {
  name: 'kubernetes.quantity',
  functions: ['quantity', 'isQuantity', 'sign', 'isGreaterThan', 'isLessThan', 'compareTo', 'asApproximateFloat', 'asInteger', 'isInteger', 'add', 'sub'],
  declare(env: Environment) {
    env
      .registerType(T, { ctor: CelQuantity, fields: {} })
      .registerFunction(`quantity(string): ${T}`, toQuantity)
      .registerFunction('isQuantity(string): bool', (s: string) => {
        try {
          parseQuantity(s);
          return true;
        } catch {
          return false;
        }
      })
      .registerFunction(`sign(${T}): int`, (a: CelQuantity) => BigInt(a.q.nanos > 0n ? 1 : a.q.nanos < 0n ? -1 : 0))
      .registerFunction(`${T}.isGreaterThan(${T}): bool`, (a: CelQuantity, b: CelQuantity) => compare(a.q, b.q) === 1)
      .registerFunction(`${T}.isLessThan(${T}): bool`, (a: CelQuantity, b: CelQuantity) => compare(a.q, b.q) === -1)
      .registerFunction(`${T}.compareTo(${T}): int`, (a: CelQuantity, b: CelQuantity) => BigInt(compare(a.q, b.q)))
      .registerFunction(`${T}.asApproximateFloat(): double`, (a: CelQuantity) => Number(a.q.nanos) / 1e9)
      .registerFunction(`${T}.asInteger(): int`, (a: CelQuantity) => a.asInt64() ?? celError('cannot convert value to integer'))
      .registerFunction(`${T}.isInteger(): bool`, (a: CelQuantity) => a.asInt64() !== undefined)
      .registerFunction(`${T}.add(${T}): ${T}`, (a: CelQuantity, b: CelQuantity) => new CelQuantity(add(a.q, b.q)))
      .registerFunction(`${T}.add(int): ${T}`, (a: CelQuantity, b: bigint) => new CelQuantity(add(a.q, newQuantity(b, 'DecimalExponent'))))
      .registerFunction(`${T}.sub(${T}): ${T}`, (a: CelQuantity, b: CelQuantity) => new CelQuantity(sub(a.q, b.q)))
      .registerFunction(`${T}.sub(int): ${T}`, (a: CelQuantity, b: bigint) => new CelQuantity(sub(a.q, newQuantity(b, 'DecimalExponent'))))
      .registerOperator(`${T} == ${T}`, (a: CelQuantity, b: CelQuantity) => a.celEquals(b));
  },
};
