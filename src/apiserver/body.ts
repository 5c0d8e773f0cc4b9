/**
 * Request bodies: JSON, YAML or Kubernetes protobuf, at most 3 MiB as kube-apiserver's
 * MaxRequestBodyBytes, nested at most maxNestingDepth deep. Errors are StatusErrors
 * (413, 400, 415); a body its decoder refuses is a BodyDecodeError, which callers reword
 * as their upstream handler does (objectDecodeError here, decodePatch in handlers/patch.ts).
 */
import type { IncomingMessage } from 'node:http';
import { badRequest, requestEntityTooLarge, unsupportedMediaType, StatusError } from './status.js';
import { newStatus } from '../client/errors.js';
import { ProtoDecodeError, decodeKubernetesProtobuf, protobufMediaType } from './protobuf/index.js';
import { exceedsDepth, jsonDepthExceededAt, maxNestingDepth } from './nesting-depth.js';
import { YamlDecodeError, yamlToJson } from './yaml-body.js';

export const maxRequestBodyBytes = 3 * 1024 * 1024;

/**
 * Reads the whole body; 413 once it passes `limit` bytes (the rest is drained, not buffered).
 * With 'data' and 'end' listeners rather than the stream's async iterator, whose promise per
 * chunk and per end was most of reading a small body in a profile of creates.
 */
export function readBody(req: IncomingMessage, limit = maxRequestBodyBytes): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) over = true;
      if (!over) chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      if (over) reject(tooLarge(limit));
      else resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error): void => {
      done();
      reject(err);
    };
    // Closed before the end: the client went away mid-body (as the async iterator's premature close).
    const onClose = (): void => {
      done();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    const done = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function tooLarge(limit: number) {
  return requestEntityTooLarge(`the request body is too large: limit is ${limit} bytes`);
}

/** The media type without parameters, lower case: `application/json`. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export type BodyFormat = 'json' | 'yaml' | 'protobuf';

/**
 * A body its decoder refuses: `decoderMessage` is that decoder's error as Go
 * words it (`exceeded max depth`, `yaml: line 2: exceeded max depth of 128`,
 * or the JSON parser's syntax error). `json` is true when Go's JSON decoder
 * reports it (a JSON body, or the JSON a YAML body converts to); kube-apiserver
 * reads apiVersion and kind with that decoder first, so its create and update
 * handlers say `couldn't get version/kind; json parse error: ...`. As a
 * StatusError it is that 400.
 */
export class BodyDecodeError extends StatusError {
  constructor(
    readonly decoderMessage: string,
    readonly format: BodyFormat,
    readonly json: boolean,
    readonly body: Buffer,
    cause?: unknown,
  ) {
    super(newStatus(400, 'BadRequest', json ? `couldn't get version/kind; json parse error: ${decoderMessage}` : decoderMessage), cause === undefined ? undefined : { cause });
  }
}

/**
 * Parses a JSON, YAML or protobuf body. An empty body is `undefined` (callers
 * decide whether that is allowed). Patch content types are JSON documents
 * too. A protobuf body becomes the JSON object it encodes (apiVersion and
 * kind from its envelope). Bodies nested deeper than maxNestingDepth are
 * refused before anything recursive reads them.
 */
export function decodeBody(buf: Buffer, contentType: string | undefined): unknown {
  const mt = mediaType(contentType);
  if (mt === protobufMediaType) {
    if (buf.length === 0) return undefined;
    let v: unknown;
    try {
      v = decodeKubernetesProtobuf(buf);
    } catch (err) {
      if (err instanceof ProtoDecodeError) throw new BodyDecodeError(err.message, 'protobuf', false, buf, err);
      throw err;
    }
    // Messages nest at most 15 deep (the schema has no cycles), but RawExtension fields carry JSON of their own.
    if (exceedsDepth(v)) throw new BodyDecodeError('exceeded max depth', 'protobuf', false, buf);
    return v;
  }
  const text = buf.toString('utf8');
  if (text.trim() === '') return undefined;
  if (isYamlMediaType(mt)) return decodeYaml(text, buf);
  if (mt === '' || mt.endsWith('json') || mt === '*/*') return decodeJson(text, buf);
  throw unsupportedMediaType(mt);
}

function isYamlMediaType(mt: string): boolean {
  return mt === 'application/yaml' || mt === 'application/apply-patch+yaml' || mt === 'text/yaml' || mt === 'application/x-yaml';
}

function decodeJson(text: string, buf: Buffer): unknown {
  if (jsonDepthExceededAt(text) >= 0) throw new BodyDecodeError('exceeded max depth', 'json', true, buf);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new BodyDecodeError((err as Error).message, 'json', true, buf, err);
  }
}

/** JSON is YAML: a body that parses as JSON skips the (recursive, slower) YAML composer. */
function decodeYaml(text: string, buf: Buffer): unknown {
  const first = text.trimStart()[0];
  if (first === '{' || first === '[') {
    try {
      if (jsonDepthExceededAt(text) < 0) return JSON.parse(text);
    } catch {
      // YAML's flow syntax, not JSON: the YAML reader decides.
    }
  }
  try {
    return yamlToJson(text, maxNestingDepth);
  } catch (err) {
    if (err instanceof YamlDecodeError) throw new BodyDecodeError(err.message, 'yaml', err.stage === 'json' && err.message === 'exceeded max depth', buf, err);
    throw err;
  }
}

/**
 * The 400 of a create or update body its decoder refuses, as transformDecodeError
 * words it when the kind is unknown: `the object provided is unrecognized (must be
 * of type ConfigMap): couldn't get version/kind; json parse error: exceeded max
 * depth ({"apiVersion":"v1","kind":"Conf ...)`.
 */
export function objectDecodeError(err: BodyDecodeError, kind: string): StatusError {
  const e = badRequest(`the object provided is unrecognized (must be of type ${kind}): ${err.status.message} (${summarizeData(err.body, 30)})`);
  (e as { cause?: unknown }).cause = err;
  return e;
}

/** apiserver's summarizeData: the start of a JSON object as text, anything else in hex. */
export function summarizeData(data: Buffer, maxLength: number): string {
  if (data.length === 0) return '<empty>';
  const head = data.subarray(0, maxLength);
  const more = data.length > maxLength ? ' ...' : '';
  return data[0] === 0x7b ? `${head.toString('utf8')}${more}` : `${head.toString('hex')}${more}`;
}
