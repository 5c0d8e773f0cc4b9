/**
 * YAML request bodies read as sigs.k8s.io/yaml's YAMLToJSON reads them:
 * the first document only, duplicate keys allowed (the last one wins),
 * aliases expanded into copies, scalar keys turned into strings, values
 * JSON cannot hold refused.
 *
 * Bounded as go-yaml bounds it, with kcm's depth: the collections open at
 * once are counted on the parser's stack while the text is read, before
 * anything recursive runs (`yaml: line 3: exceeded max depth of 128`), and
 * alias expansion stops at go-yaml's ratio (`yaml: document contains
 * excessive aliasing`). A document whose aliases expand deeper than the
 * bound is refused as Go's JSON decoder refuses the converted text
 * (`exceeded max depth`). The conversion to JSON values is iterative.
 */
import { Composer, Lexer, Parser, isAlias, isMap, isPair, isScalar, isSeq, type CST, type Document, type ParsedNode } from 'yaml';
import { lineOf, maxNestingDepth } from './nesting-depth.js';

/**
 * A body YAMLToJSON refuses. `stage` 'json' marks what Go reports from the
 * JSON side of the conversion (depth after alias expansion, +Inf/NaN).
 */
export class YamlDecodeError extends Error {
  override name = 'YamlDecodeError';
  constructor(
    message: string,
    readonly stage: 'yaml' | 'json' = 'yaml',
  ) {
    super(message);
  }
}

const collectionTokens = new Set(['block-map', 'block-seq', 'flow-collection']);

/** go-yaml v2's allowedAliasRatio: the share of decoded nodes that may come from aliases. */
function allowedAliasRatio(decodeCount: number): number {
  const low = 400_000;
  const high = 4_000_000;
  if (decodeCount <= low) return 0.99;
  if (decodeCount >= high) return 0.1;
  return 0.99 - 0.89 * ((decodeCount - low) / (high - low));
}

/** Parses the first YAML document of `text` into plain JSON values (null for an empty one, as YAMLToJSON). */
export function yamlToJson(text: string, maxDepth = maxNestingDepth): unknown {
  const parser = new Parser();
  function* tokens(): Generator<CST.Token> {
    for (const lexeme of new Lexer().lex(text)) {
      yield* parser.next(lexeme);
      const stack = parser.stack;
      // The stack holds the document, the open collections and at most one scalar on top.
      const depth = stack.length - 1 - (stack.length > 1 && !collectionTokens.has(stack[stack.length - 1]!.type) ? 1 : 0);
      if (depth > maxDepth) {
        const line = lineOf(text, parser.offset);
        // go-yaml names the line only past the first (its problem mark's line is 0-based).
        throw new YamlDecodeError(`yaml: ${line > 1 ? `line ${line}: ` : ''}exceeded max depth of ${maxDepth}`);
      }
    }
    yield* parser.end();
  }
  let doc: Document.Parsed<ParsedNode, true> | undefined;
  try {
    for (const d of new Composer({ uniqueKeys: false }).compose(tokens(), true, text.length)) {
      doc = d;
      break;
    }
  } catch (err) {
    // The library reports problems in doc.errors; anything it throws is a YAML error of the body too.
    if (err instanceof YamlDecodeError) throw err;
    throw new YamlDecodeError(`yaml: ${(err as Error).message}`);
  }
  if (!doc) return null;
  const err = doc.errors[0];
  if (err) throw new YamlDecodeError(`yaml: line ${lineOf(text, err.pos[0])}: ${err.message.split('\n')[0]}`);
  return toJson(doc.contents, maxDepth);
}

type Setter = (v: unknown) => void;

interface Frame {
  node: unknown;
  depth: number;
  inAlias: boolean;
  set: Setter;
}

/** The JSON value of a composed YAML node, iteratively, expanding aliases into copies. */
function toJson(root: unknown, maxDepth: number): unknown {
  const anchors = new Map<string, unknown>();
  let result: unknown = null;
  const stack: (Frame | (() => void))[] = [{ node: root, depth: 0, inAlias: false, set: (v) => (result = v) }];
  let decodeCount = 0;
  let aliasCount = 0;
  while (stack.length) {
    const top = stack.pop()!;
    if (typeof top === 'function') {
      top();
      continue;
    }
    const { node, depth, set } = top;
    let { inAlias } = top;
    decodeCount++;
    if (inAlias) aliasCount++;
    if (aliasCount > 100 && decodeCount > 1000 && aliasCount / decodeCount > allowedAliasRatio(decodeCount)) {
      throw new YamlDecodeError('yaml: document contains excessive aliasing');
    }
    if (node === null || node === undefined) {
      set(null);
      continue;
    }
    let target: unknown = node;
    if (isAlias(node)) {
      target = anchors.get(node.source);
      if (target === undefined) throw new YamlDecodeError(`yaml: unknown anchor '${node.source}' referenced`);
      inAlias = true;
    }
    // An anchor names its node once the node is complete: an alias inside it is unknown, as go-yaml refuses it.
    const anchor = (target as { anchor?: string }).anchor;
    const named = anchor && !isAlias(node) ? () => anchors.set(anchor, target) : undefined;
    if (isScalar(target)) {
      set(scalarValue(target.value));
      named?.();
      continue;
    }
    if (isMap(target) || isSeq(target)) {
      if (depth + 1 > maxDepth) throw new YamlDecodeError('exceeded max depth', 'json');
      if (named) stack.push(named);
      const frames: Frame[] = [];
      if (isSeq(target)) {
        const out: unknown[] = new Array(target.items.length).fill(null);
        set(out);
        target.items.forEach((item, i) => frames.push({ node: item, depth: depth + 1, inAlias, set: (v) => (out[i] = v) }));
      } else {
        const out: Record<string, unknown> = {};
        set(out);
        for (const pair of target.items) {
          if (!isPair(pair)) continue;
          const key = mapKey(pair.key, anchors);
          frames.push({ node: pair.value, depth: depth + 1, inAlias, set: (v) => (out[key] = v) });
        }
      }
      // Document order, so anchors are known before their aliases.
      for (let i = frames.length - 1; i >= 0; i--) stack.push(frames[i]!);
      continue;
    }
    set(null);
  }
  return result;
}

function scalarValue(v: unknown): unknown {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new YamlDecodeError(`json: unsupported value: ${Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf'}`, 'json');
    return v;
  }
  if (v === null || v === undefined || typeof v === 'string' || typeof v === 'boolean') return v ?? null;
  return String(v);
}

/** A map key as YAMLToJSON writes it: strings as they are, numbers and booleans as their text. */
function mapKey(key: unknown, anchors: Map<string, unknown>): string {
  const k = isAlias(key) ? anchors.get(key.source) : key;
  const v = isScalar(k) ? k.value : k;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new YamlDecodeError(`Unsupported map key of type: ${v === null || v === undefined ? '%!s(<nil>)' : isSeq(v) ? '[]interface {}' : 'map[interface {}]interface {}'}`);
}
