/**
 * The token cleaner (pkg/controller/bootstrap/tokencleaner.go): deletes
 * bootstrap token Secrets (`type: bootstrap.kubernetes.io/token` in
 * kube-system) once their `expiration` has passed (an unparseable
 * expiration counts as passed). A token not yet expired is looked at again
 * when it expires. The delete carries a uid precondition, so a Secret
 * recreated under the same name is not removed. Disabled by default, as upstream.
 */
import type { Secret } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { namespacedKey, splitKey } from '../../api/types.js';
import { isConflict, isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { SECRET_TYPE_BOOTSTRAP_TOKEN, TOKEN_SECRET_NAMESPACE, tokenExpiration } from '../bootstrapsigner/bootstrap-token.js';

export const TOKEN_CLEANER_CONTROLLER_NAME = 'token-cleaner-controller';

export interface TokenCleanerController extends Controller {
  /** Deletes secret `ns/name` if it is an expired token, else requeues it at expiry (the queue's sync). */
  syncSecret(key: string): Promise<void>;
  hasSynced(): boolean;
}

type SecretObj = Kube<Secret>;

class Cleaner implements TokenCleanerController {
  readonly name = TOKEN_CLEANER_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly secrets: Lister<SecretObj>;
  private readonly synced: () => boolean;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } });
    this.worker = newQueueWorker({ name: 'token_cleaner', clock: ctx.clock, logger: this.log, sync: (key) => this.syncSecret(key) });
    const inf = ctx.informers.secrets();
    this.secrets = newLister(inf.getIndexer());
    const onSecret = (s: SecretObj) => {
      if (s.type === SECRET_TYPE_BOOTSTRAP_TOKEN && s.metadata?.namespace === TOKEN_SECRET_NAMESPACE) this.worker.enqueue(namespacedKey(s));
    };
    const reg = inf.addEventHandler({ onAdd: onSecret, onUpdate: (_o, s) => onSecret(s) });
    this.synced = () => reg.hasSynced();
  }

  hasSynced(): boolean {
    return this.synced();
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }
  run(_workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => this.worker.run(1, signal));
  }

  async syncSecret(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const secret = this.secrets.namespace(namespace).get(name);
    if (!secret || secret.type !== SECRET_TYPE_BOOTSTRAP_TOKEN) return;
    const { ttlMs, expired } = tokenExpiration(secret, this.ctx.clock.now());
    if (!expired) {
      if (ttlMs > 0) this.worker.enqueueAfter(key, ttlMs);
      return;
    }
    this.log.v(3).info({ secret: key }, 'Deleting expired secret');
    const uid = secret.metadata?.uid;
    try {
      await this.ctx.client.resource<SecretObj>(GVR.secrets).namespace(namespace).delete(name, uid ? { preconditions: { uid } } : {});
    } catch (err) {
      // Already gone, or replaced by a Secret with another uid: nothing to do.
      if (isNotFound(err) || isConflict(err)) return;
      this.log.error(err, { secret: key }, 'Error deleting secret');
      throw err;
    }
  }
}

export function newTokenCleanerController(ctx: ControllerContext): TokenCleanerController {
  return new Cleaner(ctx);
}

export const descriptor: ControllerDescriptor = {
  name: TOKEN_CLEANER_CONTROLLER_NAME,
  aliases: ['tokencleaner'],
  disabledByDefault: true,
  requiredResources: [GVR.secrets],
  defaultWorkers: 1,
  create: (ctx) => newTokenCleanerController(ctx),
};
