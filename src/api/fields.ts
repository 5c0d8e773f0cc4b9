/**
 * Field selectors (apimachinery pkg/fields): `metadata.name=web,status.phase!=Running`.
 *
 * Only `=`, `==` and `!=` exist. Values may escape `\`, `,` and `=` with a
 * backslash; field names cannot be escaped. A missing field compares as ''.
 */

export type FieldOperator = '=' | '==' | '!=';

/** One parsed term; the API server checks `field` against what the resource supports. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  readonly value: string;
}

export type Fields = Readonly<Record<string, string>>;

export interface FieldSelector {
  /** True when every term holds for the given field values. */
  matches(fields: Fields): boolean;
  /** True when the selector selects everything. */
  empty(): boolean;
  /** The terms, in the selector's (sorted) order. */
  requirements(): readonly FieldRequirement[];
  /** The value the selector requires for `field` (an `=`/`==` term), if any. */
  requiresExactMatch(field: string): string | undefined;
  /**
   * A new selector with each term's field and value rewritten (e.g. field
   * label conversion); fn may throw to reject a term.
   */
  transform(fn: (field: string, value: string) => { field: string; value: string }): FieldSelector;
  /** Canonical string, values escaped: `a=b,c!=d`. */
  toString(): string;
}

/** An invalid field selector; messages follow apimachinery's. */
export class FieldSelectorParseError extends Error {
  override readonly name = 'FieldSelectorParseError';
}

/** fields.EscapeValue: escapes `\`, `,` and `=` in a value. */
export function escapeFieldValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** fields.UnescapeValue; throws on an invalid escape or an unescaped `,`/`=`. */
export function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c === '\\' || c === ',' || c === '=') out += c;
      else throw new FieldSelectorParseError(`invalid field selector: invalid escape sequence: \\${c}`);
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') throw new FieldSelectorParseError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    else out += c;
  }
  if (inSlash) throw new FieldSelectorParseError('invalid field selector: invalid escape sequence: \\');
  return out;
}

class TermsSelector implements FieldSelector {
  constructor(private readonly terms: readonly FieldRequirement[]) {}
  matches(fields: Fields): boolean {
    return this.terms.every((t) => {
      const v = Object.prototype.hasOwnProperty.call(fields, t.field) ? fields[t.field] : '';
      return t.operator === '!=' ? v !== t.value : v === t.value;
    });
  }
  empty(): boolean {
    return this.terms.length === 0;
  }
  requirements(): readonly FieldRequirement[] {
    return this.terms;
  }
  requiresExactMatch(field: string): string | undefined {
    for (const t of this.terms) {
      if (t.field === field && t.operator !== '!=') return t.value;
    }
    return undefined;
  }
  transform(fn: (field: string, value: string) => { field: string; value: string }): FieldSelector {
    return new TermsSelector(
      this.terms.map((t) => {
        const r = fn(t.field, t.value);
        return Object.freeze({ field: r.field, operator: t.operator, value: r.value });
      }),
    );
  }
  toString(): string {
    return this.terms.map((t) => `${t.field}${t.operator === '!=' ? '!=' : '='}${escapeFieldValue(t.value)}`).join(',');
  }
}

/** Splits on unescaped commas, keeping escapes in the terms. */
function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

const termOperators: readonly FieldOperator[] = ['!=', '==', '='];

/** Splits a term at the first operator; `==` is tried before `=`. */
function splitTerm(term: string): { lhs: string; op: FieldOperator; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of termOperators) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

/**
 * fields.ParseSelector. Terms are sorted as strings (as apimachinery does),
 * empty terms skipped; '' selects everything.
 */
export function parseFieldSelector(s: string): FieldSelector {
  const parts = splitTerms(s).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const terms: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const t = splitTerm(part);
    if (!t) throw new FieldSelectorParseError(`invalid selector: '${s}'; can't understand '${part}'`);
    terms.push(Object.freeze({ field: t.lhs, operator: t.op, value: unescapeFieldValue(t.rhs) }));
  }
  return new TermsSelector(Object.freeze(terms));
}

/** Matches objects whose `field` equals `value`. */
export function oneTermEqualSelector(field: string, value: string): FieldSelector {
  return new TermsSelector(Object.freeze([Object.freeze({ field, operator: '=' as const, value })]));
}

/** `field=value` for each entry; undefined or {} selects everything. */
export function fieldSelectorFromSet(set: Fields | undefined): FieldSelector {
  if (!set) return everythingFields;
  return new TermsSelector(Object.freeze(Object.keys(set).map((field) => Object.freeze({ field, operator: '=' as const, value: set[field]! }))));
}

const everythingFields: FieldSelector = new TermsSelector(Object.freeze([]));

/** Selects everything. */
export function everythingFieldSelector(): FieldSelector {
  return everythingFields;
}
