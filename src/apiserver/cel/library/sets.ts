/**
 * cel-go's sets extension (ext.Sets, Kubernetes 1.29+): sets.contains,
 * sets.equivalent and sets.intersects over lists, with CEL equality.
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { CelLibrary } from './library.js';
import { celEquals } from '../values.js';

const has = (l: unknown[], x: unknown): boolean => l.some((y) => celEquals(x, y));

class SetsNamespace {}

export const setsLibrary: CelLibrary = {
  name: 'cel.lib.ext.sets',
  functions: ['contains', 'equivalent', 'intersects'],
  declare(env: Environment) {
    env
      .registerType('SetsNamespace', SetsNamespace)
      .registerConstant('sets', 'SetsNamespace', new SetsNamespace())
      .registerFunction('SetsNamespace.contains(list<A>, list<A>): bool', (_: unknown, a: unknown[], b: unknown[]) => [...b].every((x) => has([...a], x)))
      .registerFunction('SetsNamespace.equivalent(list<A>, list<A>): bool', (_: unknown, a: unknown[], b: unknown[]) => [...b].every((x) => has([...a], x)) && [...a].every((x) => has([...b], x)))
      .registerFunction('SetsNamespace.intersects(list<A>, list<A>): bool', (_: unknown, a: unknown[], b: unknown[]) => [...b].some((x) => has([...a], x)));
  },
  // lists of mixed numeric types (list<dyn>) compare by CEL equality, whatever their first element's type
  overrides: {
    'sets.contains/2': (_, [a, b]) => [...(b as unknown[])].every((x) => has([...(a as unknown[])], x)),
    'sets.equivalent/2': (_, [a, b]) => [...(b as unknown[])].every((x) => has([...(a as unknown[])], x)) && [...(a as unknown[])].every((x) => has([...(b as unknown[])], x)),
    'sets.intersects/2': (_, [a, b]) => [...(b as unknown[])].some((x) => has([...(a as unknown[])], x)),
  },
};
