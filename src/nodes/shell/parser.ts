/**
 * Lexer and parser for the POSIX sh / bash subset the simulated containers
 * run. The lexer is driven by the parser (shell tokenization depends on
 * context: reserved words, `[[ ]]`, `$(...)`), so both live here.
 */

// ---------------------------------------------------------------------------
// AST

/** One piece of a word. `q` is true when the piece was inside double quotes. */
export type WordPart =
  | { t: 'lit'; v: string; q: boolean }
  | { t: 'param'; name: string; op?: string; arg?: Word; q: boolean }
  | { t: 'cmdsub'; body: List; q: boolean }
  | { t: 'arith'; expr: Word; q: boolean }
  | { t: 'tilde'; user: string };

export interface Word {
  parts: WordPart[];
}

export interface Redir {
  fd: number;
  op: '>' | '>>' | '<' | '>&' | '<&' | '&>' | '&>>' | '<>' | '>|' | '<<<' | '<<';
  target: Word;
  /** Here-document body (for `<<`), already read. */
  heredoc?: Word;
}

export interface Assign {
  name: string;
  value: Word;
  append: boolean;
}

export type Command =
  | { t: 'simple'; assigns: Assign[]; words: Word[]; redirs: Redir[]; line: number }
  | { t: 'if'; clauses: Array<{ cond: List; body: List }>; else?: List; redirs: Redir[] }
  | { t: 'loop'; until: boolean; cond: List; body: List; redirs: Redir[] }
  | { t: 'for'; name: string; items?: Word[]; body: List; redirs: Redir[] }
  | { t: 'case'; word: Word; items: Array<{ patterns: Word[]; body: List; fall: boolean }>; redirs: Redir[] }
  | { t: 'subshell'; body: List; redirs: Redir[] }
  | { t: 'group'; body: List; redirs: Redir[] }
  | { t: 'cond'; expr: CondExpr; redirs: Redir[] }
  | { t: 'arithcmd'; expr: Word; redirs: Redir[] }
  | { t: 'func'; name: string; body: Command; redirs: Redir[] };

export type CondExpr =
  | { t: 'and' | 'or'; a: CondExpr; b: CondExpr }
  | { t: 'not'; a: CondExpr }
  | { t: 'unary'; op: string; a: Word }
  | { t: 'binary'; op: string; a: Word; b: Word }
  | { t: 'word'; a: Word };

export interface Pipeline {
  neg: boolean;
  cmds: Command[];
}
export interface AndOr {
  first: Pipeline;
  rest: Array<{ op: '&&' | '||'; p: Pipeline }>;
}
export interface List {
  items: Array<{ ao: AndOr; bg: boolean }>;
}

export class ShellSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------

const RESERVED = new Set(['if', 'then', 'elif', 'else', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'in', '{', '}', '!', '[[', ']]', 'function']);
const META = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Tok =
  | { k: 'word'; w: Word; raw: string }
  | { k: 'op'; v: string }
  | { k: 'nl' }
  | { k: 'eof' };

/** Parses a whole script. */
export function parse(src: string): List {
  const p = new Parser(src);
  const l = p.parseList([]);
  p.expectEof();
  return l;
}

/** Parses a string as the inside of double quotes (for arithmetic and here-docs). */
export function parseDoubleQuotedText(src: string, quoted = true): Word {
  const p = new Parser(src);
  return p.parseDqText(quoted);
}

class Parser {
  pos = 0;
  line = 1;
  private peeked: Tok | undefined;
  private peekedPos = 0;
  private peekedLine = 1;
  private pendingHeredocs: Array<{ delim: string; strip: boolean; quoted: boolean; r: Redir }> = [];

  constructor(private readonly src: string) {}

  private err(msg: string): never {
    throw new ShellSyntaxError(msg, this.line);
  }

  // --- character level -----------------------------------------------------

  private ch(o = 0): string {
    return this.src[this.pos + o] ?? '';
  }

  private skipBlanks(): void {
    for (;;) {
      const c = this.ch();
      if (c === ' ' || c === '\t') this.pos++;
      else if (c === '\\' && this.ch(1) === '\n') {
        this.pos += 2;
        this.line++;
      } else if (c === '#') {
        while (this.pos < this.src.length && this.ch() !== '\n') this.pos++;
      } else break;
    }
  }

  // --- tokens ----------------------------------------------------------------

  peek(): Tok {
    if (!this.peeked) {
      const save = this.pos;
      const saveLine = this.line;
      this.peeked = this.lex();
      this.peekedPos = save;
      this.peekedLine = saveLine;
    }
    return this.peeked;
  }
  next(): Tok {
    const t = this.peek();
    this.peeked = undefined;
    return t;
  }
  /** Un-reads a peeked token (to re-lex in a different mode). */
  private unpeek(): void {
    if (this.peeked) {
      this.pos = this.peekedPos;
      this.line = this.peekedLine;
      this.peeked = undefined;
    }
  }

  private lex(): Tok {
    this.skipBlanks();
    if (this.pos >= this.src.length) return { k: 'eof' };
    const c = this.ch();
    if (c === '\n') {
      this.pos++;
      this.line++;
      this.readHeredocs();
      return { k: 'nl' };
    }
    const three = this.src.slice(this.pos, this.pos + 3);
    for (const op of ['&>>', ';;&', '<<<', '<<-']) {
      if (three === op) {
        this.pos += 3;
        return { k: 'op', v: op };
      }
    }
    const two = this.src.slice(this.pos, this.pos + 2);
    for (const op of ['&&', '||', ';;', ';&', '>>', '<<', '>&', '<&', '&>', '<>', '>|']) {
      if (two === op) {
        this.pos += 2;
        return { k: 'op', v: op };
      }
    }
    if (';&|<>()'.includes(c)) {
      this.pos++;
      return { k: 'op', v: c };
    }
    const start = this.pos;
    const w = this.readWord(false);
    return { k: 'word', w, raw: this.src.slice(start, this.pos) };
  }

  private isWordEnd(inCond: boolean): boolean {
    const c = this.ch();
    if (c === '') return true;
    if (inCond) return c === ' ' || c === '\t' || c === '\n' || c === ';' || c === '&' || c === '|' || c === '<' || c === '>' || c === '(' || c === ')';
    return META.has(c);
  }

  /** Reads one word in unquoted context. */
  private readWord(inCond: boolean): Word {
    const parts: WordPart[] = [];
    let lit = '';
    const flush = (): void => {
      if (lit) parts.push({ t: 'lit', v: lit, q: false });
      lit = '';
    };
    if (this.ch() === '~') {
      let j = this.pos + 1;
      while (j < this.src.length && /[A-Za-z0-9_.-]/.test(this.src[j]!)) j++;
      const after = this.src[j] ?? '';
      if (after === '' || after === '/' || META.has(after) || after === ':') {
        parts.push({ t: 'tilde', user: this.src.slice(this.pos + 1, j) });
        this.pos = j;
      }
    }
    while (!this.isWordEnd(inCond)) {
      const c = this.ch();
      if (c === '\\') {
        const n = this.ch(1);
        this.pos += 2;
        if (n === '\n') {
          this.line++;
          continue;
        }
        flush();
        parts.push({ t: 'lit', v: n, q: true });
      } else if (c === "'") {
        flush();
        const end = this.src.indexOf("'", this.pos + 1);
        if (end < 0) this.err("unterminated quoted string");
        const v = this.src.slice(this.pos + 1, end);
        this.line += countNl(v);
        parts.push({ t: 'lit', v, q: true });
        this.pos = end + 1;
      } else if (c === '$' && this.ch(1) === "'") {
        flush();
        this.pos += 2;
        let v = '';
        while (this.ch() !== "'") {
          if (this.pos >= this.src.length) this.err('unterminated quoted string');
          if (this.ch() === '\\') {
            const [s, len] = ansiEscape(this.src, this.pos);
            v += s;
            this.pos += len;
          } else v += this.src[this.pos++];
        }
        this.pos++;
        parts.push({ t: 'lit', v, q: true });
      } else if (c === '"') {
        flush();
        this.pos++;
        const inner = this.readDq();
        if (inner.length === 0) parts.push({ t: 'lit', v: '', q: true });
        else parts.push(...inner);
      } else if (c === '$' || c === '`') {
        const p = this.readDollar(false);
        if (p) {
          flush();
          parts.push(p);
        } else {
          lit += c;
          this.pos++;
        }
      } else {
        lit += c;
        this.pos++;
      }
    }
    flush();
    return { parts };
  }

  /** Reads the inside of "..." (after the opening quote) up to and including the closing quote. */
  private readDq(): WordPart[] {
    const parts: WordPart[] = [];
    let lit = '';
    const flush = (): void => {
      if (lit) parts.push({ t: 'lit', v: lit, q: true });
      lit = '';
    };
    for (;;) {
      if (this.pos >= this.src.length) this.err('unterminated quoted string');
      const c = this.ch();
      if (c === '"') {
        this.pos++;
        break;
      }
      if (c === '\\') {
        const n = this.ch(1);
        if (n === '\n') {
          this.pos += 2;
          this.line++;
          continue;
        }
        if ('$`"\\'.includes(n)) {
          lit += n;
          this.pos += 2;
          continue;
        }
        lit += c;
        this.pos++;
        continue;
      }
      if (c === '$' || c === '`') {
        const p = this.readDollar(true);
        if (p) {
          flush();
          parts.push(p);
          continue;
        }
      }
      if (c === '\n') this.line++;
      lit += c;
      this.pos++;
    }
    flush();
    return parts;
  }

  /** Parses text as if inside double quotes, to the end of input. */
  parseDqText(quoted: boolean): Word {
    const parts: WordPart[] = [];
    let lit = '';
    const flush = (): void => {
      if (lit) parts.push({ t: 'lit', v: lit, q: quoted });
      lit = '';
    };
    while (this.pos < this.src.length) {
      const c = this.ch();
      if (c === '\\' && '$`\\'.includes(this.ch(1))) {
        lit += this.ch(1);
        this.pos += 2;
        continue;
      }
      if (c === '$' || c === '`') {
        const p = this.readDollar(quoted);
        if (p) {
          flush();
          parts.push(p);
          continue;
        }
      }
      lit += c;
      this.pos++;
    }
    flush();
    return { parts };
  }

  /** At `$` or a backtick: reads an expansion, or returns undefined for a literal `$`. */
  private readDollar(q: boolean): WordPart | undefined {
    const c = this.ch();
    if (c === '`') {
      let j = this.pos + 1;
      let body = '';
      while (j < this.src.length && this.src[j] !== '`') {
        if (this.src[j] === '\\' && '`$\\'.includes(this.src[j + 1] ?? '')) {
          body += this.src[j + 1];
          j += 2;
        } else body += this.src[j++];
      }
      if (j >= this.src.length) this.err('unterminated backquote');
      this.pos = j + 1;
      this.line += countNl(body);
      return { t: 'cmdsub', body: parse(body), q };
    }
    const n = this.ch(1);
    if (n === '(' && this.ch(2) === '(') {
      // $(( arith )): find the matching '))'
      let depth = 0;
      let j = this.pos + 3;
      for (; j < this.src.length; j++) {
        const x = this.src[j];
        if (x === '(') depth++;
        else if (x === ')') {
          if (depth === 0 && this.src[j + 1] === ')') break;
          depth--;
        }
      }
      if (j >= this.src.length) this.err('missing ))');
      const text = this.src.slice(this.pos + 3, j);
      this.pos = j + 2;
      return { t: 'arith', expr: parseDoubleQuotedText(text, true), q };
    }
    if (n === '(') {
      this.pos += 2;
      const saved = this.peeked;
      this.peeked = undefined;
      const body = this.parseList([')']);
      const t = this.next();
      if (!(t.k === 'op' && t.v === ')')) this.err('missing )');
      this.peeked = saved;
      return { t: 'cmdsub', body, q };
    }
    if (n === '{') {
      this.pos += 2;
      return this.readBraceParam(q);
    }
    if (/[A-Za-z_]/.test(n)) {
      let j = this.pos + 1;
      while (j < this.src.length && /[A-Za-z0-9_]/.test(this.src[j]!)) j++;
      const name = this.src.slice(this.pos + 1, j);
      this.pos = j;
      return { t: 'param', name, q };
    }
    if (/[0-9?#$!@*\-]/.test(n) && n !== '') {
      this.pos += 2;
      return { t: 'param', name: n, q };
    }
    return undefined;
  }

  private readBraceParam(q: boolean): WordPart {
    // after '${'
    let length = false;
    if (this.ch() === '#' && this.ch(1) !== '}' && /[A-Za-z_0-9@*?#!$]/.test(this.ch(1))) {
      length = true;
      this.pos++;
    }
    let name = '';
    if (/[A-Za-z_]/.test(this.ch())) {
      while (/[A-Za-z0-9_]/.test(this.ch())) name += this.src[this.pos++];
    } else if (/[0-9]/.test(this.ch())) {
      while (/[0-9]/.test(this.ch())) name += this.src[this.pos++];
    } else if ('?#$!@*-'.includes(this.ch()) && this.ch() !== '') {
      name = this.src[this.pos++]!;
    } else this.err('bad substitution');
    if (length) {
      if (this.ch() !== '}') this.err('bad substitution');
      this.pos++;
      return { t: 'param', name, op: 'len', q };
    }
    if (this.ch() === '}') {
      this.pos++;
      return { t: 'param', name, q };
    }
    let op = '';
    const two = this.src.slice(this.pos, this.pos + 2);
    if ([':-', ':=', ':+', ':?', '##', '%%', '//'].includes(two)) op = two;
    else if ('-=+?#%/:'.includes(this.ch())) op = this.ch();
    else this.err('bad substitution');
    this.pos += op.length;
    const arg = this.readParamArg(q);
    return { t: 'param', name, op, arg, q };
  }

  /** Reads a `${X:-word}` argument up to the matching `}`. */
  private readParamArg(q: boolean): Word {
    const parts: WordPart[] = [];
    let lit = '';
    const flush = (): void => {
      if (lit) parts.push({ t: 'lit', v: lit, q });
      lit = '';
    };
    let depth = 0;
    for (;;) {
      if (this.pos >= this.src.length) this.err('bad substitution');
      const c = this.ch();
      if (c === '}' && depth === 0) {
        this.pos++;
        break;
      }
      if (c === '{') depth++;
      if (c === '}') depth--;
      if (c === '\\') {
        flush();
        parts.push({ t: 'lit', v: this.ch(1), q: true });
        this.pos += 2;
      } else if (c === "'" && !q) {
        flush();
        const end = this.src.indexOf("'", this.pos + 1);
        if (end < 0) this.err('unterminated quoted string');
        parts.push({ t: 'lit', v: this.src.slice(this.pos + 1, end), q: true });
        this.pos = end + 1;
      } else if (c === '"') {
        flush();
        this.pos++;
        const inner = this.readDq();
        parts.push(...(inner.length ? inner : [{ t: 'lit' as const, v: '', q: true }]));
      } else if (c === '$' || c === '`') {
        const p = this.readDollar(q);
        if (p) {
          flush();
          parts.push(p);
        } else {
          lit += c;
          this.pos++;
        }
      } else {
        lit += c;
        this.pos++;
      }
    }
    flush();
    return { parts };
  }

  private readHeredocs(): void {
    const docs = this.pendingHeredocs;
    this.pendingHeredocs = [];
    for (const d of docs) {
      let body = '';
      for (;;) {
        if (this.pos >= this.src.length) break;
        let end = this.src.indexOf('\n', this.pos);
        if (end < 0) end = this.src.length;
        let line = this.src.slice(this.pos, end);
        this.pos = Math.min(end + 1, this.src.length);
        this.line++;
        if (d.strip) line = line.replace(/^\t+/, '');
        if (line === d.delim) break;
        body += line + '\n';
      }
      d.r.heredoc = d.quoted ? { parts: [{ t: 'lit', v: body, q: true }] } : parseDoubleQuotedText(body, true);
    }
  }

  // --- grammar -------------------------------------------------------------

  private isWord(t: Tok, v: string): boolean {
    return t.k === 'word' && t.raw === v;
  }

  private skipNewlines(): void {
    while (this.peek().k === 'nl') this.next();
  }

  expectEof(): void {
    const t = this.peek();
    if (t.k !== 'eof') this.err(`syntax error: unexpected ${describe(t)}`);
  }

  /** A compound list, up to one of the `stops` reserved words/operators (not consumed). */
  parseList(stops: string[]): List {
    const items: List['items'] = [];
    for (;;) {
      this.skipNewlines();
      const t = this.peek();
      if (t.k === 'eof') break;
      if (t.k === 'word' && stops.includes(t.raw)) break;
      if (t.k === 'op' && (stops.includes(t.v) || t.v === ';;' || t.v === ';&' || t.v === ';;&')) break;
      if (t.k === 'op' && t.v === ')' ) break;
      const ao = this.parseAndOr();
      const s = this.peek();
      let bg = false;
      if (s.k === 'op' && (s.v === ';' || s.v === '&')) {
        this.next();
        bg = s.v === '&';
      } else if (s.k === 'nl' || s.k === 'eof') {
        /* fine */
      } else if (!(s.k === 'word' && stops.includes(s.raw)) && !(s.k === 'op' && (stops.includes(s.v) || s.v === ')' || s.v === ';;' || s.v === ';&' || s.v === ';;&'))) {
        this.err(`syntax error: unexpected ${describe(s)}`);
      }
      items.push({ ao, bg });
    }
    return { items };
  }

  private parseAndOr(): AndOr {
    const first = this.parsePipeline();
    const rest: AndOr['rest'] = [];
    for (;;) {
      const t = this.peek();
      if (t.k === 'op' && (t.v === '&&' || t.v === '||')) {
        this.next();
        this.skipNewlines();
        rest.push({ op: t.v, p: this.parsePipeline() });
      } else break;
    }
    return { first, rest };
  }

  private parsePipeline(): Pipeline {
    let neg = false;
    while (this.isWord(this.peek(), '!')) {
      this.next();
      neg = !neg;
    }
    const cmds = [this.parseCommand()];
    for (;;) {
      const t = this.peek();
      if (t.k === 'op' && t.v === '|') {
        this.next();
        this.skipNewlines();
        cmds.push(this.parseCommand());
      } else break;
    }
    return { neg, cmds };
  }

  private parseCommand(): Command {
    const t = this.peek();
    if (t.k === 'eof') this.err('syntax error: unexpected end of file');
    if (t.k === 'op' && t.v === '(') {
      this.next();
      if (this.ch() === '(') {
        // (( arith ))
        this.pos++;
        return this.parseArithCommand();
      }
      const body = this.parseList([')']);
      this.expectOp(')');
      return { t: 'subshell', body, redirs: this.parseRedirs() };
    }
    if (t.k === 'word') {
      switch (t.raw) {
        case '{': {
          this.next();
          const body = this.parseList(['}']);
          this.expectWord('}');
          return { t: 'group', body, redirs: this.parseRedirs() };
        }
        case 'if':
          return this.parseIf();
        case 'while':
        case 'until': {
          this.next();
          const cond = this.parseList(['do']);
          this.expectWord('do');
          const body = this.parseList(['done']);
          this.expectWord('done');
          return { t: 'loop', until: t.raw === 'until', cond, body, redirs: this.parseRedirs() };
        }
        case 'for':
          return this.parseFor();
        case 'case':
          return this.parseCase();
        case '[[':
          return this.parseCond();
        case 'function': {
          this.next();
          const n = this.next();
          if (n.k !== 'word') this.err('syntax error: bad function name');
          const name = n.raw.replace(/\(\)$/, '');
          if (this.peek().k === 'op' && (this.peek() as { v: string }).v === '(') {
            this.next();
            this.expectOp(')');
          }
          this.skipNewlines();
          return { t: 'func', name, body: this.parseCommand(), redirs: [] };
        }
        case 'then': case 'elif': case 'else': case 'fi': case 'do': case 'done': case 'esac': case '}': case 'in':
          this.err(`syntax error: unexpected "${t.raw}"`);
      }
    }
    return this.parseSimple();
  }

  private parseArithCommand(): Command {
    // pos just after '(('
    let depth = 0;
    let j = this.pos;
    for (; j < this.src.length; j++) {
      const x = this.src[j];
      if (x === '(') depth++;
      else if (x === ')') {
        if (depth === 0 && this.src[j + 1] === ')') break;
        depth--;
      }
    }
    if (j >= this.src.length) this.err('missing ))');
    const text = this.src.slice(this.pos, j);
    this.pos = j + 2;
    return { t: 'arithcmd', expr: parseDoubleQuotedText(text, true), redirs: this.parseRedirs() };
  }

  private expectWord(w: string): void {
    const t = this.next();
    if (!this.isWord(t, w)) this.err(`syntax error: unexpected ${describe(t)} (expecting "${w}")`);
  }
  private expectOp(v: string): void {
    const t = this.next();
    if (!(t.k === 'op' && t.v === v)) this.err(`syntax error: unexpected ${describe(t)} (expecting "${v}")`);
  }

  private parseIf(): Command {
    this.next();
    const clauses: Array<{ cond: List; body: List }> = [];
    let elseBody: List | undefined;
    for (;;) {
      const cond = this.parseList(['then']);
      this.expectWord('then');
      const body = this.parseList(['elif', 'else', 'fi']);
      clauses.push({ cond, body });
      const t = this.next();
      if (this.isWord(t, 'elif')) continue;
      if (this.isWord(t, 'else')) {
        elseBody = this.parseList(['fi']);
        this.expectWord('fi');
        break;
      }
      if (this.isWord(t, 'fi')) break;
      this.err(`syntax error: unexpected ${describe(t)} (expecting "fi")`);
    }
    const c: Command = { t: 'if', clauses, redirs: this.parseRedirs() };
    if (elseBody) c.else = elseBody;
    return c;
  }

  private parseFor(): Command {
    this.next();
    const n = this.next();
    if (n.k !== 'word' || !NAME_RE.test(n.raw)) this.err('syntax error: bad for loop variable');
    let items: Word[] | undefined;
    this.skipNewlinesAndSemi(false);
    if (this.isWord(this.peek(), 'in')) {
      this.next();
      items = [];
      for (;;) {
        const t = this.peek();
        if (t.k === 'word') {
          this.next();
          items.push(t.w);
        } else break;
      }
      const s = this.peek();
      if (s.k === 'op' && s.v === ';') this.next();
    } else {
      const s = this.peek();
      if (s.k === 'op' && s.v === ';') this.next();
    }
    this.skipNewlines();
    this.expectWord('do');
    const body = this.parseList(['done']);
    this.expectWord('done');
    const c: Command = { t: 'for', name: n.raw, body, redirs: this.parseRedirs() };
    if (items) c.items = items;
    return c;
  }

  private skipNewlinesAndSemi(semi: boolean): void {
    for (;;) {
      const t = this.peek();
      if (t.k === 'nl' || (semi && t.k === 'op' && t.v === ';')) this.next();
      else break;
    }
  }

  private parseCase(): Command {
    this.next();
    const wt = this.next();
    if (wt.k !== 'word') this.err('syntax error: bad case word');
    this.skipNewlines();
    this.expectWord('in');
    const items: Array<{ patterns: Word[]; body: List; fall: boolean }> = [];
    for (;;) {
      this.skipNewlines();
      const t = this.peek();
      if (this.isWord(t, 'esac')) {
        this.next();
        break;
      }
      if (t.k === 'op' && t.v === '(') this.next();
      const patterns: Word[] = [];
      for (;;) {
        const p = this.next();
        if (p.k !== 'word') this.err(`syntax error: unexpected ${describe(p)} in case pattern`);
        patterns.push(p.w);
        const s = this.next();
        if (s.k === 'op' && s.v === '|') continue;
        if (s.k === 'op' && s.v === ')') break;
        this.err(`syntax error: unexpected ${describe(s)} in case pattern`);
      }
      const body = this.parseList(['esac']);
      const e = this.peek();
      let fall = false;
      if (e.k === 'op' && (e.v === ';;' || e.v === ';&' || e.v === ';;&')) {
        this.next();
        fall = e.v === ';&';
      } else if (!this.isWord(e, 'esac')) this.err(`syntax error: unexpected ${describe(e)} in case`);
      items.push({ patterns, body, fall });
    }
    return { t: 'case', word: wt.w, items, redirs: this.parseRedirs() };
  }

  // [[ ... ]]
  private condTok(): { k: 'op'; v: string } | { k: 'word'; w: Word; raw: string } | { k: 'end' } {
    this.skipBlanks();
    while (this.ch() === '\n') {
      this.pos++;
      this.line++;
      this.skipBlanks();
    }
    const two = this.src.slice(this.pos, this.pos + 2);
    if (two === '&&' || two === '||') {
      this.pos += 2;
      return { k: 'op', v: two };
    }
    const c = this.ch();
    if (c === '(' || c === ')' || c === '<' || c === '>') {
      this.pos++;
      return { k: 'op', v: c };
    }
    if (c === '') this.err('syntax error: unexpected end of file (expecting "]]")');
    const start = this.pos;
    const w = this.readWord(true);
    const raw = this.src.slice(start, this.pos);
    if (raw === '') this.err(`syntax error: unexpected "${c}" in conditional expression`);
    if (raw === ']]') return { k: 'end' };
    return { k: 'word', w, raw };
  }

  private parseCond(): Command {
    this.next(); // [[
    this.unpeekIfAny();
    const toks: Array<{ k: 'op'; v: string } | { k: 'word'; w: Word; raw: string }> = [];
    for (;;) {
      const t = this.condTok();
      if (t.k === 'end') break;
      // the right side of =~ is read raw up to whitespace
      if (t.k === 'word' && t.raw === '=~') {
        toks.push(t);
        this.skipBlanks();
        const start = this.pos;
        let depth = 0;
        while (this.pos < this.src.length) {
          const c = this.ch();
          if ((c === ' ' || c === '\t' || c === '\n') && depth === 0) break;
          if (c === '(') depth++;
          if (c === ')') depth--;
          if (c === '\\') this.pos++;
          this.pos++;
        }
        const raw = this.src.slice(start, this.pos);
        const sub = new Parser(raw.replace(/[()|]/g, (m) => '\\' + m));
        const w = sub.readWord(true);
        toks.push({ k: 'word', w: unescapeRegexWord(w), raw });
        continue;
      }
      toks.push(t);
    }
    let i = 0;
    const peekT = (): (typeof toks)[number] | undefined => toks[i];
    const isOp = (t: (typeof toks)[number] | undefined, v: string): boolean => !!t && ((t.k === 'op' && t.v === v) || (t.k === 'word' && t.raw === v));
    const parseOr = (): CondExpr => {
      let a = parseAnd();
      while (isOp(peekT(), '||')) {
        i++;
        a = { t: 'or', a, b: parseAnd() };
      }
      return a;
    };
    const parseAnd = (): CondExpr => {
      let a = parseNot();
      while (isOp(peekT(), '&&')) {
        i++;
        a = { t: 'and', a, b: parseNot() };
      }
      return a;
    };
    const parseNot = (): CondExpr => {
      if (isOp(peekT(), '!')) {
        i++;
        return { t: 'not', a: parseNot() };
      }
      return parsePrimary();
    };
    const wordAt = (): { w: Word; raw: string } => {
      const t = toks[i++];
      if (!t) this.err('syntax error in conditional expression');
      if (t.k === 'op') return { w: { parts: [{ t: 'lit', v: t.v, q: false }] }, raw: t.v };
      return t;
    };
    const parsePrimary = (): CondExpr => {
      const t = peekT();
      if (!t) this.err('syntax error in conditional expression');
      if (t.k === 'op' && t.v === '(') {
        i++;
        const e = parseOr();
        if (!isOp(peekT(), ')')) this.err('syntax error in conditional expression: expected )');
        i++;
        return e;
      }
      if (t.k === 'word' && /^-[a-zA-Z]$/.test(t.raw) && toks[i + 1] && !isBinaryOp(toks[i + 2])) {
        i++;
        return { t: 'unary', op: t.raw, a: wordAt().w };
      }
      const a = wordAt();
      const o = peekT();
      if (o && isBinaryOp(o)) {
        i++;
        const op = o.k === 'op' ? o.v : o.raw;
        const b = wordAt();
        return { t: 'binary', op, a: a.w, b: b.w };
      }
      return { t: 'word', a: a.w };
    };
    const expr = parseOr();
    if (i < toks.length) this.err('syntax error in conditional expression');
    return { t: 'cond', expr, redirs: this.parseRedirs() };
  }

  private unpeekIfAny(): void {
    if (this.peeked) this.unpeek();
  }

  private parseRedirs(): Redir[] {
    const out: Redir[] = [];
    for (;;) {
      const r = this.tryRedir();
      if (!r) break;
      out.push(r);
    }
    return out;
  }

  /** Parses a redirection if the next token is one (including `2>`, `2>&1`). */
  private tryRedir(): Redir | undefined {
    let t = this.peek();
    let fd: number | undefined;
    if (t.k === 'word' && /^[0-9]+$/.test(t.raw)) {
      // IO number: digits immediately followed by < or >
      const after = this.src[this.pos] ?? '';
      if (after === '<' || after === '>') {
        fd = Number(t.raw);
        this.next();
        t = this.peek();
      } else return undefined;
    }
    if (t.k !== 'op') return undefined;
    const ops = ['>', '>>', '<', '>&', '<&', '&>', '&>>', '<>', '>|', '<<<', '<<', '<<-'];
    if (!ops.includes(t.v)) {
      if (fd !== undefined) this.err('syntax error');
      return undefined;
    }
    this.next();
    const target = this.next();
    if (target.k !== 'word') this.err(`syntax error: unexpected ${describe(target)}`);
    let op = t.v as Redir['op'] | '<<-';
    const defFd = op.startsWith('<') ? 0 : 1;
    if (op === '<<' || op === '<<-') {
      const delimRaw = target.raw;
      const quoted = /['"\\]/.test(delimRaw);
      const delim = delimRaw.replace(/['"\\]/g, '');
      const r: Redir = { fd: fd ?? 0, op: '<<', target: target.w };
      this.pendingHeredocs.push({ delim, strip: op === '<<-', quoted, r });
      op = '<<';
      return r;
    }
    return { fd: fd ?? defFd, op: op as Redir['op'], target: target.w };
  }

  private parseSimple(): Command {
    const assigns: Assign[] = [];
    const words: Word[] = [];
    const redirs: Redir[] = [];
    const line = this.line;
    for (;;) {
      const r = this.tryRedir();
      if (r) {
        redirs.push(r);
        continue;
      }
      const t = this.peek();
      if (t.k !== 'word') break;
      if (words.length === 0) {
        const m = /^([A-Za-z_][A-Za-z0-9_]*)(\+?)=/.exec(t.raw);
        if (m && t.w.parts[0]?.t === 'lit' && !t.w.parts[0].q && t.w.parts[0].v.startsWith(m[0])) {
          this.next();
          const first = t.w.parts[0];
          const rest = first.v.slice(m[0].length);
          const parts: WordPart[] = rest ? [{ t: 'lit', v: rest, q: false }, ...t.w.parts.slice(1)] : t.w.parts.slice(1);
          // an assignment value is not field-split: mark its literal pieces as usable as is
          assigns.push({ name: m[1]!, value: { parts }, append: m[2] === '+' });
          continue;
        }
      }
      // function definition: name ( )
      if (words.length === 0 && assigns.length === 0 && NAME_RE.test(t.raw.replace(/\(\)$/, ''))) {
        this.next();
        if (t.raw.endsWith('()')) {
          this.skipNewlines();
          return { t: 'func', name: t.raw.slice(0, -2), body: this.parseCommand(), redirs: [] };
        }
        const p = this.peek();
        if (p.k === 'op' && p.v === '(') {
          this.next();
          const q = this.peek();
          if (q.k === 'op' && q.v === ')') {
            this.next();
            this.skipNewlines();
            return { t: 'func', name: t.raw, body: this.parseCommand(), redirs: [] };
          }
          this.err('syntax error: unexpected "("');
        }
        words.push(t.w);
        continue;
      }
      this.next();
      words.push(t.w);
    }
    if (words.length === 0 && assigns.length === 0 && redirs.length === 0) {
      this.err(`syntax error: unexpected ${describe(this.peek())}`);
    }
    return { t: 'simple', assigns, words, redirs, line };
  }
}

function isBinaryOp(t: { k: 'op'; v: string } | { k: 'word'; raw: string } | undefined): boolean {
  if (!t) return false;
  const v = t.k === 'op' ? t.v : t.raw;
  return ['=', '==', '!=', '<', '>', '=~', '-eq', '-ne', '-lt', '-le', '-gt', '-ge', '-nt', '-ot', '-ef'].includes(v);
}

function unescapeRegexWord(w: Word): Word {
  // Parentheses and bars were escaped only to keep them in the word; they
  // are regex syntax, so mark them unquoted again.
  return {
    parts: w.parts.map((p) => (p.t === 'lit' && p.q && (p.v === '(' || p.v === ')' || p.v === '|') ? { t: 'lit', v: p.v, q: false } : p)),
  };
}

function describe(t: Tok): string {
  switch (t.k) {
    case 'eof':
      return 'end of file';
    case 'nl':
      return 'newline';
    case 'op':
      return `"${t.v}"`;
    case 'word':
      return `word "${t.raw}"`;
  }
}

function countNl(s: string): number {
  let n = 0;
  for (const c of s) if (c === '\n') n++;
  return n;
}

/** Decodes one backslash escape (echo -e, $'...', printf) at `i`; returns [text, consumed]. */
export function ansiEscape(s: string, i: number): [string, number] {
  const c = s[i + 1] ?? '';
  const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v', e: '\x1b', E: '\x1b', '\\': '\\', "'": "'", '"': '"' };
  if (c in simple) return [simple[c]!, 2];
  if (c === '0' || /[1-7]/.test(c)) {
    let j = i + 1;
    if (c === '0') j++;
    let digits = '';
    while (digits.length < 3 && /[0-7]/.test(s[j] ?? '')) digits += s[j++];
    return [String.fromCharCode(digits ? parseInt(digits, 8) : 0), j - i];
  }
  if (c === 'x') {
    let j = i + 2;
    let digits = '';
    while (digits.length < 2 && /[0-9a-fA-F]/.test(s[j] ?? '')) digits += s[j++];
    if (!digits) return ['\\x', 2];
    return [String.fromCharCode(parseInt(digits, 16)), j - i];
  }
  return ['\\' + c, 2];
}

export { RESERVED, NAME_RE };
