/**
 * Kubernetes' semver library (library/semverlib.go, version 1) over a port
 * of blang/semver v4's Parse and Compare: semver, isSemver (with the
 * optional normalize flag), isGreaterThan, isLessThan, compareTo, major,
 * minor, patch.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celError, type CelLibrary } from './library.js';

class SemverError extends Error {}

const numbers = /^[0-9]+$/;
const alphanum = /^[0-9A-Za-z-]+$/;
const hasLeadingZeroes = (s: string): boolean => s.length > 1 && s[0] === '0';

/** A semantic version (blang/semver Version). */
export class CelSemver {
  readonly celTypeName = 'kubernetes.Semver';
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: (string | bigint)[],
    readonly build: string[],
  ) {}

  compare(o: CelSemver): number {
    for (const k of ['major', 'minor', 'patch'] as const) {
      if (this[k] !== o[k]) return this[k] > o[k] ? 1 : -1;
    }
    if (this.pre.length === 0 && o.pre.length === 0) return 0;
    if (this.pre.length === 0) return 1;
    if (o.pre.length === 0) return -1;
    for (let i = 0; i < this.pre.length && i < o.pre.length; i++) {
      const a = this.pre[i]!;
      const b = o.pre[i]!;
      if (a === b) continue;
      if (typeof a === 'bigint' && typeof b !== 'bigint') return -1;
      if (typeof a !== 'bigint' && typeof b === 'bigint') return 1;
      return a > b ? 1 : -1;
    }
    return this.pre.length === o.pre.length ? 0 : this.pre.length > o.pre.length ? 1 : -1;
  }

  celEquals(other: unknown): boolean {
    return other instanceof CelSemver && this.compare(other) === 0;
  }
}

function parseNumber(s: string, what: string): bigint {
  if (!numbers.test(s)) throw new SemverError(`Invalid character(s) found in ${what} number ${JSON.stringify(s)}`);
  if (hasLeadingZeroes(s)) throw new SemverError(`${what[0]!.toUpperCase()}${what.slice(1)} number must not contain leading zeroes ${JSON.stringify(s)}`);
  return BigInt(s);
}

/** blang/semver Parse. */
export function parseSemver(s: string): CelSemver {
  if (s.length === 0) throw new SemverError('Version string empty');
  const parts = splitN(s, '.', 3);
  if (parts.length !== 3) throw new SemverError('No Major.Minor.Patch elements found');
  const major = parseNumber(parts[0]!, 'major');
  const minor = parseNumber(parts[1]!, 'minor');
  let patchStr = parts[2]!;
  let build: string[] = [];
  let prerelease: string[] = [];
  const b = patchStr.indexOf('+');
  if (b !== -1) {
    build = patchStr.slice(b + 1).split('.');
    patchStr = patchStr.slice(0, b);
  }
  const p = patchStr.indexOf('-');
  if (p !== -1) {
    prerelease = patchStr.slice(p + 1).split('.');
    patchStr = patchStr.slice(0, p);
  }
  const patch = parseNumber(patchStr, 'patch');
  const pre = prerelease.map((pr) => {
    if (pr.length === 0) throw new SemverError('Prerelease is empty');
    if (numbers.test(pr)) {
      if (hasLeadingZeroes(pr)) throw new SemverError(`Numeric PreRelease version must not contain leading zeroes ${JSON.stringify(pr)}`);
      return BigInt(pr);
    }
    if (alphanum.test(pr)) return pr;
    throw new SemverError(`Invalid character(s) found in prerelease ${JSON.stringify(pr)}`);
  });
  for (const m of build) {
    if (m.length === 0) throw new SemverError('Build meta data is empty');
    if (!alphanum.test(m)) throw new SemverError(`Invalid character(s) found in build meta data ${JSON.stringify(m)}`);
  }
  return new CelSemver(major, minor, patch, pre, build);
}

function splitN(s: string, sep: string, n: number): string[] {
  const parts = s.split(sep);
  return parts.length <= n ? parts : [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
}

/** normalizeAndParse: a leading `v`, leading zeroes and missing minor/patch are tolerated. */
function normalizeAndParse(input: string): CelSemver {
  const s = input.startsWith('v') ? input.slice(1) : input;
  const parts = splitN(s, '.', 3).map((p) => {
    if (p.length <= 1) return p;
    let t = p.replace(/^0+/, '');
    if (t.length === 0 || !/[0-9]/.test(t[0]!)) t = `0${t}`;
    return t;
  });
  if (parts.length < 3) {
    if (/[+-]/.test(parts[parts.length - 1]!)) throw new SemverError('short version cannot contain PreRelease/Build meta data');
    while (parts.length < 3) parts.push('0');
  }
  return parseSemver(parts.join('.'));
}

function toSemver(s: string, normalize = false): CelSemver {
  try {
    return normalize ? normalizeAndParse(s) : parseSemver(s);
  } catch (err) {
    if (err instanceof SemverError) return celError(err.message);
    throw err;
  }
}

const isSemver = (s: string, normalize = false): boolean => {
  try {
    if (normalize) normalizeAndParse(s);
    else parseSemver(s);
    return true;
  } catch {
    return false;
  }
};

const T = 'kubernetes.Semver';

export const semverLibrary: CelLibrary = {
  name: 'kubernetes.Semver',
  functions: ['semver', 'isSemver', 'isGreaterThan', 'isLessThan', 'compareTo', 'major', 'minor', 'patch'],
  declare(env: Environment) {
    env
      .registerType(T, { ctor: CelSemver, fields: {} })
      .registerFunction(`semver(string): ${T}`, (s: string) => toSemver(s))
      .registerFunction(`semver(string, bool): ${T}`, (s: string, n: boolean) => toSemver(s, n))
      .registerFunction('isSemver(string): bool', (s: string) => isSemver(s))
      .registerFunction('isSemver(string, bool): bool', (s: string, n: boolean) => isSemver(s, n))
      .registerFunction(`${T}.isGreaterThan(${T}): bool`, (a: CelSemver, b: CelSemver) => a.compare(b) === 1)
      .registerFunction(`${T}.isLessThan(${T}): bool`, (a: CelSemver, b: CelSemver) => a.compare(b) === -1)
      .registerFunction(`${T}.compareTo(${T}): int`, (a: CelSemver, b: CelSemver) => BigInt(a.compare(b)))
      .registerFunction(`${T}.major(): int`, (a: CelSemver) => a.major)
      .registerFunction(`${T}.minor(): int`, (a: CelSemver) => a.minor)
      .registerFunction(`${T}.patch(): int`, (a: CelSemver) => a.patch)
      .registerOperator(`${T} == ${T}`, (a: CelSemver, b: CelSemver) => a.celEquals(b));
  },
};
