/**
 * The YAML text that gnostic keeps in an OpenAPI v2 `Any` (its `yaml` field:
 * vendor extensions, `default`, `example`, `enum` items), byte for byte.
 *
 * kube-apiserver builds the protobuf document by parsing its own JSON with
 * go-yaml v3 into nodes, and gnostic's `compiler.Marshal` clears every node's
 * style and marshals the node with go-yaml v3 (`yaml.Marshal`: block style,
 * indent 4, no line folding). The rules reproduced here are go-yaml's emitter
 * (emitterc.go: scalar analysis, style choice, indentation) and resolver
 * (resolve.go: a string that would read back as another type is
 * double-quoted).
 *
 * Input is a parsed JSON value. Object keys are written in Go's sorted order,
 * because the JSON kube-apiserver parses was marshalled from Go maps with
 * deterministic (sorted) keys.
 */

/** go-yaml's text of `value`, always ending in a newline. */
export function goYamlMarshal(value: unknown): string {
  const e = new Emitter();
  e.node(value, 'root');
  e.writeIndent(); // the document end
  return e.out.join('');
}

/** Go's string order (UTF-8 bytes, i.e. code points), which differs from JS `<` only around surrogates. */
export function goStringCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return fixup(x) - fixup(y);
  }
  return a.length - b.length;
}

// Moves surrogates above U+E000..U+FFFF, so UTF-16 units compare as code points.
function fixup(c: number): number {
  return c >= 0xe000 ? c - 0x800 : c >= 0xd800 ? c + 0x2000 : c;
}

const rawBreaks = /[\u0085\u2028\u2029]/;

/**
 * The string go-yaml reads from a JSON string whose text holds `s`. JSON
 * escapes every control character, but kube-apiserver's JSON writer leaves
 * NEL, LS and PS raw, and go-yaml's double-quoted scalar folds those line
 * breaks like YAML: spaces around them are dropped and a single NEL becomes a
 * space. Everything else reads back unchanged.
 */
export function goYamlJsonString(s: string): string {
  if (!rawBreaks.test(s)) return s;
  return s.replace(/[ \u0085\u2028\u2029]+/g, (run) => {
    const first = run.search(rawBreaks);
    if (first < 0) return run;
    const trailing = run.slice(first + 1).replaceAll(' ', '').replaceAll('\u0085', '\n');
    if (run[first] === '\u0085') return trailing === '' ? ' ' : trailing;
    return run[first]! + trailing;
  });
}

/** The JSON text of a number as Go's deterministic marshaller writes a float64 (ES6 formatting, as JS). */
export function goNumberText(n: number): string {
  return JSON.stringify(n);
}

/**
 * True when go-yaml resolves the plain scalar `s` to something other than a
 * string (null, bool, int, float, timestamp, merge key), so a string with this
 * value must be quoted.
 */
export function resolvesAsNonString(s: string): boolean {
  if (s === '') return true; // null
  const c = s[0]!;
  // resolve.go consults its table only for a first character with a hint: "<<" stays a string.
  if (!'+-0123456789.yYnNtTfFoO~'.includes(c)) return false;
  if (resolveMap.has(s)) return true;
  if (c === '.') return /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(s) && Number.isFinite(Number(s));
  if (c !== '+' && c !== '-' && !(c >= '0' && c <= '9')) return false; // hint 'M' (only the map) or none
  if (isGoTimestamp(s)) return true;
  const plain = s.replaceAll('_', '');
  if (goParsesAsInt(plain)) return true;
  return /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(plain) && Number.isFinite(Number(plain));
}

const resolveMap = new Set([
  ...['true', 'True', 'TRUE', 'false', 'False', 'FALSE'],
  ...['~', 'null', 'Null', 'NULL'],
  ...['.nan', '.NaN', '.NAN', '.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF'],
]);

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;
const uint64Max = 2n ** 64n - 1n;

/** strconv.ParseInt(s, 0, 64) or, without a sign, strconv.ParseUint(s, 0, 64) succeeds. */
function goParsesAsInt(s: string): boolean {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return false;
  const body = m[2]!;
  let v = /^0[0-7]+$/.test(body) ? BigInt(`0o${body.slice(1)}`) : BigInt(body);
  if (m[1] === '-') v = -v;
  return (v >= int64Min && v <= int64Max) || (m[1] === '' && v <= uint64Max);
}

/** go-yaml's parseTimestamp: the layouts 2006-1-2T15:4:5.999999999Z07:00 (T or t), 2006-1-2 15:4:5.999999999 and 2006-1-2. */
function isGoTimestamp(s: string): boolean {
  const m = /^(\d{4})-(\d{1,2})-(\d{1,2})(.*)$/s.exec(s);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return false;
  const rest = m[4]!;
  if (rest === '') return true;
  const t = /^([Tt ])(\d{1,2}):(\d{1,2}):(\d{1,2})([.,]\d+)?(.*)$/s.exec(rest);
  if (!t || Number(t[2]) > 23 || Number(t[3]) > 59 || Number(t[4]) > 59) return false;
  const zone = t[6]!;
  if (t[1] === ' ') return zone === '';
  if (zone === 'Z') return true;
  const z = /^[+-](\d\d):(\d\d)$/.exec(zone);
  return !!z && Number(z[1]) <= 24 && Number(z[2]) <= 60;
}

type Style = 'plain' | 'single' | 'double' | 'literal';

/**
 * Where a node sits; it decides the indentation of what the node opens, as
 * the emitter state on top of go-yaml's stack does in yaml_emitter_increase_indent.
 */
type Place = 'root' | 'item' | 'key' | 'complexKey' | 'value';

interface Analysis {
  multiline: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

const isBreak = (c: string | undefined): boolean => c === '\r' || c === '\n' || c === '\u0085' || c === '\u2028' || c === '\u2029';
const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t';

function isPrintable(c: string): boolean {
  const cp = c.codePointAt(0)!;
  return cp === 0x0a || (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff);
}

/** yaml_emitter_analyze_scalar, for the block context (flow_level 0) this emitter writes in. */
function analyze(chars: string[]): Analysis {
  if (chars.length === 0) return { multiline: false, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: false };
  let blockIndicators = false;
  let lineBreaks = false;
  let special = false;
  let tabs = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  const head = chars.slice(0, 3).join('');
  if (head === '---' || head === '...') blockIndicators = true;
  let precededByWhitespace = true;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const followedByWhitespace = i + 1 >= chars.length || isBlank(chars[i + 1]);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(c)) blockIndicators = true;
      else if ((c === '?' || c === ':' || c === '-') && followedByWhitespace) blockIndicators = true;
    } else if (c === ':' && followedByWhitespace) blockIndicators = true;
    else if (c === '#' && precededByWhitespace) blockIndicators = true;

    if (c === '\t') tabs = true;
    else if (!isPrintable(c)) special = true;
    if (c === ' ') {
      if (i === 0) leadingSpace = true;
      if (i === chars.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === chars.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlank(c) || isBreak(c) || c === '\0';
  }
  let blockPlainAllowed = true;
  let singleQuotedAllowed = true;
  let blockAllowed = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) blockPlainAllowed = false;
  if (trailingSpace) blockAllowed = false;
  if (breakSpace) blockPlainAllowed = singleQuotedAllowed = false;
  if (spaceBreak || tabs || special) blockPlainAllowed = singleQuotedAllowed = false;
  if (spaceBreak || special) blockAllowed = false;
  if (lineBreaks || blockIndicators) blockPlainAllowed = false;
  return { multiline: lineBreaks, blockPlainAllowed, singleQuotedAllowed, blockAllowed };
}

const bestIndent = 4;

/** go-yaml's emitter, reduced to block collections, empty flow collections and untagged scalars. */
class Emitter {
  readonly out: string[] = [];
  private column = 0;
  private whitespace = true;
  private indention = true;
  private indent = -1;
  private readonly indents: number[] = [];

  node(v: unknown, place: Place): void {
    if (Array.isArray(v)) {
      if (v.length === 0) this.emptyFlow('[', ']', place);
      else this.sequence(v, place);
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v).sort(goStringCompare);
      if (keys.length === 0) this.emptyFlow('{', '}', place);
      else this.mapping(v as Record<string, unknown>, keys, place);
    } else if (typeof v === 'string') {
      this.scalar(goYamlJsonString(v), true, place);
    } else if (typeof v === 'number') {
      this.scalar(goNumberText(v), false, place);
    } else if (typeof v === 'boolean') {
      this.scalar(String(v), false, place);
    } else {
      this.scalar('null', false, place);
    }
  }

  writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.putBreak();
    while (this.column < indent) this.put(' ');
    this.whitespace = true;
  }

  private put(s: string): void {
    this.out.push(s);
    this.column++;
  }

  private putBreak(): void {
    this.out.push('\n');
    this.column = 0;
    this.indention = true;
  }

  private writeBreak(c: string): void {
    if (c === '\n') return this.putBreak();
    this.out.push(c);
    this.column = 0;
    this.indention = true;
  }

  private indicator(s: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    this.out.push(s);
    this.column += s.length;
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
  }

  private increaseIndent(flow: boolean, place: Place): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? bestIndent : 0;
    else if (place === 'item') this.indent += 2;
    else this.indent = bestIndent * Math.floor((this.indent + bestIndent) / bestIndent);
  }

  private popIndent(): void {
    this.indent = this.indents.pop()!;
  }

  private emptyFlow(open: string, close: string, place: Place): void {
    this.indicator(open, true, true, false);
    this.increaseIndent(true, place);
    this.popIndent();
    this.indicator(close, false, false, false);
  }

  private sequence(items: unknown[], place: Place): void {
    this.increaseIndent(false, place);
    for (const item of items) {
      this.writeIndent();
      this.indicator('-', true, false, true);
      this.node(item, 'item');
    }
    this.popIndent();
  }

  private mapping(m: Record<string, unknown>, keys: string[], place: Place): void {
    this.increaseIndent(false, place);
    for (const key of keys) {
      const k = goYamlJsonString(key);
      this.writeIndent();
      // yaml_emitter_check_simple_key: one line, at most 128 bytes.
      if (!k.includes('\n') && !/[\r\u0085\u2028\u2029]/.test(k) && Buffer.byteLength(k) <= 128) {
        this.scalar(k, true, 'key');
        this.indicator(':', false, false, false);
      } else {
        this.indicator('?', true, false, true);
        this.scalar(k, true, 'complexKey');
        this.writeIndent();
        this.indicator(':', true, false, true);
      }
      this.node(m[key], 'value');
    }
    this.popIndent();
  }

  /** A scalar: `text` is the node's value; strings carry go-yaml's !!str tag, everything else resolves to its own tag. */
  private scalar(text: string, isString: boolean, place: Place): void {
    let style: Style = 'plain';
    if (isString) {
      if (text.includes('\n')) style = 'literal';
      else if (resolvesAsNonString(text)) style = 'double';
    }
    const chars = Array.from(text);
    const a = analyze(chars);
    const simpleKey = place === 'key';
    if (simpleKey && a.multiline) style = 'double';
    if (style === 'plain' && (!a.blockPlainAllowed || (chars.length === 0 && simpleKey))) style = 'single';
    if (style === 'single' && !a.singleQuotedAllowed) style = 'double';
    if (style === 'literal' && (!a.blockAllowed || simpleKey)) style = 'double';

    this.increaseIndent(true, place);
    switch (style) {
      case 'plain':
        this.plain(chars);
        break;
      case 'single':
        this.singleQuoted(chars);
        break;
      case 'double':
        this.doubleQuoted(chars);
        break;
      case 'literal':
        this.literal(chars);
        break;
    }
    this.popIndent();
  }

  // Lines are never folded: go-yaml v3's best_width is unlimited.
  private plain(chars: string[]): void {
    if (chars.length > 0 && !this.whitespace) this.put(' ');
    let breaks = false;
    for (const c of chars) {
      if (c === ' ') {
        this.put(c);
      } else if (isBreak(c)) {
        if (!breaks && c === '\n') this.putBreak();
        this.writeBreak(c);
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(c);
        this.indention = false;
        breaks = false;
      }
    }
    if (chars.length > 0) this.whitespace = false;
    this.indention = false;
  }

  private singleQuoted(chars: string[]): void {
    this.indicator("'", true, false, false);
    let breaks = false;
    for (const c of chars) {
      if (isBreak(c)) {
        if (!breaks && c === '\n') this.putBreak();
        this.writeBreak(c);
        breaks = true;
      } else if (c === ' ') {
        this.put(c);
      } else {
        if (breaks) this.writeIndent();
        if (c === "'") this.put("'");
        this.put(c);
        this.indention = false;
        breaks = false;
      }
    }
    this.indicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private doubleQuoted(chars: string[]): void {
    this.indicator('"', true, false, false);
    // go-yaml's is_bom looks at the start of the value, not at the character: a leading BOM escapes everything.
    const bom = chars[0] === '\ufeff';
    for (const c of chars) {
      if (bom || !isPrintable(c) || isBreak(c) || c === '"' || c === '\\') this.out.push(escape(c));
      else this.out.push(c);
      this.column++;
    }
    this.indicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private literal(chars: string[]): void {
    this.indicator('|', true, false, false);
    if (chars[0] === ' ' || isBreak(chars[0])) this.indicator(String(bestIndent), false, false, false);
    const n = chars.length;
    let chomp = '';
    if (n === 0 || !isBreak(chars[n - 1])) chomp = '-';
    else if (n === 1 || isBreak(chars[n - 2])) chomp = '+';
    if (chomp) this.indicator(chomp, false, false, false);
    this.whitespace = true;
    let breaks = true;
    for (const c of chars) {
      if (isBreak(c)) {
        this.writeBreak(c);
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(c);
        this.indention = false;
        breaks = false;
      }
    }
  }
}

const namedEscapes: Record<number, string> = {
  0x00: '0',
  0x07: 'a',
  0x08: 'b',
  0x09: 't',
  0x0a: 'n',
  0x0b: 'v',
  0x0c: 'f',
  0x0d: 'r',
  0x1b: 'e',
  0x22: '"',
  0x5c: '\\',
  0x85: 'N',
  0xa0: '_',
  0x2028: 'L',
  0x2029: 'P',
};

function escape(c: string): string {
  const cp = c.codePointAt(0)!;
  const named = namedEscapes[cp];
  if (named) return `\\${named}`;
  const hex = cp.toString(16).toUpperCase();
  if (cp <= 0xff) return `\\x${hex.padStart(2, '0')}`;
  if (cp <= 0xffff) return `\\u${hex.padStart(4, '0')}`;
  return `\\U${hex.padStart(8, '0')}`;
}
