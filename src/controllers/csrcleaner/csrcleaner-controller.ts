/**
 * The CSR cleaner (pkg/controller/certificates/cleaner): every hour, and once
 * at start, deletes CertificateSigningRequests that are done with:
 * - issued (Approved with a certificate) more than 1 hour ago (the Approved
 *   condition's lastUpdateTime), or whose certificate has expired;
 * - Denied or Failed more than 1 hour ago (the condition's lastUpdateTime);
 * - pending (no conditions) more than 24 hours after creation.
 * A condition without lastUpdateTime never ages, as upstream.
 */
import { X509Certificate } from 'node:crypto';
import { GVR } from '../../api/gvr.js';
import { isNotFound } from '../../client/errors.js';
import { waitForCacheSync } from '../../controller/base-controller.js';
import type { Controller } from '../../controller/types.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import { parseTime } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { pemBlock } from '../../util/cert/csr.js';
import type { CSR } from '../certificates/csr-util.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';

export const CSR_CLEANER_CONTROLLER_NAME = 'certificatesigningrequest-cleaner-controller';
export const POLLING_INTERVAL_MS = 3600_000;
export const APPROVED_EXPIRATION_MS = 3600_000;
export const DENIED_EXPIRATION_MS = 3600_000;
export const PENDING_EXPIRATION_MS = 24 * 3600_000;

export interface CSRCleanerController extends Controller {
  /** One pass over every cached CSR (the hourly work). */
  cleanAll(): Promise<void>;
  hasSynced(): boolean;
}

/** Why `csr` should be deleted at `now`, or undefined to keep it. Throws on an unparsable certificate. */
export function cleanupReason(csr: CSR, now: number): string | undefined {
  const olderThan = (t: string | undefined, d: number) => {
    const v = parseTime(t);
    return v !== undefined && now - v > d;
  };
  const conditions = csr.status?.conditions ?? [];
  const issued = !!csr.status?.certificate;
  if (issued && conditions.some((c) => c.type === 'Approved') && certificateExpired(csr, now)) return 'the associated certificate is expired';
  for (const c of conditions) {
    if (c.type === 'Approved' && issued && olderThan(c.lastUpdateTime, APPROVED_EXPIRATION_MS)) return 'it is more than 1h0m0s old and approved';
    if (c.type === 'Denied' && olderThan(c.lastUpdateTime, DENIED_EXPIRATION_MS)) return 'it is more than 1h0m0s old and denied';
    if (c.type === 'Failed' && olderThan(c.lastUpdateTime, DENIED_EXPIRATION_MS)) return 'it is more than 1h0m0s old and failed';
  }
  if (conditions.length === 0 && olderThan(csr.metadata?.creationTimestamp, PENDING_EXPIRATION_MS)) return 'it is more than 24h0m0s old and unhandled';
  return undefined;
}

function certificateExpired(csr: CSR, now: number): boolean {
  const pem = Buffer.from(csr.status?.certificate ?? '', 'base64');
  const block = pemBlock(pem);
  if (!block) throw new Error('expected the certificate associated with the CSR to be PEM encoded');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(block.body);
  } catch (err) {
    throw new Error(`unable to parse certificate data: ${(err as Error).message}`, { cause: err });
  }
  return now > Date.parse(cert.validTo);
}

class Cleaner implements CSRCleanerController {
  readonly name = CSR_CLEANER_CONTROLLER_NAME;
  private readonly csrs: Lister<CSR>;
  private readonly synced: () => boolean;
  private readonly log: Logger;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    const inf = ctx.informers.certificateSigningRequests();
    this.csrs = newLister(inf.getIndexer());
    const reg = inf.addEventHandler({});
    this.synced = () => reg.hasSynced();
  }

  hasSynced(): boolean {
    return this.synced();
  }
  healthy(): boolean {
    return true;
  }

  async run(_workers: number, signal: AbortSignal): Promise<void> {
    this.log.info({}, 'Starting CSR cleaner controller');
    try {
      if (!(await waitForCacheSync(this.name, signal, this.ctx.clock, this.synced))) return;
      while (!signal.aborted) {
        await this.cleanAll();
        try {
          await this.ctx.clock.sleep(POLLING_INTERVAL_MS, signal);
        } catch {
          break; // aborted
        }
      }
    } finally {
      this.log.info({}, 'Shutting down CSR cleaner controller');
    }
  }

  async cleanAll(): Promise<void> {
    const now = this.ctx.clock.now();
    for (const csr of this.csrs.list()) {
      const name = csr.metadata?.name ?? '';
      try {
        const reason = cleanupReason(csr, now);
        if (!reason) continue;
        this.log.info({ csr: name }, `Cleaning CSR as ${reason}.`);
        await this.ctx.client.resource(GVR.certificateSigningRequests).delete(name);
      } catch (err) {
        if (isNotFound(err)) continue;
        this.log.error(err, { csr: name }, 'Error while attempting to clean CSR');
      }
    }
  }
}

export function newCSRCleanerController(ctx: ControllerContext): CSRCleanerController {
  return new Cleaner(ctx);
}

export const descriptor: ControllerDescriptor = {
  name: CSR_CLEANER_CONTROLLER_NAME,
  aliases: ['csrcleaner'],
  requiredResources: [GVR.certificateSigningRequests],
  defaultWorkers: 1,
  create: (ctx) => newCSRCleanerController(ctx),
};
