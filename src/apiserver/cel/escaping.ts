/**
 * Property names as CEL identifiers (k8s.io/apiserver/pkg/cel/escaping.go):
 * `foo-bar` is `self.foo__dash__bar`, a property named like a CEL keyword is
 * `self.__namespace__`. A name that cannot be escaped (leading digit, a
 * character outside [a-zA-Z0-9_.\-/]) is not reachable from CEL.
 */

/** CEL's reserved words plus `namespace`, which Kubernetes escapes too. */
export const celReservedSymbols: ReadonlySet<string> = new Set([
  'true', 'false', 'null', 'in',
  'as', 'break', 'const', 'continue', 'else',
  'for', 'function', 'if', 'import', 'let',
  'loop', 'package', 'namespace', 'return',
  'var', 'void', 'while',
]);

const expandMatcher = /__|[-./]|[^a-zA-Z0-9\-./_]/g;
const plainIdent = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The CEL identifier for a property name, or undefined when it has none. */
export function escapeName(ident: string): string | undefined {
  if (ident.length === 0 || (ident[0]! >= '0' && ident[0]! <= '9')) return undefined;
  if (celReservedSymbols.has(ident)) return `__${ident}__`;
  if (plainIdent.test(ident) && !ident.includes('__')) return ident;
  let ok = true;
  const out = ident.replace(expandMatcher, (s) => {
    switch (s) {
      case '__':
        return '__underscores__';
      case '.':
        return '__dot__';
      case '-':
        return '__dash__';
      case '/':
        return '__slash__';
      default:
        ok = false;
        return '';
    }
  });
  return ok ? out : undefined;
}

const unexpandMatcher = /_{2}[^_]+_{2}/g;

/** The property name of an escaped identifier, or undefined for a malformed escape. */
export function unescapeName(escaped: string): string | undefined {
  let ok = true;
  const out = escaped.replace(unexpandMatcher, (s) => {
    const contents = s.slice(2, -2);
    switch (contents) {
      case 'underscores':
        return '__';
      case 'dot':
        return '.';
      case 'dash':
        return '-';
      case 'slash':
        return '/';
    }
    if (celReservedSymbols.has(contents)) {
      if (s.length !== escaped.length) ok = false;
      return contents;
    }
    ok = false;
    return '';
  });
  return ok ? out : undefined;
}
