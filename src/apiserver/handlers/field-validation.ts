/**
 * Server-side field validation (`fieldValidation=Strict|Warn|Ignore`, KEP
 * 2885) against the served OpenAPI v2 document:
 *
 * - unknown fields: `unknown field "spec.template.spec.containers[0].foo"`;
 * - duplicate fields in a JSON body: `duplicate field "spec.paused"` (only
 *   for fields the schema declares, as Go's strict decoder reports them).
 *
 * Strict turns the problems into one 400 `strict decoding error: ...`; Warn
 * (the default) answers with one `Warning: 299` header per problem; both Warn
 * and Ignore drop unknown fields from built-in objects, as decoding into Go
 * types does. Server-side apply always refuses unknown fields
 * (`.spec.foo: field not declared in schema`), as structured-merge-diff does.
 */
import type { ServerResponse } from 'node:http';
import type { KubeObject } from '../../api/types.js';
import type { SwaggerDocument } from '../openapi/index.js';
import { badRequest } from '../status.js';
import { checkTypes } from './type-check.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** The `fieldValidation` query parameter; 400 for values other than Strict, Warn, Ignore (absent: Warn). */
export function fieldValidationOf(q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw badRequest(`fieldValidation: Unsupported value: "${v}": supported values: "Ignore", "Strict", "Warn"`);
}

type Schema = Record<string, unknown>;

interface KindIndex {
  byGvk: Map<string, string>;
}

const indexes = new WeakMap<SwaggerDocument, KindIndex>();

function kindIndex(doc: SwaggerDocument): KindIndex {
  let idx = indexes.get(doc);
  if (idx) return idx;
  idx = { byGvk: new Map() };
  for (const [name, def] of Object.entries(doc.definitions)) {
    const gvks = def['x-kubernetes-group-version-kind'];
    if (!Array.isArray(gvks)) continue;
    for (const g of gvks as { group?: string; version?: string; kind?: string }[]) {
      const key = `${g.group ?? ''}/${g.version ?? ''}/${g.kind ?? ''}`;
      // The first definition wins: a kind is listed once per group version.
      if (!idx.byGvk.has(key)) idx.byGvk.set(key, name);
    }
  }
  indexes.set(doc, idx);
  return idx;
}

/** The root schema of `group/version/kind`, or undefined when the document does not describe it. */
export function rootSchemaOf(doc: SwaggerDocument, gvk: { group: string; version: string; kind: string }): Schema | undefined {
  const name = kindIndex(doc).byGvk.get(`${gvk.group}/${gvk.version}/${gvk.kind}`);
  return name ? doc.definitions[name] : undefined;
}

function deref(doc: SwaggerDocument, s: Schema | undefined): Schema | undefined {
  let cur = s;
  for (let i = 0; cur && typeof cur.$ref === 'string' && i < 16; i++) {
    const ref = cur.$ref as string;
    cur = doc.definitions[ref.slice(ref.lastIndexOf('/') + 1)];
  }
  if (cur && Array.isArray(cur.allOf) && cur.allOf.length === 1 && !cur.properties) return deref(doc, cur.allOf[0] as Schema);
  return cur;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/**
 * The unknown fields of `obj` under `root`, as dotted paths with list
 * indexes; with `prune` they are also deleted from `obj`.
 */
export function unknownFields(doc: SwaggerDocument, root: Schema, obj: unknown, prune = false): string[] {
  const out: string[] = [];
  const walk = (value: unknown, schema: Schema | undefined, path: string): void => {
    const s = deref(doc, schema);
    if (!s || s['x-kubernetes-preserve-unknown-fields'] === true) return;
    if (Array.isArray(value)) {
      const items = s.items as Schema | undefined;
      if (items) value.forEach((v, i) => walk(v, items, `${path}[${i}]`));
      return;
    }
    if (!isPlainObject(value)) return;
    const props = s.properties as Record<string, Schema> | undefined;
    if (props) {
      for (const [k, v] of Object.entries(value)) {
        const p = props[k];
        if (!p) {
          out.push(join(path, k));
          if (prune) delete value[k];
        } else walk(v, p, join(path, k));
      }
      return;
    }
    const add = s.additionalProperties;
    if (isPlainObject(add)) for (const [k, v] of Object.entries(value)) walk(v, add, join(path, k));
  };
  walk(obj, root, '');
  return out;
}

/** True when `tokens` (field names and list indexes) name a field the schema declares. */
function isDeclared(doc: SwaggerDocument, root: Schema, tokens: (string | number)[]): boolean {
  let s: Schema | undefined = root;
  for (const t of tokens) {
    s = deref(doc, s);
    if (!s || s['x-kubernetes-preserve-unknown-fields'] === true) return false;
    if (typeof t === 'number') {
      s = s.items as Schema | undefined;
      continue;
    }
    const props = s.properties as Record<string, Schema> | undefined;
    if (props) {
      s = props[t];
      if (!s) return false;
    } else if (isPlainObject(s.additionalProperties)) s = s.additionalProperties as Schema;
    else return false;
  }
  return true;
}

function tokensToPath(tokens: (string | number)[]): string {
  let out = '';
  for (const t of tokens) out = typeof t === 'number' ? `${out}[${t}]` : join(out, t);
  return out;
}

/**
 * Keys that occur twice in one object of a JSON text, as token paths, in
 * document order. Returns [] for text that is not valid JSON (the decoder
 * reports that).
 */
export function duplicateKeys(text: string): (string | number)[][] {
  const out: (string | number)[][] = [];
  let i = 0;
  const n = text.length;
  const ws = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    let simple = true;
    while (i < n && text[i] !== '"') {
      if (text[i] === '\\') {
        simple = false;
        i++;
      }
      i++;
    }
    i++;
    return simple ? text.slice(start + 1, i - 1) : (JSON.parse(text.slice(start, i)) as string);
  };
  const value = (path: (string | number)[]): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') throw new Error('bad json');
        const k = str();
        if (seen.has(k)) out.push([...path, k]);
        seen.add(k);
        ws();
        i++; // ':'
        value([...path, k]);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        i++; // '}'
        return;
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let idx = 0; ; idx++) {
        value([...path, idx]);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        i++; // ']'
        return;
      }
    }
    if (c === '"') {
      str();
      return;
    }
    while (i < n && !',}] \n\r\t'.includes(text[i]!)) i++;
  };
  try {
    value([]);
  } catch {
    return [];
  }
  return out;
}

export interface ValidationInput {
  doc: SwaggerDocument;
  gvk: { group: string; version: string; kind: string };
  /** The decoded object (unknown fields are pruned from it unless Strict). */
  obj: KubeObject;
  /** The JSON text of the request body, for duplicate detection (omit for YAML and patches of other shapes). */
  jsonText?: string;
  mode: FieldValidation;
  /** Custom resources are pruned by their own schema handling; only report here. */
  prune: boolean;
  /** Built-in kinds decode into Go types upstream, so wrong JSON types are a 400; custom resources get 422s from their schema instead. */
  typed?: boolean;
}

/**
 * Checks `input.obj`; throws the Strict 400, or returns the warnings for Warn
 * (empty for Ignore). Unknown kinds (no schema) pass unchecked.
 */
export function validateFields(input: ValidationInput): string[] {
  const root = rootSchemaOf(input.doc, input.gvk);
  if (!root) return [];
  if (input.typed) checkTypes(input.doc, root, input.gvk, input.obj);
  const problems: string[] = [];
  if (input.jsonText && input.mode !== 'Ignore') {
    for (const d of duplicateKeys(input.jsonText)) if (isDeclared(input.doc, root, d)) problems.push(`duplicate field "${tokensToPath(d)}"`);
  }
  const unknown = unknownFields(input.doc, root, input.obj, input.prune && input.mode !== 'Strict');
  problems.unshift(...unknown.map((p) => `unknown field "${p}"`));
  if (input.mode === 'Ignore' || problems.length === 0) return [];
  if (input.mode === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
  return problems;
}

/**
 * Server-side apply's check: the applied configuration may only name
 * declared fields (400 `failed to create typed patch object (...): .spec.foo:
 * field not declared in schema`).
 */
export function validateApplyFields(doc: SwaggerDocument, gvk: { group: string; version: string; kind: string }, applied: unknown): void {
  const root = rootSchemaOf(doc, gvk);
  if (!root) return;
  const unknown = unknownFields(doc, root, applied);
  if (!unknown.length) return;
  const gv = gvk.group ? `${gvk.group}/${gvk.version}` : `/${gvk.version}`;
  throw badRequest(`failed to create typed patch object (${gv}, Kind=${gvk.kind}): ${unknown.map((p) => `.${p}: field not declared in schema`).join('\n')}`);
}

/** Adds one `Warning: 299 - "<text>"` header per message (kubectl prints `Warning: <text>`). */
export function addWarnings(res: ServerResponse, messages: string[]): void {
  if (!messages.length || res.headersSent) return;
  const prior = res.getHeader('Warning');
  const list = prior === undefined ? [] : Array.isArray(prior) ? prior.map(String) : [String(prior)];
  for (const m of messages) list.push(`299 - ${JSON.stringify(m)}`);
  res.setHeader('Warning', list);
}
