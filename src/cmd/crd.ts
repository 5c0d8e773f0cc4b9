/**
 * `kcm crd`: CustomResourceDefinitions from TypeScript and back.
 *
 *   kcm crd generate MODULE.js [--out FILE]    the CRDs of the resources a compiled module exports (YAML)
 *   kcm crd types CRD.yaml [--version V] [--out FILE] [--import kcm/runtime]
 *                                             TypeScript types and kinds for an existing CRD
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { parseAllDocuments, stringify } from 'yaml';
import { generateTypes } from '../runtime/crd-types.js';
import { customResourceDefinition, type CustomObject, type ResourceDefinition } from '../runtime/resource.js';
import { parseCommandLine } from './common.js';
import type { FlagSpec } from './flags.js';

const crdFlags = {
  out: { type: 'string', default: '', usage: 'Write to this file instead of standard output.', section: 'Output' },
  version: { type: 'string', default: '', usage: 'types: only this version of the CRD (default: every served version).', section: 'Output' },
  import: { type: 'string', default: 'kcm/runtime', usage: 'types: the module defineKind is imported from.', section: 'Output' },
} as const satisfies FlagSpec;

const description =
  'CustomResourceDefinitions from TypeScript and back.\n\n' +
  'Subcommands:\n' +
  '  generate MODULE.js   print the CRDs (YAML) of every resource the module exports (defineResource); versions of one kind are combined\n' +
  '  types CRD.yaml       print TypeScript types and defineKind constants for the CRDs in a YAML file';

type AnyDefinition = ResourceDefinition<CustomObject<unknown, unknown>>;

function isDefinition(v: unknown): v is AnyDefinition {
  const d = v as Partial<AnyDefinition> | null;
  return !!d && typeof d === 'object' && typeof d.crd === 'function' && typeof d.crdVersion === 'object' && typeof d.plural === 'string';
}

function isCrd(v: unknown): v is CustomResourceDefinition {
  const c = v as Partial<CustomResourceDefinition> | null;
  return !!c && typeof c === 'object' && c.kind === 'CustomResourceDefinition' && typeof c.spec === 'object';
}

/** One line on stderr (the first of a multi-line message) and exit code 1. */
function fail(message: string): number {
  process.stderr.write(`kcm crd: ${message.split('\n')[0]!.trim()}\n`);
  return 1;
}

async function emit(text: string, out: string): Promise<void> {
  if (out) await writeFile(out, text);
  else process.stdout.write(text);
}

/** The CRDs a module defines: its exported resource definitions (grouped by kind) and CRD objects. */
export async function crdsOfModule(path: string): Promise<CustomResourceDefinition[]> {
  const mod = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  const byName = new Map<string, AnyDefinition[]>();
  const crds: CustomResourceDefinition[] = [];
  const seen = new Set<unknown>();
  for (const value of Object.values(mod)) {
    if (seen.has(value)) continue;
    seen.add(value);
    if (isDefinition(value)) {
      const name = `${value.plural}.${value.group}`;
      byName.set(name, [...(byName.get(name) ?? []), value]);
    } else if (isCrd(value)) crds.push(value);
  }
  for (const defs of byName.values()) crds.push(customResourceDefinition(...defs));
  return crds.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
}

async function generate(module: string, out: string): Promise<number> {
  if (/\.(c|m)?tsx?$/.test(module)) {
    return fail(`${module}: Node.js 20 cannot import TypeScript; compile it (tsc) and pass the .js module`);
  }
  let crds: CustomResourceDefinition[];
  try {
    crds = await crdsOfModule(module);
  } catch (err) {
    return fail(`cannot load ${module}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (crds.length === 0) return fail(`${module} exports no resource definitions (defineResource) or CustomResourceDefinitions`);
  await emit(crds.map((c) => stringify(c, { lineWidth: 0 })).join('---\n'), out);
  return 0;
}

async function types(file: string, version: string, runtimeImport: string, out: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return fail(`cannot read ${file}: ${(err as Error).message}`);
  }
  const docs = parseAllDocuments(text);
  const crds: CustomResourceDefinition[] = [];
  for (const d of Array.isArray(docs) ? docs : [docs]) {
    if (d.errors.length > 0) return fail(`${file}: ${d.errors[0]!.message}`);
    const v = d.toJS() as unknown;
    if (isCrd(v)) crds.push(v);
  }
  if (crds.length === 0) return fail(`${file} holds no CustomResourceDefinition`);
  const parts: string[] = [];
  try {
    for (const crd of crds) parts.push(generateTypes(crd, { ...(version ? { version } : {}), runtimeImport }));
  } catch (err) {
    return fail((err as Error).message);
  }
  // One header and import block for the file.
  const [first, ...rest] = parts;
  const body = rest.map((p) => p.split('\n').filter((l) => !l.startsWith('import ') && !l.startsWith('// Generated by')).join('\n'));
  await emit([first!, ...body].join('\n'), out);
  return 0;
}

export async function run(args: string[]): Promise<number> {
  const flags = parseCommandLine(crdFlags, args, { command: 'kcm crd', usageLine: 'kcm crd generate MODULE.js | types CRD.yaml [flags]', description, allowPositional: true });
  if (typeof flags === 'number') return flags;
  const [sub, target, ...extra] = flags.positional;
  const v = flags.values;
  if (extra.length > 0) return fail(`unexpected argument "${extra[0]}"`);
  switch (sub) {
    case 'generate':
      if (!target) return fail('generate needs a module: kcm crd generate MODULE.js');
      return generate(target, v.out);
    case 'types':
      if (!target) return fail('types needs a file: kcm crd types CRD.yaml');
      return types(target, v.version, v.import, v.out);
    case undefined:
      return fail("missing subcommand: generate or types (see 'kcm crd --help')");
    default:
      return fail(`unknown subcommand "${sub}": generate or types (see 'kcm crd --help')`);
  }
}
