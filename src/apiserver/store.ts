/**
 * The generic registry store: create, get, update and guaranteed update of one
 * resource over `Storage`, with upstream's rest.BeforeCreate/BeforeUpdate
 * semantics (uid, creationTimestamp, generateName, generation via strategy,
 * validation, admission, no-op updates that do not write). Deletion lives in
 * deletion.ts; lists and watches in handlers/.
 */
import { randomUUID } from 'node:crypto';
import type { KubeObject, ObjectMeta } from '../api/types.js';
import { apiVersionOf } from '../api/types.js';
import { generateName as defaultGenerateName } from '../api/names.js';
import type { Clock } from '../util/clock/clock.js';
import { rfc3339 } from '../util/clock/clock.js';
import type { Logger } from '../util/log/logger.js';
import { StorageError, type Storage, type StoredObject } from './storage/storage.js';
import { rememberView, storedText } from './storage/stored-object.js';
import type { ServedResource, ResourceTable } from './resources.js';
import type { AdmissionChain, AdmissionRequestInfo, Operation } from './admission/admission.js';
import type { UserInfo } from './request-info.js';
import { alreadyExists, conflictModified, invalid, notFound, type FieldErrorLike } from './status.js';
import { normalizeAsGo } from './go-json.js';
import { jsonEqual } from '../util/json/equal.js';
import { deepCopy } from '../util/json/deep-copy.js';

/** Per-resource side effects of writes (service IP allocation, ...). */
export interface WriteHooks {
  /** Before a create is stored; may mutate obj; may throw a StatusError. */
  beforeCreate?(obj: KubeObject, dryRun: boolean): Promise<void> | void;
  /** After a create failed to store: undo what beforeCreate reserved. */
  createFailed?(obj: KubeObject): void;
  beforeUpdate?(obj: KubeObject, old: KubeObject, dryRun: boolean): Promise<void> | void;
  /** After the object left storage. */
  afterDelete?(obj: KubeObject): void;
}

export interface WriteOptions {
  dryRun: boolean;
  user: UserInfo;
  subresource?: string;
  /** 'none': the update function already produced the final object; skip the strategy's prepare step. */
  prepare?: 'none';
  /** The request's options and warning sink, for admission webhooks. */
  admission?: AdmissionRequestInfo;
  /** create: the input is the caller's to give away (decoded for this request): the store changes it instead of a copy. */
  owned?: boolean;
}

export interface StoreDeps {
  storage: Storage;
  clock: Clock;
  logger: Logger;
  resources: ResourceTable;
  admission: AdmissionChain;
  hooks: Map<string, WriteHooks>;
  generateName?: (base: string) => string;
}

/** A mutation applied to a fresh copy of the current object inside a guaranteed update. */
export type UpdateFn = (current: KubeObject) => KubeObject | Promise<KubeObject>;

type StorageLocation = Pick<ServedResource, 'group' | 'resource' | 'storedAs'>;

export function storageKey(r: StorageLocation, namespace: string, name: string): string {
  return `${storagePrefix(r, namespace)}${name}`;
}

/** The list prefix: all namespaces when `namespace` is '' for a namespaced resource. */
export function storagePrefix(r: StorageLocation, namespace: string): string {
  const { group, resource } = r.storedAs ?? r;
  const base = group ? `/registry/${group}/${resource}/` : `/registry/${resource}/`;
  return namespace ? `${base}${namespace}/` : base;
}

/** ObjectMeta without kubernetes-types' readonly markers: the server owns these fields. */
export type MutableMeta = { -readonly [K in keyof ObjectMeta]: ObjectMeta[K] };

/** The object's metadata (created when missing), writable. */
export function meta(obj: KubeObject): MutableMeta {
  if (!obj.metadata || typeof obj.metadata !== 'object') obj.metadata = {};
  return obj.metadata as MutableMeta;
}

/** The object as served at `r`'s group/version (decoded as read from storage: r.decode). Returns a copy. */
export function present(r: ServedResource, obj: KubeObject): KubeObject {
  const out = deepCopy(obj);
  r.decode?.(out);
  out.apiVersion = apiVersionOf(r.group, r.version);
  out.kind = r.kind;
  return out;
}

/**
 * A stored object served at `r`'s version, read-only: when the version needs
 * no conversion, a shallow copy sharing the stored object's frozen fields
 * (saving a deep copy of the object), else presentStored's fresh copy.
 */
export async function readView(r: ServedResource, obj: KubeObject): Promise<KubeObject> {
  if (r.fromStorage || r.decode) return presentStored(r, obj);
  const view = { ...obj, apiVersion: apiVersionOf(r.group, r.version), kind: r.kind };
  // A response of this very view can be the stored text of a write of the latest batch (output.ts writeJson, through
  // jsonTextOf); other reads (gets) remember nothing.
  if (storedText(obj) !== undefined) rememberView(view, obj);
  return view;
}

/**
 * Stored objects served at `r`'s group/version: present() each, or, for a
 * custom resource, its CRD's conversion (r.fromStorage: one conversion for
 * all, which may call the conversion webhook and reject with its error).
 * `list`: the objects are a list's items. Returns fresh copies.
 */
export async function presentStoredAll(r: ServedResource, objs: readonly KubeObject[], opts: { list?: boolean } = {}): Promise<KubeObject[]> {
  if (r.fromStorage) return r.fromStorage(objs, opts);
  return objs.map((o) => present(r, o));
}

/** One stored object served at `r`'s version (presentStoredAll). */
export async function presentStored(r: ServedResource, obj: KubeObject): Promise<KubeObject> {
  return (await presentStoredAll(r, [obj]))[0]!;
}

/**
 * `obj` (served at r's version, final) in the shape storage keeps: a
 * built-in kind through r.encode, in place; a custom resource converted to
 * its CRD's storage version (r.toStorage, a new object).
 */
export async function toStored(r: ServedResource, obj: KubeObject): Promise<KubeObject> {
  r.encode?.(obj);
  return r.toStorage ? r.toStorage(obj) : obj;
}

/** JSON with sorted keys, for no-op detection. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}

function withoutRv(obj: KubeObject): KubeObject {
  const c = { ...obj, metadata: { ...(obj.metadata ?? {}) } };
  delete c.metadata.resourceVersion;
  return c;
}

export class Store {
  constructor(readonly deps: StoreDeps) {}

  key(r: ServedResource, ns: string, name: string): string {
    return storageKey(r, r.namespaced ? ns : '', name);
  }

  async getStored(r: ServedResource, ns: string, name: string): Promise<StoredObject | undefined> {
    return this.deps.storage.get(this.key(r, ns, name));
  }

  /** 404 NotFound when absent. The result is a fresh copy served at r's version. */
  async get(r: ServedResource, ns: string, name: string): Promise<KubeObject> {
    const s = await this.getStored(r, ns, name);
    if (!s) throw notFound(r, name);
    return presentStored(r, s.object);
  }

  /**
   * As get, for a response written at once: when r's version needs no
   * conversion, a shallow copy that shares the stored object's fields (the
   * caller must not change it), which saves a deep copy per GET.
   */
  async getForRead(r: ServedResource, ns: string, name: string): Promise<KubeObject> {
    const s = await this.getStored(r, ns, name);
    if (!s) throw notFound(r, name);
    return readView(r, s.object);
  }

  private async admit(op: Operation, r: ServedResource, ns: string, name: string, obj: KubeObject | undefined, old: KubeObject | undefined, opts: WriteOptions): Promise<void> {
    const attrs = { operation: op, resource: r, subresource: opts.subresource ?? '', namespace: ns, name, object: obj, oldObject: old, user: opts.user, dryRun: opts.dryRun, request: opts.admission };
    await this.deps.admission.admit(attrs);
  }

  private async validateAdmission(op: Operation, r: ServedResource, ns: string, name: string, obj: KubeObject | undefined, old: KubeObject | undefined, opts: WriteOptions): Promise<void> {
    const attrs = { operation: op, resource: r, subresource: opts.subresource ?? '', namespace: ns, name, object: obj, oldObject: old, user: opts.user, dryRun: opts.dryRun, request: opts.admission };
    await this.deps.admission.validate(attrs);
  }

  /**
   * Creates `input` (already checked against the URL). Returns the stored
   * object served at r's version, read-only (readView). dryRun runs
   * everything but the write.
   */
  async create(r: ServedResource, ns: string, input: KubeObject, opts: WriteOptions): Promise<KubeObject> {
    const obj = opts.owned ? input : deepCopy(input);
    const m = meta(obj);
    obj.apiVersion = apiVersionOf(r.group, r.version);
    obj.kind = r.kind;
    if (r.namespaced) m.namespace = ns;
    else delete m.namespace;
    r.strategy.defaults(obj);
    await this.admit('CREATE', r, ns, m.name ?? '', obj, undefined, opts);
    // rest.BeforeCreate
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.resourceVersion;
    delete (m as Record<string, unknown>).selfLink;
    // FillObjectMetaSystemFields comes before PrepareForCreate upstream (a Job's selector uses the uid).
    m.uid = randomUUID();
    m.creationTimestamp = rfc3339(this.deps.clock.now());
    r.strategy.prepareForCreate(obj);
    const generated = !m.name && !!m.generateName;
    if (generated) m.name = this.newName(m.generateName!);
    const errs: FieldErrorLike[] = [];
    if (!m.name) errs.push({ type: 'FieldValueRequired', field: 'metadata.name', message: 'metadata.name: Required value: name or generateName is required' });
    else errs.push(...r.strategy.validate(obj));
    if (errs.length) throw invalid(r.group, r.kind, m.name ?? '', errs);
    await this.validateAdmission('CREATE', r, ns, m.name!, obj, undefined, opts);
    const hooks = this.deps.hooks.get(`${r.group}/${r.resource}`);
    await hooks?.beforeCreate?.(obj, opts.dryRun);
    normalizeAsGo(obj);
    try {
      const toStore = await toStored(r, obj);
      if (opts.dryRun) {
        if (await this.getStored(r, ns, m.name!)) throw alreadyExists(r, m.name!);
        // Upstream's dry run encodes and decodes too (a custom resource goes there and back).
        return presentStored(r, toStore);
      }
      // Generated names retry on collision, as upstream's RetryGenerateName.
      for (let attempt = 0; ; attempt++) {
        try {
          const stored = await this.deps.storage.create(this.key(r, ns, meta(toStore).name!), toStore);
          return readView(r, stored.object);
        } catch (err) {
          if (err instanceof StorageError && err.code === 'KeyExists') {
            if (generated && attempt < 7) {
              m.name = this.newName(m.generateName!);
              meta(toStore).name = m.name;
              continue;
            }
            throw alreadyExists(r, m.name!);
          }
          throw err;
        }
      }
    } catch (err) {
      hooks?.createFailed?.(obj);
      throw err;
    }
  }

  private newName(base: string): string {
    return (this.deps.generateName ?? defaultGenerateName)(base);
  }

  /**
   * PUT semantics: `input` replaces the object (resourceVersion, when set, is
   * a precondition; empty means unconditional). Missing objects are created
   * when the resource allows create-on-update, else 404.
   * `subresource` 'status' applies the strategy's status split.
   */
  async update(r: ServedResource, ns: string, name: string, input: KubeObject, opts: WriteOptions): Promise<{ object: KubeObject; created: boolean }> {
    const wantRv = input.metadata?.resourceVersion;
    for (let attempt = 0; ; attempt++) {
      const cur = await this.getStored(r, ns, name);
      if (!cur) {
        if (r.allowCreateOnUpdate && !opts.subresource) {
          if (wantRv) throw notFound(r, name);
          return { object: await this.create(r, ns, input, opts), created: true };
        }
        throw notFound(r, name);
      }
      if (wantRv && wantRv !== cur.object.metadata?.resourceVersion) throw conflictModified(r, name);
      try {
        const object = await this.commitUpdate(r, ns, name, cur, deepCopy(input), opts);
        return { object, created: false };
      } catch (err) {
        // Someone wrote between our read and write: retry unconditional updates.
        if (err instanceof StorageError && err.code === 'Conflict' && !wantRv && attempt < 5) continue;
        if (err instanceof StorageError && err.code === 'Conflict') throw conflictModified(r, name);
        if (err instanceof StorageError && err.code === 'NotFound') throw notFound(r, name);
        throw err;
      }
    }
  }

  /**
   * Read-modify-write with retries on concurrent writes (GuaranteedUpdate):
   * `fn` gets the current object read-only (readView: it may share the
   * stored object's frozen fields) and returns the new one, a fresh object
   * all through (the update changes it in place: defaults, normalization).
   * Used by patch, scale, binding, finalize and internal updates. The result
   * is read-only too.
   */
  async guaranteedUpdate(r: ServedResource, ns: string, name: string, fn: UpdateFn, opts: WriteOptions): Promise<KubeObject> {
    for (let attempt = 0; ; attempt++) {
      const cur = await this.getStored(r, ns, name);
      if (!cur) throw notFound(r, name);
      const next = await fn(await readView(r, cur.object));
      const wantRv = next.metadata?.resourceVersion;
      if (wantRv && wantRv !== cur.object.metadata?.resourceVersion) throw conflictModified(r, name);
      try {
        return await this.commitUpdate(r, ns, name, cur, next, opts);
      } catch (err) {
        if (err instanceof StorageError && err.code === 'Conflict' && attempt < 5) continue;
        if (err instanceof StorageError && err.code === 'Conflict') throw conflictModified(r, name);
        if (err instanceof StorageError && err.code === 'NotFound') throw notFound(r, name);
        throw err;
      }
    }
  }

  /** rest.BeforeUpdate + admission + write (or delete when the last finalizer went). */
  private async commitUpdate(r: ServedResource, ns: string, name: string, cur: StoredObject, obj: KubeObject, opts: WriteOptions): Promise<KubeObject> {
    const old = await presentStored(r, cur.object);
    const m = meta(obj);
    const om = meta(old);
    obj.apiVersion = old.apiVersion;
    obj.kind = old.kind;
    if (r.namespaced) m.namespace = ns;
    else delete m.namespace;
    m.name = om.name;
    r.strategy.defaults(obj);
    await this.admit('UPDATE', r, ns, name, obj, old, opts);
    m.generation = om.generation;
    const subPrepare = opts.subresource ? r.strategy.subresourcePrepare?.[opts.subresource] : undefined;
    if (opts.prepare === 'none') {
      // caller decided every field
    } else if (subPrepare) {
      subPrepare(obj, old, rfc3339(this.deps.clock.now()));
    } else if (opts.subresource === 'status') {
      if (r.strategy.prepareForStatusUpdate) r.strategy.prepareForStatusUpdate(obj, old, rfc3339(this.deps.clock.now()));
      else {
        const status = obj.status;
        const kept = deepCopy(old);
        if (status !== undefined) kept.status = status;
        else delete kept.status;
        Object.keys(obj).forEach((k) => delete obj[k]);
        Object.assign(obj, kept);
      }
    } else {
      r.strategy.prepareForUpdate(obj, old);
    }
    const mm = meta(obj);
    if (!mm.uid) mm.uid = om.uid;
    mm.creationTimestamp = om.creationTimestamp;
    if (om.deletionTimestamp) mm.deletionTimestamp = om.deletionTimestamp;
    else delete mm.deletionTimestamp;
    if (om.deletionGracePeriodSeconds !== undefined) mm.deletionGracePeriodSeconds = om.deletionGracePeriodSeconds;
    else delete mm.deletionGracePeriodSeconds;
    const errs: FieldErrorLike[] = [...metadataUpdateErrors(obj, old), ...r.strategy.validateUpdate(obj, old)];
    if (errs.length) throw invalid(r.group, r.kind, name, errs);
    await this.validateAdmission('UPDATE', r, ns, name, obj, old, opts);
    await this.deps.hooks.get(`${r.group}/${r.resource}`)?.beforeUpdate?.(obj, old, opts.dryRun);
    normalizeAsGo(obj);
    mm.resourceVersion = om.resourceVersion;
    // A deleting object whose last finalizer is gone (and no grace pending) is deleted.
    if (shouldDeleteDuringUpdate(obj, old)) {
      const last = await presentStored(r, await toStored(r, obj));
      if (opts.dryRun) return last;
      const gone = await this.deps.storage.delete(this.key(r, ns, name), { revision: cur.revision });
      this.deps.hooks.get(`${r.group}/${r.resource}`)?.afterDelete?.(gone.object);
      meta(last).resourceVersion = gone.object.metadata?.resourceVersion ?? om.resourceVersion;
      return last;
    }
    if (jsonEqual(withoutRv(obj), withoutRv(old))) return old;
    const toStore = await toStored(r, obj);
    if (opts.dryRun) return presentStored(r, toStore);
    delete meta(toStore).resourceVersion;
    const stored = await this.deps.storage.update(this.key(r, ns, name), toStore, { revision: cur.revision });
    return readView(r, stored.object);
  }

  /** Writes `obj` as the new state of an existing object, bypassing strategies (deletion bookkeeping). Returns it as stored, a fresh copy. */
  async rawUpdate(r: ServedResource, ns: string, name: string, obj: KubeObject, revision: number): Promise<KubeObject> {
    return presentStored(r, await this.rawStore(r, ns, name, obj, revision));
  }

  /** rawUpdate for a caller that does not need the result: returns the stored object itself (frozen). `obj` is not changed. */
  async rawStore(r: ServedResource, ns: string, name: string, obj: KubeObject, revision: number): Promise<KubeObject> {
    const c = deepCopy(obj);
    normalizeAsGo(c);
    const toStore = await toStored(r, c);
    delete meta(toStore).resourceVersion;
    return (await this.deps.storage.update(this.key(r, ns, name), toStore, { revision })).object;
  }
}

/** apimachinery ValidateObjectMetaUpdate, the parts the handlers own. */
function metadataUpdateErrors(obj: KubeObject, old: KubeObject): FieldErrorLike[] {
  const errs: FieldErrorLike[] = [];
  const m = obj.metadata!;
  const om = meta(old);
  if (om.deletionTimestamp) {
    const before = new Set(om.finalizers ?? []);
    const added = (m.finalizers ?? []).filter((f) => !before.has(f));
    if (added.length) {
      errs.push({
        type: 'FieldValueForbidden',
        field: 'metadata.finalizers',
        message: `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
      });
    }
  }
  return errs;
}

/**
 * store.go ShouldDeleteDuringUpdate; a namespace also keeps while its
 * spec.finalizers remain (namespace storage's ShouldDeleteNamespaceDuringUpdate),
 * so a status update of a terminating namespace never removes it.
 */
export function shouldDeleteDuringUpdate(obj: KubeObject, old: KubeObject): boolean {
  if ((obj.metadata?.finalizers ?? []).length > 0) return false;
  if (obj.kind === 'Namespace' && ((obj.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []).length > 0) return false;
  if (!old.metadata?.deletionTimestamp) return false;
  const g = old.metadata.deletionGracePeriodSeconds;
  return g === undefined || g === null || g === 0;
}
