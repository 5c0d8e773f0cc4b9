/**
 * The manager's client (controller-runtime's client.Client): reads from the
 * cache, writes to the API server.
 *
 * - `get` and `list` read the manager's cache and return copies; a kind
 *   nobody caches is an UncachedKindError. `client.live` reads the API
 *   server instead (and supports field selectors on any field the server does).
 * - Writes take the object itself (with apiVersion and kind, as objects read
 *   through this client always have), find its resource from the kind, and
 *   return the server's answer. Each write made during a reconcile is
 *   recorded, so the next reconcile of that key waits until the cache has it.
 * - `apply` and `applyStatus` are server-side apply with a field manager
 *   (default: the manager's name); `force` takes over conflicting fields.
 */
import type { KubeObject, Status } from '../api/types.js';
import { parseSelector } from '../api/labels.js';
import type { Client, ResourceInterface } from '../client/interfaces.js';
import { isNotFound } from '../client/errors.js';
import type { RestMapper } from '../client/rest-mapper.js';
import type { CacheListOptions, ObjectKey, RuntimeCache } from './cache.js';
import { builtinKind, defineKind, gvrOf, type ResourceKind, type RuntimeObject } from './kinds.js';
import { createMergePatch, type Patch } from './patch.js';
import { recordWrite } from './read-your-writes.js';

export interface WriteOptions {
  /** Validate and default on the server without persisting. */
  dryRun?: boolean;
  /** Default: the client's field manager. */
  fieldManager?: string;
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

export interface ApplyOptions {
  /** Default: the client's field manager. */
  fieldManager?: string;
  /** Take ownership of fields another manager set (conflicts are errors otherwise). */
  force?: boolean;
  dryRun?: boolean;
}

export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  /** Delete only if the object still has this uid / resourceVersion. */
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface LiveListOptions {
  namespace?: string;
  labelSelector?: string | Record<string, string>;
  fieldSelector?: string;
}

/** Reads from the cache. */
export interface Reader {
  /** A copy of the object, or undefined when there is none. */
  get<T extends RuntimeObject>(kind: ResourceKind<T>, key: ObjectKey): Promise<T | undefined>;
  list<T extends RuntimeObject>(kind: ResourceKind<T>, opts?: CacheListOptions): Promise<T[]>;
}

/** Reads from the API server, bypassing the cache. */
export interface LiveReader {
  get<T extends RuntimeObject>(kind: ResourceKind<T>, key: ObjectKey): Promise<T | undefined>;
  list<T extends RuntimeObject>(kind: ResourceKind<T>, opts?: LiveListOptions): Promise<T[]>;
}

export interface RuntimeClient extends Reader {
  readonly live: LiveReader;
  /** The field manager of writes without their own. */
  readonly fieldManager: string;
  create<T extends RuntimeObject>(obj: T, opts?: WriteOptions): Promise<T>;
  /**
   * A full update; fails with 409 Conflict when `obj` is not the latest
   * version. For kinds with a status subresource the server ignores
   * `status` here: write it with updateStatus.
   */
  update<T extends RuntimeObject>(obj: T, opts?: WriteOptions): Promise<T>;
  /** Writes `obj.status` through the status subresource. */
  updateStatus<T extends RuntimeObject>(obj: T, opts?: WriteOptions): Promise<T>;
  patch<T extends RuntimeObject>(obj: T, patch: Patch, opts?: WriteOptions): Promise<T>;
  patchStatus<T extends RuntimeObject>(obj: T, patch: Patch, opts?: WriteOptions): Promise<T>;
  /** Server-side apply of `obj` (a partial object with the fields this manager owns). */
  apply<T extends RuntimeObject>(obj: T, opts?: ApplyOptions): Promise<T>;
  /** Server-side apply of `obj.status` through the status subresource. */
  applyStatus<T extends RuntimeObject>(obj: T, opts?: ApplyOptions): Promise<T>;
  /** Deletes the object; a StatusError NotFound when it is already gone (see ignoreNotFound). */
  delete<T extends RuntimeObject>(obj: T, opts?: DeleteOptions): Promise<void>;
  /** The kind of an object from its apiVersion and kind. */
  kindOf(obj: RuntimeObject): Promise<ResourceKind>;
  /** Whether reads of `kind` are served from the cache (else get/list throw UncachedKindError; use live). */
  isCached(kind: ResourceKind): boolean;
}

export interface RuntimeClientOptions {
  client: Client;
  cache: RuntimeCache;
  fieldManager: string;
  /** Finds kinds that are neither built in nor registered (custom resources), through discovery. */
  restMapper?: RestMapper;
  /** Kinds known up front (the ones controllers and the cache use). */
  kinds?: () => Iterable<ResourceKind>;
}

/** Use as `.catch(ignoreNotFound)`: swallows a 404, rethrows anything else. */
export function ignoreNotFound(err: unknown): undefined {
  if (isNotFound(err)) return undefined;
  throw err;
}

function keyOf(obj: RuntimeObject, what: string): { namespace: string; name: string } {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError(`${what}: the object has no metadata.name`);
  return { namespace: obj.metadata?.namespace ?? '', name };
}

class ClientImpl implements RuntimeClient {
  readonly live: LiveReader;
  readonly fieldManager: string;

  constructor(private readonly opts: RuntimeClientOptions) {
    this.fieldManager = opts.fieldManager;
    this.live = {
      get: (kind, key) => this.liveGet(kind, key),
      list: (kind, o) => this.liveList(kind, o),
    };
  }

  get<T extends RuntimeObject>(kind: ResourceKind<T>, key: ObjectKey): Promise<T | undefined> {
    return this.opts.cache.get(kind, key);
  }

  isCached(kind: ResourceKind): boolean {
    return this.opts.cache.has(kind);
  }

  list<T extends RuntimeObject>(kind: ResourceKind<T>, opts?: CacheListOptions): Promise<T[]> {
    return this.opts.cache.list(kind, opts);
  }

  async kindOf(obj: RuntimeObject): Promise<ResourceKind> {
    const { apiVersion, kind } = obj;
    if (!apiVersion || !kind) throw new TypeError('the object has no apiVersion and kind: set them, so the client can find its resource');
    for (const k of this.opts.kinds?.() ?? []) if (k.apiVersion === apiVersion && k.kind === kind) return k;
    const b = builtinKind(apiVersion, kind);
    if (b) return b;
    if (this.opts.restMapper) {
      const slash = apiVersion.indexOf('/');
      const group = slash < 0 ? '' : apiVersion.slice(0, slash);
      const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
      const m = await this.opts.restMapper.restMapping(group, kind, version);
      return defineKind({ group, version, kind, plural: m.gvr.resource, namespaced: m.namespaced });
    }
    throw new Error(`unknown kind ${kind} (${apiVersion}): pass its ResourceKind to the manager (cache.kinds) or a controller`);
  }

  async create<T extends RuntimeObject>(obj: T, opts: WriteOptions = {}): Promise<T> {
    const kind = await this.kindOf(obj);
    const ns = obj.metadata?.namespace ?? '';
    const out = await this.resource(kind, ns).create(obj as unknown as KubeObject, this.writeOpts(opts));
    return this.written(kind, out);
  }

  async update<T extends RuntimeObject>(obj: T, opts: WriteOptions = {}): Promise<T> {
    const kind = await this.kindOf(obj);
    const { namespace } = keyOf(obj, 'update');
    const out = await this.resource(kind, namespace).update(obj as unknown as KubeObject, this.writeOpts(opts));
    return this.written(kind, out);
  }

  async updateStatus<T extends RuntimeObject>(obj: T, opts: WriteOptions = {}): Promise<T> {
    const kind = await this.kindOf(obj);
    const { namespace } = keyOf(obj, 'updateStatus');
    const out = await this.resource(kind, namespace).updateStatus(obj as unknown as KubeObject, this.writeOpts(opts));
    return this.written(kind, out);
  }

  patch<T extends RuntimeObject>(obj: T, patch: Patch, opts: WriteOptions = {}): Promise<T> {
    return this.doPatch(obj, patch, opts, undefined);
  }

  patchStatus<T extends RuntimeObject>(obj: T, patch: Patch, opts: WriteOptions = {}): Promise<T> {
    return this.doPatch(obj, patch, opts, 'status');
  }

  apply<T extends RuntimeObject>(obj: T, opts: ApplyOptions = {}): Promise<T> {
    return this.doApply(obj, opts, undefined);
  }

  applyStatus<T extends RuntimeObject>(obj: T, opts: ApplyOptions = {}): Promise<T> {
    return this.doApply(obj, opts, 'status');
  }

  async delete<T extends RuntimeObject>(obj: T, opts: DeleteOptions = {}): Promise<void> {
    const kind = await this.kindOf(obj);
    const { namespace, name } = keyOf(obj, 'delete');
    const out = await this.resource(kind, namespace).delete(name, { ...opts, dryRun: opts.dryRun ? 'All' : undefined });
    if (opts.dryRun) return;
    const lingering = (out as Status).kind === 'Status' ? undefined : (out as KubeObject);
    recordWrite({
      kind,
      namespace,
      name,
      uid: obj.metadata?.uid,
      resourceVersion: lingering?.metadata?.resourceVersion ?? obj.metadata?.resourceVersion ?? '',
      labels: obj.metadata?.labels,
      deleted: true,
    });
  }

  private async doPatch<T extends RuntimeObject>(obj: T, patch: Patch, opts: WriteOptions, subresource: 'status' | undefined): Promise<T> {
    const kind = await this.kindOf(obj);
    const { namespace, name } = keyOf(obj, 'patch');
    let type: 'json' | 'merge' | 'strategic';
    let data: unknown;
    if (patch.type === 'mergeFrom') {
      type = 'merge';
      const body = createMergePatch(patch.original, obj);
      if (patch.optimisticLock) {
        const rv = patch.original.metadata?.resourceVersion;
        if (!rv) throw new TypeError('mergeFrom with optimisticLock: the original has no resourceVersion');
        const meta = (body.metadata ?? {}) as Record<string, unknown>;
        body.metadata = { ...meta, resourceVersion: rv } as never;
      }
      data = body;
    } else {
      type = patch.type;
      data = patch.data;
    }
    const out = await this.resource(kind, namespace).patch(name, type, data, { ...this.writeOpts(opts), subresource });
    return this.written(kind, out);
  }

  private async doApply<T extends RuntimeObject>(obj: T, opts: ApplyOptions, subresource: 'status' | undefined): Promise<T> {
    const kind = await this.kindOf(obj);
    const { namespace, name } = keyOf(obj, 'apply');
    const body = { ...obj } as Record<string, unknown>;
    if (body.metadata && (body.metadata as { managedFields?: unknown }).managedFields !== undefined) {
      const { managedFields: _drop, ...rest } = body.metadata as Record<string, unknown>;
      body.metadata = rest;
    }
    const out = await this.resource(kind, namespace).patch(name, 'apply', body, {
      fieldManager: opts.fieldManager ?? this.fieldManager,
      force: opts.force,
      dryRun: opts.dryRun ? 'All' : undefined,
      subresource,
    });
    return this.written(kind, out);
  }

  private writeOpts(opts: WriteOptions): { fieldManager: string; dryRun?: 'All'; fieldValidation?: 'Strict' | 'Warn' | 'Ignore' } {
    const out: { fieldManager: string; dryRun?: 'All'; fieldValidation?: 'Strict' | 'Warn' | 'Ignore' } = { fieldManager: opts.fieldManager ?? this.fieldManager };
    if (opts.dryRun) out.dryRun = 'All';
    if (opts.fieldValidation) out.fieldValidation = opts.fieldValidation;
    return out;
  }

  private resource(kind: ResourceKind, namespace: string): ResourceInterface<KubeObject> {
    const gvr = gvrOf(kind);
    const ri = kind.metadataOnly ? this.opts.client.metadata(gvr) : this.opts.client.resource<KubeObject>(gvr);
    if (!kind.namespaced) return ri;
    if (!namespace) throw new TypeError(`${kind.kind} is namespaced: set metadata.namespace`);
    return ri.namespace(namespace);
  }

  /** Records a write for read-your-own-writes and returns the server's object with apiVersion and kind. */
  private written<T>(kind: ResourceKind, out: KubeObject): T {
    const meta = out.metadata;
    if (meta?.name && meta.resourceVersion) {
      recordWrite({ kind, namespace: meta.namespace ?? '', name: meta.name, uid: meta.uid, resourceVersion: meta.resourceVersion, labels: meta.labels, deleted: false });
    }
    if (!out.apiVersion || !out.kind) return { ...out, apiVersion: kind.apiVersion, kind: kind.kind } as unknown as T;
    return out as unknown as T;
  }

  private async liveGet<T extends RuntimeObject>(kind: ResourceKind<T>, key: ObjectKey): Promise<T | undefined> {
    try {
      const out = await this.resource(kind, key.namespace ?? '').get(key.name);
      return (out.apiVersion && out.kind ? out : { ...out, apiVersion: kind.apiVersion, kind: kind.kind }) as unknown as T;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async liveList<T extends RuntimeObject>(kind: ResourceKind<T>, opts: LiveListOptions = {}): Promise<T[]> {
    const gvr = gvrOf(kind);
    let ri = kind.metadataOnly ? this.opts.client.metadata(gvr) : this.opts.client.resource<KubeObject>(gvr);
    if (kind.namespaced && opts.namespace) ri = ri.namespace(opts.namespace);
    const labelSelector =
      opts.labelSelector === undefined
        ? undefined
        : typeof opts.labelSelector === 'string'
          ? parseSelector(opts.labelSelector).toString()
          : Object.entries(opts.labelSelector)
              .map(([k, v]) => `${k}=${v}`)
              .join(',');
    const list = await ri.listAll({ labelSelector, fieldSelector: opts.fieldSelector });
    return list.items.map((o) => ({ ...o, apiVersion: kind.apiVersion, kind: kind.kind }) as unknown as T);
  }
}

export function newRuntimeClient(opts: RuntimeClientOptions): RuntimeClient {
  return new ClientImpl(opts);
}
