/**
 * The controller builder (controller-runtime's builder package):
 *
 *   controller(mgr)
 *     .for(Widget)                                   // reconcile Widgets; their changes enqueue them
 *     .owns(kinds.Deployment)                        // a Deployment's change enqueues its controller owner
 *     .watches(kinds.ConfigMap, (cm) => [...])       // any other mapping
 *     .withEventFilter(generationChanged())
 *     .withOptions({ maxConcurrentReconciles: 4 })
 *     .complete(async (ctx, req) => { const w = await ctx.get(); ... });
 *
 * The reconciler of `.for(Widget)` is typed with Widget: `ctx.get()`
 * resolves to a Widget (or undefined once it is gone).
 */
import { parseApiVersion } from '../api/types.js';
import type { ObjectKey } from './cache.js';
import { newController, type ControllerOptions, type ReconcileFunc, type Reconciler, type Request, type RuntimeController, type WatchSpec } from './controller.js';
import type { ResourceKind, RuntimeObject } from './kinds.js';
import type { Manager } from './manager.js';
import type { ObjectEvent, Predicate } from './predicates.js';

export interface ForOptions<T extends RuntimeObject> {
  predicates?: Predicate<T>[];
}

export interface OwnsOptions<C extends RuntimeObject> {
  predicates?: Predicate<C>[];
  /** Enqueue every owner of the `for` kind, not only the controller owner (default false). */
  allOwners?: boolean;
}

export interface WatchesOptions<W extends RuntimeObject> {
  predicates?: Predicate<W>[];
}

export interface Builder<T extends RuntimeObject> {
  /** Reconcile the controller owner (of the `for` kind) when an object of `kind` changes. */
  owns<C extends RuntimeObject>(kind: ResourceKind<C>, opts?: OwnsOptions<C>): Builder<T>;
  /** Reconcile the requests `map` returns when an object of `kind` changes (both old and new object of an update). */
  watches<W extends RuntimeObject>(kind: ResourceKind<W>, map: (obj: W) => ObjectKey[], opts?: WatchesOptions<W>): Builder<T>;
  /** Predicates every watch of this controller applies (all must pass). */
  withEventFilter(...predicates: Predicate[]): Builder<T>;
  withOptions(opts: ControllerOptions): Builder<T>;
  /** The controller's name (metrics, logs, events); default: the `for` kind in lower case. Unique per manager. */
  named(name: string): Builder<T>;
  /** Builds the controller and registers it with the manager. */
  complete(reconciler: Reconciler<T> | ReconcileFunc<T>): RuntimeController;
}

export interface BuilderStart {
  /** The kind this controller reconciles; its own changes enqueue it. */
  for<T extends RuntimeObject>(kind: ResourceKind<T>, opts?: ForOptions<T>): Builder<T>;
}

function asRequest(key: ObjectKey): Request {
  return { namespace: key.namespace ?? '', name: key.name };
}

function eventObjects(e: ObjectEvent): RuntimeObject[] {
  return e.type === 'update' ? [e.oldObject, e.object] : [e.object];
}

function dedup(reqs: Request[]): Request[] {
  const seen = new Set<string>();
  return reqs.filter((r) => {
    const k = `${r.namespace}/${r.name}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

class BuilderImpl<T extends RuntimeObject> implements Builder<T> {
  private readonly watchList: WatchSpec[] = [];
  private readonly filters: Predicate[] = [];
  private options: ControllerOptions = {};
  private name: string;

  constructor(
    private readonly mgr: Manager,
    private readonly forKind: ResourceKind<T>,
    forOpts: ForOptions<T>,
  ) {
    this.name = forKind.kind.toLowerCase();
    this.watchList.push({
      kind: forKind,
      toRequests: (e) => [{ namespace: e.object.metadata?.namespace ?? '', name: e.object.metadata?.name ?? '' }],
      predicates: (forOpts.predicates ?? []) as Predicate[],
    });
  }

  owns<C extends RuntimeObject>(kind: ResourceKind<C>, opts: OwnsOptions<C> = {}): Builder<T> {
    const owner = this.forKind;
    const ownerGroup = owner.group;
    this.watchList.push({
      kind,
      toRequests: (e) =>
        dedup(
          eventObjects(e).flatMap((obj) =>
            (obj.metadata?.ownerReferences ?? [])
              .filter((r) => (opts.allOwners || r.controller === true) && r.kind === owner.kind && parseApiVersion(r.apiVersion).group === ownerGroup)
              .map((r) => ({ namespace: owner.namespaced ? (obj.metadata?.namespace ?? '') : '', name: r.name })),
          ),
        ),
      predicates: (opts.predicates ?? []) as Predicate[],
    });
    return this;
  }

  watches<W extends RuntimeObject>(kind: ResourceKind<W>, map: (obj: W) => ObjectKey[], opts: WatchesOptions<W> = {}): Builder<T> {
    this.watchList.push({
      kind,
      toRequests: (e) => dedup(eventObjects(e).flatMap((obj) => map(obj as W).map(asRequest))),
      predicates: (opts.predicates ?? []) as Predicate[],
    });
    return this;
  }

  withEventFilter(...predicates: Predicate[]): Builder<T> {
    this.filters.push(...predicates);
    return this;
  }

  withOptions(opts: ControllerOptions): Builder<T> {
    this.options = { ...this.options, ...opts };
    return this;
  }

  named(name: string): Builder<T> {
    if (!/^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/.test(name)) throw new TypeError(`controller name ${JSON.stringify(name)}: use lower-case letters, digits, '-', '_' and '.'`);
    this.name = name;
    return this;
  }

  complete(reconciler: Reconciler<T> | ReconcileFunc<T>): RuntimeController {
    const fn: ReconcileFunc<T> = typeof reconciler === 'function' ? reconciler : (ctx, req) => reconciler.reconcile(ctx, req);
    const watches = this.watchList.map((w) => ({ ...w, predicates: [...w.predicates, ...this.filters] }));
    const mgr = this.mgr;
    const c = newController({
      name: this.name,
      forKind: this.forKind,
      watches,
      reconcile: fn as unknown as ReconcileFunc<RuntimeObject>,
      cache: mgr.cache,
      client: mgr.client,
      recorder: mgr.getEventRecorder(this.name),
      clock: mgr.clock,
      logger: mgr.logger.child({ controller: this.name, controllerKind: this.forKind.kind }),
      registry: mgr.registry,
      options: this.options,
      gracefulShutdownTimeoutMs: mgr.gracefulShutdownTimeoutMs,
    });
    for (const w of watches) mgr.cache.watch(w.kind);
    mgr.addController(c);
    return c;
  }
}

/** Starts building a controller for `mgr`. */
export function controller(mgr: Manager): BuilderStart {
  return {
    for: <T extends RuntimeObject>(kind: ResourceKind<T>, opts: ForOptions<T> = {}) => new BuilderImpl<T>(mgr, kind, opts),
  };
}
