/**
 * OpenAPI v3 documents per group-version, converted from the v2 document as
 * kube-apiserver serves them under /openapi/v3/<api/v1 | apis/group/version>:
 * refs point at `#/components/schemas/`, body parameters become
 * `requestBody`, responses carry `content` per produced media type, and only
 * the schemas the group-version's paths reach are included.
 */
import type { SwaggerDocument } from './openapi-data.js';

type Json = Record<string, unknown>;

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** `api/v1`, `apis/apps/v1`, ... for a v2 path, or undefined for paths outside a group-version. */
export function groupVersionPathOf(path: string): string | undefined {
  const segs = path.split('/').filter(Boolean);
  if (segs[0] === 'api' && segs[1]) return `api/${segs[1]}`;
  if (segs[0] === 'apis' && segs[1] && segs[2]) return `apis/${segs[1]}/${segs[2]}`;
  return undefined;
}

/** The group-version keys of `doc`, sorted. */
export function groupVersionsOf(doc: SwaggerDocument): string[] {
  const out = new Set<string>();
  for (const p of Object.keys(doc.paths)) {
    const gv = groupVersionPathOf(p);
    if (gv) out.add(gv);
  }
  return [...out].sort();
}

function rewriteRefs(v: unknown, seen: Set<string>): unknown {
  if (Array.isArray(v)) return v.map((x) => rewriteRefs(x, seen));
  if (!v || typeof v !== 'object') return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v as Json)) {
    if (k === '$ref' && typeof x === 'string' && x.startsWith('#/definitions/')) {
      const name = x.slice('#/definitions/'.length);
      seen.add(name);
      out[k] = `#/components/schemas/${name}`;
    } else out[k] = rewriteRefs(x, seen);
  }
  return out;
}

function convertParameter(p: Json, seen: Set<string>): Json {
  const { name, in: where, description, required, type, items, uniqueItems, format, ...rest } = p;
  const schema: Json = {};
  if (type !== undefined) schema.type = type;
  if (format !== undefined) schema.format = format;
  if (items !== undefined) schema.items = rewriteRefs(items, seen);
  if (uniqueItems !== undefined) schema.uniqueItems = uniqueItems;
  const out: Json = { name, in: where };
  if (description !== undefined) out.description = description;
  if (required !== undefined) out.required = required;
  out.schema = schema;
  for (const [k, x] of Object.entries(rest)) if (k.startsWith('x-')) out[k] = x;
  return out;
}

function convertOperation(op: Json, seen: Set<string>): Json {
  const consumes = (op.consumes as string[] | undefined) ?? ['application/json'];
  const produces = (op.produces as string[] | undefined) ?? ['application/json'];
  const out: Json = {};
  for (const [k, v] of Object.entries(op)) {
    if (k === 'consumes' || k === 'produces' || k === 'schemes' || k === 'parameters' || k === 'responses') continue;
    out[k] = rewriteRefs(v, seen);
  }
  const params: Json[] = [];
  for (const p of (op.parameters as Json[] | undefined) ?? []) {
    if (p.in === 'body') {
      const schema = rewriteRefs(p.schema, seen);
      out.requestBody = { content: Object.fromEntries(consumes.map((c) => [c, { schema }])), ...(p.required ? { required: true } : {}) };
    } else params.push(convertParameter(p, seen));
  }
  if (params.length) out.parameters = params;
  const responses: Json = {};
  for (const [code, r] of Object.entries((op.responses as Record<string, Json> | undefined) ?? {})) {
    const res: Json = { description: r.description ?? '' };
    if (r.schema) {
      const schema = rewriteRefs(r.schema, seen);
      res.content = Object.fromEntries(produces.map((c) => [c, { schema }]));
    }
    responses[code] = res;
  }
  out.responses = responses;
  return out;
}

/**
 * The v3 document of one group-version (`api/v1`, `apis/apps/v1`).
 * `overrides` replace v2 definitions of the same name (v2-style refs).
 */
export function convertGroupVersion(doc: SwaggerDocument, gv: string, overrides?: Record<string, Json>): Json {
  const seen = new Set<string>();
  const paths: Json = {};
  for (const [path, item] of Object.entries(doc.paths)) {
    if (groupVersionPathOf(path) !== gv) continue;
    const out: Json = {};
    for (const [k, v] of Object.entries(item)) {
      if ((methods as readonly string[]).includes(k)) out[k] = convertOperation(v as Json, seen);
      else if (k === 'parameters') out.parameters = (v as Json[]).map((p) => convertParameter(p, seen));
      else out[k] = rewriteRefs(v, seen);
    }
    paths[path] = out;
  }
  // Close over the definitions the paths reach.
  const schemas: Json = {};
  const queue = [...seen];
  while (queue.length) {
    const name = queue.pop()!;
    if (schemas[name] !== undefined) continue;
    const def = overrides?.[name] ?? doc.definitions[name];
    if (!def) continue;
    const found = new Set<string>();
    schemas[name] = rewriteRefs(def, found);
    for (const f of found) if (schemas[f] === undefined) queue.push(f);
  }
  const sorted = Object.fromEntries(Object.keys(schemas).sort().map((k) => [k, schemas[k]]));
  return {
    openapi: '3.0.0',
    info: doc.info,
    paths,
    components: {
      schemas: sorted,
      securitySchemes: { BearerToken: { type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header' } },
    },
  };
}
