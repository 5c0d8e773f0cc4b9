/**
 * The public surface of the kcm package: each subpath of package.json
 * `exports` is one entry file with a deliberate list of names (no
 * `export *`), and nothing reachable from the entries' declarations is
 * typed `any`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = new URL('../../../', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | { types: string; default: string }> };
const subpaths = Object.entries(pkg.exports).filter(([k]) => k !== './package.json') as [string, { types: string; default: string }][];

/** Every declaration file reachable from `entries` through relative imports and exports. */
function reachable(entries: string[]): Map<string, ts.SourceFile> {
  const out = new Map<string, ts.SourceFile>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (out.has(file)) continue;
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
    out.set(file, sf);
    const follow = (spec: string) => {
      if (!spec.startsWith('.')) return;
      const p = resolve(dirname(file), spec.replace(/\.js$/, '.d.ts'));
      if (existsSync(p)) queue.push(p);
    };
    const visit = (n: ts.Node) => {
      if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) follow(n.moduleSpecifier.text);
      if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) follow(n.argument.literal.text);
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}

describe('the public API of the kcm package', () => {
  it('maps every subpath to an entry file and its declarations', () => {
    assert.deepEqual(subpaths.map(([k]) => k).sort(), ['./api', './cache', './client', './leaderelection', './record', './runtime', './testing', './workqueue']);
    for (const [name, target] of subpaths) {
      assert.ok(existsSync(join(root, target.default)), `${name}: ${target.default}`);
      assert.ok(existsSync(join(root, target.types)), `${name}: ${target.types}`);
    }
  });

  it('re-exports deliberate lists of names, never a whole module', () => {
    for (const [name, target] of subpaths) {
      const src = readFileSync(join(root, target.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts')), 'utf8');
      assert.doesNotMatch(src, /export \* from/, `${name} uses export *`);
      assert.match(src, /^\/\*\*/, `${name} starts with a doc comment`);
    }
  });

  it('types nothing reachable from the entries as any', () => {
    const files = reachable(subpaths.map(([, t]) => join(root, t.types)));
    assert.ok(files.size > subpaths.length, 'declarations of the modules behind the entries are reachable');
    const hits: string[] = [];
    for (const [file, sf] of files) {
      const visit = (n: ts.Node) => {
        if (n.kind === ts.SyntaxKind.AnyKeyword) {
          const { line } = sf.getLineAndCharacterOfPosition(n.getStart());
          hits.push(`${relative(root, file)}:${line + 1}: ${sf.text.split('\n')[line]!.trim()}`);
        }
        ts.forEachChild(n, visit);
      };
      visit(sf);
    }
    assert.deepEqual(hits, []);
  });
});
