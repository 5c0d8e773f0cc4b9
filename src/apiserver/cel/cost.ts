/**
 * CEL cost arithmetic and the per-call costs of functions, as cel-go's
 * checker (checker/cost.go: estimates before evaluation) and interpreter
 * (interpreter/runtimecost.go: actual cost while evaluating) charge them,
 * with Kubernetes' library.CostEstimator (k8s.io/apiserver/pkg/cel/library/
 * cost.go) and cel-go's ext.Sets trackers layered on top, as Kubernetes
 * 1.33 configures them.
 *
 * Costs and sizes are unsigned 64-bit in cel-go and saturate at
 * math.MaxUint64; here they are JavaScript numbers saturating at 2^64
 * (`maxCost`), exact below 2^53, which is all a budget comparison needs.
 */
import { Optional } from '@marcbachmann/cel-js';
import { CelObject, actualSize as valueSize } from './values.js';
import { CelCIDR, CelIP } from './library/ip.js';
import { CelFormat } from './library/format.js';

/** cel-go's math.MaxUint64 (as a double, which is what the saturating arithmetic compares against). */
export const maxCost = 2 ** 64;

// common/cost.go
export const selectAndIdentCost = 1;
export const constCost = 0;
export const listCreateBaseCost = 10;
export const mapCreateBaseCost = 30;
export const structCreateBaseCost = 40;
export const stringTraversalCostFactor = 0.1;
export const regexStringLengthCostFactor = 0.25;

// k8s.io/apiserver/pkg/cel/limits.go
export const maxFormatSize = 64;
export const maxNameFormatRegexSize = 128;

/** A range of sizes (characters, bytes, items, entries) or costs. */
export interface Range {
  readonly min: number;
  readonly max: number;
}

export const fixed = (n: number): Range => ({ min: n, max: n });
export const unknownSize: Range = Object.freeze({ min: 0, max: maxCost });

export function addSat(x: number, y: number): number {
  const s = x + y;
  return s >= maxCost ? maxCost : s;
}

export function mulSat(x: number, y: number): number {
  if (x === 0 || y === 0) return 0;
  const p = x * y;
  return p >= maxCost ? maxCost : p;
}

/** multiplyByCostFactor: ceil(x * f), saturating. */
export function mulFactor(x: number, f: number): number {
  if (x > 0 && f > 0 && x > maxCost / f) return maxCost;
  const c = Math.ceil(x * f);
  return c >= maxCost ? maxCost : c;
}

export const add = (a: Range, b: Range): Range => ({ min: addSat(a.min, b.min), max: addSat(a.max, b.max) });
export const mul = (a: Range, b: Range): Range => ({ min: mulSat(a.min, b.min), max: mulSat(a.max, b.max) });
export const factor = (a: Range, f: number): Range => ({ min: mulFactor(a.min, f), max: mulFactor(a.max, f) });
export const union = (a: Range, b: Range): Range => ({ min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) });

/** The size of a value as cel-go's trackers see it (traits.Sizer, else 1); Kubernetes objects are sized by their fields. */
export function actualSize(v: unknown): number {
  if (v instanceof CelObject) return v.size;
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Map) && !(v instanceof Set) && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.keys(v).length;
  }
  if (v instanceof Optional && v.hasValue()) return actualSize(v.value());
  return valueSize(v);
}

/** library/cost.go traversalCost: the cost of walking a value as a tree. */
export function traversalCost(v: unknown): number {
  if (typeof v === 'string') return Math.trunc(Buffer.byteLength(v) * stringTraversalCostFactor);
  if (v instanceof Uint8Array) return Math.trunc(v.length * stringTraversalCostFactor);
  if (Array.isArray(v)) {
    let c = 0;
    for (const x of v) c += traversalCost(x);
    return c;
  }
  if (v instanceof Map) {
    let c = 0;
    for (const [k, x] of v) c += traversalCost(k) + traversalCost(x);
    return c;
  }
  if (v instanceof CelObject) {
    let c = 0;
    for (const [k, x] of v.entries()) c += traversalCost(k) + traversalCost(x);
    return c;
  }
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    let c = 0;
    for (const [k, x] of Object.entries(v)) c += traversalCost(k) + traversalCost(x);
    return c;
  }
  return 1;
}

const isKubernetesValue = (v: unknown): boolean =>
  v !== null && typeof v === 'object' && typeof (v as { celTypeName?: unknown }).celTypeName === 'string';

const ceilSize = (v: unknown, f = stringTraversalCostFactor): number => Math.ceil(actualSize(v) * f);

/** library/cost.go selectorCostEstimate, for a selector string of `len` characters. */
export function selectorCost(len: Range): Range {
  const parse = factor(len, stringTraversalCostFactor);
  const requirements = factor(len, 0.5);
  const reqCost = factor(requirements, listCreateBaseCost + structCreateBaseCost);
  return add(add(fixed(listCreateBaseCost), parse), reqCost);
}

/** Kubernetes library functions of constant cost 1, at run time and in the estimate (library/cost.go). */
export const unitCostFunctions: ReadonlySet<string> = new Set([
  'format.named', 'sign', 'asInteger', 'isInteger', 'asApproximateFloat', 'isGreaterThan', 'isLessThan', 'compareTo', 'add', 'sub',
  'major', 'minor', 'patch', 'getScheme', 'getHostname', 'getHost', 'getPort', 'getEscapedPath', 'getQuery',
]);

/**
 * The actual cost of one call, as CostTracker.costCall computes it:
 * Kubernetes' CallCost first, then cel-go's ext trackers and defaults.
 * `fn` is cel-go's function name (`_==_`, `@in`, `startsWith`,
 * `strings.quote`); `args` are the evaluated arguments with a member call's
 * receiver first, as cel-go passes them.
 */
export function runtimeCallCost(fn: string, args: readonly unknown[], result: unknown, member = false): number {
  if (unitCostFunctions.has(fn)) return 1;
  switch (fn) {
    case 'check':
      return 350000;
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
      return 1;
    case 'fieldSelector':
    case 'labelSelector':
      if (args.length >= 2) return selectorCost(fixed(actualSize(args[1]))).max;
      break;
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
      return args.length > 0 ? traversalCost(args[0]) : 0;
    case 'url':
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
      if (args.length >= 1) return ceilSize(args[0]);
      break;
    case 'replace':
    case 'split':
      if (args.length >= 1) return Math.ceil(actualSize(args[0]) * 2 * stringTraversalCostFactor);
      break;
    case 'join':
      if (args.length >= 1) return Math.ceil(actualSize(result) * 2 * stringTraversalCostFactor);
      break;
    case 'find':
    case 'findAll':
      if (args.length >= 2) return Math.ceil((1 + actualSize(args[0])) * stringTraversalCostFactor) * ceilSize(args[1], regexStringLengthCostFactor);
      break;
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
      if (args.length >= 1) return ceilSize(args[0]);
      break;
    case 'ip':
      if (args.length >= 1) return args[0] instanceof CelCIDR ? 1 : ceilSize(args[0]);
      break;
    case 'ip.isCanonical':
      if (args.length >= 1) return Math.ceil(actualSize(args[0]) * 2 * stringTraversalCostFactor);
      break;
    case 'masked':
    case 'prefixLength':
    case 'family':
    case 'isUnspecified':
    case 'isLoopback':
    case 'isLinkLocalMulticast':
    case 'isLinkLocalUnicast':
    case 'isGlobalUnicast':
      return 1;
    case 'containsIP':
      if (args.length >= 2) {
        const c = actualSize(args[0]);
        let cost = Math.ceil((c + c) * stringTraversalCostFactor);
        if (typeof args[1] === 'string') cost += ceilSize(args[1]);
        return cost;
      }
      break;
    case 'containsCIDR':
      if (args.length >= 2) {
        const c = actualSize(args[0]);
        let cost = Math.ceil((c + c) * stringTraversalCostFactor);
        cost += Math.ceil(c * stringTraversalCostFactor) + 1;
        if (typeof args[1] === 'string') cost += ceilSize(args[1]);
        return cost;
      }
      break;
    case 'quantity':
    case 'isQuantity':
    case 'semver':
    case 'isSemver':
      if (args.length >= 1) return ceilSize(args[0]);
      break;
    case 'validate':
      if (args.length >= 2 && args[0] instanceof CelFormat) {
        return Math.ceil((1 + actualSize(args[1])) * stringTraversalCostFactor) * Math.ceil(args[0].maxRegexSize * regexStringLengthCostFactor);
      }
      break;
    case '_==_':
      if (args.length === 2 && (isKubernetesValue(args[0]) || args[0] instanceof CelIP || args[0] instanceof CelCIDR)) return 1;
      break;
    case 'sets.contains':
    case 'sets.intersects':
      return 1 + Math.trunc(actualSize(args[0]) * actualSize(args[1]) * 1);
    case 'sets.equivalent':
      return 1 + Math.trunc(actualSize(args[0]) * actualSize(args[1]) * 2);
    default:
      break;
  }
  // cel-go's defaults (CostTracker.costCall)
  switch (fn) {
    case 'startsWith':
    case 'endsWith':
      if (member) return ceilSize(args[0]);
      break;
    case 'strings.quote':
      return ceilSize(args[0]);
    case 'format':
      if (member && typeof args[0] === 'string') return ceilSize(args[0]);
      break;
    case 'bytes':
      if (typeof args[0] === 'string') return ceilSize(args[0]);
      break;
    case 'string':
      if (args[0] instanceof Uint8Array) return ceilSize(args[0]);
      break;
    case '@in':
      if (Array.isArray(args[1])) return actualSize(args[1]);
      break;
    case '_<_':
    case '_>_':
    case '_<=_':
    case '_>=_':
      if (typeof args[0] === 'string' || args[0] instanceof Uint8Array) return Math.ceil(Math.min(actualSize(args[0]), actualSize(args[1])) * stringTraversalCostFactor);
      break;
    case '_==_':
    case '_!=_':
      return Math.ceil(Math.min(actualSize(args[0]), actualSize(args[1])) * stringTraversalCostFactor);
    case '_+_':
      if (typeof args[0] === 'string' || args[0] instanceof Uint8Array) return Math.ceil((actualSize(args[0]) + actualSize(args[1])) * stringTraversalCostFactor);
      break;
    case 'matches':
      if (member && args.length === 2) return Math.ceil((1 + actualSize(args[0])) * stringTraversalCostFactor) * ceilSize(args[1], regexStringLengthCostFactor);
      break;
    case 'contains':
      if (member && typeof args[0] === 'string') return ceilSize(args[0]) * ceilSize(args[1]);
      break;
    default:
      break;
  }
  return 1;
}
