/**
 * The macros cel-go has and the engine lacks, declared on the engine so
 * that expressions using them parse and type-check: the two-variable
 * comprehensions of ext.TwoVarComprehensions (all, exists, existsOne /
 * exists_one with two variables, transformList, transformMap,
 * transformMapEntry) and the optional library's optMap / optFlatMap.
 * Evaluation is the interpreter's (interpreter.ts); the engine never
 * evaluates them.
 */
import { ParseError, type Environment } from '@marcbachmann/cel-js';
import type { Node } from './ast.js';

/** The engine's type-checker, the parts macros use. */
interface Checker {
  check(n: Node, ctx: Ctx): TypeDecl;
  getType(name: string): TypeDecl;
  createError(code: string, message: string, node: Node): Error;
  registry: { getListType(t: TypeDecl): TypeDecl; getMapType(k: TypeDecl, v: TypeDecl): TypeDecl; getOptionalType(t: TypeDecl): TypeDecl };
}
interface Ctx {
  forkWithVariable(name: string, type: TypeDecl): Ctx;
}
interface TypeDecl {
  kind: string;
  name: string;
  keyType?: TypeDecl;
  valueType?: TypeDecl;
}

interface MacroCall {
  ast: Node;
  args: Node[];
  receiver: Node | null;
}

/** A type-check failure that reads as cel-go's message (see errors.ts: code `cel_message`). */
function celError(chk: Checker, node: Node, message: string): Error {
  return chk.createError('cel_message', message, node);
}

function iterVar(n: Node): string {
  if (n.op !== 'id') throw new ParseError('argument must be a simple name', n as never);
  return n.args as string;
}

const notEvaluated = (): never => {
  throw new Error('macro evaluated by the engine');
};

function rangeTypes(chk: Checker, m: MacroCall, ctx: Ctx): [TypeDecl, TypeDecl] {
  const t = chk.check(m.receiver!, ctx);
  if (t.kind === 'list') return [chk.getType('int'), t.valueType!];
  if (t.kind === 'map') return [t.keyType!, t.valueType!];
  if (t.kind === 'dyn') return [chk.getType('dyn'), chk.getType('dyn')];
  throw celError(chk, m.receiver!, `expression of type '${t.name}' cannot be range of a comprehension (must be list, map, or dynamic)`);
}

function expectBool(chk: Checker, n: Node, ctx: Ctx, op: string): void {
  const t = chk.check(n, ctx);
  if (t.name !== 'bool' && t.kind !== 'dyn') throw celError(chk, n, `found no matching overload for '${op}' applied to '(bool, ${t.name})'`);
}

function twoVar(kind: 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap' | 'transformMapEntry') {
  return (m: MacroCall) => {
    const [a0, a1] = m.args as [Node, Node];
    const v1 = iterVar(a0);
    const v2 = iterVar(a1);
    if (v1 === v2) throw new ParseError(`duplicate variable name: ${v1}`, a1 as never);
    return {
      ...m,
      async: false,
      evaluate: notEvaluated,
      typeCheck(chk: Checker, macro: MacroCall, ctx: Ctx): TypeDecl {
        const [k, v] = rangeTypes(chk, macro, ctx);
        const inner = ctx.forkWithVariable(v1, k).forkWithVariable(v2, v);
        const rest = macro.args.slice(2);
        switch (kind) {
          case 'all':
          case 'exists':
            expectBool(chk, rest[0]!, inner, kind === 'all' ? '_&&_' : '_||_');
            return chk.getType('bool');
          case 'existsOne':
            expectBool(chk, rest[0]!, inner, '_?_:_');
            return chk.getType('bool');
          default: {
            const [filter, transform] = rest.length === 2 ? [rest[0], rest[1]!] : [undefined, rest[0]!];
            if (filter) expectBool(chk, filter, inner, '_?_:_');
            const t = chk.check(transform, inner);
            if (kind === 'transformList') return chk.registry.getListType(t);
            if (kind === 'transformMap') return chk.registry.getMapType(k, t);
            if (t.kind !== 'map' && t.kind !== 'dyn') throw celError(chk, transform, `found no matching overload for 'cel.@mapInsert' applied to '(map(${k.name}, dyn), ${t.name})'`);
            return t.kind === 'map' ? t : chk.registry.getMapType(chk.getType('dyn'), chk.getType('dyn'));
          }
        }
      },
    };
  };
}

function optMap(flat: boolean) {
  return (m: MacroCall) => {
    const v = iterVar(m.args[0]!);
    return {
      ...m,
      async: false,
      evaluate: notEvaluated,
      typeCheck(chk: Checker, macro: MacroCall, ctx: Ctx): TypeDecl {
        const t = chk.check(macro.receiver!, ctx);
        const inner = t.kind === 'optional' ? t.valueType! : chk.getType('dyn');
        const out = chk.check(macro.args[1]!, ctx.forkWithVariable(v, inner));
        if (flat) {
          if (out.kind !== 'optional' && out.kind !== 'dyn') throw celError(chk, macro.args[1]!, `found no matching overload for 'optFlatMap' applied to '(${out.name})'`);
          return out.kind === 'optional' ? out : chk.getType('optional');
        }
        return chk.registry.getOptionalType(out);
      },
    };
  };
}

/** Declares the macros on an environment (once, on the base environment). */
export function registerMacros(env: Environment): void {
  const reg = (sig: string, h: (m: MacroCall) => unknown): void => {
    env.registerFunction(sig, h as never);
  };
  reg('list.all(ast, ast, ast): bool', twoVar('all'));
  reg('list.exists(ast, ast, ast): bool', twoVar('exists'));
  reg('list.existsOne(ast, ast, ast): bool', twoVar('existsOne'));
  reg('list.exists_one(ast, ast, ast): bool', twoVar('existsOne'));
  reg('list.transformList(ast, ast, ast): list<dyn>', twoVar('transformList'));
  reg('list.transformList(ast, ast, ast, ast): list<dyn>', twoVar('transformList'));
  reg('list.transformMap(ast, ast, ast): map<dyn, dyn>', twoVar('transformMap'));
  reg('list.transformMap(ast, ast, ast, ast): map<dyn, dyn>', twoVar('transformMap'));
  reg('list.transformMapEntry(ast, ast, ast): map<dyn, dyn>', twoVar('transformMapEntry'));
  reg('list.transformMapEntry(ast, ast, ast, ast): map<dyn, dyn>', twoVar('transformMapEntry'));
  reg('optional.optMap(ast, ast): optional<dyn>', optMap(false));
  reg('optional.optFlatMap(ast, ast): optional<dyn>', optMap(true));
}
