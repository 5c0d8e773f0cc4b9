/**
 * The service-account token controller (pkg/controller/serviceaccount/tokens_controller.go).
 *
 * Enabled only with --service-account-private-key-file (as upstream).
 * - On API servers before 1.24 (whose ServiceAccount admission refuses pods
 *   until the token exists), every ServiceAccount gets a
 *   `kubernetes.io/service-account-token` Secret named `<sa>-token-<5 chars>`,
 *   annotated with the SA's name and uid, holding `token` (a legacy JWT
 *   signed with the key), `ca.crt` (--root-ca-file) and `namespace`, and
 *   referenced from the SA's `secrets`, as kube-controller-manager of those
 *   releases did. A deleted token Secret is dropped from `secrets` and a new
 *   one made. From 1.24 on (LegacyServiceAccountTokenNoAutoGeneration),
 *   upstream no longer generates them, and neither does kcm.
 * - Token Secrets created by anyone else are filled in (token, ca.crt,
 *   namespace) as current Kubernetes does.
 * - Token Secrets of a ServiceAccount that is gone (or has another uid) are
 *   deleted.
 */
import type { Secret, ServiceAccount } from 'kubernetes-types/core/v1.js';
import { serverOlderThan } from '../../client/discovery.js';
import { GVR } from '../../api/gvr.js';
import { generateName } from '../../api/names.js';
import { isConflict, isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import { objectFromDeleted } from '../../controller/keys.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import { serverVersionIs } from '../server-version.js';
import { legacyClaims, newTokenGenerator, type TokenGenerator } from './jwt.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const SERVICEACCOUNT_TOKEN_CONTROLLER_NAME = 'serviceaccount-token-controller';
export const SECRET_TYPE_SA_TOKEN = 'kubernetes.io/service-account-token';
export const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const SA_UID_ANNOTATION = 'kubernetes.io/service-account.uid';
/** Retries of adding the reference to the SA (retry.DefaultRetry: 5 steps). */
const REFERENCE_RETRIES = 5;

type SAObj = Kube<ServiceAccount>;
type SecretObj = Kube<Secret>;

export interface ServiceAccountTokenController extends Controller {
  hasSynced(): boolean;
  syncServiceAccount(key: string): Promise<void>;
  syncSecret(key: string): Promise<void>;
}

interface SAKey {
  namespace: string;
  name: string;
  uid: string;
}
interface SecretKey extends SAKey {
  saName: string;
  saUID: string;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined) => (s ? Buffer.from(s, 'base64').toString('utf8') : '');

function isServiceAccountToken(secret: Secret, sa: ServiceAccount): boolean {
  if (secret.type !== SECRET_TYPE_SA_TOKEN) return false;
  const a = secret.metadata?.annotations ?? {};
  if (a[SA_NAME_ANNOTATION] !== sa.metadata?.name) return false;
  const uid = a[SA_UID_ANNOTATION];
  return !uid || uid === sa.metadata?.uid;
}

class TokensController implements ServiceAccountTokenController {
  readonly name = SERVICEACCOUNT_TOKEN_CONTROLLER_NAME;
  private readonly log: Logger;
  private readonly sas: Lister<SAObj>;
  private readonly secrets: Lister<SecretObj>;
  private readonly synced: Array<() => boolean>;
  private readonly saWorker: QueueWorker;
  private readonly secretWorker: QueueWorker;
  private readonly token: TokenGenerator;
  private readonly rootCA: string;
  /**
   * Token secrets this controller created that the informer may not show
   * yet (upstream's mutation cache): without it the SA update that adds the
   * reference would make a second token.
   */
  private readonly createdTokens = new Map<string, SecretObj>();
  private readonly lifecycle: ControllerLifecycle;

  constructor(
    private readonly ctx: ControllerContext,
    privateKeyPem: string,
    /** Generate a token Secret for every ServiceAccount (API servers before 1.24). */
    private readonly autoGenerate: boolean,
  ) {
    this.log = ctx.logger(this.name);
    const lines = { starting: 'Starting service account token controller', stopping: 'Shutting down service account token controller', fields: { controller: this.name } };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, ...lines });
    this.token = newTokenGenerator(privateKeyPem);
    this.rootCA = ctx.options.rootCA ?? '';
    const saInf = ctx.informers.serviceAccounts();
    const secInf = ctx.informers.secrets();
    this.sas = newLister(saInf.getIndexer());
    this.secrets = newLister(secInf.getIndexer());
    this.synced = [() => saInf.hasSynced(), () => secInf.hasSynced()];
    this.saWorker = newQueueWorker({ name: 'serviceaccount_tokens_service', clock: ctx.clock, logger: this.log, sync: (k) => this.syncServiceAccount(k) });
    this.secretWorker = newQueueWorker({ name: 'serviceaccount_tokens_secret', clock: ctx.clock, logger: this.log, sync: (k) => this.syncSecret(k) });
    const saKey = (sa: SAObj) => JSON.stringify({ namespace: sa.metadata?.namespace ?? '', name: sa.metadata?.name ?? '', uid: sa.metadata?.uid ?? '' } satisfies SAKey);
    saInf.addEventHandler({
      onAdd: (sa) => this.saWorker.enqueue(saKey(sa)),
      onUpdate: (_o, sa) => this.saWorker.enqueue(saKey(sa)),
      onDelete: (d) => {
        const sa = objectFromDeleted(d);
        if (sa) this.saWorker.enqueue(saKey(sa));
      },
    });
    const secretKey = (s: SecretObj) =>
      JSON.stringify({
        namespace: s.metadata?.namespace ?? '',
        name: s.metadata?.name ?? '',
        uid: s.metadata?.uid ?? '',
        saName: s.metadata?.annotations?.[SA_NAME_ANNOTATION] ?? '',
        saUID: s.metadata?.annotations?.[SA_UID_ANNOTATION] ?? '',
      } satisfies SecretKey);
    const onSecret = (s: SecretObj | undefined) => {
      if (s && s.type === SECRET_TYPE_SA_TOKEN) this.secretWorker.enqueue(secretKey(s));
    };
    secInf.addEventHandler({
      onAdd: (s) => onSecret(s),
      onUpdate: (_o, s) => onSecret(s),
      onDelete: (d) => onSecret(objectFromDeleted(d)),
    });
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.saWorker.healthy() && this.secretWorker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => Promise.all([this.saWorker.run(workers, signal), this.secretWorker.run(workers, signal)]));
  }

  /** The SA from the cache (uid must match when given); a live read on a miss when `fetch`. Undefined when gone. */
  private async getServiceAccount(ns: string, name: string, uid: string, fetch: boolean): Promise<SAObj | undefined> {
    const cached = this.sas.namespace(ns).get(name);
    if (cached && (!uid || cached.metadata?.uid === uid)) return cached;
    if (!fetch) return undefined;
    try {
      const live = await this.ctx.client.resource<SAObj>(GVR.serviceAccounts).namespace(ns).get(name);
      return !uid || live.metadata?.uid === uid ? live : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private tokenSecrets(sa: ServiceAccount): SecretObj[] {
    const ns = sa.metadata?.namespace ?? '';
    const out = this.secrets
      .namespace(ns)
      .list()
      .filter((s) => isServiceAccountToken(s, sa));
    for (const [key, s] of this.createdTokens) {
      const inCache = this.secrets.namespace(s.metadata?.namespace ?? '').get(s.metadata?.name ?? '');
      if (inCache) {
        // The informer caught up (or the name now holds something newer).
        this.createdTokens.delete(key);
        continue;
      }
      if (s.metadata?.namespace === ns && isServiceAccountToken(s, sa)) out.push(s);
    }
    return out;
  }

  private hasReferencedToken(sa: ServiceAccount): boolean {
    const refs = new Set((sa.secrets ?? []).map((r) => r.name));
    if (!refs.size) return false;
    return this.tokenSecrets(sa).some((s) => refs.has(s.metadata?.name));
  }

  async syncServiceAccount(key: string): Promise<void> {
    const k = JSON.parse(key) as SAKey;
    const sa = await this.getServiceAccount(k.namespace, k.name, k.uid, false);
    if (!sa) {
      // The SA is gone: delete its tokens.
      const gone = { metadata: { namespace: k.namespace, name: k.name, uid: k.uid } } as ServiceAccount;
      for (const s of this.tokenSecrets(gone)) await this.deleteToken(s.metadata?.namespace ?? '', s.metadata?.name ?? '', s.metadata?.uid ?? '');
      return;
    }
    if (this.autoGenerate && (await this.ensureReferencedToken(sa))) this.saWorker.enqueueRateLimited(key);
  }

  /** Creates and references a token Secret unless one is referenced. True when the caller should retry later. */
  private async ensureReferencedToken(sa: SAObj): Promise<boolean> {
    if (this.hasReferencedToken(sa)) return false;
    const ns = sa.metadata?.namespace ?? '';
    const saName = sa.metadata?.name ?? '';
    const sas = this.ctx.client.resource<SAObj>(GVR.serviceAccounts).namespace(ns);
    let live: SAObj | undefined = await sas.get(saName);
    if (live.metadata?.resourceVersion !== sa.metadata?.resourceVersion) {
      // Our cache or the live read is stale: try again once they agree.
      this.log.v(4).info({ serviceAccount: `${ns}/${saName}` }, 'liveServiceAccount.ResourceVersion does not match cache, retrying');
      return true;
    }
    const secretName = generateName(`${saName}-token-`);
    const jwt = this.token.generate(legacyClaims({ namespace: ns, name: saName, uid: sa.metadata?.uid ?? '' }, secretName));
    const secret: SecretObj = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secretName, namespace: ns, annotations: { [SA_NAME_ANNOTATION]: saName, [SA_UID_ANNOTATION]: sa.metadata?.uid ?? '' } },
      type: SECRET_TYPE_SA_TOKEN,
      data: { token: b64(jwt), namespace: b64(ns), ...(this.rootCA ? { 'ca.crt': b64(this.rootCA) } : {}) },
    };
    const secrets = this.ctx.client.resource<SecretObj>(GVR.secrets).namespace(ns);
    const created = await secrets.create(secret);
    this.createdTokens.set(`${ns}/${secretName}`, created);
    this.log.v(2).info({ secret: `${ns}/${secretName}`, serviceAccount: `${ns}/${saName}` }, 'created token secret');

    let lastErr: unknown;
    for (let attempt = 0; attempt < REFERENCE_RETRIES; attempt++) {
      try {
        if (!live) {
          live = await sas.get(saName);
          // Another SA of the same name, or a token got referenced meanwhile: nothing to add.
          if (live.metadata?.uid !== sa.metadata?.uid || this.hasReferencedToken(live)) return false;
        }
        const next = deepCopy(live);
        (next as { secrets?: unknown[] }).secrets = [...(live.secrets ?? []), { name: secretName }];
        await sas.update(next);
        return false;
      } catch (err) {
        lastErr = err;
        live = undefined;
        if (!isConflict(err)) break;
      }
    }
    // The reference could not be added: remove the token made for it.
    this.log.v(2).info({ secret: `${ns}/${secretName}`, err: String(lastErr) }, "deleting secret because reference couldn't be added");
    this.createdTokens.delete(`${ns}/${secretName}`);
    try {
      await secrets.delete(secretName, { preconditions: { uid: created.metadata?.uid ?? '' } });
    } catch (err) {
      this.log.error(err, { secret: `${ns}/${secretName}` }, 'cannot delete unreferenced token secret');
    }
    throw lastErr;
  }

  private async deleteToken(ns: string, name: string, uid: string): Promise<void> {
    try {
      await this.ctx.client.resource<SecretObj>(GVR.secrets).namespace(ns).delete(name, uid ? { preconditions: { uid } } : {});
      this.log.v(2).info({ secret: `${ns}/${name}` }, 'deleted token secret of a service account that is gone');
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }

  async syncSecret(key: string): Promise<void> {
    const k = JSON.parse(key) as SecretKey;
    const cached = this.secrets.namespace(k.namespace).get(k.name);
    const secret = cached && (!k.uid || cached.metadata?.uid === k.uid) ? cached : undefined;
    if (!secret) {
      // Gone: drop the reference from its SA (whose update then makes a new token).
      const sa = await this.getServiceAccount(k.namespace, k.saName, k.saUID, false);
      if (sa) await this.removeSecretReference(k);
      return;
    }
    const sa = await this.getServiceAccount(k.namespace, k.saName, k.saUID, true);
    if (!sa) {
      this.log.v(4).info({ secret: `${k.namespace}/${k.name}` }, 'service account does not exist, deleting token');
      await this.deleteToken(k.namespace, k.name, k.uid);
      return;
    }
    await this.generateTokenIfNeeded(sa, secret);
  }

  private async removeSecretReference(k: SecretKey): Promise<void> {
    const sas = this.ctx.client.resource<SAObj>(GVR.serviceAccounts).namespace(k.namespace);
    for (let attempt = 0; ; attempt++) {
      let sa: SAObj;
      try {
        sa = await sas.get(k.saName);
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      if (k.saUID && sa.metadata?.uid !== k.saUID) return;
      const refs = sa.secrets ?? [];
      if (!refs.some((r) => r.name === k.name)) return;
      const next = deepCopy(sa);
      (next as { secrets?: unknown[] }).secrets = refs.filter((r) => r.name !== k.name);
      try {
        await sas.update(next);
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= REFERENCE_RETRIES) throw err;
      }
    }
  }

  private updateNeeded(secret: Secret): { ca: boolean; ns: boolean; token: boolean } {
    const data = secret.data ?? {};
    return {
      ca: this.rootCA.length > 0 && unb64(data['ca.crt']) !== this.rootCA,
      ns: !data.namespace,
      token: !data.token,
    };
  }

  private async generateTokenIfNeeded(sa: SAObj, cached: SecretObj): Promise<void> {
    const need = this.updateNeeded(cached);
    if (!need.ca && !need.ns && !need.token) return;
    const secrets = this.ctx.client.resource<SecretObj>(GVR.secrets).namespace(cached.metadata?.namespace ?? '');
    let live: SecretObj;
    try {
      live = await secrets.get(cached.metadata?.name ?? '');
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (live.metadata?.resourceVersion !== cached.metadata?.resourceVersion) {
      // An update event will bring us back with fresh data.
      this.log.v(2).info({ secret: `${live.metadata?.namespace}/${live.metadata?.name}` }, 'secret is not up to date, skipping token population');
      return;
    }
    const n = this.updateNeeded(live);
    if (!n.ca && !n.ns && !n.token) return;
    const next = deepCopy(live);
    const data: Record<string, string> = { ...(next.data ?? {}) };
    if (n.ca) data['ca.crt'] = b64(this.rootCA);
    if (n.ns) data.namespace = b64(next.metadata?.namespace ?? '');
    if (n.token) {
      const ns = sa.metadata?.namespace ?? '';
      data.token = b64(this.token.generate(legacyClaims({ namespace: ns, name: sa.metadata?.name ?? '', uid: sa.metadata?.uid ?? '' }, next.metadata?.name ?? '')));
    }
    (next as { data?: Record<string, string> }).data = data;
    (next.metadata as { annotations?: Record<string, string> }).annotations = {
      ...(next.metadata?.annotations ?? {}),
      [SA_NAME_ANNOTATION]: sa.metadata?.name ?? '',
      [SA_UID_ANNOTATION]: sa.metadata?.uid ?? '',
    };
    try {
      await secrets.update(next);
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return; // the next event retries
      throw err;
    }
  }
}

export interface ServiceAccountTokenOptions {
  /** Generate a token Secret for every ServiceAccount, as upstream did before 1.24 (default true). */
  autoGenerate?: boolean;
}

export function newServiceAccountTokenController(ctx: ControllerContext, privateKeyPem: string, opts: ServiceAccountTokenOptions = {}): ServiceAccountTokenController {
  return new TokensController(ctx, privateKeyPem, opts.autoGenerate ?? true);
}

/** True for API servers older than 1.24, whose service accounts need generated token Secrets. */
export function needsLegacyTokens(version: { major?: string; minor?: string }): boolean {
  return serverOlderThan(version, 24);
}

async function create(ctx: ControllerContext): Promise<Controller> {
  const key = ctx.options.serviceAccountPrivateKey;
  if (!key) return notStarted(ctx);
  const autoGenerate = await serverVersionIs(ctx, needsLegacyTokens, SERVICEACCOUNT_TOKEN_CONTROLLER_NAME, 'not generating legacy token secrets');
  return newServiceAccountTokenController(ctx, key, { autoGenerate });
}

function notStarted(ctx: ControllerContext): Controller {
  const log = ctx.logger(SERVICEACCOUNT_TOKEN_CONTROLLER_NAME);
  return {
    name: SERVICEACCOUNT_TOKEN_CONTROLLER_NAME,
    healthy: () => true,
    async run(_w, signal) {
      log.info({ controller: SERVICEACCOUNT_TOKEN_CONTROLLER_NAME }, 'Controller is disabled because there is no private key');
      if (signal.aborted) return;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
}

export const descriptor: ControllerDescriptor = {
  name: SERVICEACCOUNT_TOKEN_CONTROLLER_NAME,
  aliases: ['serviceaccount-token'],
  requiredResources: [GVR.serviceAccounts, GVR.secrets],
  defaultWorkers: 5,
  create,
};
