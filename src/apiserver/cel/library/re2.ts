/**
 * RE2 patterns (the syntax cel-go's `matches` and Kubernetes' `find` use)
 * as JavaScript regular expressions. Go's syntax is translated where it
 * differs (`(?i)` flags, `\A`, `\z`, `(?P<name>`, POSIX classes); what RE2
 * refuses (backreferences, lookaround) is refused here with RE2's message.
 */

/** A pattern RE2 would not compile; the message is Go regexp's. */
export class RegexSyntaxError extends Error {
  override readonly name = 'RegexSyntaxError';
}

const posixClasses: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-/:-@[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const cache = new Map<string, RegExp>();

/** Compiles an RE2 pattern (cached); throws RegexSyntaxError when RE2 would refuse it. */
export function compileRe2(pattern: string, global = false): RegExp {
  const key = `${global ? 'g' : ''}:${pattern}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let flags = 'u';
  let src = pattern;
  const lead = /^\(\?([imsU]+)\)/.exec(src);
  if (lead) {
    for (const f of lead[1]!) if (f === 'i' || f === 'm' || f === 's') flags += f;
    src = src.slice(lead[0].length);
  }
  let out = '';
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') {
      const n = src[i + 1];
      if (n === undefined) throw new RegexSyntaxError(`error parsing regexp: trailing backslash at end of expression: \`\``);
      if (!inClass && n === 'A') out += '^';
      else if (!inClass && n === 'z') out += '$(?![\\s\\S])';
      else if (n >= '1' && n <= '9' && !inClass) throw new RegexSyntaxError(`error parsing regexp: invalid escape sequence: \`\\${n}\``);
      else if (n === 'Q') {
        const end = src.indexOf('\\E', i + 2);
        const lit = src.slice(i + 2, end < 0 ? undefined : end);
        out += lit.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
        i = end < 0 ? src.length : end + 1;
        continue;
      } else if ((n === 'p' || n === 'P') && src[i + 2] !== '{' && src[i + 2] !== undefined) {
        out += `\\${n}{${src[i + 2]}}`;
        i += 2;
        continue;
      } else if (!/[A-Za-z0-9]/.test(n)) out += `\\u{${n.codePointAt(0)!.toString(16)}}`;
      else out += c + n;
      i++;
      continue;
    }
    if (inClass) {
      if (c === '[' && src[i + 1] === ':') {
        const end = src.indexOf(':]', i + 2);
        if (end > 0) {
          const name = src.slice(i + 2, end);
          const neg = name.startsWith('^');
          const cls = posixClasses[neg ? name.slice(1) : name];
          if (cls === undefined) throw new RegexSyntaxError(`error parsing regexp: invalid character class range: \`[:${name}:]\``);
          if (neg) throw new RegexSyntaxError(`error parsing regexp: invalid character class range: \`[:${name}:]\``);
          out += cls;
          i = end + 1;
          continue;
        }
      }
      if (c === ']') inClass = false;
      out += c === '/' ? '\\/' : c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      if (src[i + 1] === '^') {
        out += '^';
        i++;
      }
      if (src[i + 1] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (c === '(' && src[i + 1] === '?') {
      const rest = src.slice(i + 2);
      if (rest.startsWith('P<')) {
        out += '(?<';
        i += 3;
        continue;
      }
      if (rest.startsWith('=') || rest.startsWith('!') || rest.startsWith('<=') || rest.startsWith('<!')) {
        throw new RegexSyntaxError(`error parsing regexp: invalid or unsupported Perl syntax: \`(?${rest[0]}\``);
      }
      const inline = /^([imsU-]+)\)/.exec(rest);
      if (inline) {
        // inline flags in the middle: RE2 scopes them; JavaScript cannot, apply them globally when harmless
        if (inline[1]!.includes('i') && !flags.includes('i')) flags += 'i';
        i += 1 + inline[0].length;
        continue;
      }
    }
    out += c;
  }
  if (inClass) throw new RegexSyntaxError(`error parsing regexp: missing closing ]: \`${src.slice(src.lastIndexOf('['))}\``);
  let re: RegExp;
  try {
    re = new RegExp(out, global ? `${flags}g` : flags);
  } catch (err) {
    throw new RegexSyntaxError(`error parsing regexp: ${goRegexpReason((err as Error).message, pattern)}`);
  }
  if (cache.size > 1000) cache.clear();
  cache.set(key, re);
  return re;
}

function goRegexpReason(jsMessage: string, pattern: string): string {
  if (/Unterminated group|Unmatched '\)'|unmatched/i.test(jsMessage)) {
    return /Unmatched '\)'/.test(jsMessage) ? `unexpected ): \`${pattern}\`` : `missing closing ): \`${pattern}\``;
  }
  if (/Nothing to repeat/.test(jsMessage)) return `missing argument to repetition operator: \`${pattern}\``;
  return `${jsMessage.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, '')}: \`${pattern}\``;
}

/** Go's regexp.FindAllString: successive non-overlapping matches, empty matches next to a previous match skipped. */
export function findAll(str: string, pattern: string, n = -1): string[] {
  if (n === 0) return [];
  const re = compileRe2(pattern, true);
  re.lastIndex = 0;
  const out: string[] = [];
  let prevEnd = -1;
  let m: RegExpExecArray | null;
  while ((m = re.exec(str)) !== null) {
    const start = m.index;
    const end = start + m[0].length;
    if (m[0].length === 0) {
      if (start !== prevEnd) out.push('');
      re.lastIndex = start + (str.codePointAt(start)! > 0xffff ? 2 : 1);
      if (start >= str.length) break;
    } else out.push(m[0]);
    prevEnd = end;
    if (n > 0 && out.length >= n) break;
  }
  return out;
}

/** Go's regexp.FindString: the leftmost match, or '' when there is none. */
export function find(str: string, pattern: string): string {
  const m = compileRe2(pattern).exec(str);
  return m ? m[0] : '';
}

/** Go's regexp.MatchString. */
export function matches(str: string, pattern: string): boolean {
  return compileRe2(pattern).test(str);
}
