/**
 * The root CA certificate publisher (pkg/controller/certificates/
 * rootcacertpublisher): every namespace holds a `kube-root-ca.crt`
 * ConfigMap whose `ca.crt` is the cluster CA, with the usage annotation;
 * the map is recreated when deleted and restored when changed.
 *
 * Keys are namespace names. The CA is `options.rootCA` (kube-controller-
 * manager's --root-ca-file, or the CA the controller manager uses to reach
 * the API server; `kcm up` passes the embedded API server's CA).
 */
import type { ConfigMap, Namespace } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { isNotFound } from '../../client/errors.js';
import type { Controller } from '../../controller/types.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { objectFromDeleted } from '../../controller/keys.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { hasStatusCause, NAMESPACE_TERMINATING_CAUSE } from '../serviceaccount/serviceaccount-controller.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const ROOT_CA_CERT_PUBLISHER_CONTROLLER_NAME = 'root-ca-certificate-publisher-controller';
export const ROOT_CA_CONFIGMAP_NAME = 'kube-root-ca.crt';
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
export const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.';

export interface RootCACertPublisher extends Controller {
  /** Creates or restores the ConfigMap of one namespace (the queue's sync). */
  syncNamespace(namespace: string): Promise<void>;
  hasSynced(): boolean;
}

function sameData(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const ak = Object.keys(a ?? {});
  const bk = Object.keys(b);
  return ak.length === bk.length && bk.every((k) => a?.[k] === b[k]);
}

class Publisher implements RootCACertPublisher {
  readonly name = ROOT_CA_CERT_PUBLISHER_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly cmLister: Lister<Kube<ConfigMap>>;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly rootCA: string,
  ) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting root CA cert publisher controller', stopping: 'Shutting down root CA cert publisher controller' };
    this.lifecycle = newControllerLifecycle({ name: 'crt configmap', clock: ctx.clock, log: this.log, ...lines });
    this.worker = newQueueWorker({
      name: 'root_ca_cert_publisher',
      clock: ctx.clock,
      logger: this.log,
      maxRetries: Infinity,
      sync: (key) => this.syncNamespace(key),
    });
    const cms = ctx.informers.configMaps();
    const onCM = (cm: Kube<ConfigMap> | undefined) => {
      if (!cm || cm.metadata?.name !== ROOT_CA_CONFIGMAP_NAME) return;
      const ns = cm.metadata?.namespace;
      if (ns) this.worker.enqueue(ns);
    };
    const cmReg = cms.addEventHandler({
      onUpdate: (_old, cm) => onCM(cm),
      onDelete: (obj) => onCM(objectFromDeleted(obj)),
    });
    const nsInf = ctx.informers.namespaces();
    const nsReg = nsInf.addEventHandler({
      onAdd: (ns: Kube<Namespace>) => this.worker.enqueue(ns.metadata?.name ?? ''),
      onUpdate: (_old, ns: Kube<Namespace>) => {
        if ((ns.status?.phase ?? 'Active') !== 'Active') return;
        this.worker.enqueue(ns.metadata?.name ?? '');
      },
    });
    this.cmLister = newLister(cms.getIndexer());
    this.synced = [() => cmReg.hasSynced(), () => nsReg.hasSynced()];
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

  async syncNamespace(ns: string): Promise<void> {
    const start = this.ctx.clock.now();
    const client = this.ctx.client.resource<Kube<ConfigMap>>(GVR.configMaps).namespace(ns);
    const data = { 'ca.crt': this.rootCA };
    try {
      const cm = this.cmLister.namespace(ns).get(ROOT_CA_CONFIGMAP_NAME);
      if (!cm) {
        try {
          await client.create({
            metadata: { name: ROOT_CA_CONFIGMAP_NAME, namespace: ns, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } },
            data,
          });
        } catch (err) {
          // Do not retry a create if the namespace is gone or terminating.
          if (isNotFound(err) || hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) return;
          throw err;
        }
        return;
      }
      if (sameData(cm.data, data) && cm.metadata?.annotations?.[DESCRIPTION_ANNOTATION]) return;
      const next = deepCopy(cm);
      next.data = data;
      delete next.binaryData;
      next.metadata = { ...next.metadata, annotations: { ...(next.metadata?.annotations ?? {}), [DESCRIPTION_ANNOTATION]: DESCRIPTION } };
      await client.update(next);
    } finally {
      this.log.v(4).info({ namespace: ns, duration: this.ctx.clock.since(start) }, 'Finished syncing namespace');
    }
  }
}

/** The publisher for `rootCA` (PEM). */
export function newRootCACertPublisher(ctx: ControllerContext, rootCA: string): RootCACertPublisher {
  return new Publisher(ctx, rootCA);
}

/**
 * A controller that only waits for the signal: kcm has no CA to publish.
 * (Upstream falls back to the CA of its own client config; kcm's context
 * carries the CA only as options.rootCA.)
 */
function idle(ctx: ControllerContext): Controller {
  const log = ctx.logger(ROOT_CA_CERT_PUBLISHER_CONTROLLER_NAME);
  return {
    name: ROOT_CA_CERT_PUBLISHER_CONTROLLER_NAME,
    healthy: () => true,
    async run(_workers, signal) {
      log.warn({}, 'no root CA configured (--root-ca-file); not publishing kube-root-ca.crt');
      if (signal.aborted) return;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
}

/** kube-controller-manager starts this controller with one worker. */
export const descriptor: ControllerDescriptor = {
  name: ROOT_CA_CERT_PUBLISHER_CONTROLLER_NAME,
  aliases: ['root-ca-cert-publisher'],
  requiredResources: [GVR.configMaps, GVR.namespaces],
  defaultWorkers: 1,
  create: (ctx) => (ctx.options.rootCA ? newRootCACertPublisher(ctx, ctx.options.rootCA) : idle(ctx)),
};
