/**
 * An in-memory `Client` for controller tests (client-go's fake clientset with
 * its object tracker and reactors).
 *
 *   const fake = newFakeClient({ clock });
 *   fake.seed(GVR.pods, pod);                         // no action recorded
 *   fake.prependReactor('create', 'pods', () => { throw conflictError });
 *   await controller.sync('ns/rs');
 *   assert.deepEqual(fake.actions().map(a => a.verb), ['create', 'create']);
 *
 * Behaviour, like a real API server where it matters to controllers:
 * - every write bumps one global resourceVersion counter; objects get a uid,
 *   creationTimestamp (from the clock), generation 1, apiVersion and kind;
 * - create honours generateName (`<prefix><5 safe chars>`), AlreadyExists;
 * - update checks the resourceVersion when one is given (Conflict), keeps the
 *   stored status (status is written only through updateStatus or a status
 *   patch), bumps generation when anything outside metadata and status
 *   changed, and is a no-op (same resourceVersion, no event) when nothing changed;
 * - uid, creationTimestamp and deletionTimestamp cannot be changed by writes
 *   (a different uid is 422 Invalid, which is how the uid in controller-ref
 *   patches acts as a precondition);
 * - delete of an object with finalizers sets deletionTimestamp and keeps it;
 *   it disappears once an update removes the last finalizer. Otherwise the
 *   object is removed at once (no graceful pod deletion: nothing plays kubelet);
 * - patch: 'merge' (RFC 7396), 'json' (RFC 6902), 'strategic' (a strategic
 *   merge that knows the usual merge keys, see patch.ts), 'apply' (treated
 *   as merge, creating when missing);
 * - list and watch filter by namespace, label selector and field selector;
 *   a watch from resourceVersion N replays the changes after N (ERROR 410
 *   when N is older than the retained history), from '' or '0' it starts
 *   with ADDED for every current object; a change moving an object into or
 *   out of a watch's selector arrives as ADDED / DELETED;
 * - subresources: status (get/update/patch), scale (get/update, from
 *   spec.replicas, status.replicas and the selector), pods/binding
 *   (sets spec.nodeName), pods/eviction (deletes the pod).
 *
 * Every call is recorded as a FakeAction before reactors run. Reactors run
 * newest-first (prependReactor) and may throw to fail the call, return a value
 * to answer it, or return undefined to pass to the next reactor and finally to
 * the store. Returned objects are copies: mutating them never changes the store.
 */
import { randomUUID } from 'node:crypto';
import { apiVersionOf, type GroupVersionResource, type KubeList, type KubeObject, type PartialObjectMetadata, type Status, type WatchEvent } from '../../api/types.js';
import { gvrString } from '../../api/gvr.js';
import { StatusError, newStatus } from '../../client/errors.js';
import type {
  Client,
  CreateOptions,
  DeleteOptions,
  ListOptions,
  PatchOptions,
  PatchType,
  ResourceInterface,
  UpdateOptions,
  Watch,
  WatchOptions,
} from '../../client/interfaces.js';
import { realClock, rfc3339, type Clock } from '../../util/clock/clock.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './patch.js';
import { parseFieldSelector, parseLabelSelector, type ObjectPredicate } from './selectors.js';
import { kindForResource } from './kinds.js';
import { FakeResource, type FakeBackend } from './fake-resource.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export type FakeVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** One recorded call. Objects are copies taken when the call was made. */
export interface FakeAction {
  verb: FakeVerb;
  gvr: GroupVersionResource;
  /** Plural resource name, e.g. `pods`. */
  resource: string;
  /** `status`, `scale`, `binding`, `eviction`, ... */
  subresource?: string;
  /** '' for cluster-wide calls. */
  namespace: string;
  name?: string;
  /** The body of create / update / createSubresource / updateSubresource. */
  object?: KubeObject;
  patchType?: PatchType;
  patch?: unknown;
  listOptions?: ListOptions;
  watchOptions?: WatchOptions;
  deleteOptions?: DeleteOptions;
  /** The options of a create, update or patch (fieldManager, dryRun, fieldValidation, force), when any was set. */
  writeOptions?: PatchOptions;
  /** True for calls made through `metadata(gvr)` (PartialObjectMetadata views). */
  metadataOnly?: true;
}

/**
 * Answers an action: throw to fail it, return a value to answer with it,
 * return undefined to let the next reactor (and finally the store) handle it.
 */
export type Reactor = (action: FakeAction) => unknown;

export interface FakeClient extends Client {
  readonly clock: Clock;
  /** Every call so far, oldest first. */
  actions(): readonly FakeAction[];
  clearActions(): void;
  /**
   * Adds a reactor that runs before all existing ones. `verb` and `resource`
   * may be '*'; `resource` may name a subresource (`pods/status`) to match
   * only that; a plain resource matches its subresources too.
   */
  prependReactor(verb: FakeVerb | '*', resource: string, reactor: Reactor): void;
  /** Adds a reactor that runs after the existing ones (still before the store). */
  addReactor(verb: FakeVerb | '*', resource: string, reactor: Reactor): void;
  /**
   * Stores objects directly, notifying watchers but recording no action.
   * Missing uid, creationTimestamp and generation are filled as create
   * would; given ones (and a deletionTimestamp) are kept, so tests can seed
   * any state. Returns the stored copies.
   */
  seed<T extends KubeObject>(gvr: GroupVersionResource, ...objects: T[]): T[];
  /** The stored object, without recording an action. */
  stored<T extends KubeObject = KubeObject>(gvr: GroupVersionResource, namespace: string, name: string): T | undefined;
  /** Stored objects of a resource (in one namespace when given), sorted by namespace/name. */
  storedList<T extends KubeObject = KubeObject>(gvr: GroupVersionResource, namespace?: string): T[];
  /** Open watches (of one resource when given). */
  watcherCount(gvr?: GroupVersionResource): number;
  /** Ends every open watch (of one resource when given), as an API server closing its streams; returns how many. */
  closeWatches(gvr?: GroupVersionResource): number;
  /** The current (last written) resourceVersion. */
  resourceVersion(): string;
}

export interface FakeClientOptions {
  /** Clock for creationTimestamp / deletionTimestamp; defaults to the real clock. */
  clock?: Clock;
  /** How many past changes a watch can replay (default 10000). */
  historySize?: number;
}

interface HistoryEntry {
  gvrKey: string;
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObject;
  old?: KubeObject;
}

interface Watcher {
  gvrKey: string;
  namespace: string;
  matches: ObjectPredicate;
  queue: WatchEvent[];
  wake: (() => void) | undefined;
  stopped: boolean;
}

interface ReactorEntry {
  verb: string;
  resource: string;
  fn: Reactor;
}

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function objKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type MutableMeta = Mutable<NonNullable<KubeObject['metadata']>>;

/** The object's metadata (created when missing), writable. */
function mm(o: KubeObject): MutableMeta {
  return (o.metadata ??= {}) as MutableMeta;
}

function copy<T>(v: T): T {
  return deepCopy(v);
}

function qualifiedResource(gvr: GroupVersionResource): string {
  return gvr.group ? `${gvr.resource}.${gvr.group}` : gvr.resource;
}

function notFound(gvr: GroupVersionResource, name: string): StatusError {
  return new StatusError(
    newStatus(404, 'NotFound', `${qualifiedResource(gvr)} "${name}" not found`, { name, group: gvr.group, kind: gvr.resource }),
  );
}

function alreadyExists(gvr: GroupVersionResource, name: string): StatusError {
  return new StatusError(
    newStatus(409, 'AlreadyExists', `${qualifiedResource(gvr)} "${name}" already exists`, { name, group: gvr.group, kind: gvr.resource }),
  );
}

function conflict(gvr: GroupVersionResource, name: string, why: string): StatusError {
  return new StatusError(
    newStatus(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(gvr)} "${name}": ${why}`, {
      name,
      group: gvr.group,
      kind: gvr.resource,
    }),
  );
}

function invalid(gvr: GroupVersionResource, name: string, message: string): StatusError {
  return new StatusError(
    newStatus(422, 'Invalid', `${qualifiedResource(gvr)} "${name}" is invalid: ${message}`, { name, group: gvr.group, kind: gvr.resource }),
  );
}

function successStatus(gvr: GroupVersionResource, name: string, uid: string | undefined): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name, group: gvr.group, kind: gvr.resource, ...(uid ? { uid } : {}) },
  };
}

/** Everything but metadata and status: a change here bumps generation. */
function specPart(obj: KubeObject): string {
  const { metadata: _m, status: _s, ...rest } = obj;
  return JSON.stringify(rest);
}

function withoutResourceVersion(obj: KubeObject): string {
  const c = copy(obj);
  if (c.metadata) delete mm(c).resourceVersion;
  return JSON.stringify(c);
}

class FakeClientImpl implements FakeClient, FakeBackend {
  readonly clock: Clock;
  private rv = 0;
  private readonly store = new Map<string, Map<string, KubeObject>>();
  private readonly gvrs = new Map<string, GroupVersionResource>();
  private readonly history: HistoryEntry[] = [];
  private readonly historySize: number;
  /** resourceVersion of the newest change no longer in history. */
  private compactedRv = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly reactors: ReactorEntry[] = [];
  private readonly recorded: FakeAction[] = [];

  constructor(opts: FakeClientOptions) {
    this.clock = opts.clock ?? realClock;
    this.historySize = opts.historySize ?? 10000;
  }

  // --- FakeClient ---

  actions(): readonly FakeAction[] {
    return this.recorded;
  }
  clearActions(): void {
    this.recorded.length = 0;
  }
  prependReactor(verb: FakeVerb | '*', resource: string, fn: Reactor): void {
    this.reactors.unshift({ verb, resource, fn });
  }
  addReactor(verb: FakeVerb | '*', resource: string, fn: Reactor): void {
    this.reactors.push({ verb, resource, fn });
  }
  seed<T extends KubeObject>(gvr: GroupVersionResource, ...objects: T[]): T[] {
    return objects.map((o) => this.doCreate(gvr, o.metadata?.namespace ?? '', o, {}, true) as T);
  }
  stored<T extends KubeObject = KubeObject>(gvr: GroupVersionResource, namespace: string, name: string): T | undefined {
    const o = this.bucket(gvr).get(objKey(namespace, name));
    return o ? (copy(o) as T) : undefined;
  }
  storedList<T extends KubeObject = KubeObject>(gvr: GroupVersionResource, namespace?: string): T[] {
    return this.select(gvr, namespace ?? '', () => true).map((o) => copy(o) as T);
  }
  watcherCount(gvr?: GroupVersionResource): number {
    if (!gvr) return this.watchers.size;
    const k = gvrString(gvr);
    let n = 0;
    for (const w of this.watchers) if (w.gvrKey === k) n++;
    return n;
  }
  closeWatches(gvr?: GroupVersionResource): number {
    const k = gvr ? gvrString(gvr) : undefined;
    let n = 0;
    for (const w of [...this.watchers]) {
      if (k !== undefined && w.gvrKey !== k) continue;
      w.stopped = true;
      this.watchers.delete(w);
      const wake = w.wake;
      w.wake = undefined;
      wake?.();
      n++;
    }
    return n;
  }
  resourceVersion(): string {
    return String(this.rv);
  }

  // --- Client ---

  resource<T extends KubeObject = KubeObject>(gvr: GroupVersionResource): ResourceInterface<T> {
    return new FakeResource<T>(this, gvr, '');
  }

  metadata(gvr: GroupVersionResource): ResourceInterface<PartialObjectMetadata> {
    return new FakeResource<PartialObjectMetadata>(this, gvr, '', true);
  }

  // --- internals used by FakeResource ---

  async invoke<R>(action: FakeAction, fallback: () => R | Promise<R>): Promise<R> {
    this.recorded.push(copy(action));
    for (const r of [...this.reactors]) {
      if (!this.reactorMatches(r, action)) continue;
      const out = await r.fn(copy(action));
      if (out !== undefined) return copy(out) as R;
    }
    return fallback();
  }

  private reactorMatches(r: ReactorEntry, a: FakeAction): boolean {
    if (r.verb !== '*' && r.verb !== a.verb) return false;
    if (r.resource === '*') return true;
    const slash = r.resource.indexOf('/');
    if (slash >= 0) return r.resource.slice(0, slash) === a.resource && r.resource.slice(slash + 1) === (a.subresource ?? '');
    return r.resource === a.resource;
  }

  private bucket(gvr: GroupVersionResource): Map<string, KubeObject> {
    const k = gvrString(gvr);
    let b = this.store.get(k);
    if (!b) {
      b = new Map();
      this.store.set(k, b);
      this.gvrs.set(k, gvr);
    }
    return b;
  }

  select(gvr: GroupVersionResource, namespace: string, pred: ObjectPredicate): KubeObject[] {
    const out: KubeObject[] = [];
    for (const o of this.bucket(gvr).values()) {
      if (namespace && (o.metadata?.namespace ?? '') !== namespace) continue;
      if (pred(o)) out.push(o);
    }
    return out.sort((a, b) => {
      const ka = objKey(a.metadata?.namespace ?? '', a.metadata?.name ?? '');
      const kb = objKey(b.metadata?.namespace ?? '', b.metadata?.name ?? '');
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
  }

  getObject(gvr: GroupVersionResource, namespace: string, name: string): KubeObject {
    const o = this.bucket(gvr).get(objKey(namespace, name));
    if (!o) throw notFound(gvr, name);
    return copy(o);
  }

  private generateName(prefix: string): string {
    let s = '';
    for (let i = 0; i < 5; i++) s += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
    return prefix + s;
  }

  /** `seeding` keeps a given uid, creationTimestamp, generation and deletionTimestamp. */
  doCreate(gvr: GroupVersionResource, scopeNs: string, input: KubeObject, opts: CreateOptions, seeding = false): KubeObject {
    const obj = copy(input);
    const meta = mm(obj);
    if (scopeNs && meta.namespace && meta.namespace !== scopeNs) {
      throw new StatusError(
        newStatus(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request'),
      );
    }
    const ns = scopeNs || meta.namespace || '';
    if (ns) meta.namespace = ns;
    const b = this.bucket(gvr);
    if (!meta.name && meta.generateName) {
      do meta.name = this.generateName(meta.generateName);
      while (b.has(objKey(ns, meta.name)));
    }
    if (!meta.name) throw invalid(gvr, '', 'metadata.name: Required value: name or generateName is required');
    if (b.has(objKey(ns, meta.name))) throw alreadyExists(gvr, meta.name);
    obj.apiVersion ??= apiVersionOf(gvr.group, gvr.version);
    if (!obj.kind) {
      const kind = kindForResource(gvr.resource);
      if (kind) obj.kind = kind;
    }
    if (!seeding || !meta.uid) meta.uid = randomUUID();
    if (!seeding || !meta.creationTimestamp) meta.creationTimestamp = rfc3339(this.clock.now());
    if (!seeding || !meta.generation) meta.generation = 1;
    if (!seeding) {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    if (opts.dryRun === 'All') return copy(obj);
    meta.resourceVersion = String(++this.rv);
    b.set(objKey(ns, meta.name), obj);
    this.emit(gvr, 'ADDED', obj);
    return copy(obj);
  }

  /**
   * Writes `next` over the stored object. `subresource` 'status' takes only
   * the status from `next`; otherwise the stored status is kept.
   */
  doUpdate(gvr: GroupVersionResource, scopeNs: string, input: KubeObject, opts: UpdateOptions, subresource?: string): KubeObject {
    const next = copy(input);
    const meta = mm(next);
    const ns = scopeNs || meta.namespace || '';
    const name = meta.name ?? '';
    const b = this.bucket(gvr);
    const old = b.get(objKey(ns, name));
    if (!old) throw notFound(gvr, name);
    const oldMeta = old.metadata ?? {};
    if (meta.resourceVersion && meta.resourceVersion !== oldMeta.resourceVersion) {
      throw conflict(gvr, name, 'the object has been modified; please apply your changes to the latest version and try again');
    }
    if (meta.uid && meta.uid !== oldMeta.uid) {
      throw invalid(gvr, name, `metadata.uid: Invalid value: "${meta.uid}": field is immutable`);
    }
    let result: KubeObject;
    if (subresource === 'status') {
      result = copy(old);
      if ('status' in next) result.status = next.status;
      else delete result.status;
    } else {
      result = next;
      if ('status' in old) result.status = copy(old.status);
      else delete result.status;
      const m = mm(result);
      m.namespace = oldMeta.namespace;
      if (!m.namespace) delete m.namespace;
      m.uid = oldMeta.uid;
      m.creationTimestamp = oldMeta.creationTimestamp;
      m.generation = oldMeta.generation;
      if (oldMeta.deletionTimestamp) {
        m.deletionTimestamp = oldMeta.deletionTimestamp;
        if (oldMeta.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
      } else {
        delete m.deletionTimestamp;
        delete m.deletionGracePeriodSeconds;
      }
      result.apiVersion ??= old.apiVersion;
      result.kind ??= old.kind;
      if (specPart(result) !== specPart(old)) m.generation = (oldMeta.generation ?? 0) + 1;
    }
    mm(result).resourceVersion = oldMeta.resourceVersion;
    if (withoutResourceVersion(result) === withoutResourceVersion(old)) return copy(old);
    if (opts.dryRun === 'All') return copy(result);
    const rm = mm(result);
    if (rm.deletionTimestamp && !(rm.finalizers && rm.finalizers.length > 0)) {
      rm.resourceVersion = String(++this.rv);
      b.delete(objKey(ns, name));
      this.emit(gvr, 'DELETED', result, old);
      return copy(result);
    }
    rm.resourceVersion = String(++this.rv);
    b.set(objKey(ns, name), result);
    this.emit(gvr, 'MODIFIED', result, old);
    return copy(result);
  }

  doPatch(
    gvr: GroupVersionResource,
    scopeNs: string,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: PatchOptions & { subresource?: string },
  ): KubeObject {
    const body = typeof patch === 'string' ? (JSON.parse(patch) as unknown) : patch;
    const existing = this.bucket(gvr).get(objKey(scopeNs, name));
    if (!existing) {
      if (type === 'apply' && !opts.subresource) {
        const obj = copy(body) as KubeObject;
        obj.metadata = { ...(obj.metadata ?? {}), name };
        return this.doCreate(gvr, scopeNs, obj, opts);
      }
      throw notFound(gvr, name);
    }
    const current = copy(existing);
    let patched: KubeObject;
    switch (type) {
      case 'merge':
      case 'apply':
        patched = applyMergePatch(current, body) as KubeObject;
        break;
      case 'json':
        patched = applyJsonPatch(current, body) as KubeObject;
        break;
      case 'strategic':
        patched = applyStrategicMergePatch(current, body) as KubeObject;
        break;
      default: {
        const never: never = type;
        throw new StatusError(newStatus(415, 'UnsupportedMediaType', `unsupported patch type ${String(never)}`));
      }
    }
    const pm = mm(patched);
    pm.name = name;
    // The resourceVersion is a precondition only when the patch sets it.
    if (pm.resourceVersion === existing.metadata?.resourceVersion) delete pm.resourceVersion;
    return this.doUpdate(gvr, scopeNs, patched, opts, opts.subresource);
  }

  doDelete(gvr: GroupVersionResource, scopeNs: string, name: string, opts: DeleteOptions): KubeObject | Status {
    const b = this.bucket(gvr);
    const key = objKey(scopeNs, name);
    const old = b.get(key);
    if (!old) throw notFound(gvr, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== old.metadata?.uid) {
      throw conflict(gvr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata?.uid ?? ''}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== old.metadata?.resourceVersion) {
      throw conflict(
        gvr,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata?.resourceVersion ?? ''}`,
      );
    }
    if (opts.dryRun === 'All') return copy(old);
    const finalizers = [...(old.metadata?.finalizers ?? [])];
    if (opts.propagationPolicy === 'Foreground' && !finalizers.includes('foregroundDeletion')) finalizers.push('foregroundDeletion');
    if (opts.propagationPolicy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
    if (finalizers.length > 0) {
      if (old.metadata?.deletionTimestamp) return copy(old);
      const next = copy(old);
      const nm = mm(next);
      nm.deletionTimestamp = rfc3339(this.clock.now());
      nm.deletionGracePeriodSeconds = 0;
      nm.finalizers = finalizers;
      nm.resourceVersion = String(++this.rv);
      b.set(key, next);
      this.emit(gvr, 'MODIFIED', next, old);
      return copy(next);
    }
    b.delete(key);
    const gone = copy(old);
    mm(gone).resourceVersion = String(++this.rv);
    this.emit(gvr, 'DELETED', gone, old);
    return successStatus(gvr, name, old.metadata?.uid);
  }

  listObjects(gvr: GroupVersionResource, scopeNs: string, opts: ListOptions): KubeList {
    const pred = this.predicate(opts.labelSelector, opts.fieldSelector);
    let items = this.select(gvr, scopeNs, pred).map(copy);
    const metadata: KubeList['metadata'] = { resourceVersion: String(this.rv) };
    const offset = opts.continue ? Number(Buffer.from(opts.continue, 'base64url').toString()) : 0;
    if (!Number.isInteger(offset) || offset < 0) {
      throw new StatusError(newStatus(400, 'BadRequest', 'invalid continue token'));
    }
    if (opts.limit && opts.limit > 0) {
      const page = items.slice(offset, offset + opts.limit);
      if (offset + opts.limit < items.length) {
        metadata.continue = Buffer.from(String(offset + opts.limit)).toString('base64url');
        metadata.remainingItemCount = items.length - offset - opts.limit;
      }
      items = page;
    } else if (offset) items = items.slice(offset);
    const kind = kindForResource(gvr.resource);
    return { apiVersion: apiVersionOf(gvr.group, gvr.version), kind: kind ? `${kind}List` : 'List', metadata, items };
  }

  predicate(labelSelector: string | undefined, fieldSelector: string | undefined): ObjectPredicate {
    const l = parseLabelSelector(labelSelector);
    const f = parseFieldSelector(fieldSelector);
    return (o) => l(o) && f(o);
  }

  private emit(gvr: GroupVersionResource, type: HistoryEntry['type'], object: KubeObject, old?: KubeObject): void {
    const entry: HistoryEntry = { gvrKey: gvrString(gvr), rv: this.rv, type, object: copy(object), ...(old ? { old: copy(old) } : {}) };
    this.history.push(entry);
    if (this.history.length > this.historySize) this.compactedRv = this.history.shift()!.rv;
    for (const w of this.watchers) this.deliver(w, entry);
  }

  private deliver(w: Watcher, e: HistoryEntry): void {
    if (w.stopped || w.gvrKey !== e.gvrKey) return;
    if (w.namespace && (e.object.metadata?.namespace ?? '') !== w.namespace) return;
    const now = w.matches(e.object);
    const before = e.old ? w.matches(e.old) : false;
    let type: 'ADDED' | 'MODIFIED' | 'DELETED';
    switch (e.type) {
      case 'ADDED':
        if (!now) return;
        type = 'ADDED';
        break;
      case 'DELETED':
        if (!now && !before) return;
        type = 'DELETED';
        break;
      case 'MODIFIED':
        if (now && before) type = 'MODIFIED';
        else if (now) type = 'ADDED';
        else if (before) type = 'DELETED';
        else return;
        break;
    }
    w.queue.push({ type, object: copy(e.object) });
    const wake = w.wake;
    w.wake = undefined;
    wake?.();
  }

  openWatch(gvr: GroupVersionResource, scopeNs: string, opts: WatchOptions, signal?: AbortSignal): Watch {
    const w: Watcher = {
      gvrKey: gvrString(gvr),
      namespace: scopeNs,
      matches: this.predicate(opts.labelSelector, opts.fieldSelector),
      queue: [],
      wake: undefined,
      stopped: false,
    };
    const from = opts.resourceVersion;
    if (!from || from === '0') {
      for (const o of this.select(gvr, scopeNs, w.matches)) w.queue.push({ type: 'ADDED', object: copy(o) });
    } else {
      const n = Number(from);
      if (!Number.isFinite(n) || n < this.compactedRv) {
        w.queue.push({
          type: 'ERROR',
          object: newStatus(410, 'Expired', `too old resource version: ${from} (${this.compactedRv + 1})`),
        });
      } else {
        for (const e of this.history) if (e.rv > n) this.deliver(w, e);
      }
    }
    this.watchers.add(w);
    const stop = () => {
      if (w.stopped) return;
      w.stopped = true;
      this.watchers.delete(w);
      const wake = w.wake;
      w.wake = undefined;
      wake?.();
    };
    if (signal?.aborted) stop();
    signal?.addEventListener('abort', stop, { once: true });
    const iterate = async function* (): AsyncGenerator<WatchEvent> {
      try {
        for (;;) {
          const next = w.queue.shift();
          if (next) {
            yield next;
            if (next.type === 'ERROR') return;
            continue;
          }
          if (w.stopped) return;
          await new Promise<void>((resolve) => (w.wake = resolve));
        }
      } finally {
        stop();
        signal?.removeEventListener('abort', stop);
      }
    };
    return { stop, [Symbol.asyncIterator]: iterate };
  }
}

/** A fresh, empty fake client. */
export function newFakeClient(opts: FakeClientOptions = {}): FakeClient {
  return new FakeClientImpl(opts);
}
