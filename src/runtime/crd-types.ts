/**
 * TypeScript types for an existing CustomResourceDefinition (someone else's
 * operator): `kcm crd types crd.yaml > widget.ts`. Per served version, an
 * interface for the object, its spec and its status, and a `defineKind`
 * constant to use with kcm/runtime.
 *
 * Mapping from the structural schema:
 * - string/integer/number/boolean; `enum` as a union of literals;
 * - `x-kubernetes-int-or-string` as `number | string`;
 * - objects with properties as object types (required ones not optional);
 *   `additionalProperties` as `{ [key: string]: T }`; with
 *   `x-kubernetes-preserve-unknown-fields` an index signature of `unknown`
 *   is added (or the whole value is `unknown` when the schema has no type);
 * - `x-kubernetes-embedded-resource` as an object with apiVersion, kind and metadata;
 * - arrays as `T[]`; `nullable` as `| null`;
 * - descriptions as doc comments.
 */
import type { CustomResourceDefinition, JSONSchemaProps } from 'kubernetes-types/apiextensions/v1.js';

export interface GenerateTypesOptions {
  /** Only this version (default: every served version). */
  version?: string;
  /** Where defineKind comes from (default 'kcm/runtime'). */
  runtimeImport?: string;
}

type Schema = JSONSchemaProps & Record<string, unknown>;

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function key(name: string): string {
  return IDENT.test(name) ? name : JSON.stringify(name);
}

function doc(description: string | undefined, indent: string): string {
  if (!description) return '';
  const text = description.replace(/\*\//g, '*\\/').trim();
  const lines = text.split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

function literal(v: unknown): string {
  return v === null ? 'null' : JSON.stringify(v);
}

/** The TypeScript type of a schema node, as source text indented for `depth`. */
export function schemaToType(s: Schema | undefined, depth = 0): string {
  if (!s) return 'unknown';
  const t = typeOf(s, depth);
  return s.nullable ? `${t} | null` : t;
}

function typeOf(s: Schema, depth: number): string {
  const indent = '  '.repeat(depth + 1);
  const close = '  '.repeat(depth);
  if (s['x-kubernetes-int-or-string']) return 'number | string';
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum.map(literal).join(' | ');
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  switch (s.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return `Array<${schemaToType(s.items as Schema | undefined, depth)}>`;
    case 'object':
    case undefined: {
      if (s.type === undefined && !s.properties) return 'unknown';
      const props = Object.entries((s.properties ?? {}) as Record<string, Schema>);
      const required = new Set(s.required ?? []);
      const lines: string[] = [];
      if (s['x-kubernetes-embedded-resource']) {
        for (const [k, v] of [['apiVersion', 'string'], ['kind', 'string'], ['metadata', 'ObjectMeta']] as const) {
          if (!props.some(([p]) => p === k)) lines.push(`${indent}${k}?: ${v};\n`);
        }
      }
      for (const [name, p] of props) {
        lines.push(`${doc(p.description, indent)}${indent}${key(name)}${required.has(name) ? '' : '?'}: ${schemaToType(p, depth + 1)};\n`);
      }
      const additional = s.additionalProperties;
      if (additional && typeof additional === 'object') {
        if (props.length === 0 && !preserve) return `{ [key: string]: ${schemaToType(additional as Schema, depth)} }`;
        lines.push(`${indent}[key: string]: ${schemaToType(additional as Schema, depth + 1)}${props.length ? ' | unknown' : ''};\n`);
      } else if (preserve || s['x-kubernetes-embedded-resource']) {
        if (props.length === 0 && lines.length === 0) return '{ [key: string]: unknown }';
        lines.push(`${indent}[key: string]: unknown;\n`);
      }
      if (lines.length === 0) return 'Record<string, never>';
      return `{\n${lines.join('')}${close}}`;
    }
    default:
      return 'unknown';
  }
}

function plainDescription(s: Schema | undefined): string | undefined {
  return s?.description;
}

/** TypeScript source declaring the objects of `crd`. */
export function generateTypes(crd: CustomResourceDefinition, opts: GenerateTypesOptions = {}): string {
  const spec = crd.spec;
  if (!spec?.names?.kind || !spec.group) throw new TypeError('generateTypes: not a CustomResourceDefinition (spec.group and spec.names.kind are required)');
  const versions = spec.versions.filter((v) => (opts.version ? v.name === opts.version : v.served));
  if (versions.length === 0) throw new TypeError(`generateTypes: ${crd.metadata?.name ?? spec.names.plural}: no ${opts.version ? `version ${opts.version}` : 'served version'}`);
  const kind = spec.names.kind;
  const multi = versions.length > 1;
  let out = `// Generated by \`kcm crd types\` from ${crd.metadata?.name ?? `${spec.names.plural}.${spec.group}`}. Do not edit.\n`;
  out += `import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';\n`;
  out += `import { defineKind } from '${opts.runtimeImport ?? 'kcm/runtime'}';\n`;
  for (const v of versions) {
    const root = v.schema?.openAPIV3Schema as Schema | undefined;
    const name = multi ? `${kind}${v.name.charAt(0).toUpperCase()}${v.name.slice(1)}` : kind;
    const props = (root?.properties ?? {}) as Record<string, Schema>;
    const required = new Set(root?.required ?? []);
    const apiVersion = `${spec.group}/${v.name}`;
    out += '\n';
    out += doc(plainDescription(root) ?? `${kind} (${apiVersion}).`, '');
    out += `export interface ${name} {\n`;
    out += `  apiVersion?: ${JSON.stringify(apiVersion)};\n`;
    out += `  kind?: ${JSON.stringify(kind)};\n`;
    out += `  metadata?: ObjectMeta;\n`;
    const own = Object.entries(props).filter(([k]) => !['apiVersion', 'kind', 'metadata'].includes(k));
    for (const [field, p] of own) {
      const typeName = field === 'spec' || field === 'status' ? `${name}${field === 'spec' ? 'Spec' : 'Status'}` : undefined;
      out += doc(p.description, '  ');
      out += `  ${key(field)}${required.has(field) ? '' : '?'}: ${typeName ? `${typeName}${p.nullable ? ' | null' : ''}` : schemaToType(p, 1)};\n`;
    }
    if (root?.['x-kubernetes-preserve-unknown-fields']) out += '  [key: string]: unknown;\n';
    out += '}\n';
    for (const field of ['spec', 'status'] as const) {
      const p = props[field];
      if (!p) continue;
      const typeName = `${name}${field === 'spec' ? 'Spec' : 'Status'}`;
      const body = schemaToType({ ...p, nullable: false } as Schema, 0);
      out += '\n';
      out += body.startsWith('{\n') ? `export interface ${typeName} ${body}\n` : `export type ${typeName} = ${body};\n`;
    }
    out += `\nexport const ${name} = defineKind<${name}>({ group: ${JSON.stringify(spec.group)}, version: ${JSON.stringify(v.name)}, kind: ${JSON.stringify(kind)}, plural: ${JSON.stringify(spec.names.plural)}, namespaced: ${spec.scope !== 'Cluster'} });\n`;
  }
  return out;
}
