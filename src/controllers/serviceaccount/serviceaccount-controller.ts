/**
 * The service account controller (pkg/controller/serviceaccount,
 * serviceaccounts_controller.go): every active namespace has the service
 * accounts it is told to ensure (`default`), recreated when deleted.
 *
 * Keys are namespace names. A namespace that is gone or not Active is left
 * alone; creating into a terminating namespace is not an error.
 */
import type { Namespace, ServiceAccount } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { isAlreadyExists, isStatusError } from '../../client/errors.js';
import type { Controller } from '../../controller/types.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { objectFromDeleted } from '../../controller/keys.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const SERVICE_ACCOUNT_CONTROLLER_NAME = 'serviceaccount-controller';
/** The status cause type the API server sets when creating into a terminating namespace. */
export const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

/** True when `err` is a StatusError carrying a cause of type `cause` (apierrors.HasStatusCause). */
export function hasStatusCause(err: unknown, cause: string): boolean {
  if (!isStatusError(err)) return false;
  return (err.status.details?.causes ?? []).some((c) => c.reason === cause);
}

export interface ServiceAccountsControllerOptions {
  /** Service accounts to ensure in every namespace (default: one named `default`). */
  serviceAccounts?: ServiceAccount[];
}

export interface ServiceAccountsController extends Controller {
  /** Ensures the service accounts of one namespace (the queue's sync). */
  syncNamespace(namespace: string): Promise<void>;
  /** Informers this controller reads have synced. */
  hasSynced(): boolean;
}

class ServiceAccounts implements ServiceAccountsController {
  readonly name = SERVICE_ACCOUNT_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly saLister: Lister<Kube<ServiceAccount>>;
  private readonly nsLister: Lister<Kube<Namespace>>;
  private readonly synced: Array<() => boolean>;
  private readonly toEnsure: ServiceAccount[];
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;

  constructor(
    private readonly ctx: ControllerContext,
    opts: ServiceAccountsControllerOptions,
  ) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.toEnsure = opts.serviceAccounts ?? [{ metadata: { name: 'default' } }];
    this.worker = newQueueWorker({
      name: 'serviceaccount',
      clock: ctx.clock,
      logger: this.log,
      maxRetries: Infinity,
      sync: (key) => this.syncNamespace(key),
    });
    const sa = ctx.informers.serviceAccounts();
    const saReg = sa.addEventHandler({
      onDelete: (obj) => {
        const o = objectFromDeleted(obj);
        if (!o) {
          this.log.error({}, 'could not get object from tombstone');
          return;
        }
        const ns = o.metadata?.namespace;
        if (ns) this.worker.enqueue(ns);
      },
    });
    const nsInf = ctx.informers.namespaces();
    const nsReg = nsInf.addEventHandler({
      onAdd: (ns) => this.worker.enqueue(ns.metadata?.name ?? ''),
      onUpdate: (_old, ns) => this.worker.enqueue(ns.metadata?.name ?? ''),
    });
    this.saLister = newLister(sa.getIndexer());
    this.nsLister = newLister(nsInf.getIndexer());
    this.synced = [() => saReg.hasSynced(), () => nsReg.hasSynced()];
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }

  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => this.worker.run(workers, signal));
  }

  async syncNamespace(key: string): Promise<void> {
    const start = this.ctx.clock.now();
    try {
      const ns = this.nsLister.get(key);
      if (!ns) return;
      // Not Active (Terminating): nothing may be created there.
      if ((ns.status?.phase ?? 'Active') !== 'Active') return;
      const failures: unknown[] = [];
      for (const want of this.toEnsure) {
        const name = want.metadata?.name ?? '';
        if (this.saLister.namespace(key).get(name)) continue;
        const sa = deepCopy(want) as Kube<ServiceAccount>;
        sa.metadata = { ...sa.metadata, namespace: key };
        try {
          await this.ctx.client.resource<Kube<ServiceAccount>>(GVR.serviceAccounts).namespace(key).create(sa);
        } catch (err) {
          if (isAlreadyExists(err) || hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) continue;
          failures.push(err);
        }
      }
      if (failures.length === 1) throw failures[0];
      if (failures.length > 1) throw new AggregateError(failures, failures.map((e) => (e as Error)?.message ?? String(e)).join(', '));
    } finally {
      this.log.v(4).info({ namespace: key, duration: this.ctx.clock.since(start) }, 'Finished syncing namespace');
    }
  }
}

export function newServiceAccountsController(ctx: ControllerContext, opts: ServiceAccountsControllerOptions = {}): ServiceAccountsController {
  return new ServiceAccounts(ctx, opts);
}

/** kube-controller-manager starts this controller with one worker. */
export const descriptor: ControllerDescriptor = {
  name: SERVICE_ACCOUNT_CONTROLLER_NAME,
  aliases: ['serviceaccount'],
  requiredResources: [GVR.serviceAccounts, GVR.namespaces],
  defaultWorkers: 1,
  create: (ctx) => newServiceAccountsController(ctx),
};
