/**
 * The conversion webhook of a CustomResourceDefinition, as
 * apiextensions-apiserver's webhookConverter calls it
 * (pkg/apiserver/conversion/webhook_converter.go): one ConversionReview
 * (apiextensions.k8s.io/v1, or v1beta1 when the CRD lists it first) per
 * batch of objects, POSTed through the shared webhook client (HTTPS with the
 * caBundle, url or service; 30 s deadline, sent as `?timeout=30s`), and the
 * answer checked as upstream checks it:
 *
 * - v1 answers must be apiextensions.k8s.io/v1 ConversionReviews with the
 *   request's uid (v1beta1 answers are not checked for either);
 * - `response.result.status` must be Success (else its message is the error);
 * - as many converted objects as were sent, each at the desired apiVersion
 *   and of the same kind, name, namespace and uid;
 * - metadata: everything but labels and annotations is restored from the
 *   object sent (restoreObjectMeta); changed labels and annotations must
 *   be valid.
 *
 * Every failure is an Error with upstream's text (`conversion webhook for
 * <group>/<version>, Kind=<Kind> failed: ...`); conversion.ts turns it into
 * the Status the client receives.
 */
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../api/types.js';
import { aggregateMessage, goQuote, validateAnnotations, validateLabels } from '../../api/validation.js';
import { WebhookCallError, type WebhookClient, type WebhookClientConfig } from '../admission/webhook/webhook-client.js';
import { isPlainObject } from './schema.js';
import { deepCopy } from '../../util/json/deep-copy.js';

type Obj = Record<string, unknown>;

/** webhook.ClientManager's defaultRequestTimeout: conversion webhooks get no other. */
export const conversionWebhookTimeoutMs = 30_000;

export interface ConversionWebhook {
  clientConfig: WebhookClientConfig;
  /** The CRD's conversionReviewVersions, preferred first. */
  reviewVersions: readonly string[];
}

export interface WebhookConversionOptions {
  /** The call's deadline (default 30 s, upstream's). */
  timeoutMs?: number;
  /** The objects are a list's items (upstream's list texts: `... at index N`). */
  list?: boolean;
}

/** GroupVersionKind.String() of an object: `group/version, Kind=Kind`. */
export function gvkString(obj: { apiVersion?: unknown; kind?: unknown }): string {
  const { group, version } = parseApiVersion(obj.apiVersion);
  return `${group}/${version}, Kind=${typeof obj.kind === 'string' ? obj.kind : ''}`;
}

/** schema.ParseGroupVersion, as Unstructured.GroupVersionKind reads it (unparsable: empty). */
function parseApiVersion(apiVersion: unknown): { group: string; version: string } {
  const s = typeof apiVersion === 'string' ? apiVersion : '';
  if (s === '' || s === '/') return { group: '', version: '' };
  const parts = s.split('/');
  if (parts.length === 1) return { group: '', version: s };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return { group: '', version: '' };
}

/** GroupVersion.String(). */
function gvString(apiVersion: unknown): string {
  const { group, version } = parseApiVersion(apiVersion);
  return group ? `${group}/${version}` : version;
}

/** Go's %T of a decoded JSON value (unstructured: integers are int64). */
function goType(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return 'map[string]interface {}';
}

/** encoding/json's name of a JSON value's type in `cannot unmarshal <type> into ...`. */
function jsonTypeName(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  return 'object';
}

const typeMetaStruct = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/** The review version sent: the first of the CRD's list this server speaks (createConversionReviewObjects). */
export function reviewVersionFor(reviewVersions: readonly string[]): 'v1' | 'v1beta1' | undefined {
  for (const v of reviewVersions) if (v === 'v1' || v === 'v1beta1') return v;
  return undefined;
}

/**
 * Converts `objs` (every one at another version than `desiredAPIVersion`)
 * with one call of the webhook. Returns the converted objects in order, their
 * metadata restored. Rejects with an Error worded as upstream's.
 */
export async function convertByWebhook(client: WebhookClient | undefined, hook: ConversionWebhook, objs: readonly KubeObject[], desiredAPIVersion: string, opts: WebhookConversionOptions = {}): Promise<KubeObject[]> {
  if (objs.length === 0) return [];
  const reviewVersion = reviewVersionFor(hook.reviewVersions);
  if (!reviewVersion) throw new Error('no supported conversion review versions');
  // The list's kind when several objects go at once: the first one's (they share group and kind).
  const gvk = gvkString(objs[0]!);
  const failed = (why: string): Error => new Error(`conversion webhook for ${gvk} failed: ${why}`);
  if (!client) throw failed('no webhook client is configured in this server');
  const uid = randomUUID();
  const reviewApiVersion = `apiextensions.k8s.io/${reviewVersion}`;
  // As Go serializes the ConversionReview upstream sends: an empty response included.
  const review = {
    kind: 'ConversionReview',
    apiVersion: reviewApiVersion,
    request: { uid, desiredAPIVersion, objects: objs },
    response: { uid: '', convertedObjects: null, result: { metadata: {} } },
  };
  let body: unknown;
  try {
    body = (await client.post(hook.clientConfig, review, { timeoutMs: opts.timeoutMs ?? conversionWebhookTimeoutMs })).body;
  } catch (err) {
    if (err instanceof WebhookCallError) throw failed(err.message);
    throw err;
  }
  const converted = convertedObjectsOf(body, reviewVersion, uid, (why) => failed(why));
  if (converted.length !== objs.length) throw new Error(`conversion webhook for ${gvk} returned ${converted.length} objects, expected ${objs.length}`);
  return opts.list ? checkList(objs, converted, desiredAPIVersion, gvk) : [checkOne(objs[0]!, converted[0], desiredAPIVersion, gvk)];
}

/** getConvertedObjectsFromResponse, after the client decoded the body into the review type. */
function convertedObjectsOf(body: unknown, reviewVersion: 'v1' | 'v1beta1', uid: string, failed: (why: string) => Error): unknown[] {
  if (body !== null && (typeof body !== 'object' || Array.isArray(body))) {
    throw failed(`couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonTypeName(body)} into Go value of type ${typeMetaStruct}`);
  }
  const review = (body ?? {}) as Obj;
  if (reviewVersion === 'v1') {
    const want = 'apiextensions.k8s.io/v1, Kind=ConversionReview';
    const got = gvkString(review);
    if (got !== want) throw failed(`expected webhook response of ${want}, got ${got}`);
  }
  const response = review.response;
  if (!isPlainObject(response)) throw failed('no response provided');
  const r = response as Obj;
  if (reviewVersion === 'v1') {
    const got = typeof r.uid === 'string' ? r.uid : '';
    if (got !== uid) throw failed(`expected response.uid=${goQuote(uid)}, got ${goQuote(got)}`);
  }
  const result = (isPlainObject(r.result) ? r.result : {}) as { status?: unknown; message?: unknown };
  if (result.status !== 'Success') {
    if (typeof result.message === 'string' && result.message.length > 0) throw failed(result.message);
    throw failed(`response.result.status was '${typeof result.status === 'string' ? result.status : ''}', not 'Success'`);
  }
  return Array.isArray(r.convertedObjects) ? r.convertedObjects : [];
}

/** getRawExtensionObject: a converted object must decode as an unstructured object with a kind. */
function asObject(v: unknown): KubeObject {
  if (!isPlainObject(v)) throw new Error(`json: cannot unmarshal ${jsonTypeName(v)} into Go value of type map[string]interface {}`);
  if (typeof (v as Obj).kind !== 'string' || (v as Obj).kind === '') throw new Error(`Object 'Kind' is missing in '${JSON.stringify(v)}'`);
  return v as KubeObject;
}

/** The checks and metadata restoration of a single object's conversion. */
function checkOne(original: KubeObject, raw: unknown, desiredAPIVersion: string, gvk: string): KubeObject {
  const converted = asObject(raw);
  const want = gvString(desiredAPIVersion);
  const got = gvString(converted.apiVersion);
  if (got !== want) throw new Error(`conversion webhook for ${gvk} returned invalid object at index 0: invalid groupVersion (expected ${want}, received ${got})`);
  if (original.kind !== converted.kind) throw new Error(`conversion webhook for ${gvk} returned invalid object at index 0: invalid kind (expected ${original.kind}, received ${converted.kind})`);
  const bad = sameIdentity(original, converted);
  if (bad) throw new Error(`conversion webhook for ${gvk} returned invalid object: ${bad}`);
  const metaErr = restoreObjectMeta(original, converted);
  if (metaErr) throw new Error(`conversion webhook for ${gvk} returned invalid metadata: ${metaErr}`);
  return converted;
}

/** The same for a list's items (upstream's index texts, counting as it does). */
function checkList(originals: readonly KubeObject[], raws: readonly unknown[], desiredAPIVersion: string, gvk: string): KubeObject[] {
  const want = gvString(desiredAPIVersion);
  return originals.map((original, i) => {
    let converted: KubeObject;
    try {
      converted = asObject(raws[i]);
    } catch (err) {
      throw new Error(`conversion webhook for ${gvk} returned invalid converted object at index ${i}: ${(err as Error).message}`);
    }
    // Upstream has advanced its index past the object by now.
    const at = i + 1;
    const got = gvString(converted.apiVersion);
    if (got !== want) throw new Error(`conversion webhook for ${gvk} returned invalid converted object at index ${at}: invalid groupVersion (expected ${want}, received ${got})`);
    if (original.kind !== converted.kind) throw new Error(`conversion webhook for ${gvk} returned invalid converted object at index ${at}: invalid kind (expected ${original.kind}, received ${converted.kind})`);
    const bad = sameIdentity(original, converted);
    if (bad) throw new Error(`conversion webhook for ${gvk} returned invalid converted object at index ${at}: ${bad}`);
    const metaErr = restoreObjectMeta(original, converted);
    if (metaErr) throw new Error(`conversion webhook for ${gvk} returned invalid metadata in object at index ${at}: ${metaErr}`);
    return converted;
  });
}

function metaString(o: KubeObject, field: 'name' | 'namespace' | 'uid'): string {
  const m = o.metadata as Obj | undefined;
  const v = isPlainObject(m) ? m[field] : undefined;
  return typeof v === 'string' ? v : '';
}

/** validateConvertedObject: kind, name, namespace and uid are kept. */
function sameIdentity(a: KubeObject, b: KubeObject): string | undefined {
  if (a.kind !== b.kind) return `must have the same kind: ${a.kind ?? ''} != ${b.kind ?? ''}`;
  for (const f of ['name', 'namespace', 'uid'] as const) {
    const e = metaString(a, f);
    const g = metaString(b, f);
    if (e !== g) return `must have the same ${f === 'uid' ? 'UID' : f}: ${e} != ${g}`;
  }
  return undefined;
}

/**
 * restoreObjectMeta: `converted` gets the original's metadata, with the
 * webhook's labels and annotations (validated when they changed). Returns
 * the error text, or undefined. Mutates converted.
 */
export function restoreObjectMeta(original: KubeObject, converted: KubeObject): string | undefined {
  if (!('metadata' in converted)) return 'missing metadata in converted object';
  const response = converted.metadata as unknown;
  if (!isPlainObject(response)) return `invalid metadata of type ${goType(response)} in converted object`;
  const restored = (isPlainObject(original.metadata) ? deepCopy(original.metadata) : {}) as Obj;
  converted.metadata = restored;
  for (const fld of ['labels', 'annotations'] as const) {
    const value = (response as Obj)[fld];
    if (value === undefined || value === null) {
      delete restored[fld];
      continue;
    }
    if (!isPlainObject(value)) return `invalid metadata.${fld} of type ${goType(value)} in converted object`;
    const before = restored[fld];
    if (before !== undefined && before !== null && !isPlainObject(before)) return `invalid metadata.${fld} of type ${goType(before)} in original object`;
    const orig = (before ?? {}) as Obj;
    const next = value as Obj;
    let changed = Object.keys(orig).length !== Object.keys(next).length;
    for (const [k, v] of Object.entries(next)) {
      if (typeof v !== 'string') return `metadata.${fld}[${k}] must be a string, but is ${goType(v)} in converted object`;
      if (orig[k] !== v) changed = true;
    }
    if (changed) {
      const errs = fld === 'labels' ? validateLabels(next as Record<string, string>, 'metadata.labels') : validateAnnotations(next as Record<string, string>, 'metadata.annotation');
      if (errs.length > 0) return aggregateMessage(errs);
    }
    restored[fld] = next;
  }
  return undefined;
}
