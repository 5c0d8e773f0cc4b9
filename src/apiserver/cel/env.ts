/**
 * The Kubernetes CEL environment (k8s.io/apiserver/pkg/cel/environment,
 * base.go at compatibility version 1.33) and compiled programs.
 *
 * `newEnvironment({ variables, declTypes })` extends the base environment
 * (every Kubernetes library: strings v2, sets, lists, regex, urls,
 * quantity, IP, CIDR, format, semver, authz, two-variable comprehensions,
 * optionals) with variables typed by CelType and the object types of
 * structural schemas (DeclTypes named with assignTypeNames).
 * `env.compile(expression)` parses and type-checks once (results are
 * cached per environment) and returns a Program, or cel-go's error text
 * (`ERROR: <input>:1:6: undefined field 'foo'` with source line and caret).
 * `program.evaluate(activation, { costLimit })` evaluates with runtime cost
 * accounting; `estimateCost(program, sizes)` (estimator.ts) is the static
 * estimate.
 *
 * Admission policies (ValidatingAdmissionPolicy, webhook matchConditions)
 * build on the same pieces:
 *  - variables `object`, `oldObject`, `params` are `DynType` for evaluation,
 *    or typed against a schema for type checking: pass
 *    `schemaDeclType(schema, true)` named with `assignTypeNames(t, name)` in
 *    `declTypes` and its `celType` as the variable's type;
 *  - `request` and `namespaceObject` are object DeclTypes too, `authorizer`
 *    is `objectType(authorizerTypeName)` with a `CelAuthorizer` value;
 *  - composited `variables` are an object type declared through
 *    `objectTypes` (`{ name, ctor, fields }`, fields typed by each
 *    variable's output type) whose value implements `LazyFields`
 *    (interpreter.ts): `variables.foo` calls `lazyField('foo', run)`, which
 *    evaluates foo's program once with `program.evaluateIn(activation, run)`,
 *    charging the caller's run, and caches the value;
 *  - activations resolve names lazily (`Activation.resolve`); JSON values
 *    are passed as `toCel(json, declType?)` (lazy, no copy).
 * admission/policy/cel-env.ts and admission/match-condition-engine.ts are
 * the users.
 */
import { Environment, ParseError, TypeError as EngineTypeError } from '@marcbachmann/cel-js';
import { asNode, allNodes, callParts, type Node } from './ast.js';
import { CelEvalError, formatIssues, issueFromEngineError, type CompileIssue } from './errors.js';
import { CelCostLimitError, Interpreter, Run, type Activation, type EvalEnvironment } from './interpreter.js';
import type { CallOverride, CelLibrary } from './library/library.js';
import { listsLibrary } from './library/lists.js';
import { stringsLibrary } from './library/strings.js';
import { regexLibrary } from './library/regex.js';
import { urlsLibrary } from './library/urls.js';
import { ipLibrary } from './library/ip.js';
import { quantityLibrary } from './library/quantity.js';
import { formatLibrary } from './library/format.js';
import { semverLibrary } from './library/semver.js';
import { setsLibrary } from './library/sets.js';
import { authzLibrary } from './library/authz.js';
import { registerMacros } from './macros.js';
import { engineTypeName, objectTypesOf, type CelType, type DeclType } from './types.js';
import { celEquals, objectClassOf, type CelObjectClass } from './values.js';
import { Optional } from '@marcbachmann/cel-js';

/** k8s.io/apiserver/pkg/apis/cel: the cost limit of one evaluation. */
export const perCallLimit = 1_000_000;
/** The cost budget of validating one object (all its CRD rules) or one policy binding. */
export const runtimeCelCostBudget = 10_000_000;
/** The cost budget of the matchConditions of one webhook or binding. */
export const runtimeCelCostBudgetMatchConditions = 2_500_000;
/** The longest message a messageExpression may produce. */
export const maxEvaluatedMessageExpressionSizeBytes = 5 * 1024;

/** Every library of the base environment, in registration order. */
export const libraries: readonly CelLibrary[] = [
  urlsLibrary,
  regexLibrary,
  listsLibrary,
  authzLibrary,
  quantityLibrary,
  stringsLibrary,
  setsLibrary,
  ipLibrary,
  formatLibrary,
  semverLibrary,
];

interface Base {
  env: Environment;
  knownFunctions: ReadonlySet<string>;
  overrides: ReadonlyMap<string, CallOverride>;
}

let base: Base | undefined;

function baseEnvironment(): Base {
  if (base) return base;
  const env = new Environment({
    enableOptionalTypes: true,
    homogeneousAggregateLiterals: true,
    limits: { maxAstNodes: 100000, maxDepth: 250, maxListElements: 100000, maxMapEntries: 100000, maxCallArguments: 256 },
  });
  const overrides = new Map<string, CallOverride>();
  for (const lib of libraries) {
    lib.declare(env);
    for (const [k, f] of Object.entries(lib.overrides ?? {})) overrides.set(k, f);
  }
  registerMacros(env);
  // qualified type names (`net.IP`, `kubernetes.Quantity`) as constants, as google.protobuf.* are
  const typeOf = (expr: string): unknown => env.evaluate(`type(${expr})`);
  env.registerConstant('net', 'map<string, type>', { IP: typeOf('ip("0.0.0.0")'), CIDR: typeOf('cidr("0.0.0.0/0")') });
  env.registerConstant('kubernetes', 'map<string, dyn>', {
    Quantity: typeOf('quantity("0")'),
    URL: typeOf('url("/")'),
    Semver: typeOf('semver("0.0.0")'),
    NamedFormat: typeOf('format.dns1123Label()'),
  });
  env.registerFunction('OptionalNamespace.ofNonZeroValue(A): optional<A>', (_: unknown, v: unknown) => (isZeroValue(v) ? Optional.none() : Optional.of(v)));
  const knownFunctions = new Set(env.getDefinitions().functions.map((f) => f.name));
  for (const lib of libraries) for (const f of lib.functions) knownFunctions.add(f);
  base = { env, knownFunctions, overrides };
  return base;
}

function isZeroValue(v: unknown): boolean {
  if (v === null || v === false || v === '' || v === 0n || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  if (v instanceof Uint8Array) return v.length === 0;
  return false;
}

/** A variable of an environment. */
export interface VariableDecl {
  readonly name: string;
  readonly type: CelType;
}

/** An object type the engine does not get from a schema: a class and its fields (by CEL name). */
export interface ObjectTypeDecl {
  readonly name: string;
  readonly ctor: new (...args: never[]) => object;
  readonly fields: Readonly<Record<string, CelType>>;
}

export interface EnvironmentOptions {
  readonly variables?: readonly VariableDecl[];
  /** Object DeclTypes (trees named by assignTypeNames) whose types the variables use. */
  readonly declTypes?: readonly DeclType[];
  /** Other object types (declared before the variables). */
  readonly objectTypes?: readonly ObjectTypeDecl[];
  /** cel.HomogeneousAggregateLiterals (default true, as Kubernetes); false only for tests of upstream's tables. */
  readonly homogeneousAggregateLiterals?: boolean;
}

/** A compilation failure: cel-go's issues text. */
export class CelCompileError extends Error {
  override readonly name = 'CelCompileError';
  constructor(
    message: string,
    readonly issues: readonly CompileIssue[],
  ) {
    super(message);
  }
}

export type CompileResult = { readonly program: Program; readonly error?: undefined } | { readonly program?: undefined; readonly error: CelCompileError };

/** An environment: the base libraries plus variables and types. Compile once, evaluate many times. */
export class CelEnvironment {
  readonly #engine: Environment;
  readonly #cache = new Map<string, CompileResult>();
  readonly #knownFunctions: ReadonlySet<string>;
  readonly #evalEnv: EvalEnvironment;

  constructor(opts: EnvironmentOptions = {}) {
    const b = baseEnvironment();
    const env = opts.homogeneousAggregateLiterals === false ? b.env.clone({ homogeneousAggregateLiterals: false }) : b.env.clone();
    const seen = new Set<string>();
    for (const root of opts.declTypes ?? []) {
      for (const t of objectTypesOf(root)) {
        if (seen.has(t.name)) continue;
        seen.add(t.name);
        const fields: Record<string, string> = {};
        for (const f of t.fields!.values()) fields[f.name] = engineTypeName(f.type.celType);
        const ctor: CelObjectClass = objectClassOf(t);
        env.registerType(t.name, { ctor: ctor as never, fields });
        env.registerOperator(`${t.name} == ${t.name}`, (a: unknown, c: unknown) => celEquals(a, c));
      }
    }
    for (const t of opts.objectTypes ?? []) {
      const fields: Record<string, string> = {};
      for (const [k, ft] of Object.entries(t.fields)) fields[k] = engineTypeName(ft);
      env.registerType(t.name, { ctor: t.ctor as never, fields });
    }
    for (const v of opts.variables ?? []) env.registerVariable(v.name, engineTypeName(v.type));
    this.#engine = env;
    this.#knownFunctions = b.knownFunctions;
    this.#evalEnv = { engine: captureEvaluator(env), overrides: b.overrides };
  }

  /** Compiles (parses and type-checks) an expression; results are cached by source. */
  compile(source: string): CompileResult {
    let r = this.#cache.get(source);
    if (!r) {
      r = this.#compile(source);
      if (this.#cache.size >= 1000) this.#cache.clear();
      this.#cache.set(source, r);
    }
    return r;
  }

  #compile(source: string): CompileResult {
    const fail = (issues: CompileIssue[]): CompileResult => ({ error: new CelCompileError(formatIssues(source, issues), issues) });
    let parsed: ReturnType<Environment['parse']>;
    try {
      parsed = this.#engine.parse(source);
    } catch (err) {
      if (err instanceof ParseError) return fail([issueFromEngineError(err as never, source, this.#knownFunctions)]);
      throw err;
    }
    for (const n of allNodes(asNode(parsed.ast))) {
      if (n.op === 'call' && n.meta.macro && callParts(n).name === 'has') n.meta.macro.typeCheck = hasTypeCheck;
      // cel-go exempts the list literal of `<string>.format(...)` from HomogeneousAggregateLiterals
      if (n.op === 'rcall' && callParts(n).name === 'format') for (const a of callParts(n).args) if (a.op === 'list') (a.meta as { check?: unknown }).check = heterogeneousListCheck;
    }
    const checked = parsed.check();
    if (!checked.valid) {
      const err = checked.error!;
      if (err instanceof ParseError || err instanceof EngineTypeError) return fail([issueFromEngineError(err as never, source, this.#knownFunctions)]);
      return fail([{ offset: 0, message: (err as Error).message }]);
    }
    const root = asNode(parsed.ast);
    const unsupported = unsupportedConstructs(root);
    if (unsupported.length) return fail(unsupported);
    return { program: new Program(source, root, new Interpreter(this.#evalEnv)) };
  }
}

interface HasChecker {
  check(n: Node, ctx: unknown): unknown;
  checkAccessOnType(n: Node, ctx: unknown, t: unknown): unknown;
  createError(code: string, message: string, n: Node): Error;
  getType(name: string): unknown;
}

/**
 * has() as cel-go checks it: the argument is any field selection (the
 * engine's own macro only accepts a chain of selections from an identifier,
 * refusing `has(self.items[0].name)`).
 */
function hasTypeCheck(chk: HasChecker, macro: { args: Node[] }, ctx: unknown): unknown {
  const arg = macro.args[0]!;
  if (arg.op !== '.') throw chk.createError('cel_message', 'invalid argument to has() macro', arg);
  const operandType = chk.check((arg.args as [Node])[0], ctx);
  chk.checkAccessOnType(arg, ctx, operandType);
  return chk.getType('bool');
}

/** A list literal typed list<dyn> whatever its elements (format's arguments). */
function heterogeneousListCheck(chk: HasChecker & { registry: { getListType(t: unknown): unknown }; dynType: unknown }, ast: Node, ctx: unknown): unknown {
  const items = ast.args as Node[];
  for (const e of items) chk.check(e, ctx);
  return chk.registry.getListType(chk.dynType);
}

/** Constructs the engine accepts that cel-go's Kubernetes environment does not (cel.bind: no bindings library). */
function unsupportedConstructs(root: Node): CompileIssue[] {
  const out: CompileIssue[] = [];
  for (const n of allNodes(root)) {
    if (n.op === 'rcall') {
      const p = callParts(n);
      if (p.name === 'bind' && p.receiver?.op === 'id' && p.receiver.args === 'cel') out.push({ offset: p.receiver.start, message: `undeclared reference to 'cel' (in container '')` });
    }
  }
  return out;
}

/** The engine's evaluator of an environment (what its overload handlers are called with). */
function captureEvaluator(env: Environment): unknown {
  let ev: unknown;
  const p = env.parse('true');
  (p.ast as unknown as { evaluate: (e: unknown) => boolean }).evaluate = (e: unknown) => {
    ev = e;
    return true;
  };
  p();
  return ev;
}

export interface EvalOptions {
  /** Stop with `operation cancelled: actual cost limit exceeded` past this cost (default perCallLimit). */
  readonly costLimit?: number;
  /** cel.OptOptimize: constant literals and conversions cost nothing (default true, as Kubernetes evaluates). */
  readonly optimize?: boolean;
}

/** The outcome of one evaluation: a value or an error, and the cost spent either way. */
export type EvalResult =
  | { readonly value: unknown; readonly error?: undefined; readonly cost: number }
  | { readonly value?: undefined; readonly error: CelEvalError; readonly cost: number; readonly costLimitExceeded?: boolean };

/** A compiled expression. Programs are immutable and shared; evaluate as often as needed. */
export class Program {
  #references: Set<string> | undefined;

  constructor(
    readonly source: string,
    readonly ast: Node,
    readonly interpreter: Interpreter,
  ) {}

  /** The engine's name of the checked type of the expression (`bool`, `string`, `list<int>`, `dyn`). */
  get outputType(): string {
    return this.ast.checkedType?.name ?? 'dyn';
  }

  /** Whether the expression reads the variable `name`. */
  references(name: string): boolean {
    if (!this.#references) {
      this.#references = new Set();
      for (const n of allNodes(this.ast)) if (n.op === 'id' && !n.meta.alternate) this.#references.add(n.args as string);
    }
    return this.#references.has(name);
  }

  evaluate(activation: Activation, opts: EvalOptions = {}): EvalResult {
    const run = new Run(opts.costLimit ?? perCallLimit, opts.optimize ?? true);
    return this.evaluateIn(activation, run);
  }

  /** Evaluates charging an existing run (composited variables share their caller's run). */
  evaluateIn(activation: Activation, run: Run): EvalResult {
    const start = run.cost;
    try {
      const value = this.interpreter.evaluate(this.ast, activation, run);
      return { value, cost: run.cost - start };
    } catch (err) {
      if (err instanceof CelCostLimitError) return { error: new CelEvalError(err.message, run.cost - start), cost: run.cost - start, costLimitExceeded: true };
      if (err instanceof CelEvalError) return { error: err, cost: run.cost - start };
      return { error: new CelEvalError(err instanceof Error ? err.message : String(err), run.cost - start), cost: run.cost - start };
    }
  }
}

/** An activation over a plain record of variable values. */
export function activationOf(vars: Readonly<Record<string, unknown>>): Activation {
  return { resolve: (name) => (Object.prototype.hasOwnProperty.call(vars, name) ? vars[name] : undefined) };
}

export { Run, type Activation };
