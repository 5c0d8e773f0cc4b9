/**
 * The loop every CSR controller shares (pkg/controller/certificates
 * certificate_controller.go): CSR adds, updates and deletes enqueue the
 * name; a worker copies the CSR from the cache and hands it to `handle`
 * unless it already carries a certificate. Failures retry with backoff
 * (200 ms .. 1000 s per item, 10 qps overall) without limit;
 * IgnorableError retries quietly.
 */
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { keyFunc, objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import { newBucketRateLimiter, newItemExponentialFailureRateLimiter, newMaxOfRateLimiter } from '../../util/workqueue/rate-limiters.js';
import type { ControllerContext } from '../types.js';
import { IgnorableError, type CSR } from './csr-util.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export interface CertificateController extends Controller {
  /** Runs the handler for CSR `name` (the queue's sync). */
  syncCSR(name: string): Promise<void>;
  hasSynced(): boolean;
}

export interface CertificateControllerOptions {
  name: string;
  /** Gets a private copy of a CSR without a certificate; rejects to retry. */
  handle(csr: CSR): Promise<void>;
  /** Extra things that must stop with the controller (e.g. a CA reloader); resolves after stopping. */
  runAlso?(signal: AbortSignal): Promise<void>;
}

class CertificateBase implements CertificateController {
  readonly name: string;
  private readonly worker: QueueWorker;
  private readonly csrs: Lister<CSR>;
  private readonly synced: () => boolean;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly opts: CertificateControllerOptions,
  ) {
    this.name = opts.name;
    this.log = ctx.logger(opts.name);
    const lines = { starting: 'Starting certificate controller', stopping: 'Shutting down certificate controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.worker = newQueueWorker({
      name: opts.name,
      clock: ctx.clock,
      logger: this.log,
      maxRetries: Infinity,
      rateLimiter: newMaxOfRateLimiter(newItemExponentialFailureRateLimiter<string>(200, 1000_000), newBucketRateLimiter<string>(10, 100, ctx.clock)),
      sync: (key) => this.syncCSR(key),
    });
    const inf = ctx.informers.certificateSigningRequests();
    this.csrs = newLister(inf.getIndexer());
    const reg = inf.addEventHandler({
      onAdd: (csr) => this.worker.enqueue(keyFunc(csr)),
      onUpdate: (_o, n) => this.worker.enqueue(keyFunc(n)),
      onDelete: (obj) => {
        const csr = objectFromDeleted(obj);
        if (csr) this.worker.enqueue(keyFunc(csr));
        else this.log.error({}, 'could not get CSR from tombstone');
      },
    });
    this.synced = () => reg.hasSynced();
  }

  hasSynced(): boolean {
    return this.synced();
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => Promise.all([this.worker.run(workers, signal), this.opts.runAlso?.(signal)]));
  }

  async syncCSR(name: string): Promise<void> {
    const start = this.ctx.clock.now();
    try {
      const csr = this.csrs.get(name);
      if (!csr) {
        this.log.v(3).info({ csr: name }, 'csr has been deleted');
        return;
      }
      if (csr.status?.certificate) return; // already has a certificate: nothing to do
      await this.opts.handle(deepCopy(csr));
    } catch (err) {
      if (err instanceof IgnorableError) this.log.v(4).info({ csr: name, err: err.message }, 'Sync failed (ignorable)');
      else this.log.error(err, { csr: name }, 'Sync failed');
      throw err;
    } finally {
      this.log.v(4).info({ csr: name, duration: this.ctx.clock.since(start) }, 'Finished syncing certificate request');
    }
  }
}

export function newCertificateController(ctx: ControllerContext, opts: CertificateControllerOptions): CertificateController {
  return new CertificateBase(ctx, opts);
}
