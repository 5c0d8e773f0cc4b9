/**
 * The ValidatingAdmissionPolicy status controller
 * (pkg/controller/validatingadmissionpolicystatus, on by default since
 * ValidatingAdmissionPolicy went GA in 1.30): for every policy whose
 * metadata.generation is ahead of status.observedGeneration, type-checks
 * its expressions against the schemas of the kinds it matches and writes
 * `status.observedGeneration` and `status.typeChecking.expressionWarnings`
 * with server-side apply (field manager
 * `validatingadmissionpolicy-status-controller`, forced). Upstream sets no
 * conditions. Deleted policies need nothing.
 *
 * Schemas come from the server's /openapi/v3 (the client's raw request)
 * and kinds from discovery; without either (a bare client in tests) no
 * kind is checked and the warnings are empty, as upstream when no schema
 * resolves.
 *
 * Layering: the type checker lives with the admission plugin
 * (src/apiserver/admission/policy/type-checker.ts, as upstream's lives in
 * k8s.io/apiserver) and depends only on the CEL library, not on server
 * state; this controller still talks to the server only through the
 * client.
 */
import type { ValidatingAdmissionPolicy } from 'kubernetes-types/admissionregistration/v1.js';
import type { GroupVersionResource } from '../../api/types.js';
import { isNotFound } from '../../client/errors.js';
import type { DiscoveryClient } from '../../client/discovery.js';
import { newQueueWorker, type QueueWorker } from '../../controller/base-controller.js';
import { newControllerLifecycle, type ControllerLifecycle } from '../../controller/lifecycle.js';
import type { Controller } from '../../controller/types.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { newLister } from '../../tools/cache/listers.js';
import type { Logger } from '../../util/log/logger.js';
import { openApiV3SchemaResolver, typeCheck, type KindResolver, type SchemaResolver, type TypeCheckerDeps } from '../../apiserver/admission/policy/type-checker.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';

export const VAP_STATUS_CONTROLLER_NAME = 'validatingadmissionpolicy-status-controller';

export const validatingAdmissionPolicies: GroupVersionResource = Object.freeze({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicies' });

type Policy = Kube<ValidatingAdmissionPolicy>;

export interface ValidatingAdmissionPolicyStatusController extends Controller {
  /** Type-checks the policy and writes its status when its generation is not observed yet (the queue's sync). */
  syncPolicy(name: string): Promise<void>;
  hasSynced(): boolean;
}

export interface StatusControllerOptions {
  /** Replaces the schema and kind lookups (tests). */
  typeChecker?: TypeCheckerDeps;
}

/** RESTMapper.KindsFor over discovery: the kind a group/version serves a resource as. */
export function discoveryKindResolver(discovery: DiscoveryClient | undefined): KindResolver {
  return {
    async kindsFor(gvr) {
      if (!discovery) return [];
      const gv = gvr.group ? `${gvr.group}/${gvr.version}` : gvr.version;
      try {
        const list = await discovery.serverResourcesForGroupVersion(gv);
        const r = (list.resources ?? []).find((x) => x.name === gvr.resource);
        return r ? [{ group: gvr.group, version: gvr.version, kind: r.kind }] : [];
      } catch {
        return [];
      }
    },
    refresh() {
      discovery?.invalidate();
    },
  };
}

/** Schemas through the client's raw GET, when the client has one (a KubeClient does). */
function clientSchemaResolver(client: unknown): SchemaResolver {
  const request = (client as { request?: (method: 'GET', path: string) => Promise<unknown> }).request;
  if (typeof request !== 'function') return { resolveSchema: async () => undefined };
  const resolver = openApiV3SchemaResolver((path) => request.call(client, 'GET', path));
  return {
    async resolveSchema(gvk) {
      try {
        return await resolver.resolveSchema(gvk);
      } catch {
        return undefined;
      }
    },
  };
}

class StatusController implements ValidatingAdmissionPolicyStatusController {
  readonly name = VAP_STATUS_CONTROLLER_NAME;
  private readonly worker: QueueWorker;
  private readonly policies: Lister<Policy>;
  private readonly synced: () => boolean;
  private readonly log: Logger;
  private readonly lifecycle: ControllerLifecycle;
  private readonly checker: TypeCheckerDeps;

  constructor(
    private readonly ctx: ControllerContext,
    opts: StatusControllerOptions,
  ) {
    this.log = ctx.logger(this.name);
    this.checker = opts.typeChecker ?? { schemas: clientSchemaResolver(ctx.client), kinds: discoveryKindResolver(ctx.discovery) };
    this.lifecycle = newControllerLifecycle({ name: this.name, clock: ctx.clock, log: this.log, starting: 'Starting controller', stopping: 'Shutting down controller', fields: { controller: this.name } });
    this.worker = newQueueWorker({ name: 'validatingadmissionpolicy-status', clock: ctx.clock, logger: this.log, maxRetries: Infinity, sync: (key) => this.syncPolicy(key) });
    const inf = ctx.informers.forResource<Policy>(validatingAdmissionPolicies);
    this.policies = newLister(inf.getIndexer());
    const enqueue = (p: Policy) => {
      const name = p.metadata?.name ?? '';
      if (!name) this.log.error({}, 'cannot get name of policy');
      this.worker.enqueue(name);
    };
    const reg = inf.addEventHandler({ onAdd: enqueue, onUpdate: (_old, p) => enqueue(p) });
    this.synced = () => reg.hasSynced();
  }

  hasSynced(): boolean {
    return this.synced();
  }
  healthy(): boolean {
    return this.lifecycle.healthy() && this.worker.healthy();
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return this.lifecycle.run(signal, this.synced, () => this.worker.run(workers, signal));
  }

  async syncPolicy(name: string): Promise<void> {
    const policy = this.policies.get(name);
    if (!policy) return;
    const generation = policy.metadata?.generation ?? 0;
    if (generation <= (policy.status?.observedGeneration ?? 0)) return;
    const warnings = await typeCheck(policy as never, this.checker);
    const apply = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      status: { observedGeneration: generation, typeChecking: warnings.length ? { expressionWarnings: warnings } : {} },
    };
    try {
      const res = this.ctx.client.resource<Policy>(validatingAdmissionPolicies);
      const out = await res.patch(name, 'apply', apply, { subresource: 'status', fieldManager: this.name, force: true });
      // Apply drops the warnings this manager applied before only while it still owns them; a server that lost
      // that ownership (another writer took it) keeps stale warnings, so they are removed explicitly.
      if (warnings.length === 0 && (out.status?.typeChecking?.expressionWarnings?.length ?? 0) > 0) {
        await res.patch(name, 'merge', { status: { typeChecking: { expressionWarnings: null } } }, { subresource: 'status', fieldManager: this.name });
      }
      this.log.v(2).info({ policy: name, generation, warnings: warnings.length }, 'updated policy status');
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
}

export function newValidatingAdmissionPolicyStatusController(ctx: ControllerContext, opts: StatusControllerOptions = {}): ValidatingAdmissionPolicyStatusController {
  return new StatusController(ctx, opts);
}

/** kube-controller-manager: --concurrent-validating-admission-policy-status-syncs, default 5. */
export const descriptor: ControllerDescriptor = {
  name: VAP_STATUS_CONTROLLER_NAME,
  aliases: ['validatingadmissionpolicy-status'],
  requiredResources: [validatingAdmissionPolicies],
  defaultWorkers: 5,
  create: (ctx) => newValidatingAdmissionPolicyStatusController(ctx),
};
