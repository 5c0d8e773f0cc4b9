/**
 * The ResourceInterface of the fake client: records each call as a
 * FakeAction and hands it to the backend (reactors, then the store).
 */
import { type GroupVersionResource, type KubeList, type KubeObject, type PartialObjectMetadata, type Status, type WatchEvent } from '../../api/types.js';
import { StatusError, newStatus } from '../../client/errors.js';
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
} from '../../client/interfaces.js';
import type { FakeAction, FakeVerb } from './fake-client.js';
import type { ObjectPredicate } from './selectors.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** What FakeResource needs from the fake client. */
export interface FakeBackend {
  invoke<R>(action: FakeAction, fallback: () => R | Promise<R>): Promise<R>;
  getObject(gvr: GroupVersionResource, namespace: string, name: string): KubeObject;
  listObjects(gvr: GroupVersionResource, scopeNs: string, opts: ListOptions): KubeList;
  openWatch(gvr: GroupVersionResource, scopeNs: string, opts: WatchOptions, signal?: AbortSignal): Watch;
  doCreate(gvr: GroupVersionResource, scopeNs: string, input: KubeObject, opts: CreateOptions): KubeObject;
  doUpdate(gvr: GroupVersionResource, scopeNs: string, input: KubeObject, opts: UpdateOptions, subresource?: string): KubeObject;
  doPatch(gvr: GroupVersionResource, scopeNs: string, name: string, type: PatchType, patch: unknown, opts: PatchOptions & { subresource?: string }): KubeObject;
  doDelete(gvr: GroupVersionResource, scopeNs: string, name: string, opts: DeleteOptions): KubeObject | Status;
  select(gvr: GroupVersionResource, namespace: string, pred: ObjectPredicate): KubeObject[];
  predicate(labelSelector: string | undefined, fieldSelector: string | undefined): ObjectPredicate;
}

function conflict(gvr: GroupVersionResource, name: string, why: string): StatusError {
  const q = gvr.group ? `${gvr.resource}.${gvr.group}` : gvr.resource;
  return new StatusError(newStatus(409, 'Conflict', `Operation cannot be fulfilled on ${q} "${name}": ${why}`, { name, group: gvr.group, kind: gvr.resource }));
}

function copy<T>(v: T): T {
  return deepCopy(v);
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function mm(o: KubeObject): Mutable<NonNullable<KubeObject['metadata']>> {
  return (o.metadata ??= {}) as Mutable<NonNullable<KubeObject['metadata']>>;
}

function toPartial(o: KubeObject): PartialObjectMetadata {
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: copy(o.metadata ?? {}) };
}

export class FakeResource<T extends KubeObject> implements ResourceInterface<T> {
  constructor(
    private readonly c: FakeBackend,
    readonly gvr: GroupVersionResource,
    private readonly ns: string,
    private readonly metadataOnly = false,
  ) {}

  private base(verb: FakeVerb, extra: Partial<FakeAction> = {}): FakeAction {
    const a: FakeAction = { verb, gvr: this.gvr, resource: this.gvr.resource, namespace: this.ns, ...extra };
    if (this.metadataOnly) a.metadataOnly = true;
    return a;
  }

  private out<R>(o: KubeObject): R {
    return (this.metadataOnly ? toPartial(o) : o) as unknown as R;
  }

  private outList(l: KubeList): KubeList<T> {
    if (!this.metadataOnly) return l as KubeList<T>;
    return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList', metadata: l.metadata, items: l.items.map(toPartial) } as unknown as KubeList<T>;
  }

  namespace(ns: string): ResourceInterface<T> {
    return new FakeResource<T>(this.c, this.gvr, ns, this.metadataOnly);
  }

  get(name: string, _opts?: GetOptions): Promise<T> {
    return this.c.invoke(this.base('get', { name }), () => this.out<T>(this.c.getObject(this.gvr, this.ns, name)));
  }

  list(opts: ListOptions = {}): Promise<KubeList<T>> {
    return this.c.invoke(this.base('list', { listOptions: opts }), () => this.outList(this.c.listObjects(this.gvr, this.ns, opts)));
  }

  async listAll(opts: ListOptions = {}): Promise<KubeList<T>> {
    const first = await this.list({ ...opts, limit: undefined, continue: undefined });
    return first;
  }

  watch(opts: WatchOptions = {}, signal?: AbortSignal): Promise<Watch<T>> {
    return this.c.invoke(this.base('watch', { watchOptions: opts }), () => {
      const w = this.c.openWatch(this.gvr, this.ns, opts, signal);
      if (!this.metadataOnly) return w as unknown as Watch<T>;
      const mapped: Watch<T> = {
        stop: () => w.stop(),
        [Symbol.asyncIterator]: async function* () {
          for await (const e of w) {
            if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') yield { type: e.type, object: toPartial(e.object) as unknown as T };
            else yield e as WatchEvent<T>;
          }
        },
      };
      return mapped;
    });
  }

  create(obj: T, opts: CreateOptions = {}): Promise<T> {
    return this.c.invoke(this.base('create', { name: obj.metadata?.name, object: obj, ...writeOptions(opts) }), () => this.out<T>(this.c.doCreate(this.gvr, this.ns, obj, opts)));
  }

  update(obj: T, opts: UpdateOptions = {}): Promise<T> {
    return this.c.invoke(this.base('update', { name: obj.metadata?.name, object: obj, ...writeOptions(opts) }), () => this.out<T>(this.c.doUpdate(this.gvr, this.ns, obj, opts)));
  }

  updateStatus(obj: T, opts: UpdateOptions = {}): Promise<T> {
    return this.c.invoke(this.base('update', { name: obj.metadata?.name, object: obj, subresource: 'status', ...writeOptions(opts) }), () =>
      this.out<T>(this.c.doUpdate(this.gvr, this.ns, obj, opts, 'status')),
    );
  }

  patch(name: string, type: PatchType, patch: unknown, opts: PatchOptions & { subresource?: string } = {}): Promise<T> {
    const { subresource, ...rest } = opts;
    const extra: Partial<FakeAction> = { name, patchType: type, patch, ...writeOptions(rest) };
    if (subresource) extra.subresource = subresource;
    return this.c.invoke(this.base('patch', extra), () => this.out<T>(this.c.doPatch(this.gvr, this.ns, name, type, patch, opts)));
  }

  delete(name: string, opts: DeleteOptions = {}): Promise<T | Status> {
    return this.c.invoke(this.base('delete', { name, deleteOptions: opts }), () => {
      const r = this.c.doDelete(this.gvr, this.ns, name, opts);
      return (r.kind === 'Status' ? r : this.out<T>(r as KubeObject)) as T | Status;
    });
  }

  deleteCollection(opts: DeleteOptions = {}, listOpts: ListOptions = {}): Promise<KubeList<T> | Status> {
    return this.c.invoke(this.base('deletecollection', { deleteOptions: opts, listOptions: listOpts }), () => {
      const victims = this.c.select(this.gvr, this.ns, this.c.predicate(listOpts.labelSelector, listOpts.fieldSelector));
      for (const v of victims) this.c.doDelete(this.gvr, v.metadata?.namespace ?? '', v.metadata?.name ?? '', opts);
      return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' } as Status;
    });
  }

  getSubresource<R = unknown>(name: string, subresource: string): Promise<R> {
    return this.c.invoke(this.base('get', { name, subresource }), () => {
      const obj = this.c.getObject(this.gvr, this.ns, name);
      switch (subresource) {
        case 'status':
          return obj as R;
        case 'scale':
          return scaleOf(obj) as R;
        default:
          throw new StatusError(newStatus(404, 'NotFound', `the server could not find the requested resource (get ${this.gvr.resource} ${name}/${subresource})`));
      }
    });
  }

  createSubresource<R = unknown>(name: string, subresource: string, body: unknown, opts: CreateOptions = {}): Promise<R> {
    return this.c.invoke(this.base('create', { name, subresource, object: body as KubeObject }), () => {
      if (this.gvr.resource === 'pods' && subresource === 'binding') {
        const pod = this.c.getObject(this.gvr, this.ns, name);
        const spec = (pod.spec ?? {}) as Record<string, unknown>;
        if (spec.nodeName) {
          throw conflict(this.gvr, name, `pod ${name} is already assigned to node "${String(spec.nodeName)}"`);
        }
        const target = (body as { target?: { name?: string } }).target?.name;
        pod.spec = { ...spec, nodeName: target };
        this.c.doUpdate(this.gvr, this.ns, pod, opts);
        return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' } as R;
      }
      if (this.gvr.resource === 'pods' && subresource === 'eviction') {
        const deleteOptions = ((body as { deleteOptions?: DeleteOptions }).deleteOptions ?? {}) as DeleteOptions;
        this.c.doDelete(this.gvr, this.ns, name, deleteOptions);
        return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' } as R;
      }
      throw new StatusError(newStatus(405, 'MethodNotAllowed', `create is not supported on ${this.gvr.resource}/${subresource}`));
    });
  }

  updateSubresource<R = unknown>(name: string, subresource: string, body: unknown, opts: UpdateOptions = {}): Promise<R> {
    return this.c.invoke(this.base('update', { name, subresource, object: body as KubeObject }), () => {
      switch (subresource) {
        case 'status':
          return this.c.doUpdate(this.gvr, this.ns, body as KubeObject, opts, 'status') as R;
        case 'scale': {
          const obj = this.c.getObject(this.gvr, this.ns, name);
          const scale = body as { metadata?: { resourceVersion?: string }; spec?: { replicas?: number } };
          if (scale.metadata?.resourceVersion) mm(obj).resourceVersion = scale.metadata.resourceVersion;
          else delete mm(obj).resourceVersion;
          obj.spec = { ...((obj.spec ?? {}) as object), replicas: scale.spec?.replicas ?? 0 };
          return scaleOf(this.c.doUpdate(this.gvr, this.ns, obj, opts)) as R;
        }
        default:
          throw new StatusError(newStatus(405, 'MethodNotAllowed', `update is not supported on ${this.gvr.resource}/${subresource}`));
      }
    });
  }
}

/** `{ writeOptions }` when any option is set, else nothing (actions of plain calls stay as they were). */
function writeOptions(opts: PatchOptions): Pick<FakeAction, 'writeOptions'> {
  const set = Object.entries(opts).filter(([, v]) => v !== undefined);
  return set.length > 0 ? { writeOptions: Object.fromEntries(set) as PatchOptions } : {};
}

/** autoscaling/v1 Scale of an object with spec.replicas. */
function scaleOf(obj: KubeObject): KubeObject {
  const spec = (obj.spec ?? {}) as { replicas?: number; selector?: { matchLabels?: Record<string, string> } | string };
  const status = (obj.status ?? {}) as { replicas?: number };
  let selector = '';
  if (typeof spec.selector === 'string') selector = spec.selector;
  else if (spec.selector?.matchLabels) {
    selector = Object.entries(spec.selector.matchLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  }
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: {
      name: obj.metadata?.name,
      namespace: obj.metadata?.namespace,
      uid: obj.metadata?.uid,
      resourceVersion: obj.metadata?.resourceVersion,
      creationTimestamp: obj.metadata?.creationTimestamp,
    },
    spec: { replicas: spec.replicas ?? 0 },
    status: { replicas: status.replicas ?? 0, selector },
  };
}

