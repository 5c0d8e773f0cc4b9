/**
 * Label selectors with apimachinery's semantics: the string syntax of
 * `labels.Parse`, metav1.LabelSelector conversion, canonical strings.
 *
 * Selectors are immutable values. Requirements are kept sorted by key (a
 * stable sort), so toString() is canonical: `a=b,c in (x,y),!d`.
 */
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import type { Labels, Selector } from './labels-selector.js';
import { aggregateMessage, GoLiteral, invalid, isQualifiedName, isValidLabelValue, notSupported, type FieldError } from './validation.js';

export type { Labels, Selector } from './labels-selector.js';

/** selection.Operator values as apimachinery spells them. */
export type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

const binaryOperators: readonly Operator[] = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];
const validOperators: readonly Operator[] = [...binaryOperators, 'exists', '!'];

/** One `key op values` term. Values are as given (String() sorts them). */
export interface Requirement {
  readonly key: string;
  readonly operator: Operator;
  readonly values: readonly string[];
}

/** A Selector that exposes its requirements. */
export interface LabelSelectorValue extends Selector {
  /** The requirements, sorted by key; undefined for nothing(). */
  requirements(): readonly Requirement[] | undefined;
  /** The value the selector requires for `label` (`=`, `==`, or `in` with one value), if any. */
  requiresExactMatch(label: string): string | undefined;
  /** A new selector with the given requirements added (nothing() stays nothing). */
  add(...reqs: Requirement[]): LabelSelectorValue;
}

/** A selector string or a selector construction that Kubernetes would reject. The message follows apimachinery's. */
export class SelectorParseError extends Error {
  override readonly name = 'SelectorParseError';
  constructor(
    message: string,
    readonly fieldErrors: readonly FieldError[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

// ---------------------------------------------------------------------------
// Requirements
// ---------------------------------------------------------------------------

function joinErrors(msgs: string[]): string {
  return msgs.join('; ');
}

function childPath(path: string | undefined, name: string): string {
  return path ? `${path}.${name}` : name;
}

/**
 * labels.NewRequirement: validates key, operator and values; throws a
 * SelectorParseError carrying every field error. `path` prefixes field names.
 */
export function newRequirement(key: string, operator: Operator, values: readonly string[], path?: string): Requirement {
  const errs: FieldError[] = [];
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length > 0) errs.push(invalid(childPath(path, 'key'), key, joinErrors(keyErrs)));
  const valuePath = childPath(path, 'values');
  const valuesForMessage = values.length === 0 ? new GoLiteral('[]string(nil)') : [...values];
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) errs.push(invalid(valuePath, valuesForMessage, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) errs.push(invalid(valuePath, valuesForMessage, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) errs.push(invalid(valuePath, valuesForMessage, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) errs.push(invalid(valuePath, valuesForMessage, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(invalid(`${valuePath}[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
    default:
      errs.push(notSupported(childPath(path, 'operator'), operator, validOperators));
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length > 0) errs.push(invalid(`${valuePath}[${i}][${key}]`, v, joinErrors(msgs)));
  });
  if (errs.length > 0) throw new SelectorParseError(aggregateMessage(errs), errs);
  return Object.freeze({ key, operator, values: Object.freeze([...values]) });
}

const int64Max = 2n ** 63n - 1n;
const int64Min = -(2n ** 63n);

/** strconv.ParseInt(s, 10, 64), as a bigint; undefined when invalid or out of range. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v > int64Max || v < int64Min ? undefined : v;
}

function has(labels: Labels | undefined, key: string): boolean {
  return labels !== undefined && labels !== null && Object.prototype.hasOwnProperty.call(labels, key);
}

/** Whether one requirement matches a label set (Requirement.Matches). */
export function requirementMatches(r: Requirement, labels: Labels | undefined): boolean {
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return has(labels, r.key) && r.values.includes(labels![r.key]!);
    case 'notin':
    case '!=':
      return !has(labels, r.key) || !r.values.includes(labels![r.key]!);
    case 'exists':
      return has(labels, r.key);
    case '!':
      return !has(labels, r.key);
    case 'gt':
    case 'lt': {
      if (!has(labels, r.key) || r.values.length !== 1) return false;
      const lv = parseInt64(labels![r.key]!);
      const rv = parseInt64(r.values[0]!);
      if (lv === undefined || rv === undefined) return false;
      return r.operator === 'gt' ? lv > rv : lv < rv;
    }
  }
}

/** Requirement.String(): `!k`, `k`, `k=v`, `k in (a,b)`; multiple values sorted. */
export function requirementToString(r: Requirement): string {
  let s = r.operator === '!' ? `!${r.key}` : r.key;
  switch (r.operator) {
    case '=': s += '='; break;
    case '==': s += '=='; break;
    case '!=': s += '!='; break;
    case 'in': s += ' in '; break;
    case 'notin': s += ' notin '; break;
    case 'gt': s += '>'; break;
    case 'lt': s += '<'; break;
    case 'exists':
    case '!':
      return s;
  }
  const setOp = r.operator === 'in' || r.operator === 'notin';
  if (setOp) s += '(';
  s += r.values.length === 1 ? r.values[0] : [...r.values].sort(compareStrings).join(',');
  if (setOp) s += ')';
  return s;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------
// Selectors
// ---------------------------------------------------------------------------

class RequirementsSelector implements LabelSelectorValue {
  private readonly reqs: readonly Requirement[];
  constructor(reqs: readonly Requirement[]) {
    // Array.prototype.sort is stable: equal keys keep their order.
    this.reqs = Object.freeze([...reqs].sort((a, b) => compareStrings(a.key, b.key)));
  }
  matches(labels: Labels | undefined): boolean {
    return this.reqs.every((r) => requirementMatches(r, labels));
  }
  empty(): boolean {
    return this.reqs.length === 0;
  }
  toString(): string {
    return this.reqs.map(requirementToString).join(',');
  }
  requirements(): readonly Requirement[] {
    return this.reqs;
  }
  requiresExactMatch(label: string): string | undefined {
    for (const r of this.reqs) {
      if (r.key !== label) continue;
      if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1) return r.values[0];
      return undefined;
    }
    return undefined;
  }
  add(...reqs: Requirement[]): LabelSelectorValue {
    return new RequirementsSelector([...this.reqs, ...reqs]);
  }
}

const nothingSelector: LabelSelectorValue = Object.freeze({
  matches: () => false,
  empty: () => false,
  toString: () => '',
  requirements: () => undefined,
  requiresExactMatch: () => undefined,
  add(): LabelSelectorValue {
    return nothingSelector;
  },
});

const everythingSelector: LabelSelectorValue = new RequirementsSelector([]);

/** Selects every object. */
export function everything(): LabelSelectorValue {
  return everythingSelector;
}

/** Selects no object (what a nil metav1.LabelSelector means). */
export function nothing(): LabelSelectorValue {
  return nothingSelector;
}

/** True only for nothing(). */
export function matchesNothing(s: Selector): boolean {
  return s === nothingSelector;
}

/** A selector from requirements (they are sorted by key). */
export function selectorFromRequirements(reqs: readonly Requirement[]): LabelSelectorValue {
  return new RequirementsSelector(reqs);
}

/**
 * Matches exactly the given labels (`k=v` for each). undefined or empty
 * selects everything. Not validated, as labels.SelectorFromSet.
 */
export function selectorFromSet(labels: Labels | undefined | null): LabelSelectorValue {
  if (!labels) return everythingSelector;
  const reqs = Object.keys(labels).map((key) => Object.freeze({ key, operator: '=' as const, values: Object.freeze([labels[key]!]) }));
  return new RequirementsSelector(reqs);
}

/** Like selectorFromSet, but validates keys and values (throws SelectorParseError). */
export function validatedSelectorFromSet(labels: Labels | undefined | null): LabelSelectorValue {
  if (!labels) return everythingSelector;
  return new RequirementsSelector(Object.keys(labels).map((k) => newRequirement(k, '=', [labels[k]!])));
}

/**
 * metav1.LabelSelectorAsSelector: null/undefined selects nothing, `{}`
 * everything; matchLabels become `=`, matchExpressions In/NotIn/Exists/
 * DoesNotExist. Throws SelectorParseError on an invalid selector.
 */
export function selectorFromLabelSelector(ls: LabelSelector | null | undefined): LabelSelectorValue {
  if (ls === null || ls === undefined) return nothingSelector;
  const matchLabels = ls.matchLabels ?? {};
  const exprs = ls.matchExpressions ?? [];
  if (Object.keys(matchLabels).length + exprs.length === 0) return everythingSelector;
  const reqs: Requirement[] = [];
  for (const k of Object.keys(matchLabels)) reqs.push(newRequirement(k, '=', [matchLabels[k]!]));
  for (const expr of exprs) {
    let op: Operator;
    switch (expr.operator) {
      case 'In': op = 'in'; break;
      case 'NotIn': op = 'notin'; break;
      case 'Exists': op = 'exists'; break;
      case 'DoesNotExist': op = '!'; break;
      default:
        throw new SelectorParseError(`${JSON.stringify(expr.operator)} is not a valid label selector operator`);
    }
    reqs.push(newRequirement(expr.key, op, expr.values ?? []));
  }
  return new RequirementsSelector(reqs);
}

/** metav1.LabelSelectorAsString: '' for null/undefined, else the canonical string. */
/** True for an absent selector and one with neither matchLabels nor matchExpressions (`{}`). */
export function labelSelectorIsEmpty(ls: LabelSelector | null | undefined): boolean {
  return !ls || (Object.keys(ls.matchLabels ?? {}).length === 0 && (ls.matchExpressions ?? []).length === 0);
}

export function labelSelectorAsString(ls: LabelSelector | null | undefined): string {
  if (ls === null || ls === undefined) return '';
  return selectorFromLabelSelector(ls).toString();
}

/**
 * metav1.LabelSelectorAsMap: a selector of only `=`/`==`/one-valued `in`
 * requirements as a label map; throws for anything else.
 */
export function labelSelectorAsMap(ls: LabelSelector | null | undefined): Record<string, string> | undefined {
  if (ls === null || ls === undefined) return undefined;
  const out: Record<string, string> = { ...(ls.matchLabels ?? {}) };
  for (const expr of ls.matchExpressions ?? []) {
    if (expr.operator === 'In' && expr.values?.length === 1) out[expr.key] = expr.values[0]!;
    else throw new SelectorParseError(`operator ${JSON.stringify(expr.operator)} without a single value cannot be converted into the old label selector format`);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Parser (labels.Parse)
// ---------------------------------------------------------------------------

type Token =
  | 'error' | 'eos' | 'closedPar' | 'comma' | 'doesNotExist' | 'doubleEquals' | 'equals'
  | 'greaterThan' | 'identifier' | 'in' | 'lessThan' | 'notEquals' | 'notIn' | 'openPar';

const string2token: ReadonlyMap<string, Token> = new Map<string, Token>(Object.entries({
  ')': 'closedPar',
  ',': 'comma',
  '!': 'doesNotExist',
  '==': 'doubleEquals',
  '=': 'equals',
  '>': 'greaterThan',
  in: 'in',
  '<': 'lessThan',
  '!=': 'notEquals',
  notin: 'notIn',
  '(': 'openPar',
}) as [string, Token][]);

interface Scanned {
  tok: Token;
  lit: string;
}

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
}

function isSpecialSymbol(ch: string): boolean {
  return ch === '=' || ch === '!' || ch === '(' || ch === ')' || ch === ',' || ch === '>' || ch === '<';
}

function lex(s: string): Scanned[] {
  const out: Scanned[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos]!)) pos++;
    if (pos >= s.length) {
      out.push({ tok: 'eos', lit: '' });
      return out;
    }
    if (isSpecialSymbol(s[pos]!)) {
      // Longest operator made of special symbols, as scanSpecialSymbol.
      let buffer = '';
      let last: Scanned | undefined;
      while (pos < s.length && isSpecialSymbol(s[pos]!)) {
        buffer += s[pos];
        const t = string2token.get(buffer);
        if (t !== undefined) {
          last = { tok: t, lit: buffer };
          pos++;
        } else if (last !== undefined) {
          break;
        } else {
          pos++;
        }
      }
      out.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buffer}'` });
      continue;
    }
    let buffer = '';
    while (pos < s.length && !isSpecialSymbol(s[pos]!) && !isWhitespace(s[pos]!)) buffer += s[pos++];
    const kw = string2token.get(buffer);
    out.push(kw !== undefined ? { tok: kw, lit: buffer } : { tok: 'identifier', lit: buffer });
  }
}

type Context = 'keyAndOperator' | 'values';

class Parser {
  private position = 0;
  constructor(private readonly items: Scanned[]) {}

  private view(item: Scanned, ctx: Context): Scanned {
    if (ctx === 'values' && (item.tok === 'in' || item.tok === 'notIn')) return { tok: 'identifier', lit: item.lit };
    return item;
  }
  lookahead(ctx: Context): Scanned {
    return this.view(this.items[this.position]!, ctx);
  }
  consume(ctx: Context): Scanned {
    const item = this.items[this.position]!;
    // Never step past end-of-string.
    if (item.tok !== 'eos') this.position++;
    return this.view(item, ctx);
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead('values');
      switch (tok) {
        case 'identifier':
        case 'doesNotExist': {
          let r: Requirement;
          try {
            r = this.parseRequirement();
          } catch (err) {
            const e = err as SelectorParseError;
            throw new SelectorParseError(`unable to parse requirement: ${e.message}`, e.fieldErrors ?? [], { cause: err });
          }
          reqs.push(r);
          const t = this.consume('values');
          switch (t.tok) {
            case 'eos':
              return reqs;
            case 'comma': {
              const t2 = this.lookahead('values');
              if (t2.tok !== 'identifier' && t2.tok !== 'doesNotExist') {
                throw new SelectorParseError(`found '${t2.lit}', expected: identifier after ','`);
              }
              break;
            }
            default:
              throw new SelectorParseError(`found '${t.lit}', expected: ',' or 'end of string'`);
          }
          break;
        }
        case 'eos':
          return reqs;
        default:
          throw new SelectorParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): Requirement {
    const { key, operator } = this.parseKeyAndInferOperator();
    if (operator === 'exists' || operator === '!') return newRequirement(key, operator, []);
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, op, [...values].sort(compareStrings));
  }

  private parseKeyAndInferOperator(): { key: string; operator: Operator | undefined } {
    let operator: Operator | undefined;
    let t = this.consume('values');
    if (t.tok === 'doesNotExist') {
      operator = '!';
      t = this.consume('values');
    }
    if (t.tok !== 'identifier') throw new SelectorParseError(`found '${t.lit}', expected: identifier`);
    const keyErrs = isQualifiedName(t.lit);
    if (keyErrs.length > 0) {
      // The parser validates keys with a nil field path, which Go prints as <nil>.
      const fe = invalid('<nil>', t.lit, joinErrors(keyErrs));
      throw new SelectorParseError(fe.message, [fe]);
    }
    const next = this.lookahead('values').tok;
    if ((next === 'eos' || next === 'comma') && operator !== '!') operator = 'exists';
    return { key: t.lit, operator };
  }

  private parseOperator(): Operator {
    const t = this.consume('keyAndOperator');
    switch (t.tok) {
      case 'in': return 'in';
      case 'equals': return '=';
      case 'doubleEquals': return '==';
      case 'greaterThan': return 'gt';
      case 'lessThan': return 'lt';
      case 'notIn': return 'notin';
      case 'notEquals': return '!=';
      default:
        throw new SelectorParseError(`found '${t.lit}', expected: ${binaryOperators.join(', ')}`);
    }
  }

  private parseValues(): Set<string> {
    const open = this.consume('values');
    if (open.tok !== 'openPar') throw new SelectorParseError(`found '${open.lit}' expected: '('`);
    const t = this.lookahead('values');
    switch (t.tok) {
      case 'identifier':
      case 'comma': {
        const s = this.parseIdentifiersList();
        if (this.consume('values').tok !== 'closedPar') throw new SelectorParseError(`found '${t.lit}', expected: ')'`);
        return s;
      }
      case 'closedPar':
        this.consume('values');
        return new Set(['']);
      default:
        throw new SelectorParseError(`found '${t.lit}', expected: ',', ')' or identifier`);
    }
  }

  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const t = this.consume('values');
      switch (t.tok) {
        case 'identifier': {
          s.add(t.lit);
          const t2 = this.lookahead('values');
          if (t2.tok === 'comma') continue;
          if (t2.tok === 'closedPar') return s;
          throw new SelectorParseError(`found '${t2.lit}', expected: ',' or ')'`);
        }
        case 'comma': {
          if (s.size === 0) s.add(''); // "(,"
          const t2 = this.lookahead('values');
          if (t2.tok === 'closedPar') {
            s.add(''); // ",)"
            return s;
          }
          if (t2.tok === 'comma') s.add(''); // ",,"
          break;
        }
        default:
          throw new SelectorParseError(`found '${t.lit}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): Set<string> {
    const t = this.lookahead('values');
    if (t.tok === 'eos' || t.tok === 'comma') return new Set(['']);
    const v = this.consume('values');
    if (v.tok === 'identifier') return new Set([v.lit]);
    throw new SelectorParseError(`found '${v.lit}', expected: identifier`);
  }
}

/**
 * labels.Parse: `a=b,c==d,e!=f,g in (x,y),h notin (z),i,!j,k>1,l<2`.
 * The empty string selects everything. Throws SelectorParseError.
 */
export function parseSelector(s: string): LabelSelectorValue {
  return new RequirementsSelector(new Parser(lex(s)).parse());
}

/** labels.ParseToRequirements: the parsed requirements, sorted by key. */
export function parseToRequirements(s: string): readonly Requirement[] {
  return parseSelector(s).requirements()!;
}
