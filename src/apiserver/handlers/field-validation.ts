/**
 * Server-side field validation (`fieldValidation=Strict|Warn|Ignore`, KEP
 * 2885) against the served OpenAPI v2 document:
 *
 * - unknown fields: `unknown field "spec.template.spec.containers[0].foo"`;
 * - duplicate fields in a JSON body: `duplicate field "spec.paused"` (only
 *   for fields the schema declares, as Go's strict decoder reports them).
 *
 * Strict turns the problems into one error, worded as kube-apiserver's
 * handlers word a strict decoding error: for a create or update body a 400
 * `Deployment in version "v1" cannot be handled as a Deployment: strict
 * decoding error: ...` (transformDecodeError); for a patch whose result
 * fails, a 422 `patch: Invalid value: "<patch>": strict decoding error: ...`
 * (the patched object's JSON for JSON and merge patches, the patch as Go
 * prints a map for strategic merge patches). Warn (the default) answers with
 * one `Warning: 299` header per problem; both Warn and Ignore drop unknown
 * fields from built-in objects, as decoding into Go types does. Server-side
 * apply always refuses unknown fields (`.spec.foo: field not declared in
 * schema`), as structured-merge-diff does.
 *
 * Custom resources are checked against their structural schema rather than
 * the published OpenAPI (which upstream cuts down for kubectl): the fields
 * pruning would drop, sorted, then unknown metadata fields; duplicates of
 * any field come first, as the unstructured decoder reports them.
 */
import type { ServerResponse } from 'node:http';
import type { KubeObject } from '../../api/types.js';
import type { SwaggerDocument } from '../openapi/index.js';
import type { PatchKind } from './patch.js';
import { decodeNullsAsGo, decodeNullsOf, escapeAsGo, objectMetaStruct } from '../go-json.js';
import { apiVersionOf } from '../../api/types.js';
import { sortedJsonText } from '../nesting-depth.js';
import { StatusError, badRequest } from '../status.js';
import { newStatus } from '../../client/errors.js';
import { checkApplyTypes, checkTypes } from './type-check.js';

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

/**
 * What the walks need of one schema object, its $refs followed. Worked out
 * on its first visit: every write request walks the same few schemas.
 */
interface Node {
  /** x-kubernetes-preserve-unknown-fields: anything goes under it. */
  preserve: boolean;
  items: Schema | undefined;
  /** Declared fields. */
  props: Record<string, Schema> | undefined;
  /** A map's value schema (`additionalProperties`). */
  mapValues: Schema | undefined;
}

/** Nodes per document (a $ref means something else in another one) and schema object; schemas are read-only. */
const nodeCaches = new WeakMap<SwaggerDocument, WeakMap<object, Node | null>>();

function nodeCache(doc: SwaggerDocument): WeakMap<object, Node | null> {
  let c = nodeCaches.get(doc);
  if (!c) nodeCaches.set(doc, (c = new WeakMap()));
  return c;
}

/** The node of `s` (null: no schema, e.g. a $ref to a missing definition). */
function nodeOf(doc: SwaggerDocument, cache: WeakMap<object, Node | null>, s: Schema | undefined): Node | null {
  // A schema is an object, or a function when a field named `constructor` finds Object.prototype's; only those can key a WeakMap.
  if (s === undefined || s === null || (typeof s !== 'object' && typeof s !== 'function')) return resolvedNode(doc, s);
  let n = cache.get(s);
  if (n === undefined) cache.set(s, (n = resolvedNode(doc, s)));
  return n;
}

function resolvedNode(doc: SwaggerDocument, schema: Schema | undefined): Node | null {
  const s = deref(doc, schema);
  if (!s) return null;
  // Every node has every property, set in one order: one object shape keeps the walks' property reads fast.
  return {
    preserve: s['x-kubernetes-preserve-unknown-fields'] === true,
    items: s.items as Schema | undefined,
    props: s.properties as Record<string, Schema> | undefined,
    mapValues: isPlainObject(s.additionalProperties) ? s.additionalProperties : undefined,
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/**
 * What decoding a body into its Go type does beyond parsing the JSON: a
 * value of the wrong JSON type is kube-apiserver's 400 (checkTypes), and
 * nulls become what Go leaves (decodeNullsOf: `finalizers: [null]` is
 * `[""]`). Kinds the OpenAPI document does not describe pass as they are.
 */
export function decodeTyped(doc: SwaggerDocument, gvk: { group: string; version: string; kind: string }, obj: KubeObject): void {
  const root = rootSchemaOf(doc, gvk);
  if (!root) return;
  checkTypes(doc, root, gvk, obj);
  decodeNullsOf(obj, apiVersionOf(gvk.group, gvk.version), gvk.kind);
}

/**
 * The unknown fields of `obj` under `root`, as dotted paths with list
 * indexes; with `prune` they are also deleted from `obj`.
 */
export function unknownFields(doc: SwaggerDocument, root: Schema, obj: unknown, prune = false): string[] {
  const out: string[] = [];
  const cache = nodeCache(doc);
  // The steps to the current value (field names, list indexes); its path is spelled only for an unknown field.
  const steps: (string | number)[] = [];
  const walk = (value: unknown, schema: Schema | undefined): void => {
    const n = nodeOf(doc, cache, schema);
    if (!n || n.preserve) return;
    if (Array.isArray(value)) {
      const items = n.items;
      if (!items) return;
      for (let i = 0; i < value.length; i++) {
        steps.push(i);
        walk(value[i], items);
        steps.pop();
      }
      return;
    }
    if (!isPlainObject(value)) return;
    const props = n.props;
    if (props) {
      // Deleting the key being visited is safe in for..in.
      for (const k in value) {
        const p = props[k];
        steps.push(k);
        if (!p) {
          out.push(tokensToPath(steps));
          if (prune) delete value[k];
        } else walk(value[k], p);
        steps.pop();
      }
      return;
    }
    const add = n.mapValues;
    if (!add) return;
    for (const k in value) {
      steps.push(k);
      walk(value[k], add);
      steps.pop();
    }
  };
  walk(obj, root);
  return out;
}

/** True when `tokens` (field names and list indexes) name a field the schema declares. */
function isDeclared(doc: SwaggerDocument, root: Schema, tokens: (string | number)[]): boolean {
  const cache = nodeCache(doc);
  let s: Schema | undefined = root;
  for (const t of tokens) {
    const n = nodeOf(doc, cache, s);
    if (!n || n.preserve) return false;
    if (typeof t === 'number') {
      s = n.items;
      continue;
    }
    if (n.props) {
      s = n.props[t];
      if (!s) return false;
    } else if (n.mapValues) s = n.mapValues;
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
  // Character codes rather than one-character strings: this scans every body.
  const QUOTE = 0x22;
  const BACKSLASH = 0x5c;
  const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
  const ws = () => {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
  };
  /** Moves past a string; true when it holds no escapes. */
  const skipString = (): boolean => {
    i++;
    let simple = true;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        simple = false;
        i++;
      }
      i++;
    }
    i++;
    return simple;
  };
  const key = (): string => {
    const start = i;
    return skipString() ? text.slice(start + 1, i - 1) : (JSON.parse(text.slice(start, i)) as string);
  };
  // One path, extended and shortened as the scan descends: copies are made only for duplicates.
  const value = (path: (string | number)[]): void => {
    ws();
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */) {
      i++;
      ws();
      if (text.charCodeAt(i) === 0x7d /* } */) {
        i++;
        return;
      }
      // Most objects have a few keys: a list is cheaper than a Set until they have many.
      let keys: string[] | Set<string> = [];
      for (;;) {
        ws();
        if (text.charCodeAt(i) !== QUOTE) throw new Error('bad json');
        const k = key();
        if (Array.isArray(keys)) {
          if (keys.includes(k)) out.push([...path, k]);
          keys.push(k);
          if (keys.length > 16) keys = new Set(keys);
        } else {
          if (keys.has(k)) out.push([...path, k]);
          keys.add(k);
        }
        ws();
        i++; // ':'
        path.push(k);
        value(path);
        path.pop();
        ws();
        if (text.charCodeAt(i) === 0x2c /* , */) {
          i++;
          continue;
        }
        i++; // '}'
        return;
      }
    }
    if (c === 0x5b /* [ */) {
      i++;
      ws();
      if (text.charCodeAt(i) === 0x5d /* ] */) {
        i++;
        return;
      }
      for (let idx = 0; ; idx++) {
        path.push(idx);
        value(path);
        path.pop();
        ws();
        if (text.charCodeAt(i) === 0x2c /* , */) {
          i++;
          continue;
        }
        i++; // ']'
        return;
      }
    }
    if (c === QUOTE) {
      // Only keys are compared: a string value is skipped, not decoded.
      skipString();
      return;
    }
    // A number, true, false or null: up to the next delimiter.
    for (; i < n; i++) {
      const d = text.charCodeAt(i);
      if (d === 0x2c /* , */ || d === 0x7d /* } */ || d === 0x5d /* ] */ || isSpace(d)) break;
    }
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
  /**
   * Custom resources: the unknown fields of the object outside metadata, as
   * their structural schema's pruning finds them (sorted). Replaces the
   * check against the OpenAPI document for everything but metadata.
   */
  unknownFieldsOf?: (obj: KubeObject) => string[];
  /** The Strict error for these problems (default: the create/update body's 400). */
  strictError?: (problems: string[]) => Error;
}

const objectMetaDef = objectMetaStruct;
const objectMetaRef = `#/definitions/${objectMetaDef}`;

/** The 400 of a create or update body strict decoding refuses (transformDecodeError). */
export function strictBodyError(gvk: { version: string; kind: string }, problems: string[]): StatusError {
  return badRequest(`${gvk.kind} in version "${gvk.version}" cannot be handled as a ${gvk.kind}: strict decoding error: ${problems.join(', ')}`);
}

/**
 * The 422 of a patch whose result strict decoding refuses:
 * `field.Invalid(field.NewPath("patch"), value, strictDecodingError)` with
 * no kind nor name, so kubectl prints `The request is invalid: patch:
 * Invalid value: "...": strict decoding error: ...`.
 */
export function strictPatchError(value: string, problems: string[]): StatusError {
  return invalidPatchError(value, `strict decoding error: ${problems.join(', ')}`);
}

/**
 * The 422 of a patch whose result does not decode:
 * `field.Invalid(field.NewPath("patch"), value, err.Error())`, e.g. a JSON
 * patch that nests the object deeper than the decoder reads (`couldn't get
 * version/kind; json parse error: exceeded max depth`).
 */
export function invalidPatchError(value: string, detail: string): StatusError {
  const body = `Invalid value: ${JSON.stringify(value)}: ${detail}`;
  return new StatusError(newStatus(422, 'Invalid', ` "" is invalid: patch: ${body}`, { causes: [{ reason: 'FieldValueInvalid', message: body, field: 'patch' }] }));
}

/** A float as Go's %v prints it (%g, shortest digits; exponent from 1e+06 and below 1e-04). */
function goFloat(x: number): string {
  if (Number.isInteger(x) && Math.abs(x) < 2 ** 63) return String(x); // integers decode to int64
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : x < 0 ? '-Inf' : 'NaN';
  const exp = Math.floor(Math.log10(Math.abs(x)));
  if (exp < -4 || exp >= 6) {
    const [m, e] = x.toExponential().split('e') as [string, string];
    const sign = e.startsWith('-') ? '-' : '+';
    const digits = e.replace(/^[+-]/, '');
    return `${m}e${sign}${digits.padStart(2, '0')}`;
  }
  return String(x);
}

/** A decoded JSON value as Go's `fmt.Sprintf("%+v", v)` prints it (maps with sorted keys). */
export function goPrint(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goPrint).join(' ')}]`;
  if (isPlainObject(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${goPrint(v[k])}`).join(' ')}]`;
  if (typeof v === 'number') return goFloat(v);
  return String(v);
}

/**
 * How a patch appears in its strict decoding error: the patched object as
 * Go marshals a map (sorted keys) for JSON and merge patches, the patch
 * itself as Go prints a map for strategic merge patches.
 */
export function patchErrorValue(kind: PatchKind, patch: unknown, patched: KubeObject): string {
  return kind === 'strategic' ? goPrint(patch) : escapeAsGo(sortedJsonText(patched));
}

/**
 * Checks `input.obj`; throws the Strict 400, or returns the warnings for Warn
 * (empty for Ignore). Unknown kinds (no schema) pass unchecked.
 */
export function validateFields(input: ValidationInput): string[] {
  const strict = (problems: string[]) => (input.strictError ? input.strictError(problems) : strictBodyError(input.gvk, problems));
  if (input.unknownFieldsOf) {
    // A custom resource: its metadata alone is decoded into ObjectMeta (schemaobjectmeta.GetObjectMeta).
    if (isPlainObject(input.obj.metadata) && input.doc.definitions[objectMetaDef]) {
      checkTypes(input.doc, { $ref: objectMetaRef }, input.gvk, input.obj.metadata);
      decodeNullsAsGo(input.obj.metadata, objectMetaDef);
    }
    // Unstructured decoding reports every duplicate, then the schema's unknown fields.
    if (input.mode === 'Ignore') return [];
    const problems: string[] = [];
    if (input.jsonText) for (const d of duplicateKeys(input.jsonText)) problems.push(`duplicate field "${tokensToPath(d)}"`);
    const unknown = input.unknownFieldsOf(input.obj);
    if (isPlainObject(input.obj.metadata) && input.doc.definitions[objectMetaDef]) {
      unknown.push(...unknownFields(input.doc, { $ref: objectMetaRef }, input.obj.metadata).map((p) => `metadata.${p}`));
    }
    problems.push(...unknown.map((p) => `unknown field "${p}"`));
    if (problems.length === 0) return [];
    if (input.mode === 'Strict') throw strict(problems);
    return problems;
  }
  const root = rootSchemaOf(input.doc, input.gvk);
  if (!root) return [];
  if (input.typed) decodeTyped(input.doc, input.gvk, input.obj);
  const problems: string[] = [];
  if (input.jsonText && input.mode !== 'Ignore') {
    for (const d of duplicateKeys(input.jsonText)) if (isDeclared(input.doc, root, d)) problems.push(`duplicate field "${tokensToPath(d)}"`);
  }
  const unknown = unknownFields(input.doc, root, input.obj, input.prune && input.mode !== 'Strict');
  problems.unshift(...unknown.map((p) => `unknown field "${p}"`));
  if (input.mode === 'Ignore' || problems.length === 0) return [];
  if (input.mode === 'Strict') throw strict(problems);
  return problems;
}

/**
 * Server-side apply's check: the applied configuration may only name
 * declared fields (400 `failed to create typed patch object (...): .spec.foo:
 * field not declared in schema`).
 */
export function validateApplyFields(
  doc: SwaggerDocument,
  gvk: { group: string; version: string; kind: string },
  applied: unknown,
  unknownFieldsOf?: (obj: KubeObject) => string[],
): void {
  let unknown: string[];
  if (unknownFieldsOf) {
    // A custom resource: its structural schema decides (fields it preserves are accepted); its metadata is ObjectMeta.
    const m = isPlainObject(applied) ? applied.metadata : undefined;
    if (m !== undefined && doc.definitions[objectMetaDef]) checkApplyTypes(doc, { type: 'object', properties: { metadata: { $ref: objectMetaRef } } }, gvk, { metadata: m });
    unknown = isPlainObject(applied) ? unknownFieldsOf(applied as KubeObject) : [];
  } else {
    const root = rootSchemaOf(doc, gvk);
    if (!root) return;
    checkApplyTypes(doc, root, gvk, applied);
    unknown = unknownFields(doc, root, applied);
  }
  if (!unknown.length) return;
  const gv = gvk.group ? `${gvk.group}/${gvk.version}` : `/${gvk.version}`;
  throw badRequest(`failed to create typed patch object (${gv}, Kind=${gvk.kind}): ${unknown.map((p) => `.${p}: field not declared in schema`).join('\n')}`);
}

/**
 * Adds one `Warning: 299 - "<text>"` header per message (kubectl prints
 * `Warning: <text>`). As apimachinery's NewWarningHeader, a text with control
 * characters is dropped. The quoted text is ASCII: characters past it (a field
 * name from the body may hold any) are `\u` escapes, which strconv.Unquote
 * reads back; Node refuses them raw in a header.
 */
export function addWarnings(res: ServerResponse, messages: string[]): void {
  if (!messages.length || res.headersSent) return;
  const prior = res.getHeader('Warning');
  const list = prior === undefined ? [] : Array.isArray(prior) ? prior.map(String) : [String(prior)];
  for (const m of messages) {
    if (/[\u0000-\u001f\u007f-\u009f]/.test(m)) continue;
    list.push(`299 - ${asciiQuote(m)}`);
  }
  if (list.length) res.setHeader('Warning', list);
}

/** `s` quoted as Go's strconv.QuoteToASCII quotes it. */
function asciiQuote(s: string): string {
  let out = '';
  for (const ch of JSON.stringify(s)) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) out += ch;
    else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return out;
}
