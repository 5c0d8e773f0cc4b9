/**
 * goautoneg.ParseAccept, the Accept-header parser kube-apiserver and
 * kube-openapi negotiate with: clauses split on `,`, parameters on `;` (each
 * `k=v` split at the first `=`), `q` read as strconv.ParseFloat of the
 * untrimmed value (a syntax error reads as 0), a lone type other than `*`
 * skipped. Clauses are ordered by q, then concrete types before wildcards,
 * otherwise as sent (Go's sort.Sort is an insertion sort for such short
 * inputs, so equal clauses keep header order).
 */
export interface AcceptClause {
  type: string;
  subType: string;
  q: number;
  /** Parameters other than q, values trimmed of spaces. */
  params: Map<string, string>;
}

const trimSpaces = (s: string): string => s.replace(/^ +| +$/g, '');

export function parseAccept(header: string): AcceptClause[] {
  const out: AcceptClause[] = [];
  for (const rawPart of header.split(',')) {
    const [range = '', ...params] = trimSpaces(rawPart).split(';');
    const sp = range.split('/');
    const type = trimSpaces(sp[0]!);
    let subType: string;
    if (sp.length === 1 && type === '*') subType = '*';
    else if (sp.length === 2) subType = trimSpaces(sp[1]!);
    else continue;
    const c: AcceptClause = { type, subType, q: 1, params: new Map() };
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = trimSpaces(p.slice(0, eq));
      const v = p.slice(eq + 1);
      if (k === 'q') c.q = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v) ? Math.fround(Number(v)) : 0;
      else c.params.set(k, trimSpaces(v));
    }
    out.push(c);
  }
  const less = (a: AcceptClause, b: AcceptClause): boolean => a.q > b.q || (a.type !== '*' && b.type === '*') || (a.subType !== '*' && b.subType === '*');
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && less(out[j]!, out[j - 1]!); j--) [out[j - 1], out[j]] = [out[j]!, out[j - 1]!];
  }
  return out;
}
