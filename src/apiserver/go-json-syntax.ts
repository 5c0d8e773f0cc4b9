/**
 * encoding/json's syntax error for a text that is not JSON, worded as Go's
 * scanner words it (`invalid character 'o' in literal null (expecting 'u')`,
 * `invalid character '}' after object key`, `unexpected end of JSON input`),
 * for messages that quote what a Go server would say about a bad body.
 */

/** Go's quoteChar: the character in single quotes, escaped as strconv.Quote would. */
export function goQuoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return "'\"'";
  const q = JSON.stringify(c).slice(1, -1);
  const code = c.codePointAt(0)!;
  if (code < 0x20 && !/^\\[nrtbf]$/.test(q)) return `'\\x${code.toString(16).padStart(2, '0')}'`;
  return `'${q}'`;
}

class SyntaxErr extends Error {}

/** The error Go's json.Unmarshal gives for `text`, or undefined when it is valid JSON. */
export function goJsonSyntaxError(text: string): string | undefined {
  let i = 0;
  const n = text.length;
  const bad = (c: string, context: string): never => {
    throw new SyntaxErr(`invalid character ${goQuoteChar(c)} ${context}`);
  };
  const eof = (): never => {
    throw new SyntaxErr('unexpected end of JSON input');
  };
  const ws = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const next = (): string => (i < n ? text[i]! : eof());
  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      i++;
      const c = next();
      if (c !== word[k]) bad(c, `in literal ${word} (expecting ${goQuoteChar(word[k]!)})`);
    }
    i++;
  };
  const string = () => {
    i++; // opening quote
    for (;;) {
      const c = next();
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        i++;
        const e = next();
        if (e === 'u') {
          for (let k = 0; k < 4; k++) {
            i++;
            const h = next();
            if (!/[0-9a-fA-F]/.test(h)) bad(h, 'in \\u hexadecimal character escape');
          }
        } else if (!'"\\/bfnrt'.includes(e)) bad(e, 'in string escape code');
        i++;
        continue;
      }
      if (c.charCodeAt(0) < 0x20) bad(c, 'in string literal');
      i++;
    }
  };
  const digits = () => {
    while (i < n && text[i]! >= '0' && text[i]! <= '9') i++;
  };
  const number = () => {
    if (text[i] === '-') {
      i++;
      const c = next();
      if (!(c >= '0' && c <= '9')) bad(c, 'in numeric literal');
    }
    if (text[i] === '0') i++;
    else digits();
    if (i < n && text[i] === '.') {
      i++;
      const c = next();
      if (!(c >= '0' && c <= '9')) bad(c, 'after decimal point in numeric literal');
      digits();
    }
    if (i < n && (text[i] === 'e' || text[i] === 'E')) {
      i++;
      if (i < n && (text[i] === '+' || text[i] === '-')) i++;
      const c = next();
      if (!(c >= '0' && c <= '9')) bad(c, 'in exponent of numeric literal');
      digits();
    }
  };
  const value = (): void => {
    ws();
    const c = next();
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"') return string();
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    bad(c, 'looking for beginning of value');
  };
  const object = () => {
    i++;
    ws();
    if (next() === '}') {
      i++;
      return;
    }
    for (;;) {
      ws();
      const k = next();
      if (k !== '"') bad(k, 'looking for beginning of object key string');
      string();
      ws();
      const colon = next();
      if (colon !== ':') bad(colon, 'after object key');
      i++;
      value();
      ws();
      const c = next();
      if (c === ',') {
        i++;
        continue;
      }
      if (c === '}') {
        i++;
        return;
      }
      bad(c, 'after object key:value pair');
    }
  };
  const array = () => {
    i++;
    ws();
    if (next() === ']') {
      i++;
      return;
    }
    for (;;) {
      value();
      ws();
      const c = next();
      if (c === ',') {
        i++;
        continue;
      }
      if (c === ']') {
        i++;
        return;
      }
      bad(c, 'after array element');
    }
  };
  try {
    value();
    ws();
    if (i < n) bad(text[i]!, 'after top-level value');
    return undefined;
  } catch (err) {
    if (err instanceof SyntaxErr) return err.message;
    throw err;
  }
}
