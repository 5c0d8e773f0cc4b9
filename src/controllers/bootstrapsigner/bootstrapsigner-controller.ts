/**
 * The bootstrap signer (pkg/controller/bootstrap/bootstrapsigner.go): keeps
 * the `cluster-info` ConfigMap in kube-public signed by every bootstrap token
 * allowed to sign. For each valid token (see tokenForSigning) the ConfigMap
 * carries `jws-kubeconfig-<token-id>`, a detached JWS of its `kubeconfig`
 * value; signatures of tokens that are gone, expired or no longer for
 * signing are removed. The ConfigMap is written only when a signature
 * changes. Disabled by default, as upstream (`--controllers=bootstrapsigner,...`).
 */
import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { isNotFound } from '../../client/errors.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { objectFromDeleted } from '../../controller/keys.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';
import {
  CLUSTER_INFO_NAME,
  CLUSTER_INFO_NAMESPACE,
  JWS_SIGNATURE_PREFIX,
  KUBECONFIG_KEY,
  SECRET_TYPE_BOOTSTRAP_TOKEN,
  TOKEN_SECRET_NAMESPACE,
  computeDetachedSignature,
  tokenForSigning,
} from './bootstrap-token.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const BOOTSTRAP_SIGNER_CONTROLLER_NAME = 'bootstrap-signer-controller';

export interface BootstrapSignerController extends Controller {
  /** Re-signs cluster-info from the current tokens (the queue's sync). */
  signConfigMap(): Promise<void>;
  hasSynced(): boolean;
}

type CmObj = Kube<ConfigMap>;
type SecretObj = Kube<Secret>;

const isTokenSecret = (s: Secret) => s.type === SECRET_TYPE_BOOTSTRAP_TOKEN && s.metadata?.namespace === TOKEN_SECRET_NAMESPACE;
const isClusterInfo = (cm: ConfigMap) => cm.metadata?.namespace === CLUSTER_INFO_NAMESPACE && cm.metadata?.name === CLUSTER_INFO_NAME;

class Signer implements BootstrapSignerController {
  readonly name = BOOTSTRAP_SIGNER_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly configMaps: Lister<CmObj>;
  private readonly secrets: Lister<SecretObj>;
  private readonly synced: Array<() => boolean>;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger(this.name);
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, starting: 'Starting workers', stopping: 'Shutting down', fields: { controller: this.name } });
    // One key: every change leads to the same re-signing of cluster-info.
    this.worker = newQueueWorker({ name: 'bootstrap_signer_queue', clock: ctx.clock, logger: this.log, sync: () => this.signConfigMap() });
    const cmInf = ctx.informers.configMaps();
    const secInf = ctx.informers.secrets();
    this.configMaps = newLister(cmInf.getIndexer());
    this.secrets = newLister(secInf.getIndexer());
    const poke = () => this.worker.enqueue(`${CLUSTER_INFO_NAMESPACE}/${CLUSTER_INFO_NAME}`);
    const cmReg = cmInf.addEventHandler({
      onAdd: (cm) => isClusterInfo(cm) && poke(),
      onUpdate: (_o, cm) => isClusterInfo(cm) && poke(),
    });
    const onSecret = (s: SecretObj | undefined) => {
      if (s && isTokenSecret(s)) poke();
    };
    const secReg = secInf.addEventHandler({
      onAdd: onSecret,
      onUpdate: (_o, s) => onSecret(s),
      onDelete: (obj) => onSecret(objectFromDeleted(obj)),
    });
    this.synced = [() => cmReg.hasSynced(), () => secReg.hasSynced()];
  }

  hasSynced(): boolean {
    return this.synced.every((f) => f());
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }
  run(_workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => this.worker.run(1, signal));
  }

  async signConfigMap(): Promise<void> {
    const orig = this.configMaps.namespace(CLUSTER_INFO_NAMESPACE).get(CLUSTER_INFO_NAME);
    if (!orig) return;
    const content = orig.data?.[KUBECONFIG_KEY];
    if (content === undefined) {
      this.log.v(3).info({ configMap: `${CLUSTER_INFO_NAMESPACE}/${CLUSTER_INFO_NAME}` }, `No ${KUBECONFIG_KEY} key in ConfigMap`);
      return;
    }
    const data: Record<string, string> = { ...orig.data };
    const oldSigs = new Map<string, string>();
    for (const [k, v] of Object.entries(data)) {
      if (!k.startsWith(JWS_SIGNATURE_PREFIX)) continue;
      oldSigs.set(k.slice(JWS_SIGNATURE_PREFIX.length), v);
      delete data[k];
    }
    let needUpdate = false;
    const now = this.ctx.clock.now();
    for (const secret of this.secrets.namespace(TOKEN_SECRET_NAMESPACE).list()) {
      if (secret.type !== SECRET_TYPE_BOOTSTRAP_TOKEN) continue;
      const token = tokenForSigning(secret, now);
      if ('skip' in token) {
        this.log.v(3).info({ secret: secret.metadata?.name, reason: token.skip }, 'skipping bootstrap token secret');
        continue;
      }
      const sig = computeDetachedSignature(content, token.tokenId, token.tokenSecret);
      if (oldSigs.get(token.tokenId) !== sig) needUpdate = true;
      oldSigs.delete(token.tokenId);
      data[JWS_SIGNATURE_PREFIX + token.tokenId] = sig;
    }
    // Signatures of tokens no longer valid are dropped.
    if (oldSigs.size > 0) needUpdate = true;
    if (!needUpdate) return;
    const next: CmObj = { ...deepCopy(orig), data };
    try {
      await this.ctx.client.resource<CmObj>(GVR.configMaps).namespace(CLUSTER_INFO_NAMESPACE).update(next);
      this.log.v(2).info({ configMap: `${CLUSTER_INFO_NAMESPACE}/${CLUSTER_INFO_NAME}` }, 'updated cluster-info signatures');
    } catch (err) {
      if (isNotFound(err)) return;
      this.log.error(err, {}, 'error updating ConfigMap');
      throw err;
    }
  }
}

export function newBootstrapSignerController(ctx: ControllerContext): BootstrapSignerController {
  return new Signer(ctx);
}

export const descriptor: ControllerDescriptor = {
  name: BOOTSTRAP_SIGNER_CONTROLLER_NAME,
  aliases: ['bootstrapsigner'],
  disabledByDefault: true,
  requiredResources: [GVR.configMaps, GVR.secrets],
  defaultWorkers: 1,
  create: (ctx) => newBootstrapSignerController(ctx),
};
