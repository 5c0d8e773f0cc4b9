/**
 * The nesting depth bound of everything a request can make the server hold.
 *
 * Go's JSON decoder stops at 10,000 nested arrays and objects (`exceeded max
 * depth`), and go-yaml at 10,000 nested collections. kcm's code is
 * recursive (YAML composition, type checks, field sets, merges, deep
 * copies, JSON.stringify), and a JavaScript stack overflows long before
 * that: the yaml library at about 750 nested flow collections, the write
 * path at 1,000 to 2,000, and a stack that runs out inside V8's regular
 * expression compiler aborts the whole process. So the bound is lower:
 * {@link maxNestingDepth} keeps every recursive path a request reaches far
 * below the stack limit (nesting-depth.test.ts runs the deepest allowed
 * objects through every write path on a third of the default stack), and far
 * above real objects (built-in kinds nest at most 15 deep, big CRD schemas
 * about 50).
 *
 * The checks here are iterative: rejecting a body costs one pass over it,
 * whatever its depth.
 */

/** The deepest nesting of arrays and objects accepted (the outermost object is depth 1). */
export const maxNestingDepth = 128;

/**
 * The offset in JSON `text` of the bracket that opens nesting level
 * `max + 1`, or -1 when the text nests at most `max` deep. Brackets inside
 * strings do not count; the text need not be valid JSON.
 */
export function jsonDepthExceededAt(text: string, max = maxNestingDepth): number {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return i;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return -1;
}

/**
 * True when the decoded value `v` nests arrays and objects more than `max`
 * deep (a scalar is depth 0). Shared references are followed as often as
 * they occur; the walk stops as soon as the bound is passed.
 */
export function exceedsDepth(v: unknown, max = maxNestingDepth): boolean {
  if (v === null || typeof v !== 'object') return false;
  const stack: [unknown, number][] = [[v, 1]];
  while (stack.length) {
    const [cur, d] = stack.pop()!;
    if (d > max) return true;
    const children = Array.isArray(cur) ? cur : Object.values(cur as object);
    for (const c of children) if (c !== null && typeof c === 'object') stack.push([c, d + 1]);
  }
  return false;
}

/**
 * True when an object the server would store nests deeper than `max`:
 * its content (metadata.managedFields aside) more than `max`, or its
 * managedFields, which mirror the content five levels down
 * (metadata.managedFields[i].fieldsV1 plus one for a leaf), more than `max + 5`.
 */
export function objectExceedsDepth(obj: Record<string, unknown>, max = maxNestingDepth): boolean {
  const m = obj.metadata;
  if (m === null || typeof m !== 'object' || Array.isArray(m) || !('managedFields' in m)) return exceedsDepth(obj, max);
  const { managedFields, ...rest } = m as Record<string, unknown>;
  return exceedsDepth({ ...obj, metadata: rest }, max) || exceedsDepth(managedFields, max + 5 - 2);
}

/**
 * JSON text of `v` with object keys sorted (as Go marshals a map), written
 * iteratively: for values that may nest deeper than JSON.stringify copes with.
 */
export function sortedJsonText(v: unknown): string {
  const out: string[] = [];
  const stack: ({ raw: string } | { value: unknown })[] = [{ value: v }];
  while (stack.length) {
    const item = stack.pop()!;
    if ('raw' in item) {
      out.push(item.raw);
      continue;
    }
    const x = item.value;
    if (Array.isArray(x)) {
      stack.push({ raw: ']' });
      for (let i = x.length - 1; i >= 0; i--) {
        stack.push({ value: x[i] === undefined ? null : x[i] });
        if (i > 0) stack.push({ raw: ',' });
      }
      stack.push({ raw: '[' });
    } else if (x !== null && typeof x === 'object') {
      const o = x as Record<string, unknown>;
      const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
      stack.push({ raw: '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push({ value: o[keys[i]!] });
        stack.push({ raw: `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:` });
      }
      stack.push({ raw: '{' });
    } else {
      out.push(JSON.stringify(x) ?? 'null');
    }
  }
  return out.join('');
}

/** Go's 1-based line number of `offset` in `text`, as its decoders report positions. */
export function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
