/**
 * Evaluation of checked expressions with cel-go's semantics and runtime
 * cost accounting (interpreter/interpretable.go, interpreter/runtimecost.go).
 *
 * The engine (@marcbachmann/cel-js) parses and type-checks; this module
 * walks the checked tree itself so that evaluation behaves as cel-go's
 * does where kube-apiserver's users can see it:
 *  - errors are values: `&&` and `||` absorb an error when the other side
 *    decides, `all`/`exists` absorb errors when another element decides;
 *  - equality is heterogeneous and follows Kubernetes' list types;
 *  - macros are cel-go's expansions (all, exists, exists_one, map, filter,
 *    and the two-variable comprehensions) with their exact per-step costs;
 *  - every step is charged as cel-go's CostTracker charges it (identifiers
 *    and qualifiers 1, list literals 10, map literals 30, calls by
 *    runtimeCallCost), and evaluation stops with `operation cancelled:
 *    actual cost limit exceeded` once the limit is passed. With `optimize`
 *    (cel.OptOptimize, as Kubernetes evaluates) constant list and map
 *    literals and conversions of constants cost nothing, and membership in
 *    a constant list of scalars is a set lookup.
 * Functions are the engine's overloads (libraries register them there);
 * a library may override one (CelLibrary.overrides) where cel-go differs.
 */
import { EvaluationError, Optional } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { callParts, isNode, type Node } from './ast.js';
import { CelEvalError, costLimitExceeded, runtimeMessage } from './errors.js';
import { listCreateBaseCost, mapCreateBaseCost, runtimeCallCost } from './cost.js';
import { CelObject, celEquals, celListAdd, fromJsonDyn, isPlainMap } from './values.js';
import type { CallOverride } from './library/library.js';
import { compareValues } from './library/lists.js';
import { formatDouble } from './library/strings.js';

/** Thrown when evaluation passes its cost limit; never absorbed by `&&`, `||` or macros. */
export class CelCostLimitError extends Error {
  override readonly name = 'CelCostLimitError';
  constructor(readonly cost: number) {
    super(costLimitExceeded);
  }
}

/** Where top-level variables come from. */
export interface Activation {
  /** The value of a declared variable; undefined when it is not bound. */
  resolve(name: string): unknown;
}

/** A value whose fields are computed on first read (`variables` of admission policies). */
export interface LazyFields {
  /** The value of field `name` for the run `run`, undefined when absent. */
  lazyField(name: string, run: Run): unknown;
}

export function isLazyFields(v: unknown): v is LazyFields {
  return v !== null && typeof v === 'object' && typeof (v as Partial<LazyFields>).lazyField === 'function';
}

/** What evaluation needs from the environment that compiled the expression. */
export interface EvalEnvironment {
  /** The engine's evaluator of that environment (function dispatch). */
  readonly engine: unknown;
  /** Library overrides by `<receiver kind>.<name>/<argc>` or `<name>/<argc>`. */
  readonly overrides: ReadonlyMap<string, CallOverride>;
}

/** One evaluation: its cost so far and limit. */
export class Run {
  cost = 0;
  constructor(
    readonly limit: number,
    readonly optimize: boolean,
  ) {}

  charge(c: number): void {
    this.cost += c;
    if (this.cost > this.limit) throw new CelCostLimitError(this.cost);
  }
}

/** A local variable scope: comprehension variables and accumulators. */
interface Frame {
  readonly name: string;
  value: unknown;
  readonly next: Frame | undefined;
}

const MAX_INT = 9223372036854775807n;
const MIN_INT = -9223372036854775808n;
const chainOps = new Set(['id', '.', '.?', '[]', '[?]']);

const isChain = (n: Node): boolean => chainOps.has(n.op) && !(n.op === 'id' && n.meta.alternate);

/** A qualified name of a constant (`net.IP`, `google.protobuf.Timestamp`): resolved at check time in cel-go, free at runtime. */
export function isQualifiedConstant(n: Node): boolean {
  if (n.op === 'id') return !!n.meta.alternate && !namespaceOf(n);
  return n.op === '.' && isQualifiedConstant((n.args as [Node])[0]);
}

/** A namespace constant (`strings`, `sets`, `ip`, `format`, `optional`, `cel`) receiving a namespaced call. */
export function namespaceOf(n: Node): string | undefined {
  if (n.op !== 'id' || !n.meta.alternate) return undefined;
  const v = (n.meta.alternate as Node).args;
  return v !== null && typeof v === 'object' && /Namespace$/.test((v as object).constructor?.name ?? '') ? (n.args as string) : undefined;
}

function overflowCheck(v: bigint): bigint {
  if (v > MAX_INT || v < MIN_INT) throw new CelEvalError('integer overflow');
  return v;
}

function typeNameOf(v: unknown): string {
  if (v === null) return 'null_type';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    default:
      break;
  }
  if (v instanceof UnsignedInt) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v) || v instanceof Set) return 'list';
  if (v instanceof Map || isPlainMap(v)) return 'map';
  if (v instanceof Date) return 'timestamp';
  if (v instanceof Duration) return 'duration';
  if (v instanceof Optional) return 'optional_type';
  return 'object';
}

/** The receiver kind used in override keys. */
function kindOf(v: unknown): string {
  const t = typeNameOf(v);
  return t === 'list' || t === 'map' || t === 'string' || t === 'bytes' || t === 'int' || t === 'double' || t === 'bool' ? t : 'other';
}

const noSuchOverload = (): CelEvalError => new CelEvalError('no such overload');
const noSuchKey = (k: unknown): CelEvalError => new CelEvalError(`no such key: ${typeof k === 'string' ? k : String(k)}`);

/** Converts whatever a function or engine handler threw into a CEL error. */
function toCelError(err: unknown): Error {
  if (err instanceof CelEvalError || err instanceof CelCostLimitError) return err;
  if (err instanceof EvaluationError) return new CelEvalError(runtimeMessage(err));
  if (err instanceof Error && typeof (err as { code?: unknown }).code === 'string' && typeof (err as { summary?: unknown }).summary === 'string') {
    return new CelEvalError(runtimeMessage(err as never));
  }
  return new CelEvalError(err instanceof Error ? err.message : String(err));
}

/** Result of a sub-evaluation whose error may be absorbed (logical operators, quantifiers). */
type Outcome = { ok: true; value: unknown } | { ok: false; error: CelEvalError };

/**
 * Evaluates one checked expression tree. Instances hold no per-run state
 * but constant folding caches: share one per compiled program.
 */
export class Interpreter {
  readonly #consts = new WeakMap<Node, { value: unknown } | null>();

  constructor(
    readonly env: EvalEnvironment,
    /** cel-go's function names of variables bound by the caller that are namespaces, etc. */
  ) {}

  /** Evaluates `root` against `activation`, charging `run`. Throws CelEvalError or CelCostLimitError. */
  evaluate(root: Node, activation: Activation, run: Run): unknown {
    return new Evaluation(this, activation, run).eval(root, undefined);
  }

  /**
   * The value of `n` when it is a constant as cel-go's optimizer sees it
   * (literals, negated numeric literals, lists and maps of constants,
   * type conversions of constants), else undefined.
   */
  constantOf(n: Node): { value: unknown } | undefined {
    if (this.#consts.has(n)) return this.#consts.get(n) ?? undefined;
    let c: { value: unknown } | null = null;
    try {
      c = this.#computeConstant(n);
    } catch {
      c = null;
    }
    this.#consts.set(n, c);
    return c ?? undefined;
  }

  #computeConstant(n: Node): { value: unknown } | null {
    switch (n.op) {
      case 'value':
        return { value: n.args };
      case '-_': {
        const a = n.args as Node;
        if (a.op === 'value' && (typeof a.args === 'bigint' || typeof a.args === 'number')) return { value: -(a.args as number) };
        return null;
      }
      case 'list': {
        const items: unknown[] = [];
        for (const e of n.args as Node[]) {
          const c = this.constantOf(e);
          if (!c) return null;
          items.push(c.value);
        }
        return { value: items };
      }
      case 'map': {
        const m = new Map<unknown, unknown>();
        for (const [k, v] of n.args as [Node, Node][]) {
          const ck = this.constantOf(k);
          const cv = this.constantOf(v);
          if (!ck || !cv) return null;
          m.set(ck.value, cv.value);
        }
        return { value: m };
      }
      case 'call': {
        const p = callParts(n);
        if (n.meta.alternate || n.meta.macro || p.args.length !== 1) return null;
        if (!['bool', 'bytes', 'double', 'duration', 'dyn', 'int', 'string', 'timestamp', 'type', 'uint'].includes(p.name)) return null;
        const arg = this.constantOf(p.args[0]!);
        if (!arg) return null;
        const run = new Run(Number.MAX_SAFE_INTEGER, false);
        return { value: new Evaluation(this, { resolve: () => undefined }, run).call(n, undefined, p.name, undefined, [arg.value], false) };
      }
      default:
        return null;
    }
  }
}

/** The state of one evaluation. */
class Evaluation {
  constructor(
    readonly interp: Interpreter,
    readonly activation: Activation,
    readonly run: Run,
  ) {}

  get engine(): unknown {
    return this.interp.env.engine;
  }

  /** Evaluates without throwing CEL errors (cost-limit errors still throw). */
  try(n: Node, f: Frame | undefined): Outcome {
    try {
      return { ok: true, value: this.eval(n, f) };
    } catch (err) {
      if (err instanceof CelEvalError) return { ok: false, error: err };
      throw err;
    }
  }

  lookup(name: string, f: Frame | undefined): unknown {
    for (let x = f; x; x = x.next) if (x.name === name) return x.value;
    const v = this.activation.resolve(name);
    if (v === undefined) throw new CelEvalError(`no such attribute(s): ${name}`);
    return v;
  }

  eval(n: Node, f: Frame | undefined): unknown {
    const run = this.run;
    if (run.optimize && (n.op === 'list' || n.op === 'map' || n.op === 'call')) {
      const c = this.interp.constantOf(n);
      if (c) return c.value;
    }
    switch (n.op) {
      case 'value':
        return n.args;
      case 'id': {
        const alt = n.meta.alternate;
        if (alt) return (alt as Node).args;
        run.charge(1);
        return this.lookup(n.args as string, f);
      }
      case '.':
      case '.?':
      case '[]':
      case '[?]':
        return this.access(n, f);
      case 'call':
      case 'rcall':
        return this.callNode(n, f);
      case 'list': {
        const out = (n.args as Node[]).map((e) => this.eval(e, f));
        run.charge(listCreateBaseCost);
        return out;
      }
      case 'map': {
        const m = new Map<unknown, unknown>();
        for (const [k, v] of n.args as [Node, Node][]) {
          const key = this.eval(k, f);
          const val = this.eval(v, f);
          if (key !== null && typeof key === 'object' && !(key instanceof UnsignedInt)) throw new CelEvalError('unsupported key type');
          m.set(typeof key === 'object' && key instanceof UnsignedInt ? key.valueOf() : key, val);
        }
        run.charge(mapCreateBaseCost);
        return m;
      }
      case '?:': {
        const [c, t, e] = n.args as [Node, Node, Node];
        const cond = this.eval(c, f);
        if (cond === true) return this.eval(t, f);
        if (cond === false) return this.eval(e, f);
        throw noSuchOverload();
      }
      case '&&':
      case '||':
        return this.logical(n, f);
      case '!_': {
        const v = this.eval(n.args as Node, f);
        run.charge(1);
        if (typeof v !== 'boolean') throw noSuchOverload();
        return !v;
      }
      case '-_': {
        const a = n.args as Node;
        if (a.op === 'value' && (typeof a.args === 'bigint' || typeof a.args === 'number')) {
          // cel-go parses a negative number as one literal
          return -(a.args as number);
        }
        const v = this.eval(a, f);
        run.charge(1);
        if (typeof v === 'bigint') return overflowCheck(-v);
        if (typeof v === 'number') return -v;
        if (v instanceof Duration) return new Duration(-v.seconds, -v.nanos);
        throw noSuchOverload();
      }
      default:
        return this.binary(n, f);
    }
  }

  // ---- attributes: identifiers, selections, indexes ----

  access(n: Node, f: Frame | undefined): unknown {
    const [operandNode, q] = n.args as [Node, unknown];
    if (isQualifiedConstant(n)) return this.qualify(this.eval(operandNode, f), q, true);
    const base = this.eval(operandNode, f);
    // a qualifier costs 1; qualifying something that is not an attribute makes a relative attribute (1 more)
    this.run.charge(isChain(operandNode) ? 1 : 2);
    const key = n.op === '.' || n.op === '.?' ? (q as string) : this.eval(q as Node, f);
    const optional = n.op === '.?' || n.op === '[?]';
    if (base instanceof Optional) {
      if (!base.hasValue()) return Optional.none();
      const inner = base.value();
      if (optional) return this.qualifyOptional(inner, key);
      return Optional.of(this.qualify(inner, key, n.op === '.'));
    }
    return optional ? this.qualifyOptional(base, key) : this.qualify(base, key, n.op === '.');
  }

  qualifyOptional(base: unknown, key: unknown): Optional {
    if (!this.present(base, key)) return Optional.none();
    return Optional.of(this.qualify(base, key, false));
  }

  /** Whether `key` is present on `base` (has() and optional access). */
  present(base: unknown, key: unknown): boolean {
    if (base instanceof CelObject) return typeof key === 'string' && base.has(key);
    if (base instanceof Map) return base.has(mapKey(key));
    if (isPlainMap(base)) return typeof key === 'string' && Object.prototype.hasOwnProperty.call(base, key) && base[key] !== undefined;
    if (Array.isArray(base)) {
      const i = listIndex(key);
      return i !== undefined && i >= 0 && i < base.length;
    }
    if (isLazyFields(base)) return typeof key === 'string' && base.lazyField(key, this.run) !== undefined;
    throw noSuchOverload();
  }

  qualify(base: unknown, key: unknown, isField: boolean): unknown {
    if (base instanceof CelObject) {
      if (typeof key !== 'string') throw noSuchOverload();
      const v = base.field(key);
      if (v === undefined) throw noSuchKey(key);
      return v;
    }
    if (base instanceof Map) {
      const k = mapKey(key);
      if (!base.has(k)) throw noSuchKey(key);
      return base.get(k);
    }
    if (isPlainMap(base)) {
      if (typeof key !== 'string') throw noSuchKey(key);
      const v = Object.prototype.hasOwnProperty.call(base, key) ? base[key] : undefined;
      if (v === undefined) throw noSuchKey(key);
      return fromJsonDyn(v);
    }
    if (Array.isArray(base) && !isField) {
      const i = listIndex(key);
      if (i === undefined) throw noSuchOverload();
      if (i < 0 || i >= base.length) throw new CelEvalError(`index out of bounds: ${i}`);
      return base[i];
    }
    if (isLazyFields(base) && typeof key === 'string') {
      const v = base.lazyField(key, this.run);
      if (v === undefined) throw noSuchKey(key);
      return v;
    }
    if (base === null && isField) throw noSuchKey(key);
    throw noSuchOverload();
  }

  // ---- logical operators ----

  logical(n: Node, f: Frame | undefined): unknown {
    const [l, r] = n.args as [Node, Node];
    const decisive = n.op === '||';
    const left = this.try(l, f);
    if (left.ok && left.value === decisive) return decisive;
    const right = this.try(r, f);
    if (right.ok && right.value === decisive) return decisive;
    if (!left.ok) throw left.error;
    if (!right.ok) throw right.error;
    if (typeof left.value !== 'boolean' || typeof right.value !== 'boolean') throw noSuchOverload();
    return !decisive;
  }

  // ---- operators ----

  binary(n: Node, f: Frame | undefined): unknown {
    const [ln, rn] = n.args as [Node, Node];
    const run = this.run;
    const l = this.eval(ln, f);
    if (n.op === 'in' && run.optimize) {
      const c = this.interp.constantOf(rn);
      if (c && Array.isArray(c.value) && c.value.every((x) => ['string', 'bigint', 'number', 'boolean'].includes(typeof x) || x instanceof UnsignedInt)) {
        // set membership against a constant list: no call cost
        return c.value.some((x) => celEquals(l, x));
      }
    }
    const r = this.eval(rn, f);
    let result: unknown;
    switch (n.op) {
      case '==':
        result = celEquals(l, r);
        run.charge(runtimeCallCost('_==_', [l, r], result));
        return result;
      case '!=':
        result = !celEquals(l, r);
        run.charge(runtimeCallCost('_!=_', [l, r], result));
        return result;
      case 'in':
        result = this.contains(r, l);
        run.charge(runtimeCallCost('@in', [l, r], result));
        return result;
      case '+':
        if (Array.isArray(l) && Array.isArray(r)) result = celListAdd(l, r);
        else if (typeof l === 'bigint' && typeof r === 'bigint') result = overflowCheck(l + r);
        else result = this.engineOp(n, l, r);
        break;
      case '-':
        if (typeof l === 'bigint' && typeof r === 'bigint') result = overflowCheck(l - r);
        else result = this.engineOp(n, l, r);
        break;
      case '*':
        if (typeof l === 'bigint' && typeof r === 'bigint') result = overflowCheck(l * r);
        else result = this.engineOp(n, l, r);
        break;
      case '/':
        if (typeof l === 'bigint' && typeof r === 'bigint') {
          if (r === 0n) throw new CelEvalError('division by zero');
          result = overflowCheck(l / r);
        } else result = this.engineOp(n, l, r);
        break;
      case '%':
        if (typeof l === 'bigint' && typeof r === 'bigint') {
          if (r === 0n) throw new CelEvalError('modulus by zero');
          result = l % r;
        } else result = this.engineOp(n, l, r);
        break;
      case '<':
      case '<=':
      case '>':
      case '>=':
        result = this.compare(n, l, r);
        break;
      default:
        throw new CelEvalError(`unsupported operator ${n.op}`);
    }
    run.charge(runtimeCallCost(`_${n.op}_`, [l, r], result));
    return result;
  }

  compare(n: Node, l: unknown, r: unknown): boolean {
    let c: number;
    if ((typeof l === 'string' && typeof r === 'string') || (l instanceof Uint8Array && r instanceof Uint8Array) || (typeof l === 'boolean' && typeof r === 'boolean')) {
      c = compareValues(l, r);
    } else {
      const a = numericOf(l);
      const b = numericOf(r);
      if (a !== undefined && b !== undefined) {
        if ((typeof a === 'number' && Number.isNaN(a)) || (typeof b === 'number' && Number.isNaN(b))) return false;
        c = a < b ? -1 : a > b ? 1 : 0;
      } else {
        return this.engineOp(n, l, r) as boolean;
      }
    }
    switch (n.op) {
      case '<':
        return c < 0;
      case '<=':
        return c <= 0;
      case '>':
        return c > 0;
      default:
        return c >= 0;
    }
  }

  contains(container: unknown, v: unknown): boolean {
    if (Array.isArray(container)) return container.some((x) => celEquals(v, x));
    if (container instanceof Map) {
      if (container.has(mapKey(v))) return true;
      for (const k of container.keys()) if (celEquals(k, v)) return true;
      return false;
    }
    if (isPlainMap(container)) return typeof v === 'string' && Object.prototype.hasOwnProperty.call(container, v);
    throw noSuchOverload();
  }

  engineOp(n: Node, l: unknown, r: unknown): unknown {
    const handle = (n as unknown as { handle?: (a: unknown, b: unknown, ast: unknown, ev: unknown) => unknown }).handle;
    if (!handle) throw noSuchOverload();
    try {
      return handle(l, r, n, this.engine);
    } catch (err) {
      throw toCelError(err);
    }
  }

  // ---- calls and macros ----

  callNode(n: Node, f: Frame | undefined): unknown {
    const p = callParts(n);
    if (n.meta.alternate || n.meta.macro) return this.macro(n, p, f);
    const ns = p.receiver ? namespaceOf(p.receiver) : undefined;
    if (p.receiver && !ns) {
      const recv = this.eval(p.receiver, f);
      const args = p.args.map((a) => this.eval(a, f));
      return this.call(n, f, p.name, recv, args, true);
    }
    const args = p.args.map((a) => this.eval(a, f));
    const recv = ns ? (p.receiver!.meta.alternate as Node).args : undefined;
    return this.call(n, f, ns ? `${ns}.${p.name}` : p.name, recv, args, false);
  }

  /** Calls a function: a library override, else the engine's overload; charges its cost. */
  call(n: Node, _f: Frame | undefined, fn: string, recv: unknown, args: unknown[], member: boolean): unknown {
    const p = callParts(n);
    const name = p.name;
    const overrides = this.interp.env.overrides;
    let result: unknown;
    try {
      const ov = member ? overrides.get(`${kindOf(recv)}.${name}/${args.length}`) : overrides.get(`${fn}/${args.length}`);
      if (ov) result = ov(recv, args);
      else if (!member && fn === 'string' && args.length === 1 && typeof args[0] === 'number') result = formatDouble(args[0]);
      else if (!member && fn === 'dyn' && args.length === 1) result = args[0];
      else if (member && name === 'size' && args.length === 0) result = BigInt(sizeOf(recv));
      else if (!member && fn === 'size' && args.length === 1) result = BigInt(sizeOf(args[0]));
      else {
        const handle = (n as unknown as { handle?: (...a: unknown[]) => unknown }).handle;
        if (!handle) throw noSuchOverload();
        result = n.op === 'rcall' ? handle([recv, ...args], this.engine, n) : handle(args, n, this.engine);
      }
    } catch (err) {
      throw toCelError(err);
    }
    this.run.charge(runtimeCallCost(fn, member ? [recv, ...args] : args, result, member));
    return result;
  }

  macro(n: Node, p: ReturnType<typeof callParts>, f: Frame | undefined): unknown {
    const name = p.name;
    const argc = p.args.length;
    if (!p.receiver && name === 'has') return this.has(p.args[0]!, f);
    if (p.receiver && (name === 'or' || name === 'orValue') && argc === 1) return this.optionalOr(name, p.receiver, p.args[0]!, f);
    if (p.receiver && (name === 'optMap' || name === 'optFlatMap') && argc === 2) return this.optMap(name, p.receiver, p.args, f);
    if (p.receiver && !namespaceOf(p.receiver)) {
      switch (`${name}/${argc}`) {
        case 'all/2':
        case 'exists/2':
        case 'exists_one/2':
        case 'existsOne/2':
        case 'map/2':
        case 'map/3':
        case 'filter/2':
          return this.comprehension(name, p.receiver, p.args, false, f);
        case 'all/3':
        case 'exists/3':
        case 'exists_one/3':
        case 'existsOne/3':
        case 'transformList/3':
        case 'transformList/4':
        case 'transformMap/3':
        case 'transformMap/4':
        case 'transformMapEntry/3':
        case 'transformMapEntry/4':
          return this.comprehension(name, p.receiver, p.args, true, f);
        default:
          break;
      }
    }
    throw new CelEvalError(`unsupported macro: ${name}`);
  }

  has(arg: Node, f: Frame | undefined): boolean {
    if (arg.op !== '.') throw new CelEvalError('invalid argument to has() macro');
    const [operand, field] = arg.args as [Node, string];
    const base = this.eval(operand, f);
    // test-only attribute: the qualifier costs 1, the attribute itself nothing (PresenceTestHasCost(false))
    this.run.charge(isChain(operand) ? 0 : 1);
    if (base instanceof Optional) return base.hasValue() && this.present(base.value(), field);
    return this.present(base, field);
  }

  optionalOr(name: string, recvNode: Node, argNode: Node, f: Frame | undefined): unknown {
    const recv = this.eval(recvNode, f);
    if (!(recv instanceof Optional)) throw noSuchOverload();
    this.run.charge(1);
    if (recv.hasValue()) return name === 'or' ? recv : recv.value();
    const alt = this.eval(argNode, f);
    if (name === 'or' && !(alt instanceof Optional)) throw noSuchOverload();
    return alt;
  }

  optMap(name: string, recvNode: Node, args: Node[], f: Frame | undefined): unknown {
    const recv = this.eval(recvNode, f);
    if (!(recv instanceof Optional)) throw noSuchOverload();
    if (!recv.hasValue()) return Optional.none();
    const v = (args[0]!.args as string) ?? '';
    const out = this.eval(args[1]!, { name: v, value: recv.value(), next: f });
    if (name === 'optMap') return Optional.of(out);
    if (!(out instanceof Optional)) throw noSuchOverload();
    return out;
  }

  /**
   * A comprehension macro with cel-go's expansion costs: per iteration the
   * loop condition (all: @not_strictly_false(accu), 2; exists:
   * @not_strictly_false(!accu), 3; others: a literal, 0), then the step
   * (the accumulator and the operator around the predicate or transform),
   * and at the end the result (the accumulator, 1; exists_one: accu == 1, 2).
   * The accumulator's initial value (a list or map literal for the
   * transforming macros) is charged once.
   */
  comprehension(name: string, rangeNode: Node, args: Node[], twoVar: boolean, f: Frame | undefined): unknown {
    const run = this.run;
    const range = this.eval(rangeNode, f);
    const v1 = args[0]!.args as string;
    const v2 = twoVar ? (args[1]!.args as string) : undefined;
    const rest = args.slice(twoVar ? 2 : 1);
    const entries = iterate(range, twoVar);
    const initCost = (kind: 'list' | 'map'): number => (run.optimize ? 0 : kind === 'list' ? listCreateBaseCost : mapCreateBaseCost);
    const bind = (e: [unknown, unknown]): Frame => {
      const frame: Frame = { name: v1, value: e[0], next: f };
      return v2 !== undefined ? { name: v2, value: e[1], next: frame } : frame;
    };
    switch (name) {
      case 'all':
      case 'exists': {
        const decisive = name === 'exists';
        let accu: Outcome = { ok: true, value: !decisive };
        for (const e of entries) {
          run.charge(decisive ? 3 : 2); // loop condition
          if (accu.ok && accu.value === decisive) break;
          run.charge(1); // the accumulator in the step
          const p = this.try(rest[0]!, bind(e));
          if (p.ok && p.value === decisive) accu = p;
          else if (!p.ok) {
            if (accu.ok) accu = p;
          } else if (typeof p.value !== 'boolean') accu = { ok: false, error: noSuchOverload() };
        }
        run.charge(1); // result: the accumulator
        if (!accu.ok) throw accu.error;
        return accu.value;
      }
      case 'exists_one':
      case 'existsOne': {
        let count = 0n;
        for (const e of entries) {
          const p = this.eval(rest[0]!, bind(e));
          if (p === true) {
            run.charge(2);
            count++;
          } else if (p === false) run.charge(1);
          else throw noSuchOverload();
        }
        run.charge(2); // accu == 1
        return count === 1n;
      }
      case 'map':
      case 'transformList': {
        run.charge(initCost('list'));
        const out: unknown[] = [];
        const [filter, transform] = rest.length === 2 ? [rest[0]!, rest[1]!] : [undefined, rest[0]!];
        for (const e of entries) {
          const frame = bind(e);
          if (filter) {
            const p = this.eval(filter, frame);
            if (p === false) {
              run.charge(1);
              continue;
            }
            if (p !== true) throw noSuchOverload();
          }
          out.push(this.eval(transform, frame));
          run.charge(12); // accu + [x]: the call, the accumulator, the list literal
        }
        run.charge(1);
        return out;
      }
      case 'filter': {
        run.charge(initCost('list'));
        const out: unknown[] = [];
        for (const e of entries) {
          const p = this.eval(rest[0]!, bind(e));
          if (p === true) {
            out.push(e[twoVar ? 1 : 0]);
            run.charge(13);
          } else if (p === false) run.charge(1);
          else throw noSuchOverload();
        }
        run.charge(1);
        return out;
      }
      case 'transformMap':
      case 'transformMapEntry': {
        run.charge(initCost('map'));
        const out = new Map<unknown, unknown>();
        const [filter, transform] = rest.length === 2 ? [rest[0]!, rest[1]!] : [undefined, rest[0]!];
        for (const e of entries) {
          const frame = bind(e);
          if (filter) {
            const p = this.eval(filter, frame);
            if (p === false) {
              run.charge(1);
              continue;
            }
            if (p !== true) throw noSuchOverload();
          }
          const t = this.eval(transform, frame);
          if (name === 'transformMap') {
            out.set(mapKey(e[0]), t);
            run.charge(3); // cel.@mapInsert(accu, k, v): the call, the accumulator, the key variable
          } else {
            const entry = t instanceof Map ? t : isPlainMap(t) ? new Map(Object.entries(t).map(([k, x]) => [k, fromJsonDyn(x)])) : undefined;
            if (!entry) throw noSuchOverload();
            for (const [k, x] of entry) {
              if (out.has(k)) throw new CelEvalError(`insert failed: key ${String(k)} already exists`);
              out.set(k, x);
            }
            run.charge(2);
          }
        }
        run.charge(1);
        return out;
      }
      default:
        throw new CelEvalError(`unsupported macro: ${name}`);
    }
  }
}

/** The entries a comprehension iterates: list (index, element) or map (key, value); one-variable forms use the first of each pair for maps, the element for lists. */
function iterate(range: unknown, twoVar: boolean): [unknown, unknown][] {
  if (Array.isArray(range)) return range.map((x, i) => (twoVar ? [BigInt(i), x] : [x, x]));
  if (range instanceof Set) return [...range].map((x, i) => (twoVar ? [BigInt(i), x] : [x, x]));
  if (range instanceof Map) return [...range].map(([k, v]) => [k, v]);
  if (isPlainMap(range)) return Object.entries(range).map(([k, v]) => [k, fromJsonDyn(v)]);
  throw new CelEvalError(`expression of type '${typeNameOf(range)}' cannot be range of a comprehension (must be list, map, or dynamic)`);
}

function numericOf(v: unknown): bigint | number | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (v instanceof UnsignedInt) return v.valueOf();
  if (v instanceof Date) return v.getTime();
  if (v instanceof Duration) return v.seconds * 1000000000n + BigInt(v.nanos);
  return undefined;
}

/** A list index from an int, uint or integral double. */
function listIndex(k: unknown): number | undefined {
  if (typeof k === 'bigint') return Number(k);
  if (k instanceof UnsignedInt) return Number(k.valueOf());
  if (typeof k === 'number' && Number.isInteger(k)) return k;
  return undefined;
}

/** Map keys: uints and integral doubles look up as ints (CEL's numeric key equivalence). */
function mapKey(k: unknown): unknown {
  if (k instanceof UnsignedInt) return k.valueOf();
  if (typeof k === 'number' && Number.isInteger(k)) return BigInt(k);
  return k;
}

function sizeOf(v: unknown): number {
  if (typeof v === 'string') return [...v].length;
  if (v instanceof Uint8Array || Array.isArray(v)) return v.length;
  if (v instanceof Map || v instanceof Set) return v.size;
  if (isPlainMap(v)) return Object.keys(v).length;
  if (v instanceof CelObject) return v.size;
  throw noSuchOverload();
}

export { isNode };
