/**
 * CEL errors in cel-go's words. Compile errors read as `issues.String()`
 * does (`ERROR: <input>:1:6: undefined field 'foo'` plus the source line
 * and a caret); runtime errors carry cel-go's message (`no such key: foo`,
 * `no such overload`, `operation cancelled: actual cost limit exceeded`).
 */
import { callParts, celGoOffset, isNode, lineAndColumn, operatorFunction, binaryOps } from './ast.js';
import { celGoTypeName } from './types.js';

/** An error raised while evaluating an expression; `message` is cel-go's text. */
export class CelEvalError extends Error {
  override readonly name = 'CelEvalError';
  constructor(
    message: string,
    /** The runtime cost spent when the error happened. */
    public cost = 0,
  ) {
    super(message);
  }
}

/** The evaluation stopped because the cost limit was exceeded. */
export const costLimitExceeded = 'operation cancelled: actual cost limit exceeded';

/** One compile error at a source offset. */
export interface CompileIssue {
  readonly offset: number;
  readonly message: string;
}

/** issues.String(): every issue with its line, column, source line and caret. */
export function formatIssues(source: string, issues: readonly CompileIssue[]): string {
  const sorted = [...issues].sort((a, b) => a.offset - b.offset);
  return sorted
    .map((i) => {
      const { line, column, lineText } = lineAndColumn(source, Math.min(Math.max(i.offset, 0), source.length));
      let out = `ERROR: <input>:${line}:${column + 1}: ${i.message}`;
      const snippet = lineText.replace(/\t/g, ' ');
      if (snippet.length <= 16384) {
        const chars = [...snippet];
        let ind = '';
        for (let k = 0; k < column && k < chars.length; k++) ind += (chars[k]!.codePointAt(0)! > 0x7f ? '\uff0e' : '.');
        ind += column < chars.length && chars[column]!.codePointAt(0)! > 0x7f ? '\uff3e' : '^';
        out += `\n | ${snippet}\n | ${ind}`;
      }
      return out;
    })
    .join('\n');
}

interface EngineError {
  code?: string;
  message: string;
  summary?: string;
  node?: unknown;
  range?: { start: number; end: number };
}

const typeName = (n: unknown): string => celGoTypeName(isNode(n) ? n.checkedType?.name : undefined);

/**
 * The cel-go issue for an engine parse or type-check error. `knownFunctions`
 * tells an undeclared function (`undeclared reference`) from one called
 * with the wrong arguments (`found no matching overload`).
 */
export function issueFromEngineError(err: EngineError, source: string, knownFunctions: ReadonlySet<string>): CompileIssue {
  const node = isNode(err.node) ? err.node : undefined;
  const summary = (err.summary ?? err.message.split('\n')[0] ?? '').trim();
  if (!node) {
    const offset = err.range?.start ?? 0;
    return { offset, message: `Syntax error: ${summary}` };
  }
  switch (err.code) {
    case 'unknown_variable':
      return { offset: node.start, message: `undeclared reference to '${String(node.args)}' (in container '')` };
    case 'no_such_key':
      if (node.op === '.' || node.op === '.?') return { offset: celGoOffset(node), message: `undefined field '${String((node.args as unknown[])[1])}'` };
      break;
    case 'cannot_index_type':
      if (node.op === '.' || node.op === '.?') return { offset: celGoOffset(node), message: `type '${typeName((node.args as unknown[])[0])}' does not support field selection` };
      return { offset: celGoOffset(node), message: `found no matching overload for '_[_]' applied to '(${typeName((node.args as unknown[])[0])}, ${typeName((node.args as unknown[])[1])})'` };
    case 'invalid_index_type':
      return { offset: celGoOffset(node), message: `found no matching overload for '_[_]' applied to '(${typeName((node.args as unknown[])[0])}, ${typeName((node.args as unknown[])[1])})'` };
    case 'no_such_overload':
      if (binaryOps.has(node.op)) {
        const [l, r] = node.args as unknown[];
        return { offset: celGoOffset(node), message: `found no matching overload for '${operatorFunction(node.op)}' applied to '(${typeName(l)}, ${typeName(r)})'` };
      }
      if (node.op === '!_' || node.op === '-_') {
        return { offset: celGoOffset(node), message: `found no matching overload for '${operatorFunction(node.op)}' applied to '(${typeName(node.args)})'` };
      }
      break;
    case 'no_matching_overload':
      if (node.op === 'call' || node.op === 'rcall') {
        const p = callParts(node);
        if (!knownFunctions.has(p.name)) {
          return { offset: p.receiver ? celGoOffset(node) : node.start, message: `undeclared reference to '${p.name}' (in container '')` };
        }
        const args = p.args.map(typeName).join(', ');
        const sig = p.receiver ? `${typeName(p.receiver)}.(${args})` : `(${args})`;
        return { offset: celGoOffset(node), message: `found no matching overload for '${p.name}' applied to '${sig}'` };
      }
      break;
    case 'invalid_logical_operand': {
      const [l, r] = node.args as unknown[];
      return { offset: celGoOffset(node), message: `found no matching overload for '${operatorFunction(node.op)}' applied to '(${typeName(l)}, ${typeName(r)})'` };
    }
    case 'invalid_condition_type':
      if (node.op === '?:') {
        const [c, t, f] = node.args as unknown[];
        return { offset: celGoOffset(node), message: `found no matching overload for '_?_:_' applied to '(${typeName(c)}, ${typeName(t)}, ${typeName(f)})'` };
      }
      break;
    case 'incompatible_ternary_branches': {
      const [c, t, f] = node.args as unknown[];
      return { offset: celGoOffset(node), message: `found no matching overload for '_?_:_' applied to '(${typeName(c)}, ${typeName(t)}, ${typeName(f)})'` };
    }
    case 'heterogeneous_list_element':
    case 'heterogeneous_map_key':
    case 'heterogeneous_map_value': {
      const m = /expected type '([^']*)' but found '([^']*)'/.exec(summary);
      if (m) return { offset: node.start, message: `expected type '${celGoTypeName(m[1])}' but found '${celGoTypeName(m[2])}'` };
      break;
    }
    case 'invalid_comprehension_range':
      return { offset: node.start, message: `expression of type '${typeName(node)}' cannot be range of a comprehension (must be list, map, or dynamic)` };
    default:
      break;
  }
  return { offset: node.start, message: summary };
}

/** cel-go's text for an engine runtime error. */
export function runtimeMessage(err: EngineError): string {
  const summary = (err.summary ?? err.message.split('\n')[0] ?? '').trim();
  switch (err.code) {
    case 'no_such_key': {
      const m = /^No such key: index out of bounds, index (-?\d+)/.exec(summary);
      if (m) return `index out of bounds: ${m[1]}`;
      return summary.replace(/^No such key: /, 'no such key: ');
    }
    case 'index_out_of_bounds': {
      const m = /index (-?\d+)/.exec(summary);
      return `index out of bounds: ${m ? m[1] : ''}`;
    }
    case 'numeric_overflow':
      return summary.startsWith('integer overflow') ? 'integer overflow' : summary;
    case 'division_by_zero':
      return 'division by zero';
    case 'modulo_by_zero':
      return 'modulus by zero';
    case 'no_such_overload':
    case 'no_matching_overload':
      return 'no such overload';
    case 'optional_value_missing':
      return 'optional.none() dereference';
    default:
      return summary;
  }
}
