/**
 * Content negotiation and response writing. Responses are JSON; the Accept
 * header may ask for a metadata-only (`as=PartialObjectMetadata[List]`) or
 * Table (`as=Table`) rendering, both in meta.k8s.io/v1. Unknown alternatives
 * (protobuf, aggregated discovery) fall through to plain JSON.
 */
import type { ServerResponse } from 'node:http';
import type { Status } from '../api/types.js';
import { badRequest } from './status.js';
import type { IncludeObject } from './table.js';

export type Rendering = 'object' | 'metadata' | 'table';

export function negotiate(accept: string | undefined): Rendering {
  if (!accept) return 'object';
  for (const alt of accept.split(',')) {
    const [type, ...params] = alt.split(';').map((s) => s.trim());
    if (type !== 'application/json' && type !== '*/*' && type !== 'application/*') continue;
    const p = new Map(params.map((x) => { const i = x.indexOf('='); return [x.slice(0, i).trim(), x.slice(i + 1).trim()] as [string, string]; }));
    const as = p.get('as');
    if (!as) return 'object';
    if (p.get('g') !== 'meta.k8s.io') continue;
    if (p.get('v') && p.get('v') !== 'v1' && p.get('v') !== 'v1beta1') continue;
    if (as === 'Table') return 'table';
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return 'metadata';
  }
  return 'object';
}

export function includeObjectParam(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  if (v === null || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`);
}

export function writeJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

export function writeStatus(res: ServerResponse, status: Status): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  writeJson(res, status.code ?? 500, status);
}

export function writeText(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'X-Content-Type-Options': 'nosniff' });
  res.end(text);
}
