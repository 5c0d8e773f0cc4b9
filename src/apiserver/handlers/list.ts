/**
 * LIST: selectors, limit/continue over one consistent snapshot, and the
 * resourceVersion / resourceVersionMatch semantics of kube-apiserver.
 */
import type { KubeObject } from '../../api/types.js';
import type { RequestScope } from '../context.js';
import { includeObjectParam, negotiateResponse, writeObject } from '../output.js';
import { partialObjectMetadata, toTable } from '../table.js';
import { present, presentStoredAll, storagePrefix } from '../store.js';
import { selectionFrom } from '../selection.js';
import { StorageError } from '../storage/storage.js';
import { continueExpiredMessage, decodeContinue, encodeContinue, startAfterKey } from '../continue-token.js';
import { badRequest, expired, StatusError } from '../status.js';
import { newStatus } from '../../client/errors.js';
import { apiVersionOf } from '../../api/types.js';
import { parseInt64 } from '../parse-int.js';

export function parseResourceVersion(v: string): number {
  if (!/^\d+$/.test(v)) throw badRequest(`Invalid value: "${v}": resourceVersion: must be a non-negative integer`);
  // A uint64, as APIObjectVersioner parses it.
  if (BigInt(v) > 2n ** 64n - 1n) throw badRequest(`Invalid value: "${v}": strconv.ParseUint: parsing "${v}": value out of range`);
  return Number(v);
}

export interface ListRead {
  items: KubeObject[];
  revision: number;
  more: boolean;
  continue?: string;
  remainingItemCount?: number;
}

/**
 * Reads a page of `s.r` honouring the query; shared with deletecollection.
 * `items` are fresh copies served at s.r's version (a custom resource's page
 * converted in one batch); with `raw` they are the stored (deep-frozen)
 * objects themselves, for serialising only.
 */
export async function readList(s: RequestScope, opts: { paginate: boolean; raw?: boolean } = { paginate: true }): Promise<ListRead> {
  const q = s.query;
  const storage = s.server.storage;
  const sel = selectionFrom(s.r, q);
  const limitRaw = q.get('limit');
  const cont = opts.paginate ? q.get('continue') ?? '' : '';
  const rv = q.get('resourceVersion') ?? '';
  // Integers as ListOptions decodes them (400 with strconv's error); timeoutSeconds only matters to watches.
  const limitParam = limitRaw === null ? 0 : parseInt64(limitRaw);
  const timeoutSeconds = q.get('timeoutSeconds');
  if (timeoutSeconds !== null) parseInt64(timeoutSeconds);
  // As kube-apiserver's watch cache: a list at resourceVersion "0" is served whole, limit ignored (no continue token).
  // A negative limit is no limit, as the storage reads it (`pred.Limit > 0`).
  const limit = opts.paginate && limitParam > 0 && !(rv === '0' && !cont) ? limitParam : 0;
  const match = q.get('resourceVersionMatch') ?? '';
  if (match && match !== 'Exact' && match !== 'NotOlderThan') throw badRequest(`resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`);
  if (match && !rv) throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
  if (match && cont) throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided');
  if (match === 'Exact' && rv === '0') throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
  if (cont && rv && rv !== '0') throw badRequest('specifying resource version is not allowed when using continue');
  const prefix = storagePrefix(s.r, s.r.namespaced ? s.namespace : '');
  let revision: number | undefined;
  let startAfter: string | undefined;
  if (cont) {
    const tok = decodeContinue(cont);
    if (tok.rv !== -1 && tok.rv < storage.compactedRevision()) {
      const st = newStatus(410, 'Expired', continueExpiredMessage);
      st.metadata = { continue: Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: -1, start: tok.start }), 'utf8').toString('base64url') };
      throw new StatusError(st);
    }
    revision = tok.rv === -1 ? undefined : tok.rv;
    startAfter = startAfterKey(tok, prefix);
  } else if (rv && rv !== '0') {
    const n = parseResourceVersion(rv);
    if (match === 'Exact' || (!match && limit > 0)) revision = n;
    else if (n > storage.currentRevision()) {
      throw new StatusError(newStatus(504, 'Timeout', `Too large resource version: ${n}, current: ${storage.currentRevision()}`, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 }));
    }
  }
  let result;
  try {
    result = await storage.list(prefix, {
      limit: limit || undefined,
      startAfter,
      revision: revision !== undefined && revision !== storage.currentRevision() ? revision : undefined,
      filter: sel.everything ? undefined : (o) => sel.matches(o),
    });
  } catch (err) {
    if (err instanceof StorageError && err.code === 'Compacted') {
      if (cont) throw Object.assign(expired(continueExpiredMessage), { cause: err });
      throw Object.assign(expired('The resourceVersion for the provided list is too old.'), { cause: err });
    }
    throw err;
  }
  const stored = result.items.map((x) => x.object);
  const out: ListRead = { items: opts.raw ? stored : await presentStoredAll(s.r, stored, { list: true }), revision: result.revision, more: result.more };
  if (result.more && result.items.length > 0) {
    out.continue = encodeContinue(result.revision, result.items[result.items.length - 1]!.key, prefix);
    if (sel.everything && result.remaining !== undefined) out.remainingItemCount = result.remaining;
  }
  return out;
}

export async function handleList(s: RequestScope): Promise<void> {
  negotiateResponse(s);
  // Custom resources are converted (one batch for the page); built-in items are served from the stored objects.
  const converted = !!s.r.fromStorage;
  const page = await readList(s, { paginate: true, raw: !converted });
  const served = (o: KubeObject) => (converted ? o : present(s.r, o));
  const listMeta: Record<string, unknown> = { resourceVersion: String(page.revision) };
  if (page.continue) listMeta.continue = page.continue;
  if (page.remainingItemCount !== undefined) listMeta.remainingItemCount = page.remainingItemCount;
  switch (s.rendering) {
    case 'object': {
      // kube-apiserver's lists of built-in kinds carry no apiVersion and kind on their items (custom
      // resources, unstructured, keep theirs); clients take them from the list. Stored objects are
      // frozen and only serialised here, so a built-in item needs no copy beyond dropping those two.
      const items = page.items.map((o) => (s.r.customResource ? served(o) : withoutTypeMeta(s.r.decode ? present(s.r, o) : o)));
      return writeObject(s, 200, { kind: s.r.listKind, apiVersion: apiVersionOf(s.r.group, s.r.version), metadata: listMeta, items });
    }
    case 'metadata':
      return writeObject(s, 200, { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: listMeta, items: page.items.map(partialObjectMetadata) });
    case 'table':
      return writeObject(s, 200, toTable(s.r.group, s.r.resource, page.items.map(served), includeObjectParam(s.query), s.server.clock.now(), listMeta));
  }
}

function withoutTypeMeta(obj: KubeObject): KubeObject {
  const { apiVersion: _v, kind: _k, ...rest } = obj as KubeObject & { apiVersion?: string; kind?: string };
  return rest as KubeObject;
}
