#!/usr/bin/env node
/**
 * Generates data/openapi/go-fields.json.gz: for every Go struct of the
 * Kubernetes API types, how encoding/json writes each of its fields (JSON
 * name, omitempty / omitzero, pointer or not, and the field's shape), so that
 * the embedded API server can write objects as kube-apiserver does after
 * decoding them into Go structs (src/apiserver/go-json.ts).
 *
 * Usage: node scripts/gen-go-fields.mjs API APIMACHINERY APIEXTENSIONS AGGREGATOR
 *   each a git directory (bare or not) of k8s.io/api, k8s.io/apimachinery,
 *   k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator; HEAD is read.
 *
 * Struct names are OpenAPI definition names (io.k8s.api.apps.v1.StatefulSetStatus).
 * A field is `[json, flags, shape]`: flags has `o` for omitempty, `z` for
 * omitzero, `p` for a pointer; shape is a scalar ('string' | 'number' | 'bool'
 * | 'bytes'), a special value type ('Time' | 'Quantity' | 'IntOrString' |
 * 'Duration' | 'Raw'), a struct (its definition name), or
 * `['slice', shape]` / `['map', shape]`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const [apiRepo, machineryRepo, extRepo, aggRepo] = process.argv.slice(2);
if (!aggRepo) {
  console.error('usage: gen-go-fields.mjs API APIMACHINERY APIEXTENSIONS AGGREGATOR (git dirs)');
  process.exit(2);
}

const git = (repo, ...args) => execFileSync('git', ['--git-dir', repo, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });

/** package import path -> OpenAPI prefix */
const packages = [];
function addPackages(repo, importRoot, openapiRoot, dirFilter) {
  const files = git(repo, 'ls-tree', '-r', '--name-only', 'HEAD').split('\n');
  const byDir = new Map();
  for (const f of files) {
    if (!f.endsWith('.go') || f.endsWith('_test.go') || /(^|\/)(zz_generated|generated\.pb|types_swagger_doc_generated)/.test(f)) continue;
    const dir = dirname(f);
    if (!dirFilter(dir)) continue;
    if (!byDir.has(dir)) byDir.set(dir, []);
    byDir.get(dir).push(f);
  }
  for (const [dir, fs] of byDir) {
    packages.push({ repo, files: fs, importPath: `${importRoot}/${dir}`, prefix: `${openapiRoot}.${dir.replaceAll('/', '.')}` });
  }
}
addPackages(apiRepo, 'k8s.io/api', 'io.k8s.api', (d) => /^[a-z0-9]+\/v[0-9a-z]+$/.test(d));
addPackages(machineryRepo, 'k8s.io/apimachinery', 'io.k8s.apimachinery', (d) =>
  ['pkg/apis/meta/v1', 'pkg/runtime', 'pkg/util/intstr', 'pkg/api/resource', 'pkg/version', 'pkg/types'].includes(d),
);
addPackages(extRepo, 'k8s.io/apiextensions-apiserver', 'io.k8s.apiextensions-apiserver', (d) => /^pkg\/apis\/apiextensions\/v1(beta1)?$/.test(d));
addPackages(aggRepo, 'k8s.io/kube-aggregator', 'io.k8s.kube-aggregator', (d) => /^pkg\/apis\/apiregistration\/v1(beta1)?$/.test(d));

/** Types whose JSON form comes from a MarshalJSON of their own. */
const special = new Map([
  ['io.k8s.apimachinery.pkg.apis.meta.v1.Time', 'Time'],
  ['io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime', 'Time'],
  ['io.k8s.apimachinery.pkg.apis.meta.v1.Duration', 'Duration'],
  ['io.k8s.apimachinery.pkg.api.resource.Quantity', 'Quantity'],
  ['io.k8s.apimachinery.pkg.util.intstr.IntOrString', 'IntOrString'],
  ['io.k8s.apimachinery.pkg.runtime.RawExtension', 'Raw'],
  ['io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1', 'Raw'],
  ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON', 'Raw'],
  ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray', 'Raw'],
  ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool', 'Raw'],
  ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray', 'Raw'],
  ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1beta1.JSON', 'Raw'],
  ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsOrArray', 'Raw'],
  ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsOrBool', 'Raw'],
  ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsOrStringArray', 'Raw'],
]);

const scalars = new Map([
  ['string', 'string'],
  ['bool', 'bool'],
  ...['int', 'int8', 'int16', 'int32', 'int64', 'uint', 'uint8', 'uint16', 'uint32', 'uint64', 'float32', 'float64'].map((t) => [t, 'number']),
]);

/** Parsed declarations: full name -> { kind: 'struct', fields } | { kind: 'alias', type, pkg } */
const decls = new Map();

function stripComments(src) {
  return src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
}

for (const pkg of packages) {
  for (const f of pkg.files) {
    const src = stripComments(git(pkg.repo, 'show', `HEAD:${f}`));
    const imports = new Map();
    for (const m of src.matchAll(/^\s*(?:import\s+)?(?:([A-Za-z_][\w]*)\s+)?"([^"]+)"\s*$/gm)) {
      const path = m[2];
      imports.set(m[1] ?? path.split('/').pop(), path);
    }
    const ctx = { pkg, imports };
    // type X struct { ... }  (also inside `type ( ... )` groups)
    const re = /(?:^|\n)\s*(?:type\s+)?([A-Z]\w*)\s+struct\s*\{/g;
    for (const m of src.matchAll(re)) {
      if (!/type\s+[A-Z]\w*\s+struct\s*\{$/.test(src.slice(Math.max(0, m.index), m.index + m[0].length).trim()) && !isInTypeGroup(src, m.index)) continue;
      const body = braceBody(src, m.index + m[0].length - 1);
      decls.set(`${pkg.prefix}.${m[1]}`, { kind: 'struct', body, ctx });
    }
    for (const m of src.matchAll(/(?:^|\n)\s*type\s+([A-Z]\w*)\s+(?!struct\b|interface\b)([^\n=]+)\n/g)) {
      decls.set(`${pkg.prefix}.${m[1]}`, { kind: 'alias', type: m[2].trim(), ctx });
    }
  }
}

function isInTypeGroup(src, idx) {
  const before = src.slice(0, idx);
  const open = before.lastIndexOf('type (');
  if (open < 0) return false;
  return before.slice(open).split('(').length > before.slice(open).split(')').length;
}

function braceBody(src, openIdx) {
  let depth = 0;
  for (let i = openIdx; i < src.length; i++) {
    if (src[i] === '{') depth++;
    else if (src[i] === '}' && --depth === 0) return src.slice(openIdx + 1, i);
  }
  throw new Error('unbalanced braces');
}

/** Resolves a Go type expression to a full declaration name or a builtin. */
function qualify(type, ctx) {
  const dot = type.indexOf('.');
  if (dot < 0) return scalars.has(type) || type === 'byte' ? type : `${ctx.pkg.prefix}.${type}`;
  const alias = type.slice(0, dot);
  const path = ctx.imports.get(alias);
  const target = path && packages.find((p) => p.importPath === path);
  if (!target) return `?${path ?? alias}.${type.slice(dot + 1)}`;
  return `${target.prefix}.${type.slice(dot + 1)}`;
}

/** A Go type expression -> { pointer, shape }. */
function shapeOf(type, ctx, seen = 0) {
  type = type.trim();
  if (seen > 20) throw new Error(`alias loop at ${type}`);
  if (type.startsWith('*')) return { pointer: true, shape: shapeOf(type.slice(1), ctx, seen + 1).shape };
  if (type === '[]byte') return { pointer: false, shape: 'bytes' };
  if (type.startsWith('[]')) return { pointer: false, shape: ['slice', shapeOf(type.slice(2), ctx, seen + 1).shape] };
  if (type.startsWith('map[')) {
    let depth = 0;
    let i = 3;
    for (; i < type.length; i++) {
      if (type[i] === '[') depth++;
      else if (type[i] === ']' && --depth === 0) break;
    }
    return { pointer: false, shape: ['map', shapeOf(type.slice(i + 1), ctx, seen + 1).shape] };
  }
  if (scalars.has(type)) return { pointer: false, shape: scalars.get(type) };
  if (type === 'byte') return { pointer: false, shape: 'number' };
  if (type === 'interface{}' || type === 'any') return { pointer: false, shape: 'Raw' };
  const full = qualify(type, ctx);
  if (special.has(full)) return { pointer: false, shape: special.get(full) };
  const d = decls.get(full);
  if (!d) return { pointer: false, shape: 'Raw' };
  if (d.kind === 'alias') return shapeOf(d.type, d.ctx, seen + 1);
  return { pointer: false, shape: full };
}

function parseTag(tag) {
  const m = /json:"([^"]*)"/.exec(tag ?? '');
  if (!m) return undefined;
  const [name, ...opts] = m[1].split(',');
  return { name, omitempty: opts.includes('omitempty'), omitzero: opts.includes('omitzero'), inline: opts.includes('inline') };
}

const out = {};
const used = new Set();
function fieldsOf(full, stack = []) {
  const d = decls.get(full);
  if (!d || d.kind !== 'struct') return [];
  const fields = [];
  for (const raw of d.body.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const tagMatch = /`([^`]*)`/.exec(line);
    const decl = (tagMatch ? line.slice(0, tagMatch.index) : line).trim();
    const tag = parseTag(tagMatch?.[1]);
    if (tag?.name === '-') continue;
    const parts = decl.split(/\s+/);
    if (parts.length === 1 || (tag && (tag.inline || tag.name === '') && parts.length === 1)) {
      // embedded: inline its fields (TypeMeta, ObjectMeta in some internal types, ...)
      const emb = qualify(parts[0].replace(/^\*/, ''), d.ctx);
      if (tag && tag.name !== '' && !tag.inline) {
        fields.push([tag.name, flags(tag, parts[0].startsWith('*')), shapeOf(parts[0], d.ctx).shape]);
      } else if (!stack.includes(emb)) fields.push(...fieldsOf(emb, [...stack, full]));
      continue;
    }
    if (!tag || !/^[A-Z]/.test(parts[0])) continue;
    const { pointer, shape } = shapeOf(parts.slice(1).join(' '), d.ctx);
    fields.push([tag.name || parts[0], flags(tag, pointer), shape]);
  }
  return fields;
}
function flags(tag, pointer) {
  return `${tag.omitempty ? 'o' : ''}${tag.omitzero ? 'z' : ''}${pointer ? 'p' : ''}`;
}
for (const [name, d] of decls) {
  if (d.kind !== 'struct' || special.has(name)) continue;
  out[name] = fieldsOf(name);
  used.add(name);
}
const file = join(dirname(fileURLToPath(import.meta.url)), '..', 'data', 'openapi', 'go-fields.json.gz');
mkdirSync(dirname(file), { recursive: true });
const sorted = Object.fromEntries(Object.keys(out).sort().map((k) => [k, out[k]]));
writeFileSync(file, gzipSync(JSON.stringify(sorted), { level: 9 }));
console.log(`${Object.keys(sorted).length} structs -> ${file}`);
