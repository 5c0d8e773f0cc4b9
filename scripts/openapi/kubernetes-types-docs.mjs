/**
 * Descriptions and field types of the Kubernetes API types as the
 * `kubernetes-types` package declares them (generated from the upstream
 * OpenAPI document of its version, 1.30 here): a second source for what the
 * protobuf schema cannot carry (prose), and the only offline source for the
 * groups that have no protobuf messages (apiextensions.k8s.io).
 *
 * readKubernetesTypes(dir) -> Map<definitionName, TypeDoc>
 *   TypeDoc = { description?: string, apiVersion?: string, kind?: string,
 *               fields: Map<jsonName, { description?: string, type: TypeRef }> }
 *   TypeRef = { kind: 'string' | 'number' | 'boolean' | 'unknown' }
 *           | { kind: 'ref', name: definitionName }
 *           | { kind: 'array', items: TypeRef }
 *           | { kind: 'map', values: TypeRef }
 */
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** The OpenAPI definition prefix of a kubernetes-types module (`core/v1` -> `io.k8s.api.core.v1`). */
export function definitionPrefixOf(module) {
  if (module === 'meta/v1') return 'io.k8s.apimachinery.pkg.apis.meta.v1';
  if (module === 'api/resource') return 'io.k8s.apimachinery.pkg.api.resource';
  if (module === 'runtime') return 'io.k8s.apimachinery.pkg.runtime';
  if (module === 'util/intstr') return 'io.k8s.apimachinery.pkg.util.intstr';
  if (module === 'version') return 'io.k8s.apimachinery.pkg.version';
  if (module.startsWith('apiextensions/')) return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${module.split('/')[1]}`;
  return `io.k8s.api.${module.replace('/', '.')}`;
}

function docOf(node) {
  const docs = node.jsDoc;
  if (!docs?.length) return undefined;
  const c = docs[docs.length - 1].comment;
  if (!c) return undefined;
  const text = typeof c === 'string' ? c : c.map((p) => p.text ?? '').join('');
  return text.trim() || undefined;
}

function walkFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...walkFiles(p));
    else if (e.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

export function readKubernetesTypes(dir) {
  const out = new Map();
  if (!existsSync(dir)) return out;
  for (const file of walkFiles(dir)) {
    const module = relative(dir, file).replace(/\.d\.ts$/, '').split('\\').join('/');
    const prefix = definitionPrefixOf(module);
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    // Imported names -> their definition prefix.
    const imports = new Map();
    for (const st of sf.statements) {
      if (!ts.isImportDeclaration(st)) continue;
      const from = st.moduleSpecifier.text;
      const target = relative(dir, join(file, '..', from)).split('\\').join('/');
      for (const el of st.importClause?.namedBindings?.elements ?? []) imports.set(el.name.text, definitionPrefixOf(target));
    }
    const typeRef = (t) => {
      if (!t) return { kind: 'unknown' };
      switch (t.kind) {
        case ts.SyntaxKind.StringKeyword: return { kind: 'string' };
        case ts.SyntaxKind.NumberKeyword: return { kind: 'number' };
        case ts.SyntaxKind.BooleanKeyword: return { kind: 'boolean' };
        case ts.SyntaxKind.LiteralType: return { kind: 'string' };
        case ts.SyntaxKind.ArrayType: return { kind: 'array', items: typeRef(t.elementType) };
        case ts.SyntaxKind.TypeLiteral: {
          const idx = t.members.find((m) => ts.isIndexSignatureDeclaration(m));
          return idx ? { kind: 'map', values: typeRef(idx.type) } : { kind: 'unknown' };
        }
        case ts.SyntaxKind.TypeReference: {
          const name = t.typeName.getText(sf);
          if (name === 'Array' && t.typeArguments?.length === 1) return { kind: 'array', items: typeRef(t.typeArguments[0]) };
          return { kind: 'ref', name: `${imports.get(name) ?? prefix}.${name}` };
        }
        default: return { kind: 'unknown' };
      }
    };
    for (const st of sf.statements) {
      if (ts.isInterfaceDeclaration(st)) {
        const fields = new Map();
        const td = { description: docOf(st), fields };
        for (const m of st.members) {
          if (!ts.isPropertySignature(m) || !m.name) continue;
          const name = ts.isStringLiteral(m.name) ? m.name.text : m.name.getText(sf);
          if ((name === 'apiVersion' || name === 'kind') && m.type && ts.isLiteralTypeNode(m.type)) td[name] = m.type.literal.text;
          fields.set(name, { description: docOf(m), type: typeRef(m.type) });
        }
        out.set(`${prefix}.${st.name.text}`, td);
      } else if (ts.isTypeAliasDeclaration(st)) {
        out.set(`${prefix}.${st.name.text}`, { description: docOf(st), fields: new Map(), alias: typeRef(st.type) });
      }
    }
  }
  return out;
}
