/**
 * ResourceInterface over REST (client-go's dynamic client, and its metadata
 * client when `metadataOnly`). Objects are plain JSON.
 */
import type { GroupVersionResource, KubeList, KubeObject, PartialObjectMetadata, Status } from '../api/types.js';
import type { Clock } from '../util/clock/clock.js';
import { isGone } from './errors.js';
import type {
  CreateOptions,
  DeleteOptions,
  GetOptions,
  ListOptions,
  PatchOptions,
  PatchType,
  ResourceInterface,
  UpdateOptions,
  Watch,
  WatchOptions,
} from './interfaces.js';
import type { QueryValue, RestClient } from './rest-client.js';
import { newStreamWatch } from './watch.js';

/** client-go's pager default page size, used by listAll when no limit is given. */
export const DEFAULT_PAGE_SIZE = 500;

export const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export const ACCEPT_PARTIAL_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
export const ACCEPT_PARTIAL_METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/** `/api/v1` or `/apis/{group}/{version}`. */
export function groupVersionPath(group: string, version: string): string {
  return group ? `/apis/${group}/${version}` : `/api/${version}`;
}

/** The path of a resource collection, object or subresource. Segments are URL-escaped. */
export function resourcePath(gvr: GroupVersionResource, namespace?: string, name?: string, subresource?: string): string {
  let p = groupVersionPath(gvr.group, gvr.version);
  if (namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${gvr.resource}`;
  if (name !== undefined) {
    if (!name) throw new Error(`resource name may not be empty (${gvr.resource})`);
    p += `/${encodeURIComponent(name)}`;
    if (subresource) p += `/${subresource}`;
  }
  return p;
}

function writeQuery(opts: CreateOptions | undefined): Record<string, QueryValue> {
  return { dryRun: opts?.dryRun, fieldManager: opts?.fieldManager, fieldValidation: opts?.fieldValidation };
}

function listQuery(opts: ListOptions | undefined): Record<string, QueryValue> {
  return {
    labelSelector: opts?.labelSelector,
    fieldSelector: opts?.fieldSelector,
    limit: opts?.limit,
    continue: opts?.continue,
    resourceVersion: opts?.resourceVersion,
    resourceVersionMatch: opts?.resourceVersionMatch,
    timeoutSeconds: opts?.timeoutSeconds,
  };
}

/** The DeleteOptions body the API expects. */
export function deleteOptionsBody(opts: DeleteOptions | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
  if (opts?.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
  if (opts?.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
  if (opts?.preconditions) body.preconditions = opts.preconditions;
  if (opts?.dryRun) body.dryRun = [opts.dryRun];
  return body;
}

/** Reduces a full object to PartialObjectMetadata (servers that ignore the Accept override send full objects). */
export function toPartialObjectMetadata(obj: KubeObject): PartialObjectMetadata {
  if (obj.kind === 'PartialObjectMetadata') return obj as PartialObjectMetadata;
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: obj.metadata ?? {} };
}

export interface ResourceClientOptions {
  clock: Clock;
  /** Metadata-only responses (PartialObjectMetadata). */
  metadataOnly?: boolean;
}

class ResourceClient<T extends KubeObject> implements ResourceInterface<T> {
  constructor(
    private readonly rest: RestClient,
    readonly gvr: GroupVersionResource,
    private readonly ns: string | undefined,
    private readonly opts: ResourceClientOptions,
  ) {}

  namespace(ns: string): ResourceInterface<T> {
    return new ResourceClient<T>(this.rest, this.gvr, ns || undefined, this.opts);
  }

  private path(name?: string, sub?: string, ns = this.ns): string {
    return resourcePath(this.gvr, ns, name, sub);
  }

  private target(name?: string) {
    return { group: this.gvr.group, resource: this.gvr.resource, name };
  }

  /** The object's own namespace is used when the client is not scoped to one. */
  private nsOf(obj: KubeObject): string | undefined {
    return this.ns ?? (obj.metadata?.namespace || undefined);
  }

  private nameOf(obj: KubeObject, verb: string): string {
    const name = obj.metadata?.name;
    if (!name) throw new Error(`${verb} ${this.gvr.resource}: metadata.name is required`);
    return name;
  }

  private one(obj: unknown): T {
    if (this.opts.metadataOnly && obj && typeof obj === 'object' && (obj as KubeObject).kind !== 'Status') {
      return toPartialObjectMetadata(obj as KubeObject) as unknown as T;
    }
    return obj as T;
  }

  private many(list: KubeList<T>): KubeList<T> {
    if (!this.opts.metadataOnly) return list;
    return {
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadataList',
      metadata: list.metadata ?? {},
      items: (list.items ?? []).map((x) => toPartialObjectMetadata(x) as unknown as T),
    };
  }

  async get(name: string, opts?: GetOptions): Promise<T> {
    const r = await this.rest.request('GET', this.path(name), {
      query: { resourceVersion: opts?.resourceVersion },
      accept: this.opts.metadataOnly ? ACCEPT_PARTIAL_METADATA : undefined,
      target: this.target(name),
      ...(opts?.omitManagedFields ? { omitManagedFields: true } : {}),
    });
    return this.one(r);
  }

  async list(opts?: ListOptions): Promise<KubeList<T>> {
    const r = await this.rest.request<KubeList<T>>('GET', this.path(), {
      query: listQuery(opts),
      accept: this.opts.metadataOnly ? ACCEPT_PARTIAL_METADATA_LIST : undefined,
      target: this.target(),
    });
    r.items ??= [];
    r.metadata ??= {};
    withItemTypeMeta(r);
    return this.many(r);
  }

  /**
   * Follows continue tokens (client-go's pager). When a continue token expires
   * mid-way (410), lists everything again in one request, as the pager does.
   */
  async listAll(opts?: ListOptions): Promise<KubeList<T>> {
    opts = { ...opts, limit: opts?.limit ?? DEFAULT_PAGE_SIZE };
    const first = await this.list(opts);
    const items = [...first.items];
    let next = first.metadata.continue;
    let last = first;
    while (next) {
      let page: KubeList<T>;
      try {
        page = await this.list({ ...opts, continue: next, resourceVersion: undefined, resourceVersionMatch: undefined });
      } catch (err) {
        if (!isGone(err)) throw err;
        const full = await this.list({ ...opts, limit: undefined, continue: undefined });
        return full;
      }
      items.push(...page.items);
      next = page.metadata.continue;
      last = page;
    }
    const metadata = { ...first.metadata, resourceVersion: first.metadata.resourceVersion ?? last.metadata.resourceVersion };
    delete metadata.continue;
    delete metadata.remainingItemCount;
    return { ...first, metadata, items };
  }

  async watch(opts?: WatchOptions, signal?: AbortSignal): Promise<Watch<T>> {
    const query: Record<string, QueryValue> = {
      watch: 1,
      labelSelector: opts?.labelSelector,
      fieldSelector: opts?.fieldSelector,
      resourceVersion: opts?.resourceVersion,
      allowWatchBookmarks: opts?.allowWatchBookmarks ? 'true' : undefined,
      timeoutSeconds: opts?.timeoutSeconds,
    };
    if (opts?.sendInitialEvents !== undefined) {
      query.sendInitialEvents = String(opts.sendInitialEvents);
      if (opts.sendInitialEvents) query.resourceVersionMatch = 'NotOlderThan';
    }
    const res = await this.rest.stream('GET', this.path(), {
      query,
      signal,
      accept: this.opts.metadataOnly ? ACCEPT_PARTIAL_METADATA : undefined,
      target: this.target(),
    });
    return newStreamWatch<T>(res, {
      clock: this.opts.clock,
      timeoutMs: opts?.timeoutSeconds ? opts.timeoutSeconds * 1000 : undefined,
      transform: this.opts.metadataOnly ? toPartialObjectMetadata : undefined,
      dropManagedFields: opts?.dropManagedFields,
      signal,
      description: this.path(),
    });
  }

  async create(obj: T, opts?: CreateOptions): Promise<T> {
    const r = await this.rest.request('POST', this.path(undefined, undefined, this.nsOf(obj)), {
      body: obj,
      query: writeQuery(opts),
      target: this.target(obj.metadata?.name),
    });
    return this.one(r);
  }

  async update(obj: T, opts?: UpdateOptions): Promise<T> {
    const name = this.nameOf(obj, 'update');
    const r = await this.rest.request('PUT', this.path(name, undefined, this.nsOf(obj)), { body: obj, query: writeQuery(opts), target: this.target(name) });
    return this.one(r);
  }

  async updateStatus(obj: T, opts?: UpdateOptions): Promise<T> {
    const name = this.nameOf(obj, 'update status of');
    const r = await this.rest.request('PUT', this.path(name, 'status', this.nsOf(obj)), { body: obj, query: writeQuery(opts), target: this.target(name) });
    return this.one(r);
  }

  async patch(name: string, type: PatchType, patch: unknown, opts?: PatchOptions & { subresource?: string; discardResult?: boolean }): Promise<T> {
    const contentType = PATCH_CONTENT_TYPES[type];
    if (!contentType) throw new Error(`unknown patch type "${String(type)}"`);
    const r = await this.rest.request('PATCH', this.path(name, opts?.subresource), {
      body: typeof patch === 'string' || Buffer.isBuffer(patch) ? patch : JSON.stringify(patch),
      contentType,
      query: { ...writeQuery(opts), force: type === 'apply' && opts?.force !== undefined ? String(opts.force) : undefined },
      accept: this.opts.metadataOnly ? ACCEPT_PARTIAL_METADATA : undefined,
      target: this.target(name),
      ...(opts?.discardResult ? { responseType: 'none' as const } : {}),
    });
    return opts?.discardResult ? (r as T) : this.one(r);
  }

  async delete(name: string, opts?: DeleteOptions & { discardResult?: boolean }): Promise<T | Status> {
    const r = await this.rest.request<T | Status>('DELETE', this.path(name), {
      body: deleteOptionsBody(opts),
      accept: this.opts.metadataOnly ? ACCEPT_PARTIAL_METADATA : undefined,
      target: this.target(name),
      ...(opts?.discardResult ? { responseType: 'none' as const } : {}),
    });
    return opts?.discardResult ? r : this.one(r);
  }

  async deleteCollection(opts?: DeleteOptions, listOpts?: ListOptions): Promise<KubeList<T> | Status> {
    const r = await this.rest.request<KubeList<T> | Status>('DELETE', this.path(), {
      body: deleteOptionsBody(opts),
      query: listQuery(listOpts),
      target: this.target(),
    });
    if (r && (r as KubeList<T>).items) return this.many(r as KubeList<T>);
    return r;
  }

  getSubresource<R = unknown>(name: string, subresource: string): Promise<R> {
    return this.rest.request<R>('GET', this.path(name, subresource), { target: this.target(name) });
  }

  createSubresource<R = unknown>(name: string, subresource: string, body: unknown, opts?: CreateOptions): Promise<R> {
    return this.rest.request<R>('POST', this.path(name, subresource), { body, query: writeQuery(opts), target: this.target(name) });
  }

  updateSubresource<R = unknown>(name: string, subresource: string, body: unknown, opts?: UpdateOptions): Promise<R> {
    return this.rest.request<R>('PUT', this.path(name, subresource), { body, query: writeQuery(opts), target: this.target(name) });
  }
}

export function newResourceClient<T extends KubeObject = KubeObject>(
  rest: RestClient,
  gvr: GroupVersionResource,
  opts: ResourceClientOptions & { namespace?: string },
): ResourceInterface<T> {
  return new ResourceClient<T>(rest, gvr, opts.namespace || undefined, opts);
}

/**
 * List items come without apiVersion and kind (the API server writes them on
 * the list only); they get the list's, as client-go's unstructured decoding
 * does, so that objects from a list and from a watch look alike (event
 * references, owner references and logs need the kind).
 */
function withItemTypeMeta(list: { apiVersion?: string; kind?: string; items: unknown[] }): void {
  const kind = typeof list.kind === 'string' && list.kind.endsWith('List') ? list.kind.slice(0, -4) : undefined;
  const apiVersion = list.apiVersion;
  if (!kind || !apiVersion) return;
  for (const item of list.items as Array<{ apiVersion?: string; kind?: string }>) {
    if (!item || typeof item !== 'object') continue;
    item.apiVersion ??= apiVersion;
    item.kind ??= kind;
  }
}
