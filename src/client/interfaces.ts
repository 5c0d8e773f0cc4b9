/**
 * The client contract every layer above uses. Controllers, informers, the
 * scheduler and the simulated nodes talk to any API server (ours or
 * kube-apiserver) only through these interfaces.
 */
import type { GroupVersionResource, KubeList, KubeObject, PartialObjectMetadata, Status, WatchEvent } from '../api/types.js';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  timeoutSeconds?: number;
}

export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  sendInitialEvents?: boolean;
  /**
   * Client side, not sent: the events' objects come without
   * metadata.managedFields, cut from the text before it is parsed (informers
   * that drop managedFields anyway ask for this).
   */
  dropManagedFields?: boolean;
}

export interface GetOptions {
  resourceVersion?: string;
  /**
   * Client-side, not sent: a metadata-only client's answer is decoded
   * without `metadata.managedFields` (for callers that do not read them,
   * as the garbage collector's live reads; informers drop them too).
   */
  omitManagedFields?: boolean;
}

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface CreateOptions {
  dryRun?: 'All';
  fieldManager?: string;
  fieldValidation?: FieldValidation;
}
export type UpdateOptions = CreateOptions;

export interface PatchOptions extends CreateOptions {
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

/** json: RFC 6902; merge: RFC 7396; strategic: strategic merge patch; apply: server-side apply (YAML or JSON body). */
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  dryRun?: 'All';
}

/**
 * A running watch. Iterate it for events; the iteration ends when the server
 * closes the stream, the timeout passes or `stop()` is called. A broken
 * stream ends the iteration by throwing (NetworkError) so callers can tell.
 */
export interface Watch<T extends KubeObject = KubeObject> extends AsyncIterable<WatchEvent<T>> {
  stop(): void;
}

/** Verbs on one resource, cluster-wide or (after `namespace()`) in one namespace. */
export interface ResourceInterface<T extends KubeObject = KubeObject> {
  readonly gvr: GroupVersionResource;
  /** The same resource scoped to a namespace. */
  namespace(ns: string): ResourceInterface<T>;
  get(name: string, opts?: GetOptions): Promise<T>;
  list(opts?: ListOptions): Promise<KubeList<T>>;
  /** Every page of a list, following `continue` tokens. */
  listAll(opts?: ListOptions): Promise<KubeList<T>>;
  watch(opts?: WatchOptions, signal?: AbortSignal): Promise<Watch<T>>;
  create(obj: T, opts?: CreateOptions): Promise<T>;
  update(obj: T, opts?: UpdateOptions): Promise<T>;
  updateStatus(obj: T, opts?: UpdateOptions): Promise<T>;
  /** With `discardResult`, resolves once written without decoding the server's response (for callers that do not read it: undefined from the REST client). */
  patch(name: string, type: PatchType, patch: unknown, opts: PatchOptions & { subresource?: string; discardResult: true }): Promise<unknown>;
  patch(name: string, type: PatchType, patch: unknown, opts?: PatchOptions & { subresource?: string }): Promise<T>;
  /** With `discardResult`, resolves once deleted without decoding the server's answer (a failure still rejects with its Status). */
  delete(name: string, opts: DeleteOptions & { discardResult: true }): Promise<unknown>;
  /** Returns the object when it lingers (finalizers, graceful deletion), else the server's Status. */
  delete(name: string, opts?: DeleteOptions): Promise<T | Status>;
  deleteCollection(opts?: DeleteOptions, listOpts?: ListOptions): Promise<KubeList<T> | Status>;
  /** GET on a subresource (scale, status, ...). */
  getSubresource<R = unknown>(name: string, subresource: string): Promise<R>;
  /** POST to a subresource (binding, eviction, token, ...). */
  createSubresource<R = unknown>(name: string, subresource: string, body: unknown, opts?: CreateOptions): Promise<R>;
  /** PUT to a subresource (scale, status, finalize, approval). */
  updateSubresource<R = unknown>(name: string, subresource: string, body: unknown, opts?: UpdateOptions): Promise<R>;
}

/**
 * What informers, controllers and components need from a client: a
 * ResourceInterface per resource. The full KubeClient (client/client.ts)
 * adds discovery, typed accessors and lifecycle.
 */
export interface Client {
  resource<T extends KubeObject = KubeObject>(gvr: GroupVersionResource): ResourceInterface<T>;
  /** The same resource with metadata-only responses (PartialObjectMetadata), for the garbage collector. */
  metadata(gvr: GroupVersionResource): ResourceInterface<PartialObjectMetadata>;
}
