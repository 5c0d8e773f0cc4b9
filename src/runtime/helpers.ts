/**
 * The common reconcile steps, made short (controller-runtime's
 * controllerutil): create-or-update of children, and finalizers that run
 * cleanup before an object goes.
 */
import { deepEqual } from '../api/equality.js';
import { isNotFound } from '../client/errors.js';
import type { RuntimeClient } from './client.js';
import type { RuntimeObject } from './kinds.js';
import { addFinalizer, hasFinalizer, isBeingDeleted, removeFinalizer } from './ownership.js';
import { createMergePatch, mergeFrom } from './patch.js';
import { deepCopy } from '../util/json/deep-copy.js';

/** What createOrUpdate / createOrPatch did: they complete "the object has been ...". */
export type OperationResult = 'created' | 'updated' | 'updatedStatus' | 'updatedStatusOnly' | 'unchanged';

export interface Operation<T> {
  result: OperationResult;
  /** The object as the server (or, when unchanged, the cache) has it now. */
  object: T;
}

function sameKey(a: RuntimeObject, b: RuntimeObject): boolean {
  return (a.metadata?.name ?? '') === (b.metadata?.name ?? '') && (a.metadata?.namespace ?? '') === (b.metadata?.namespace ?? '');
}

/** The object as it is now: from the cache when the kind is cached, else from the API server. */
async function current<T extends RuntimeObject>(client: RuntimeClient, obj: T): Promise<T | undefined> {
  const kind = await client.kindOf(obj);
  const name = obj.metadata?.name;
  if (!name) throw new TypeError('createOrUpdate: the object needs metadata.name');
  const key = { namespace: obj.metadata?.namespace, name };
  const existing = client.isCached(kind) ? await client.get(kind, key) : await client.live.get(kind, key);
  return existing as T | undefined;
}

async function mutated<T extends RuntimeObject>(obj: T, mutate: (obj: T) => void | Promise<void>): Promise<T> {
  const before = { namespace: obj.metadata?.namespace, name: obj.metadata?.name };
  await mutate(obj);
  if (!sameKey(obj, { metadata: before })) throw new Error('the mutate function cannot change the object name or namespace');
  return obj;
}

/**
 * Reads the object named by `obj` (from the cache, or from the API server
 * for a kind nobody caches), applies `mutate` to it
 * (or to `obj` when there is none) and creates or updates it; nothing is
 * written when `mutate` changed nothing. `mutate` sets the fields this
 * controller owns and must not change name or namespace.
 */
export async function createOrUpdate<T extends RuntimeObject>(client: RuntimeClient, obj: T, mutate: (obj: T) => void | Promise<void>): Promise<Operation<T>> {
  const existing = await current(client, obj);
  if (!existing) {
    const created = await client.create(await mutated(obj, mutate));
    return { result: 'created', object: created };
  }
  const before = deepCopy(existing);
  await mutated(existing, mutate);
  if (deepEqual(before, existing)) return { result: 'unchanged', object: existing };
  return { result: 'updated', object: await client.update(existing) };
}

/**
 * As createOrUpdate, but writes merge patches: one for the object and,
 * when `mutate` changed the status, one through the status subresource
 * (result `updatedStatus`, or `updatedStatusOnly` when only the status changed).
 */
export async function createOrPatch<T extends RuntimeObject>(client: RuntimeClient, obj: T, mutate: (obj: T) => void | Promise<void>): Promise<Operation<T>> {
  const existing = await current(client, obj);
  if (!existing) {
    const created = await client.create(await mutated(obj, mutate));
    return { result: 'created', object: created };
  }
  const before = deepCopy(existing) as T & { status?: unknown };
  await mutated(existing, mutate);
  const after = existing as T & { status?: unknown };
  const { status: beforeStatus, ...beforeRest } = before;
  const { status: afterStatus, ...afterRest } = after;
  let result: OperationResult = 'unchanged';
  let object: T = existing;
  if (Object.keys(createMergePatch(beforeRest, afterRest)).length > 0) {
    // The object patch leaves the status alone: a status change goes through the status subresource below.
    object = await client.patch({ ...after, status: beforeStatus } as T, mergeFrom(before));
    result = 'updated';
  }
  if (!deepEqual(beforeStatus, afterStatus)) {
    const withStatus = { ...object, status: afterStatus } as T;
    object = await client.patchStatus(withStatus, mergeFrom({ ...object, status: beforeStatus } as T));
    result = result === 'updated' ? 'updatedStatus' : 'updatedStatusOnly';
  }
  return { result, object };
}

/** What ensureFinalizer found. */
export type FinalizerState =
  /** Not being deleted; the finalizer is in place (added now or before). Go on reconciling. */
  | 'present'
  /** Being deleted: cleanup ran and the finalizer was removed (the object may now be gone). Stop. */
  | 'finalized'
  /** Being deleted without our finalizer (another's cleanup is pending). Stop. */
  | 'deleting';

/**
 * The finalizer pattern in one call. While `obj` lives, makes sure it
 * carries `finalizer`. Once it is being deleted, runs `cleanup` and removes
 * the finalizer only after cleanup succeeded: a cleanup that throws leaves
 * the finalizer in place and the error propagates, so the reconcile is
 * retried with backoff.
 *
 *   if ((await ensureFinalizer(ctx.client, site, 'sites.example.com/dns', () => removeDnsRecord(site))) !== 'present') return;
 */
export async function ensureFinalizer<T extends RuntimeObject>(
  client: RuntimeClient,
  obj: T,
  finalizer: string,
  cleanup: (obj: T) => void | Promise<void>,
): Promise<FinalizerState> {
  if (!isBeingDeleted(obj)) {
    if (!hasFinalizer(obj, finalizer)) {
      const copy = deepCopy(obj);
      addFinalizer(copy, finalizer);
      const updated = await client.update(copy);
      if (obj.metadata && updated.metadata) obj.metadata = updated.metadata;
    }
    return 'present';
  }
  if (!hasFinalizer(obj, finalizer)) return 'deleting';
  await cleanup(obj);
  const copy = deepCopy(obj);
  removeFinalizer(copy, finalizer);
  try {
    await client.update(copy);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  return 'finalized';
}
