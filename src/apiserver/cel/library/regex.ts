/**
 * Kubernetes' regex library (library/regex.go): `find` and `findAll` with
 * Go's RE2 semantics; also the engine's `matches`, so that patterns are
 * read as RE2 everywhere.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celError, num, type CelLibrary } from './library.js';
import { find, findAll, matches, RegexSyntaxError } from './re2.js';

function guarded<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof RegexSyntaxError) return celError(`Illegal regex: ${err.message}`);
    throw err;
  }
}

export const regexLibrary: CelLibrary = {
  name: 'kubernetes.regex',
  functions: ['find', 'findAll', 'matches'],
  declare(env: Environment) {
    env
      .registerFunction('string.find(string): string', (s: string, re: string) => guarded(() => find(s, re)))
      .registerFunction('string.findAll(string): list<string>', (s: string, re: string) => guarded(() => findAll(s, re)))
      .registerFunction('string.findAll(string, int): list<string>', (s: string, re: string, n: bigint) => guarded(() => findAll(s, re, num(n))))
      .registerFunction('matches(string, string): bool', (s: string, re: string) => matches(s, re));
  },
  overrides: {
    'string.matches/1': (s, [re]) => {
      try {
        return matches(s as string, re as string);
      } catch (err) {
        if (err instanceof RegexSyntaxError) return celError(err.message);
        throw err;
      }
    },
    'matches/2': (_, [s, re]) => {
      try {
        return matches(s as string, re as string);
      } catch (err) {
        if (err instanceof RegexSyntaxError) return celError(err.message);
        throw err;
      }
    },
  },
};
