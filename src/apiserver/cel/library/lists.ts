/**
 * Kubernetes' list library (k8s.io/apiserver/pkg/cel/library/lists.go):
 * isSorted, sum, min, max, indexOf, lastIndexOf on lists of comparable or
 * summable elements.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { celError, type CelLibrary } from './library.js';
import { celEquals } from '../values.js';

const comparable = ['int', 'uint', 'double', 'bool', 'google.protobuf.Duration', 'google.protobuf.Timestamp', 'string', 'bytes'];
const summable = ['int', 'uint', 'double', 'google.protobuf.Duration'];

/** cel-go's Compare on two values of one comparable type: -1, 0 or 1. */
export function compareValues(a: unknown, b: unknown): number {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  if (a instanceof Duration && b instanceof Duration) {
    const x = a.seconds * 1000000000n + BigInt(a.nanos);
    const y = b.seconds * 1000000000n + BigInt(b.nanos);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a instanceof Date && b instanceof Date) return Math.sign(a.getTime() - b.getTime());
  if (typeof a === 'string' && typeof b === 'string') {
    // Go compares strings bytewise (UTF-8), which orders by code point
    const x = [...a];
    const y = [...b];
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
      if (d !== 0) return Math.sign(d);
    }
    return Math.sign(x.length - y.length);
  }
  const av = a instanceof UnsignedInt ? a.valueOf() : (a as number | bigint | boolean);
  const bv = b instanceof UnsignedInt ? b.valueOf() : (b as number | bigint | boolean);
  return av < bv ? -1 : av > bv ? 1 : 0;
}

function sum(list: unknown[], zero: unknown): unknown {
  let acc = zero;
  for (const x of list) {
    if (typeof acc === 'bigint') {
      acc = acc + (x as bigint);
      if ((acc as bigint) > 9223372036854775807n || (acc as bigint) < -9223372036854775808n) celError('integer overflow');
    } else if (acc instanceof UnsignedInt) acc = new UnsignedInt(acc.valueOf() + (x as UnsignedInt).valueOf());
    else if (acc instanceof Duration) acc = acc.addDuration(x as Duration);
    else acc = (acc as number) + (x as number);
  }
  return acc;
}

function pick(list: unknown[], name: 'min' | 'max'): unknown {
  if (list.length === 0) celError(`${name} called on empty list`);
  let result = list[0];
  for (const x of list.slice(1)) {
    const c = compareValues(result, x);
    if ((name === 'min' && c === 1) || (name === 'max' && c === -1)) result = x;
  }
  return result;
}

export const listsLibrary: CelLibrary = {
  name: 'kubernetes.lists',
  functions: ['isSorted', 'sum', 'min', 'max', 'indexOf', 'lastIndexOf'],
  declare(env: Environment) {
    for (const t of comparable) {
      env.registerFunction(`list<${t}>.isSorted(): bool`, (l: unknown[]) => l.every((x, i) => i === 0 || compareValues(l[i - 1], x) !== 1));
      env.registerFunction(`list<${t}>.min(): ${t}`, (l: unknown[]) => pick(l, 'min'));
      env.registerFunction(`list<${t}>.max(): ${t}`, (l: unknown[]) => pick(l, 'max'));
    }
    const zero: Record<string, () => unknown> = { int: () => 0n, uint: () => new UnsignedInt(0n), double: () => 0, 'google.protobuf.Duration': () => new Duration(0n, 0) };
    for (const t of summable) env.registerFunction(`list<${t}>.sum(): ${t}`, (l: unknown[]) => sum(l, zero[t]!()));
    env.registerFunction('list<A>.indexOf(A): int', (l: unknown[], x: unknown) => BigInt(l.findIndex((y) => celEquals(y, x))));
    env.registerFunction('list<A>.lastIndexOf(A): int', (l: unknown[], x: unknown) => {
      for (let i = l.length - 1; i >= 0; i--) if (celEquals(l[i], x)) return BigInt(i);
      return -1n;
    });
  },
};
