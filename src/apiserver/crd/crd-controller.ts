/**
 * The in-server loop that kube-apiserver's apiextensions controllers run
 * (naming, establishing, finalizing, OpenAPI and discovery): it watches the
 * stored CustomResourceDefinitions and, for each,
 *
 * - accepts its names unless another CRD of the group (or a built-in
 *   resource) holds them: `status.acceptedNames`, condition NamesAccepted
 *   (True/NoConflicts, or False/<Field>Conflict) and Established
 *   (True/InitialNamesAccepted, or False/NotAccepted);
 * - serves its versions (resource table, hence discovery), printer columns
 *   and OpenAPI schemas as soon as it is established, and stops serving them
 *   when it goes away;
 * - while it is being deleted: Terminating condition, deletes every custom
 *   resource, then removes the `customresourcecleanup.apiextensions.k8s.io`
 *   finalizer so the CRD itself goes.
 *
 * Work is serialized: one reconcile at a time, a name queued at most once.
 */
import type { CustomResourceDefinition, CustomResourceDefinitionCondition, CustomResourceDefinitionNames } from 'kubernetes-types/apiextensions/v1.js';
import type { KubeObject } from '../../api/types.js';
import { rfc3339 } from '../../util/clock/clock.js';
import type { ServerContext } from '../context.js';
import type { ServedResource } from '../resources.js';
import { canonicalJson, storagePrefix } from '../store.js';
import { deleteObject } from '../deletion.js';
import { isNotFound } from '../../client/errors.js';
import { registerTableColumns, unregisterTableColumns } from '../table.js';
import type { UserInfo } from '../request-info.js';
import type { SwaggerFragment } from '../openapi/index.js';
import type { WatchHandle } from '../storage/storage.js';
import { cleanupFinalizer, newCrdStrategy } from './crd-strategy.js';
import { printerColumns, servedResourcesOf } from './custom-resource.js';
import { swaggerFragmentOf } from './openapi.js';
import { deepCopy } from '../../util/json/deep-copy.js';

type Crd = CustomResourceDefinition & KubeObject;

const crdUser: UserInfo = { username: 'system:apiserver', groups: ['system:masters'] };

export interface CrdController {
  /** Resolves when every queued reconcile has finished (tests, start-up). */
  idle(): Promise<void>;
  /** The OpenAPI definitions and paths of the established CRDs. */
  swaggerFragment(): SwaggerFragment;
  stop(): void;
}

export interface CrdControllerOptions {
  /** Called when the served custom resources change (OpenAPI caches). */
  onChange?: () => void;
  /** Delay before re-checking a terminating CRD whose objects are still finalizing (ms, default 1000). */
  recheckMs?: number;
  /** The conversion webhooks' deadline (ms); upstream's is 30 s. For tests. */
  conversionWebhookTimeoutMs?: number;
}

const conditionOrder = ['NamesAccepted', 'Established', 'Terminating'];

function setCondition(conds: CustomResourceDefinitionCondition[], c: Omit<CustomResourceDefinitionCondition, 'lastTransitionTime'>, now: string): CustomResourceDefinitionCondition[] {
  const old = conds.find((x) => x.type === c.type);
  const next: CustomResourceDefinitionCondition = { ...c, lastTransitionTime: old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now };
  if (old && old.status === c.status && old.reason === c.reason && old.message === c.message) return conds;
  const out = conds.filter((x) => x.type !== c.type);
  out.push(next);
  return out.sort((a, b) => conditionOrder.indexOf(a.type) - conditionOrder.indexOf(b.type));
}

/**
 * The names a CRD may use given the other CRDs' accepted names and the
 * built-in resources of its group (naming controller getAcceptedNamesForGroup):
 * the accepted names, and the first conflict as [reason, message].
 */
export function acceptNames(crd: Crd, others: readonly Crd[], builtins: readonly ServedResource[]): { names: CustomResourceDefinitionNames; conflict?: [string, string] } {
  const want = crd.spec!.names;
  const group = crd.spec!.group;
  const taken = { plural: new Set<string>(), singular: new Set<string>(), short: new Set<string>(), kind: new Set<string>(), listKind: new Set<string>() };
  for (const o of others) {
    if (o.metadata?.name === crd.metadata?.name || o.spec?.group !== group) continue;
    const n = o.status?.acceptedNames;
    if (!n?.plural) continue;
    taken.plural.add(n.plural);
    if (n.singular) taken.singular.add(n.singular);
    for (const s of n.shortNames ?? []) taken.short.add(s);
    taken.kind.add(n.kind);
    if (n.listKind) taken.listKind.add(n.listKind);
  }
  for (const b of builtins) {
    if (b.group !== group) continue;
    taken.plural.add(b.resource);
    taken.singular.add(b.singular);
    for (const s of b.shortNames) taken.short.add(s);
    taken.kind.add(b.kind);
    taken.listKind.add(b.listKind);
  }
  const accepted = crd.status?.acceptedNames;
  const conflict = (field: string, value: string): [string, string] => [`${field}Conflict`, `${JSON.stringify(value)} is already in use`];
  if (taken.plural.has(want.plural) || taken.singular.has(want.plural)) return { names: accepted ?? { plural: '', kind: '' }, conflict: conflict('Plural', want.plural) };
  const singular = want.singular ?? want.kind.toLowerCase();
  if (taken.singular.has(singular) || taken.plural.has(singular)) return { names: accepted ?? { plural: '', kind: '' }, conflict: conflict('Singular', singular) };
  for (const s of want.shortNames ?? []) {
    if (taken.short.has(s) || taken.plural.has(s)) return { names: accepted ?? { plural: '', kind: '' }, conflict: conflict('ShortNames', s) };
  }
  if (taken.kind.has(want.kind) || taken.listKind.has(want.kind)) return { names: accepted ?? { plural: '', kind: '' }, conflict: conflict('Kind', want.kind) };
  const listKind = want.listKind ?? `${want.kind}List`;
  if (taken.listKind.has(listKind) || taken.kind.has(listKind)) return { names: accepted ?? { plural: '', kind: '' }, conflict: conflict('ListKind', listKind) };
  return { names: { ...want, singular, listKind } };
}

/** Starts the loop over `server`'s storage; installs the full CRD strategy. */
export async function startCrdController(server: ServerContext, opts: CrdControllerOptions = {}): Promise<CrdController> {
  const { storage, store, resources, logger, clock } = server;
  const found = resources.find('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
  if (!found) throw new Error('customresourcedefinitions are not in the resource table');
  const crdR: ServedResource = found;
  crdR.strategy = newCrdStrategy(crdR.strategy);
  const prefix = storagePrefix(crdR, '');
  const builtins = resources.all().filter((r) => !r.customResource);
  const served = new Map<string, Crd>();
  const queued = new Set<string>();
  let chain: Promise<void> = Promise.resolve();
  let stopped = false;
  let watch: WatchHandle | undefined;
  const timers = new Set<{ stop(): void }>();

  const changed = () => {
    try {
      opts.onChange?.();
    } catch (err) {
      logger.error(err, {}, 'crd change listener failed');
    }
  };

  const enqueue = (name: string) => {
    if (stopped || queued.has(name)) return;
    queued.add(name);
    chain = chain.then(async () => {
      queued.delete(name);
      if (stopped) return;
      try {
        await reconcile(name);
      } catch (err) {
        logger.error(err, { crd: name }, 'reconciling CustomResourceDefinition failed; retrying');
        later(name);
      }
    });
  };

  const later = (name: string) => {
    if (stopped) return;
    const t = clock.setTimer(() => {
      timers.delete(t);
      enqueue(name);
    }, opts.recheckMs ?? 1000);
    timers.add(t);
  };

  const unserve = (name: string) => {
    const old = served.get(name);
    if (!old) return;
    served.delete(name);
    resources.setDynamic(name, []);
    const plural = old.status?.acceptedNames?.plural || old.spec?.names?.plural;
    if (plural) unregisterTableColumns(old.spec!.group, plural);
    logger.v(2).info({ crd: name }, 'stopped serving custom resource');
    changed();
  };

  const serve = (crd: Crd) => {
    const name = crd.metadata!.name!;
    const prev = served.get(name);
    if (prev && canonicalJson([prev.spec, prev.status?.acceptedNames]) === canonicalJson([crd.spec, crd.status?.acceptedNames])) return;
    const rs = servedResourcesOf(crd, {
      ...(server.webhookClient ? { webhookClient: server.webhookClient } : {}),
      ...(opts.conversionWebhookTimeoutMs !== undefined ? { webhookTimeoutMs: opts.conversionWebhookTimeoutMs } : {}),
    });
    resources.setDynamic(name, rs);
    served.set(name, crd);
    const preferred = resources.groups().find((g) => g.group === crd.spec!.group)?.versions.find((v) => rs.some((r) => r.version === v));
    const version = crd.spec!.versions.find((v) => v.name === preferred) ?? crd.spec!.versions.find((v) => v.served);
    if (version && rs[0]) {
      const { columns, exact } = printerColumns(version);
      registerTableColumns(crd.spec!.group, rs[0].resource, columns, { exact });
    }
    changed();
  };

  /** Deletes every object of the CRD; true when none is left. */
  const deleteInstances = async (crd: Crd): Promise<boolean> => {
    // The storage version when it is served (its objects need no conversion), else any served one.
    const ours = resources.all().filter((x) => x.customResource && x.group === crd.spec?.group && x.resource === (crd.status?.acceptedNames?.plural || crd.spec?.names.plural));
    const r = ours.find((x) => x.storageVersion) ?? ours[0];
    const gr = r ?? { group: crd.spec!.group, resource: crd.status?.acceptedNames?.plural || crd.spec!.names.plural };
    const list = await storage.list(storagePrefix(gr, ''));
    if (!r) {
      // Not served (never established): nothing can finalize these; drop them.
      for (const it of list.items) await storage.delete(it.key).catch((err: unknown) => logger.v(4).info({ key: it.key, err: String(err) }, 'custom resource already gone'));
      return true;
    }
    for (const it of list.items) {
      const ns = it.object.metadata?.namespace ?? '';
      try {
        await deleteObject(store, r, ns, it.object.metadata!.name!, { dryRun: false, user: crdUser });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return (await storage.list(storagePrefix(gr, ''), { limit: 1 })).items.length === 0;
  };

  const writeStatus = async (name: string, fn: (crd: Crd) => void) => {
    await store.guaranteedUpdate(crdR, '', name, (cur) => {
      const next = deepCopy(cur);
      fn(next as Crd);
      return next;
    }, { dryRun: false, user: crdUser, subresource: 'status' });
  };

  async function reconcile(name: string): Promise<void> {
    const stored = await storage.get(`${prefix}${name}`);
    if (!stored) {
      const old = served.get(name);
      unserve(name);
      // Deleted without the finalizer's work (e.g. the finalizer was removed by hand): objects go too.
      if (old) await deleteInstances(old);
      return;
    }
    const crd = deepCopy(stored.object) as Crd;
    const now = rfc3339(clock.now());
    if (crd.metadata?.deletionTimestamp) {
      if (!(crd.metadata.finalizers ?? []).includes(cleanupFinalizer)) return;
      await writeStatus(name, (c) => {
        c.status = { ...c.status, conditions: setCondition(c.status?.conditions ?? [], { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }, now) } as never;
      });
      let done: boolean;
      try {
        done = await deleteInstances(crd);
      } catch (err) {
        await writeStatus(name, (c) => {
          c.status = { ...c.status, conditions: setCondition(c.status?.conditions ?? [], { type: 'Terminating', status: 'True', reason: 'InstanceDeletionFailed', message: `could not list instances: ${(err as Error).message}` }, now) } as never;
        });
        throw err;
      }
      if (!done) {
        await writeStatus(name, (c) => {
          c.status = { ...c.status, conditions: setCondition(c.status?.conditions ?? [], { type: 'Terminating', status: 'True', reason: 'InstanceDeletionCheck', message: 'could not confirm zero CustomResources remaining: some instances are still finalizing' }, now) } as never;
        });
        later(name);
        return;
      }
      unserve(name);
      await writeStatus(name, (c) => {
        c.status = { ...c.status, conditions: setCondition(c.status?.conditions ?? [], { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' }, now) } as never;
      });
      try {
        await store.guaranteedUpdate(crdR, '', name, (cur) => {
          const next = deepCopy(cur);
          next.metadata!.finalizers = (cur.metadata?.finalizers ?? []).filter((f) => f !== cleanupFinalizer);
          return next;
        }, { dryRun: false, user: crdUser });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return;
    }
    const others = (await storage.list(prefix)).items.map((x) => x.object as Crd);
    const { names, conflict } = acceptNames(crd, others, builtins);
    const apply = (c: Crd) => {
      let conds = c.status?.conditions ?? [];
      if (conflict) {
        conds = setCondition(conds, { type: 'NamesAccepted', status: 'False', reason: conflict[0], message: conflict[1] }, now);
        if (!conds.some((x) => x.type === 'Established' && x.status === 'True')) {
          conds = setCondition(conds, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }, now);
        }
      } else {
        conds = setCondition(conds, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }, now);
        conds = setCondition(conds, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now);
      }
      c.status = { ...c.status, acceptedNames: names, conditions: conds, storedVersions: c.status?.storedVersions ?? [] } as never;
    };
    apply(crd);
    const established = crd.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
    // Serve first, then report Established: a client that saw the condition finds the resource.
    if (established) serve(crd);
    else unserve(name);
    try {
      await writeStatus(name, apply);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      unserve(name);
    }
  }

  const initial = await storage.list(prefix);
  for (const it of initial.items) enqueue(it.object.metadata!.name!);
  watch = storage.watch(
    prefix,
    initial.revision,
    (e) => {
      const name = e.object.metadata?.name;
      if (!name) return;
      enqueue(name);
      // A CRD's names change what its group's other CRDs may accept.
      if (e.type !== 'ADDED') for (const other of served.keys()) if (other !== name) enqueue(other);
    },
    (err) => logger.error(err, {}, 'CustomResourceDefinition watch ended'),
  );
  await chain;

  return {
    async idle() {
      for (;;) {
        const c = chain;
        await c;
        if (c === chain) return;
      }
    },
    swaggerFragment: () => swaggerFragmentOf([...served.values()]),
    stop() {
      stopped = true;
      watch?.stop();
      for (const t of timers) t.stop();
      timers.clear();
    },
  };
}
