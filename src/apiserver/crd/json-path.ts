/**
 * The JSONPath subset of CRD printer columns and scale paths (kubectl's
 * template syntax without the braces): `.a.b`, `.a['b.c']`, `.a[0]`, `.a[*]`,
 * and filters `[?(@.type=="Ready")]` (== and != on strings, numbers and
 * booleans). Evaluation returns every match in document order.
 */

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'all' }
  | { kind: 'filter'; path: string[]; op: '==' | '!='; value: unknown };

/** Parses `path`; throws Error with a message naming the problem. */
export function parseJsonPath(path: string): Step[] {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1);
  if (p.startsWith('$')) p = p.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '.') {
      let j = i + 1;
      while (j < p.length && p[j] !== '.' && p[j] !== '[') j++;
      const name = p.slice(i + 1, j);
      if (!name) throw new Error(`invalid JSONPath ${JSON.stringify(path)}: empty field name`);
      steps.push(name === '*' ? { kind: 'all' } : { kind: 'field', name });
      i = j;
    } else if (c === '[') {
      const end = findClose(p, i);
      if (end < 0) throw new Error(`invalid JSONPath ${JSON.stringify(path)}: unclosed [`);
      steps.push(parseBracket(p.slice(i + 1, end), path));
      i = end + 1;
    } else {
      throw new Error(`invalid JSONPath ${JSON.stringify(path)}: unexpected ${JSON.stringify(c)}`);
    }
  }
  return steps;
}

function findClose(p: string, open: number): number {
  let quote = '';
  let depth = 0;
  for (let i = open; i < p.length; i++) {
    const c = p[i]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      depth--;
      if (depth === 0 && c === ']') return i;
    }
  }
  return -1;
}

function parseBracket(inner: string, whole: string): Step {
  const s = inner.trim();
  if (s === '*') return { kind: 'all' };
  if (/^-?\d+$/.test(s)) return { kind: 'index', index: Number(s) };
  const quoted = /^(['"])(.*)\1$/.exec(s);
  if (quoted) return { kind: 'field', name: quoted[2]! };
  const filter = /^\?\(\s*@((?:\.[^.=!\s]+)+)\s*(==|!=)\s*(.+?)\s*\)$/.exec(s);
  if (filter) {
    const raw = filter[3]!;
    const q = /^(['"])(.*)\1$/.exec(raw);
    let value: unknown = q ? q[2] : raw;
    if (!q) {
      if (raw === 'true' || raw === 'false') value = raw === 'true';
      else if (!Number.isNaN(Number(raw))) value = Number(raw);
    }
    return { kind: 'filter', path: filter[1]!.slice(1).split('.'), op: filter[2] as '==' | '!=', value };
  }
  throw new Error(`invalid JSONPath ${JSON.stringify(whole)}: unsupported [${inner}]`);
}

/** Every value `steps` selects in `root`. */
export function evaluateJsonPath(root: unknown, steps: Step[]): unknown[] {
  let cur: unknown[] = [root];
  for (const st of steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      switch (st.kind) {
        case 'field':
          if (v && typeof v === 'object' && !Array.isArray(v) && (v as Record<string, unknown>)[st.name] !== undefined) next.push((v as Record<string, unknown>)[st.name]);
          break;
        case 'index':
          if (Array.isArray(v)) {
            const i = st.index < 0 ? v.length + st.index : st.index;
            if (i >= 0 && i < v.length) next.push(v[i]);
          }
          break;
        case 'all':
          if (Array.isArray(v)) next.push(...v);
          else if (v && typeof v === 'object') next.push(...Object.values(v));
          break;
        case 'filter':
          if (Array.isArray(v)) {
            for (const item of v) {
              const got = evaluateJsonPath(item, st.path.map((name) => ({ kind: 'field', name })))[0];
              if ((got === st.value) === (st.op === '==')) next.push(item);
            }
          }
          break;
      }
    }
    cur = next;
  }
  return cur;
}

/** The first value at a simple dotted path (`.spec.replicas`), or undefined. */
export function getPath(obj: unknown, path: string): unknown {
  return evaluateJsonPath(obj, parseJsonPath(path))[0];
}

/** Sets the value at a simple dotted path (`.spec.replicas`), creating objects on the way. */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const names = path.replace(/^\./, '').split('.');
  let cur = obj;
  for (const n of names.slice(0, -1)) {
    const next = cur[n];
    if (!next || typeof next !== 'object' || Array.isArray(next)) cur[n] = {};
    cur = cur[n] as Record<string, unknown>;
  }
  cur[names[names.length - 1]!] = value;
}
