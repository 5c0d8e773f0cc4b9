/**
 * AdmissionReview objects (admission.k8s.io v1 and v1beta1): the request a
 * webhook receives and the checks of its answer (apiserver
 * admission/plugin/webhook/request/admissionreview.go). The version sent is
 * the first of the webhook's admissionReviewVersions this server knows.
 */
import type { Status } from '../../../api/types.js';
import type { UserInfo } from '../../request-info.js';
import { normalizeAsGo } from '../../go-json.js';
import { deepCopy } from '../../../util/json/deep-copy.js';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** What one webhook is called for: the resource and kind it matched (maybe an equivalent of the request's). */
export interface ReviewTarget {
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource: string;
  requestKind: GroupVersionKind;
  requestResource: GroupVersionResource;
  requestSubResource: string;
  name: string;
  namespace: string;
  operation: string;
  user: UserInfo;
  object: unknown;
  oldObject: unknown;
  dryRun: boolean;
  options: unknown;
}

export type ReviewVersion = 'v1' | 'v1beta1';

/** The first of `versions` this server sends, or undefined. */
export function reviewVersionFor(versions: readonly string[] | undefined): ReviewVersion | undefined {
  for (const v of versions ?? []) if (v === 'v1' || v === 'v1beta1') return v;
  return undefined;
}

function userInfo(u: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (u.username) out.username = u.username;
  if (u.uid) out.uid = u.uid;
  if (u.groups?.length) out.groups = [...u.groups];
  if (u.extra && Object.keys(u.extra).length) out.extra = deepCopy(u.extra);
  return out;
}

/** An object as Go's codec writes it (built-in kinds in struct field order). */
function encoded(obj: unknown): unknown {
  if (obj === undefined || obj === null) return null;
  const c = deepCopy(obj) as Record<string, unknown>;
  normalizeAsGo(c);
  return c;
}

/** The AdmissionReview (request only) for `t`. */
export function newAdmissionReview(version: ReviewVersion, uid: string, t: ReviewTarget): Record<string, unknown> {
  const request: Record<string, unknown> = {
    uid,
    kind: { ...t.kind },
    resource: { ...t.resource },
  };
  if (t.subResource) request.subResource = t.subResource;
  request.requestKind = { ...t.requestKind };
  request.requestResource = { ...t.requestResource };
  if (t.requestSubResource) request.requestSubResource = t.requestSubResource;
  if (t.name) request.name = t.name;
  if (t.namespace) request.namespace = t.namespace;
  request.operation = t.operation;
  request.userInfo = userInfo(t.user);
  request.object = encoded(t.object);
  request.oldObject = encoded(t.oldObject);
  request.dryRun = t.dryRun;
  request.options = t.options === undefined ? null : t.options;
  return { kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request };
}

export interface AdmissionResponse {
  allowed: boolean;
  /** Decoded JSON patch bytes (patchType JSONPatch), when any. */
  patch?: Buffer;
  patchType?: string;
  result?: Status;
  auditAnnotations: Record<string, string>;
  warnings: string[];
}

/** A failure to decode the answer into an AdmissionReview (Go's decoder texts); the call failed. */
export class ReviewDecodeError extends Error {}

/** A decoded answer that breaks the protocol (`received invalid webhook response: ...`). */
export class InvalidReviewError extends Error {}

type Obj = Record<string, unknown>;

function goType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

function typeError(field: string, v: unknown, want: string): ReviewDecodeError {
  return new ReviewDecodeError(`json: cannot unmarshal ${goType(v)} into Go struct field AdmissionReview.response.${field} of type ${want}`);
}

/** The base64 of a []byte field as encoding/json decodes it. */
function decodeBytes(field: string, v: unknown): Buffer | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw typeError(field, v, '[]uint8');
  const s = v.replace(/[\r\n]/g, '');
  const bad = /[^A-Za-z0-9+/=]/.exec(s);
  if (bad || s.length % 4 !== 0) throw new ReviewDecodeError(`illegal base64 data at input byte ${bad ? bad.index : Math.floor(s.length / 4) * 4}`);
  return Buffer.from(s, 'base64');
}

/**
 * Decodes the answer as the webhook client does (missing apiVersion/kind
 * default to the version sent) and verifies it (VerifyAdmissionResponse).
 */
export function verifyAdmissionResponse(version: ReviewVersion, uid: string, mutating: boolean, body: unknown): AdmissionResponse {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new ReviewDecodeError(`couldn't get version/kind; json parse error: json: cannot unmarshal ${goType(body)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
  }
  const review = body as Obj;
  const apiVersion = typeof review.apiVersion === 'string' ? review.apiVersion : '';
  const kind = typeof review.kind === 'string' ? review.kind : '';
  const sent = `admission.k8s.io/${version}`;
  const effApiVersion = apiVersion || sent;
  const effKind = kind || 'AdmissionReview';
  if (effApiVersion !== sent || effKind !== 'AdmissionReview') {
    const other = version === 'v1' ? 'v1beta1' : 'v1';
    if (effKind === 'AdmissionReview' && effApiVersion === `admission.k8s.io/${other}`) {
      throw new ReviewDecodeError(`converting (${other}.AdmissionReview) to (${version}.AdmissionReview): unknown conversion`);
    }
    throw new ReviewDecodeError(`no kind ${JSON.stringify(effKind)} is registered for version ${JSON.stringify(effApiVersion)} in scheme "pkg/runtime/scheme.go:100"`);
  }
  const resp = review.response;
  if (resp !== undefined && resp !== null && (typeof resp !== 'object' || Array.isArray(resp))) throw typeError('response', resp, `${version}.AdmissionResponse`);
  const r = (resp ?? undefined) as Obj | undefined;
  // Decoding checks the field types first.
  if (r) {
    if (r.uid !== undefined && r.uid !== null && typeof r.uid !== 'string') throw typeError('uid', r.uid, 'types.UID');
    if (r.allowed !== undefined && r.allowed !== null && typeof r.allowed !== 'boolean') throw typeError('allowed', r.allowed, 'bool');
    if (r.patchType !== undefined && r.patchType !== null && typeof r.patchType !== 'string') throw typeError('patchType', r.patchType, `${version}.PatchType`);
    // Go's AdmissionResponse.Result is `json:"status"`.
    if (r.status !== undefined && r.status !== null && (typeof r.status !== 'object' || Array.isArray(r.status))) throw typeError('status', r.status, 'v1.Status');
    if (r.warnings !== undefined && r.warnings !== null && (!Array.isArray(r.warnings) || r.warnings.some((w) => typeof w !== 'string'))) throw typeError('warnings', r.warnings, '[]string');
    const aa = r.auditAnnotations;
    if (aa !== undefined && aa !== null && (typeof aa !== 'object' || Array.isArray(aa) || Object.values(aa).some((v) => typeof v !== 'string'))) {
      throw typeError('auditAnnotations', aa, 'map[string]string');
    }
  }
  const patch = r ? decodeBytes('patch', r.patch) : undefined;
  if (!r) throw new InvalidReviewError('webhook response was absent');
  const base = {
    allowed: r.allowed === true,
    auditAnnotations: { ...((r.auditAnnotations ?? {}) as Record<string, string>) },
    warnings: [...((r.warnings ?? []) as string[])],
    ...(r.status ? { result: r.status as Status } : {}),
  };
  if (version === 'v1') {
    const got = String(r.uid ?? '');
    if (got !== uid) throw new InvalidReviewError(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(got)}`);
    if (apiVersion !== sent || kind !== 'AdmissionReview') {
      const [g, v] = apiVersion.includes('/') ? [apiVersion.slice(0, apiVersion.indexOf('/')), apiVersion.slice(apiVersion.indexOf('/') + 1)] : ['', apiVersion];
      throw new InvalidReviewError(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${g}/${v}, Kind=${kind}`);
    }
    const hasPatch = !!patch && patch.length > 0;
    const patchType = r.patchType as string | undefined | null;
    if (mutating) {
      if (hasPatch && (patchType === undefined || patchType === null)) throw new InvalidReviewError('webhook returned response.patch but not response.patchType');
      if (!hasPatch && patchType !== undefined && patchType !== null) throw new InvalidReviewError('webhook returned response.patchType but not response.patch');
      if (patchType !== undefined && patchType !== null && patchType.length === 0) throw new InvalidReviewError(`webhook returned invalid response.patchType of ${JSON.stringify(patchType)}`);
      return { ...base, ...(hasPatch ? { patch: patch! } : {}), ...(patchType ? { patchType } : {}) };
    }
    if (hasPatch) throw new InvalidReviewError('validating webhook may not return response.patch');
    if (patchType !== undefined && patchType !== null) throw new InvalidReviewError('validating webhook may not return response.patchType');
    return base;
  }
  // v1beta1 never checked kind, uid or patchType: a patch is a JSON patch.
  if (mutating && patch && patch.length > 0) return { ...base, patch, patchType: 'JSONPatch' };
  return base;
}
