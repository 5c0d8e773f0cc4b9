/**
 * A read-only view of the engine's parsed expressions: node kinds, children,
 * checked types, and source offsets where cel-go places them (operators at
 * the operator, selections at the dot, calls at the open parenthesis), so
 * that messages point where kube-apiserver's do.
 *
 * The engine's AST is an implementation detail of @marcbachmann/cel-js
 * (pinned in package.json); everything that reads it goes through here.
 */
import type { ASTNode } from '@marcbachmann/cel-js';

/** An engine AST node, with the fields the checker and parser leave on it. */
export interface Node {
  readonly op: string;
  readonly args: unknown;
  readonly start: number;
  readonly end: number;
  readonly pos: number;
  readonly input: string;
  /** The engine's type after checking (`TypeDeclaration`), absent before. */
  readonly checkedType?: { readonly name: string; readonly kind: string; readonly valueType?: { name: string }; readonly keyType?: { name: string } };
  /** Engine internals: evaluate/check functions, macro expansion, alternate node. */
  readonly meta: NodeMeta;
}

export interface NodeMeta {
  evaluate: (ev: unknown, ast: Node, ctx: unknown) => unknown;
  check?: unknown;
  alternate?: Node;
  macro?: Record<string, unknown> & { evaluate?: (ev: unknown, macro: unknown, ctx: unknown) => unknown };
  label?: string;
}

export const asNode = (a: ASTNode): Node => a as unknown as Node;

export function isNode(v: unknown): v is Node {
  return v !== null && typeof v === 'object' && typeof (v as Node).op === 'string' && 'args' in (v as object);
}

export const binaryOps = new Set(['==', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', 'in']);

/** cel-go's function name of an operator node (`_+_`, `@in`, `!_`). */
export function operatorFunction(op: string): string {
  switch (op) {
    case 'in':
      return '@in';
    case '!_':
      return '!_';
    case '-_':
      return '-_';
    case '[]':
    case '[?]':
      return '_[_]';
    case '?:':
      return '_?_:_';
    case '&&':
      return '_&&_';
    case '||':
      return '_||_';
    default:
      return `_${op}_`;
  }
}

/** The function name, receiver and arguments of a call node. */
export function callParts(n: Node): { name: string; receiver?: Node; args: Node[] } {
  const a = n.args as unknown[];
  if (n.op === 'rcall') return { name: a[0] as string, receiver: a[1] as Node, args: (a[2] as Node[]) ?? [] };
  return { name: a[0] as string, args: (a[1] as Node[]) ?? [] };
}

/** The direct children of a node as written in the source (macros unexpanded). */
export function children(n: Node): Node[] {
  const a = n.args;
  switch (n.op) {
    case 'value':
    case 'id':
    case 'accuValue':
    case 'accuInc':
      return [];
    case '.':
    case '.?':
      return [(a as unknown[])[0] as Node];
    case 'call':
    case 'rcall': {
      const p = callParts(n);
      return p.receiver ? [p.receiver, ...p.args] : p.args;
    }
    case 'list':
      return a as Node[];
    case 'map':
      return (a as [Node, Node][]).flat();
    case '!_':
    case '-_':
    case 'accuPush':
      return [a as Node];
    case 'comprehension': {
      const c = a as Record<string, unknown>;
      return ['iterable', 'init', 'step'].map((k) => c[k]).filter(isNode);
    }
    default:
      return Array.isArray(a) ? (a as unknown[]).filter(isNode) : isNode(a) ? [a] : [];
  }
}

/** Every node reachable from `root`, including macro expansions and their parts. */
export function allNodes(root: Node): Node[] {
  const out: Node[] = [];
  const seen = new Set<Node>();
  const visit = (n: unknown): void => {
    if (!isNode(n) || seen.has(n)) return;
    seen.add(n);
    out.push(n);
    for (const c of children(n)) visit(c);
    const meta = n.meta;
    if (meta?.alternate) visit(meta.alternate);
    if (meta?.macro) {
      for (const v of Object.values(meta.macro)) {
        if (isNode(v)) visit(v);
        else if (Array.isArray(v)) v.forEach(visit);
      }
    }
    if (n.op === 'comprehension') {
      const c = n.args as Record<string, unknown>;
      for (const v of Object.values(c)) if (isNode(v)) visit(v);
    }
  };
  visit(root);
  return out;
}

function skipSpace(src: string, i: number, dir: 1 | -1): number {
  while (i >= 0 && i < src.length) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i += dir;
    else if (dir === 1 && c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
    } else break;
  }
  return i;
}

/** The source offset cel-go reports for a node. */
export function celGoOffset(n: Node): number {
  const src = n.input;
  const kids = Array.isArray(n.args) ? (n.args as unknown[]).filter(isNode) : [];
  switch (n.op) {
    case '.':
    case '.?': {
      const operand = (n.args as unknown[])[0] as Node;
      const i = src.indexOf('.', operand.end);
      return i >= 0 ? i : n.start;
    }
    case 'rcall': {
      const p = callParts(n);
      const dot = src.indexOf('.', p.receiver!.end);
      const open = src.indexOf('(', dot >= 0 ? dot : p.receiver!.end);
      return open >= 0 ? open : n.start;
    }
    case 'call': {
      const open = src.indexOf('(', n.start);
      return open >= 0 ? open : n.start;
    }
    case '[]':
    case '[?]': {
      const i = src.indexOf('[', (kids[0] as Node).end);
      return i >= 0 ? i : n.start;
    }
    case '?:': {
      const i = src.indexOf('?', (kids[0] as Node).end);
      return i >= 0 ? i : n.start;
    }
    case '&&':
    case '||':
    default:
      if (binaryOps.has(n.op) || n.op === '&&' || n.op === '||') {
        const left = kids[0] as Node | undefined;
        if (left) return skipSpace(src, left.end, 1);
      }
      return n.start;
  }
}

/** 1-based line and 0-based column (in code points) of an offset, as cel-go's Location. */
export function lineAndColumn(src: string, offset: number): { line: number; column: number; lineText: string } {
  const before = src.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const lineEnd = src.indexOf('\n', lineStart);
  const lineText = src.slice(lineStart, lineEnd < 0 ? src.length : lineEnd);
  return { line, column: [...src.slice(lineStart, offset)].length, lineText };
}
