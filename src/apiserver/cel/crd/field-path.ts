/**
 * The `fieldPath` of an x-kubernetes-validations rule
 * (apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go
 * ValidFieldPath): a JSON path of field selections (`.spec.foo`) and
 * quoted map keys or properties (`['a.b']`) that must exist in the schema,
 * normalized as field.Path prints it (`spec.foo`, `spec[a.b]`).
 */
import type { Schema } from '../../crd/schema.js';

export class FieldPathError extends Error {}

/** field.Path rendering: `.name` for children (none at the start), `[key]` for keys. */
export const childPath = (path: string, name: string): string => (path ? `${path}.${name}` : name);
export const keyPath = (path: string, key: string): string => `${path}[${key}]`;

function unescapeSingleQuote(s: string): string {
  return s.replace(/\\(.)/g, (_, c: string) => {
    switch (c) {
      case 'a':
        return '\x07';
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'v':
        return '\v';
      case "'":
        return "'";
      case '\\':
        return '\\';
      default:
        throw new FieldPathError(`invalid string literal: invalid escape char \\${c}`);
    }
  });
}

/** Splits like upstream's scanner: the delimiters `.`, `[`, `]` alone, quoted strings whole, other text between delimiters. */
function tokens(path: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < path.length) {
    const c = path[i]!;
    if (c === "'") {
      let j = i + 1;
      while (j < path.length && !(path[j] === "'" && path[j - 1] !== '\\')) j++;
      out.push(path.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    if (c === '.' || c === '[' || c === ']') {
      out.push(c);
      i++;
      continue;
    }
    let j = i;
    while (j < path.length && !'.[]'.includes(path[j]!)) j++;
    out.push(path.slice(i, j));
    i = j;
  }
  return out;
}

/**
 * The normalized path and the schema it points to; throws FieldPathError
 * (`does not refer to a valid field`, ...) when the path is not valid for `schema`.
 */
export function validFieldPath(jsonPath: string, schema: Schema, allowArrayNotation = true): { path: string; schema: Schema } {
  let s: Schema | undefined = schema;
  let path = '';
  const append = (name: string, isNamed: boolean): void => {
    if (!isNamed) {
      path = keyPath(path, name);
      const ap: Schema | boolean | undefined = s!.additionalProperties;
      s = typeof ap === 'object' ? ap : undefined;
    } else {
      path = childPath(path, name);
      const p: Schema | undefined = s!.properties?.[name];
      if (!p) throw new FieldPathError('does not refer to a valid field');
      s = p;
    }
  };
  const named = (): boolean => {
    if (s?.properties) return true;
    if (s?.additionalProperties !== undefined && s.additionalProperties !== false) return false;
    throw new FieldPathError('does not refer to a valid field');
  };
  const toks = tokens(jsonPath);
  for (let i = 0; i < toks.length; i++) {
    const tok = toks[i]!;
    if (tok === '[') {
      if (!allowArrayNotation) throw new FieldPathError('array notation is not allowed');
      const q = toks[++i];
      if (q === undefined) throw new FieldPathError('unexpected end of JSON path');
      if (q.length < 2 || q[0] !== "'" || q[q.length - 1] !== "'") throw new FieldPathError(`expected single quoted string but got ${q}`);
      append(unescapeSingleQuote(q.slice(1, -1)), named());
      const close = toks[++i];
      if (close === undefined) throw new FieldPathError('unexpected end of JSON path');
      if (close !== ']') throw new FieldPathError(`expected ] but got ${close}`);
    } else if (tok === '.') {
      const name = toks[++i];
      if (name === undefined) throw new FieldPathError('unexpected end of JSON path');
      append(name, named());
    } else {
      throw new FieldPathError(`expected [ or . but got: ${tok}`);
    }
  }
  return { path, schema: s! };
}
