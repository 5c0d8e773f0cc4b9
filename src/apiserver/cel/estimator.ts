/**
 * Static cost estimation of a checked expression, as cel-go's
 * checker.Cost (checker/cost.go) computes it with Kubernetes'
 * library.CostEstimator (library/cost.go) and ext.Sets' estimators: a
 * [min, max] range of the cost of one evaluation, from the sizes the
 * types allow. Sizes of data come from the caller's SizeEstimator (for
 * CRDs: maxLength, maxItems, maxProperties of the schema, by path such as
 * `self.spec.items.@items.name`); unknown sizes are [0, 2^64].
 *
 * Macros are costed as cel-go expands them (see interpreter.ts).
 */
import { callParts, type Node } from './ast.js';
import { isQualifiedConstant, namespaceOf } from './interpreter.js';
import {
  add,
  factor,
  fixed,
  listCreateBaseCost,
  mapCreateBaseCost,
  maxCost,
  maxFormatSize,
  maxNameFormatRegexSize,
  mul,
  regexStringLengthCostFactor,
  selectorCost,
  stringTraversalCostFactor,
  union,
  unknownSize,
  unitCostFunctions,
  type Range,
} from './cost.js';
import type { DeclType } from './types.js';

/** What a SizeEstimator is asked about: a node's path (`self.spec.items.@items`) and engine type name. */
export interface SizedNode {
  readonly path: readonly string[] | undefined;
  readonly type: string | undefined;
}

/** checker.CostEstimator.EstimateSize: the size range of data, when known. */
export type SizeEstimator = (node: SizedNode) => Range | undefined;

interface TypeInfo {
  kind?: string;
  name?: string;
  valueType?: TypeInfo;
  keyType?: TypeInfo;
}

interface EntrySize {
  container: 'list' | 'map' | undefined;
  key: Range;
  val: Range;
}

interface LocalVar {
  path: string[] | undefined;
  size: Range | undefined;
  entry: EntrySize | undefined;
}

const scalarTypes = new Set(['bool', 'double', 'google.protobuf.Duration', 'int', 'google.protobuf.Timestamp', 'uint']);

function isScalar(t: TypeInfo | undefined): boolean {
  if (!t) return false;
  if (t.kind === 'optional') return isScalar(t.valueType);
  return !!t.name && scalarTypes.has(t.name);
}

const typeOf = (n: Node): TypeInfo | undefined => n.checkedType as TypeInfo | undefined;
const isStringLike = (t: TypeInfo | undefined): boolean => t?.name === 'string' || t?.name === 'bytes';

/** An argument or receiver as the call estimators see it (checker.AstNode). */
interface AstNode {
  node: Node | undefined;
  type: TypeInfo | undefined;
  path: string[] | undefined;
  computed: Range | undefined;
}

const accumulator = '@result';

/**
 * checker.Cost of a checked expression: its [min, max] cost.
 * `presenceTestCost` is 0 as Kubernetes configures it (has() is free).
 */
export function estimateCost(root: Node, sizes?: SizeEstimator, presenceTestCost = 0): Range {
  return new Coster(sizes, presenceTestCost).cost(root);
}

/** The SizeEstimator of a CRD rule: walks the DeclType of `self` (paths start with `self` or `oldSelf`). */
export function declTypeSizes(root: DeclType): SizeEstimator {
  return ({ path }) => {
    if (!path || path.length === 0) return undefined;
    let t: DeclType | undefined = root;
    for (const name of path.slice(1)) {
      switch (name) {
        case '@items':
        case '@values':
          t = t.elem;
          break;
        case '@keys':
          t = t.key;
          break;
        default:
          t = t.fields?.get(name)?.type;
      }
      if (!t) return undefined;
    }
    return { min: 0, max: t.maxElements };
  };
}

class Coster {
  readonly paths = new Map<Node, string[]>();
  readonly sizes = new Map<Node, Range>();
  readonly entries = new Map<Node, EntrySize>();
  readonly locals = new Map<string, LocalVar[]>();

  constructor(
    readonly estimator: SizeEstimator | undefined,
    readonly presenceTestCost: number,
  ) {}

  // ---- scopes ----

  push(name: string, v: LocalVar): void {
    const s = this.locals.get(name) ?? [];
    s.push(v);
    this.locals.set(name, s);
  }

  pop(name: string): void {
    this.locals.get(name)?.pop();
  }

  peek(name: string): LocalVar | undefined {
    const s = this.locals.get(name);
    return s && s.length ? s[s.length - 1] : undefined;
  }

  getPath(n: Node): string[] | undefined {
    if (n.op === 'id' && !n.meta.alternate) {
      const v = this.peek(n.args as string);
      if (v) return v.path;
    }
    return this.paths.get(n);
  }

  astNode(n: Node): AstNode {
    let path = this.getPath(n);
    if (path && path[0] === accumulator) path = undefined;
    return { node: n, type: typeOf(n), path, computed: this.computeSize(n) };
  }

  computeSize(n: Node): Range | undefined {
    const c = this.sizes.get(n);
    if (c) return c;
    const e = exprSize(n);
    if (e) return e;
    const path = this.getPath(n);
    if (this.estimator) {
      const s = this.estimator({ path, type: typeOf(n)?.name });
      if (s) {
        this.sizes.set(n, s);
        return s;
      }
    }
    if (isScalar(typeOf(n))) return fixed(1);
    if (n.op === 'id' && !n.meta.alternate) {
      const v = this.peek(n.args as string);
      if (v?.size) return v.size;
    }
    return undefined;
  }

  sizeOrUnknown(n: AstNode | Node): Range {
    if ('op' in n) return this.computeSize(n) ?? unknownSize;
    return n.computed ?? unknownSize;
  }

  /** library.CostEstimator.sizeEstimate: computed size, else the size estimator's, else unknown. */
  libSize(a: AstNode): Range {
    if (a.computed) return a.computed;
    if (this.estimator) {
      const s = this.estimator({ path: a.path, type: a.type?.name });
      if (s) return s;
    }
    return unknownSize;
  }

  entrySize(n: Node): EntrySize | undefined {
    const e = this.entries.get(n);
    if (e) return e;
    if (n.op === 'id' && !n.meta.alternate) return this.peek(n.args as string)?.entry;
    return undefined;
  }

  // ---- expressions ----

  cost(n: Node): Range {
    switch (n.op) {
      case 'value':
        return fixed(0);
      case 'id':
        if (n.meta.alternate) return fixed(namespaceOf(n) ? 0 : 1);
        this.paths.set(n, this.peek(n.args as string)?.path ?? [n.args as string]);
        return fixed(1);
      case '.': {
        const [operand, field] = n.args as [Node, string];
        if (isQualifiedConstant(n)) return fixed(1);
        let sum = this.cost(operand);
        const k = typeOf(operand)?.kind;
        if (k === 'map' || k === 'message' || k === 'param') sum = add(sum, fixed(1));
        const p = this.getPath(operand);
        this.paths.set(n, [...(p ?? []), field]);
        return sum;
      }
      case '.?':
        return this.call(n, '_?._', undefined, [(n.args as [Node, string])[0]]);
      case '[]':
      case '[?]': {
        const [operand, index] = n.args as [Node, Node];
        return this.call(n, n.op === '[]' ? '_[_]' : '_[?_]', undefined, [operand, index]);
      }
      case 'call':
      case 'rcall':
        return this.callNode(n);
      case 'list': {
        const items = n.args as Node[];
        let sum = fixed(0);
        let item: Range = { min: items.length === 0 ? 0 : maxCost, max: 0 };
        for (const e of items) {
          sum = add(sum, this.cost(e));
          item = union(item, this.sizeOrUnknown(e));
        }
        this.entries.set(n, { container: 'list', key: fixed(1), val: item });
        return add(sum, fixed(listCreateBaseCost));
      }
      case 'map': {
        const pairs = n.args as [Node, Node][];
        let sum = fixed(0);
        let ks: Range = { min: pairs.length === 0 ? 0 : maxCost, max: 0 };
        let vs: Range = { min: pairs.length === 0 ? 0 : maxCost, max: 0 };
        for (const [k, v] of pairs) {
          sum = add(add(sum, this.cost(k)), this.cost(v));
          ks = union(ks, this.sizeOrUnknown(k));
          vs = union(vs, this.sizeOrUnknown(v));
        }
        this.entries.set(n, { container: 'map', key: ks, val: vs });
        return add(sum, fixed(mapCreateBaseCost));
      }
      case '?:': {
        const [c, t, e] = n.args as [Node, Node, Node];
        return this.call(n, '_?_:_', undefined, [c, t, e]);
      }
      case '&&':
        return this.call(n, '_&&_', undefined, n.args as Node[]);
      case '||':
        return this.call(n, '_||_', undefined, n.args as Node[]);
      case '!_':
        return this.call(n, '!_', undefined, [n.args as Node]);
      case '-_': {
        const a = n.args as Node;
        if (a.op === 'value' && (typeof a.args === 'bigint' || typeof a.args === 'number')) return fixed(0);
        return this.call(n, '-_', undefined, [a]);
      }
      case 'in':
        return this.call(n, '@in', undefined, n.args as Node[]);
      default:
        return this.call(n, `_${n.op}_`, undefined, n.args as Node[]);
    }
  }

  callNode(n: Node): Range {
    const p = callParts(n);
    if (n.meta.alternate || n.meta.macro) {
      const m = this.macro(n, p);
      if (m) return m;
    }
    const ns = p.receiver ? namespaceOf(p.receiver) : undefined;
    if (ns) return this.call(n, `${ns}.${p.name}`, undefined, p.args);
    return this.call(n, p.name, p.receiver, p.args);
  }

  /** costCall: argument and target costs plus the function's cost; records the result size. */
  call(n: Node, fn: string, target: Node | undefined, args: Node[]): Range {
    if (fn === 'dyn' && args.length === 1) {
      const c = this.cost(args[0]!);
      const s = this.computeSize(args[0]!);
      if (s) this.sizes.set(n, s);
      const e = this.entrySize(args[0]!);
      if (e) this.entries.set(n, e);
      return add(fixed(1), c);
    }
    const argCosts = args.map((a) => this.cost(a));
    const argNodes = args.map((a) => this.astNode(a));
    let sum = fixed(0);
    let targetNode: AstNode | undefined;
    if (target) {
      sum = add(sum, this.cost(target));
      targetNode = this.astNode(target);
    }
    const est = this.functionCost(n, fn, targetNode, argNodes, argCosts);
    let resultSize = est.resultSize;
    if (fn === '_[_]' && args.length > 0) {
      const kind = typeOf(args[0]!)?.kind;
      resultSize = this.entrySize(args[0]!)?.val;
      if (kind === 'list' || kind === 'map') this.paths.set(n, [...(this.getPath(args[0]!) ?? []), kind === 'list' ? '@items' : '@values']);
    }
    if (!resultSize) resultSize = this.computeSize(n);
    if (resultSize) this.sizes.set(n, resultSize);
    return add(sum, est.cost);
  }

  functionCost(n: Node, fn: string, target: AstNode | undefined, args: AstNode[], argCosts: Range[]): { cost: Range; resultSize?: Range } {
    const argSum = argCosts.reduce((a, b) => add(a, b), fixed(0));
    const withArgs = (c: Range, resultSize?: Range): { cost: Range; resultSize?: Range } => ({ cost: add(c, argSum), ...(resultSize ? { resultSize } : {}) });
    // ext.Sets overload estimators
    if ((fn === 'sets.contains' || fn === 'sets.intersects' || fn === 'sets.equivalent') && args.length === 2) {
      const f = fn === 'sets.equivalent' ? 2 : 1;
      return withArgs(add(factor(mul(this.libSize(args[0]!), this.libSize(args[1]!)), f), fixed(1)));
    }
    const lib = this.libraryCost(fn, target, args);
    if (lib) return withArgs(lib.cost, lib.resultSize);
    switch (fn) {
      case 'format':
        if (target && isStringLike(target.type)) return withArgs(factor(this.sizeOrUnknown(target), stringTraversalCostFactor));
        break;
      case 'bytes':
        if (!target && args.length === 1 && args[0]!.type?.name === 'string') {
          const sz = this.sizeOrUnknown(args[0]!);
          return withArgs(factor(sz, stringTraversalCostFactor), { min: sz.min, max: Math.min(sz.max * 4, maxCost) });
        }
        break;
      case 'string':
        if (!target && args.length === 1 && args[0]!.type?.name === 'bytes') {
          const sz = this.sizeOrUnknown(args[0]!);
          return withArgs(factor(sz, stringTraversalCostFactor), { min: Math.floor(sz.min / 4), max: sz.max });
        }
        break;
      case 'strings.quote':
        if (args.length === 1) {
          const sz = this.sizeOrUnknown(args[0]!);
          return withArgs(factor(sz, stringTraversalCostFactor), { min: sz.min + 2, max: Math.min(sz.max * 2 + 2, maxCost) });
        }
        break;
      case 'startsWith':
      case 'endsWith':
        if (target && args.length === 1) return withArgs(factor(this.sizeOrUnknown(args[0]!), stringTraversalCostFactor));
        break;
      case '@in':
        if (args.length === 2 && args[1]!.type?.kind === 'list') return withArgs(this.sizeOrUnknown(args[1]!));
        break;
      case 'matches':
        if (target && args.length === 1) {
          const strCost = factor(add(this.sizeOrUnknown(target), fixed(1)), stringTraversalCostFactor);
          const regexCost = factor(this.sizeOrUnknown(args[0]!), regexStringLengthCostFactor);
          return withArgs(mul(strCost, regexCost));
        }
        break;
      case 'contains':
        if (target && args.length === 1 && target.type?.name === 'string') {
          const strCost = factor(this.sizeOrUnknown(target), stringTraversalCostFactor);
          const subCost = factor(this.sizeOrUnknown(args[0]!), stringTraversalCostFactor);
          return withArgs(mul(strCost, subCost));
        }
        break;
      case '_||_':
      case '_&&_': {
        const [l, r] = argCosts as [Range, Range];
        return { cost: { min: l.min, max: add(l, r).max } };
      }
      case '_?_:_': {
        const size = union(this.sizeOrUnknown(args[1]!), this.sizeOrUnknown(args[2]!));
        const a = this.entrySize(args[1]!.node!);
        const b = this.entrySize(args[2]!.node!);
        if (a && b) this.entries.set(n, { container: a.container, key: union(a.key, b.key), val: union(a.val, b.val) });
        return { cost: add(argCosts[0]!, union(argCosts[1]!, argCosts[2]!)), resultSize: size };
      }
      case '_+_':
        if (args.length === 2 && (isStringLike(args[0]!.type) || args[0]!.type?.kind === 'list')) {
          const size = add(this.sizeOrUnknown(args[0]!), this.sizeOrUnknown(args[1]!));
          const a = this.entrySize(args[0]!.node!);
          const b = this.entrySize(args[1]!.node!);
          if (a && b) this.entries.set(n, { container: a.container, key: union(a.key, b.key), val: union(a.val, b.val) });
          if (args[0]!.type?.kind === 'list') return withArgs(fixed(1), size);
          return withArgs(factor(size, stringTraversalCostFactor), size);
        }
        break;
      case '_<_':
      case '_>_':
      case '_<=_':
      case '_>=_':
        if (isStringLike(args[0]!.type)) return withArgs(this.comparisonCost(args[0]!, args[1]!));
        break;
      case '_==_':
      case '_!=_':
        return withArgs(this.comparisonCost(args[0]!, args[1]!));
      default:
        break;
    }
    return withArgs(fixed(1));
  }

  /** O(min(m, n)) comparisons: equality, and ordering of strings and bytes. */
  comparisonCost(a: AstNode, b: AstNode): Range {
    const l = this.sizeOrUnknown(a);
    const r = this.sizeOrUnknown(b);
    const smallestMax = Math.min(l.max, r.max);
    return factor({ min: smallestMax > 0 ? 1 : 0, max: smallestMax }, stringTraversalCostFactor);
  }

  /** library.CostEstimator.EstimateCallCost (cel-go v0.23: the target is never nil). */
  libraryCost(fn: string, target: AstNode | undefined, args: AstNode[]): { cost: Range; resultSize?: Range } | undefined {
    const t = (): AstNode => target ?? { node: undefined, type: undefined, path: undefined, computed: undefined };
    if (unitCostFunctions.has(fn)) return { cost: fixed(1) };
    switch (fn) {
      case 'check':
        return { cost: fixed(350000) };
      case 'serviceAccount':
      case 'path':
      case 'group':
      case 'resource':
      case 'subresource':
      case 'namespace':
      case 'name':
      case 'allowed':
      case 'reason':
      case 'error':
      case 'errored':
        return { cost: fixed(1) };
      case 'fieldSelector':
      case 'labelSelector':
        if (args.length === 1) return { cost: selectorCost(this.libSize(args[0]!)) };
        return undefined;
      case 'isSorted':
      case 'sum':
      case 'max':
      case 'min':
      case 'indexOf':
      case 'lastIndexOf': {
        const tt = t();
        if (tt.type?.kind === 'list') {
          let el = fixed(1);
          const elType = tt.type.valueType;
          if (elType?.name === 'string' || elType?.name === 'bytes') {
            const elNode: AstNode = { node: undefined, type: elType, path: tt.path ? [...tt.path, '@items'] : undefined, computed: undefined };
            el = add(el, factor(this.libSize(elNode), stringTraversalCostFactor));
          }
          return { cost: mul(this.libSize(tt), el) };
        }
        return { cost: factor(this.libSize(tt), stringTraversalCostFactor) };
      }
      case 'url':
        if (args.length === 1) {
          const sz = this.libSize(args[0]!);
          return { cost: factor(sz, stringTraversalCostFactor), resultSize: sz };
        }
        return undefined;
      case 'lowerAscii':
      case 'upperAscii':
      case 'substring':
      case 'trim': {
        const sz = this.libSize(t());
        return { cost: factor(sz, stringTraversalCostFactor), resultSize: sz };
      }
      case 'replace':
        if (args.length >= 2) {
          const sz = this.libSize(t());
          const size = replaceSize(sz, this.libSize(args[0]!), this.libSize(args[1]!));
          return { cost: factor(sz, 2 * stringTraversalCostFactor), resultSize: size };
        }
        return undefined;
      case 'split': {
        const sz = this.libSize(t());
        let max = sz.max;
        if (args.length > 1) {
          const lit = args[1]!.node;
          if (lit?.op === 'value' && typeof lit.args === 'bigint') max = Number(lit.args < 0n ? BigInt(maxCost) : lit.args);
        }
        return { cost: factor(sz, 2 * stringTraversalCostFactor), resultSize: { min: 0, max } };
      }
      case 'join': {
        const tt = t();
        const listSize = this.libSize(tt);
        let sz: Range = fixed(0);
        const elType = tt.type?.valueType;
        if (elType) {
          const elNode: AstNode = { node: undefined, type: elType, path: tt.path ? [...tt.path, '@items'] : undefined, computed: undefined };
          sz = mul(listSize, this.libSize(elNode));
        }
        if (args.length > 0) {
          const sep = this.libSize(args[0]!);
          sz = add(sz, mul(sep, { min: listSize.min > 0 ? listSize.min - 1 : 0, max: listSize.max > 0 ? listSize.max - 1 : 0 }));
        }
        return { cost: factor(sz, stringTraversalCostFactor), resultSize: sz };
      }
      case 'find':
      case 'findAll':
        if (args.length >= 1) {
          const sz = this.libSize(t());
          const strCost = factor(add(sz, fixed(1)), stringTraversalCostFactor);
          const regexCost = factor(this.libSize(args[0]!), regexStringLengthCostFactor);
          return { cost: mul(strCost, regexCost), resultSize: { min: 0, max: sz.max } };
        }
        return undefined;
      case 'cidr':
      case 'isIP':
      case 'isCIDR':
      case 'quantity':
      case 'isQuantity':
      case 'semver':
      case 'isSemver':
        if (args.length >= 1) return { cost: factor(this.libSize(args[0]!), stringTraversalCostFactor) };
        return undefined;
      case 'ip':
        if (args.length >= 1) return { cost: factor(this.libSize(args[0]!), stringTraversalCostFactor) };
        return { cost: fixed(1) };
      case 'ip.isCanonical':
        if (args.length >= 1) return { cost: factor(this.libSize(args[0]!), 2 * stringTraversalCostFactor) };
        return undefined;
      case 'masked':
      case 'prefixLength':
      case 'family':
      case 'isUnspecified':
      case 'isLoopback':
      case 'isLinkLocalMulticast':
      case 'isLinkLocalUnicast':
      case 'isGlobalUnicast':
        return { cost: fixed(1) };
      case 'containsIP':
      case 'containsCIDR':
        if (args.length >= 1) {
          const sz: Range = { min: 4, max: 16 };
          let c = factor(add(sz, sz), stringTraversalCostFactor);
          if (fn === 'containsCIDR') c = add(add(c, factor(sz, stringTraversalCostFactor)), fixed(1));
          if (args[0]!.type?.name === 'string') c = add(c, factor(this.libSize(args[0]!), stringTraversalCostFactor));
          return { cost: c };
        }
        return undefined;
      case 'validate':
        if (args.length >= 1) return { cost: factor(factor(this.libSize(args[0]!), stringTraversalCostFactor), maxNameFormatRegexSize * regexStringLengthCostFactor) };
        return undefined;
      case '_==_':
        if (args.length === 2 && args[0]!.type?.name && args[0]!.type.name === args[1]!.type?.name) {
          switch (args[0]!.type.name) {
            case 'net.IP':
            case 'net.CIDR':
            case 'kubernetes.Quantity':
            case 'kubernetes.Semver':
            case 'kubernetes.authorization.Authorizer':
            case 'kubernetes.authorization.PathCheck':
            case 'kubernetes.authorization.GroupCheck':
            case 'kubernetes.authorization.ResourceCheck':
            case 'kubernetes.authorization.Decision':
              return { cost: fixed(1) };
            case 'kubernetes.NamedFormat':
              return { cost: factor({ min: 1, max: maxFormatSize }, stringTraversalCostFactor) };
            case 'kubernetes.URL': {
              let size = fixed(1);
              const r = args[1]!.computed;
              if (r) size = union(r, r);
              return { cost: factor({ min: 1, max: size.max }, stringTraversalCostFactor) };
            }
            default:
              return undefined;
          }
        }
        return undefined;
      default:
        return undefined;
    }
  }

  // ---- macros ----

  macro(n: Node, p: ReturnType<typeof callParts>): Range | undefined {
    const name = p.name;
    const argc = p.args.length;
    if (!p.receiver && name === 'has') {
      const sel = p.args[0]!;
      const [operand, field] = sel.args as [Node, string];
      const c = add(fixed(this.presenceTestCost), this.cost(operand));
      this.paths.set(sel, [...(this.getPath(operand) ?? []), field]);
      return c;
    }
    if (!p.receiver || namespaceOf(p.receiver)) return undefined;
    const twoVar = ['all/3', 'exists/3', 'existsOne/3', 'exists_one/3', 'transformList/3', 'transformList/4', 'transformMap/3', 'transformMap/4', 'transformMapEntry/3', 'transformMapEntry/4'].includes(`${name}/${argc}`);
    const oneVar = ['all/2', 'exists/2', 'exists_one/2', 'existsOne/2', 'map/2', 'map/3', 'filter/2'].includes(`${name}/${argc}`);
    if (!twoVar && !oneVar) {
      if (name === 'or' || name === 'orValue' || name === 'optMap' || name === 'optFlatMap') {
        let c = this.cost(p.receiver);
        for (const a of p.args.slice(name.startsWith('opt') ? 1 : 0)) c = add(c, this.cost(a));
        return add(c, fixed(1));
      }
      return undefined;
    }
    return this.comprehension(n, name, p.receiver, p.args, twoVar);
  }

  /** costComprehension of cel-go's expansion of a macro. */
  comprehension(n: Node, name: string, range: Node, args: Node[], twoVar: boolean): Range {
    const v1 = args[0]!.args as string;
    const v2 = twoVar ? (args[1]!.args as string) : undefined;
    const rest = args.slice(twoVar ? 2 : 1);
    let sum = this.cost(range);
    const rangePath = this.getPath(range) ?? [];
    const rangeKind = typeOf(range)?.kind;
    const rangeEntry = this.entrySize(range);
    const container = rangeEntry?.container ?? (rangeKind === 'list' ? 'list' : rangeKind === 'map' ? 'map' : undefined);
    const transforming = ['map', 'filter', 'transformList', 'transformMap', 'transformMapEntry'].includes(name);
    const initIsMap = name === 'transformMap' || name === 'transformMapEntry';
    // the accumulator's initial value: a literal, or an empty list / map
    const init: LocalVar = transforming ? { path: [], size: fixed(0), entry: { container: initIsMap ? 'map' : 'list', key: initIsMap ? fixed(0) : fixed(1), val: fixed(0) } } : { path: [], size: fixed(1), entry: undefined };
    if (transforming) sum = add(sum, fixed(initIsMap ? mapCreateBaseCost : listCreateBaseCost));
    this.push(accumulator, init);
    if (twoVar) {
      this.push(v1, { path: [...rangePath, container === 'list' ? '@indices' : '@keys'], size: rangeEntry?.key, entry: undefined });
      this.push(v2!, { path: [...rangePath, container === 'list' ? '@items' : '@values'], size: rangeEntry?.val, entry: undefined });
    } else {
      const isList = container === 'list';
      this.push(v1, { path: [...rangePath, isList ? '@items' : '@keys'], size: isList ? rangeEntry?.val : rangeEntry?.key, entry: undefined });
    }
    let loop: Range;
    let step: Range;
    let result: Range;
    switch (name) {
      case 'all':
      case 'exists': {
        loop = fixed(name === 'all' ? 2 : 3);
        const pc = this.cost(rest[0]!);
        step = { min: 1, max: add(fixed(1), pc).max };
        result = fixed(1);
        break;
      }
      case 'exists_one':
      case 'existsOne': {
        loop = fixed(0);
        const pc = this.cost(rest[0]!);
        step = add(pc, { min: 1, max: 2 });
        result = fixed(2);
        break;
      }
      case 'filter': {
        loop = fixed(0);
        const pc = this.cost(rest[0]!);
        step = add(pc, { min: 1, max: 13 });
        result = fixed(1);
        break;
      }
      default: {
        // map, transformList, transformMap, transformMapEntry
        loop = fixed(0);
        const [filter, transform] = rest.length === 2 ? [rest[0], rest[1]!] : [undefined, rest[0]!];
        const fc = filter ? this.cost(filter) : undefined;
        const tc = this.cost(transform);
        const inner = name === 'transformMap' ? 3 : name === 'transformMapEntry' ? 2 : 12;
        const produce = add(fixed(inner), tc);
        step = fc ? add(fc, union(produce, fixed(1))) : produce;
        result = fixed(1);
        break;
      }
    }
    this.pop(v1);
    if (v2 !== undefined) this.pop(v2);
    this.pop(accumulator);
    const rangeCnt = this.sizeOrUnknown(range);
    sum = add(sum, add(mul(rangeCnt, add(step, loop)), result));
    if (transforming) this.sizes.set(n, rangeCnt);
    else this.sizes.set(n, fixed(1));
    return sum;
  }
}

/** computeExprSize: sizes of literals. */
function exprSize(n: Node): Range | undefined {
  switch (n.op) {
    case 'value': {
      const v = n.args;
      if (typeof v === 'string') return fixed([...v].length);
      if (v instanceof Uint8Array) return fixed(v.length);
      return fixed(1);
    }
    case '-_': {
      const a = n.args as Node;
      return a.op === 'value' && (typeof a.args === 'bigint' || typeof a.args === 'number') ? fixed(1) : undefined;
    }
    case 'list':
      return fixed((n.args as Node[]).length);
    case 'map':
      return fixed((n.args as unknown[]).length);
    default:
      return undefined;
  }
}

/** library/cost.go: the size of `s.replace(old, new)`. */
export function replaceSize(sz: Range, toReplace: Range, replaceWith: Range): Range {
  let countMax: number;
  let countMin: number;
  let retainedMax = 0;
  let retainedMin = 0;
  if (toReplace.min === 0) {
    countMax = sz.max < maxCost ? sz.max + 1 : sz.max;
    retainedMax = sz.max;
  } else if (replaceWith.max <= toReplace.min) {
    countMax = 0;
    retainedMax = sz.max;
  } else {
    countMax = Math.ceil(sz.max / toReplace.min);
  }
  if (toReplace.max === 0) {
    countMin = sz.min < maxCost ? sz.min + 1 : sz.min;
    retainedMin = sz.min;
  } else if (toReplace.max <= replaceWith.min) {
    countMin = 0;
    retainedMin = sz.min;
  } else {
    countMin = Math.ceil(sz.min / toReplace.max);
  }
  return add(mul({ min: countMin, max: countMax }, replaceWith), { min: retainedMin, max: retainedMax });
}
