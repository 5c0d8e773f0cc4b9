/**
 * Request bodies: JSON, YAML or Kubernetes protobuf, at most 3 MiB as kube-apiserver's
 * MaxRequestBodyBytes. Errors are StatusErrors (413, 400, 415).
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { badRequest, requestEntityTooLarge, unsupportedMediaType } from './status.js';
import { ProtoDecodeError, decodeKubernetesProtobuf, protobufMediaType } from './protobuf/index.js';

export const maxRequestBodyBytes = 3 * 1024 * 1024;

/** Reads the whole body; 413 once it passes `limit` bytes (the rest is drained, not buffered). */
export async function readBody(req: IncomingMessage, limit = maxRequestBodyBytes): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw tooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) over = true;
    if (!over) chunks.push(chunk);
  }
  if (over) throw tooLarge(limit);
  return Buffer.concat(chunks);
}

function tooLarge(limit: number) {
  return requestEntityTooLarge(`the request body is too large: limit is ${limit} bytes`);
}

/** The media type without parameters, lower case: `application/json`. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Parses a JSON, YAML or protobuf body. An empty body is `undefined` (callers
 * decide whether that is allowed). Patch content types are JSON documents
 * too. A protobuf body becomes the JSON object it encodes (apiVersion and
 * kind from its envelope).
 */
export function decodeBody(buf: Buffer, contentType: string | undefined): unknown {
  const mt = mediaType(contentType);
  if (mt === protobufMediaType) {
    if (buf.length === 0) return undefined;
    try {
      return decodeKubernetesProtobuf(buf);
    } catch (err) {
      if (err instanceof ProtoDecodeError) throw withCause(badRequest(err.message), err);
      throw err;
    }
  }
  const text = buf.toString('utf8');
  if (text.trim() === '') return undefined;
  if (mt === 'application/yaml' || mt === 'application/apply-patch+yaml' || mt === 'text/yaml' || mt === 'application/x-yaml') {
    try {
      return parseYaml(text);
    } catch (err) {
      throw withCause(badRequest(`error converting YAML to JSON: ${(err as Error).message}`), err);
    }
  }
  if (mt === '' || mt.endsWith('json') || mt === '*/*') {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw withCause(badRequest(`Object 'Kind' is missing in '${text.slice(0, 100)}': ${(err as Error).message}`), err);
    }
  }
  throw unsupportedMediaType(mt);
}

function withCause<E extends Error>(e: E, cause: unknown): E {
  (e as { cause?: unknown }).cause = cause;
  return e;
}

/** A body that must be a JSON object. */
export function requireObject(v: unknown): Record<string, unknown> {
  if (v === undefined) throw badRequest('the request body is empty');
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw badRequest('the request body must be a JSON object');
  return v as Record<string, unknown>;
}
