/**
 * A small Go fmt.Sprintf for event messages: %v %s %d %q %% (other verbs
 * print the value as %v). Extra arguments are appended as Go does
 * (`%!(EXTRA ...)`), missing ones print `%!v(MISSING)`.
 */
function valueString(v: unknown): string {
  if (v instanceof Error) return v.message;
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'object') {
    try {
      return JSON.stringify(v);
    } catch {
      return String(v);
    }
  }
  return String(v);
}

export function sprintf(format: string, ...args: unknown[]): string {
  let i = 0;
  const out = format.replace(/%([a-zA-Z%])/g, (_m, verb: string) => {
    if (verb === '%') return '%';
    if (i >= args.length) return `%!${verb}(MISSING)`;
    const v = args[i++];
    switch (verb) {
      case 'q':
        return JSON.stringify(valueString(v));
      case 'd':
        return typeof v === 'number' ? String(Math.trunc(v)) : valueString(v);
      default:
        return valueString(v);
    }
  });
  if (i < args.length) return `${out}%!(EXTRA ${args.slice(i).map(valueString).join(', ')})`;
  return out;
}
