/**
 * Creating and deleting pods on behalf of a controller, with the events
 * users see in `kubectl describe` (pkg/controller RealPodControl).
 */
import type { Pod, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { isNotFound, isStatusError } from '../client/errors.js';
import type { Client, PatchType } from '../client/interfaces.js';
import type { EventRecorder } from '../tools/record/interfaces.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import { deepCopy } from '../util/json/deep-copy.js';

export const FAILED_CREATE_POD_REASON = 'FailedCreate';
export const SUCCESSFUL_CREATE_POD_REASON = 'SuccessfulCreate';
export const FAILED_DELETE_POD_REASON = 'FailedDelete';
export const SUCCESSFUL_DELETE_POD_REASON = 'SuccessfulDelete';

export interface PodControl {
  /**
   * Creates a pod from `template` owned by `controllerRef` (generateName
   * `<controller>-`). Emits SuccessfulCreate or FailedCreate on
   * `controllerObject`; rethrows the API error.
   */
  createPods(namespace: string, template: PodTemplateSpec, controllerObject: KubeObject, controllerRef: OwnerReference): Promise<Pod>;
  /** Like createPods with an explicit generateName. */
  createPodsWithGenerateName(
    namespace: string,
    template: PodTemplateSpec,
    controllerObject: KubeObject,
    controllerRef: OwnerReference,
    generateName: string,
  ): Promise<Pod>;
  /**
   * Deletes a pod; emits SuccessfulDelete or FailedDelete on `object`. A
   * NotFound is rethrown as is but emits no event (the pod is already gone).
   */
  deletePod(namespace: string, name: string, object: KubeObject): Promise<void>;
  /** Patches a pod (strategic merge by default). */
  patchPod(namespace: string, name: string, patch: unknown, type?: PatchType): Promise<Pod>;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `<name>-` when that is a valid generateName prefix, else `<name>` (getPodsPrefix). */
export function podsPrefix(controllerName: string): string {
  const prefix = `${controllerName}-`;
  const masked = prefix.slice(0, -1) + 'a';
  return masked.length <= 253 && DNS_SUBDOMAIN.test(masked) ? prefix : controllerName;
}

/** Checks that `ref` is a controller reference as controllers must set it. */
export function validateControllerRef(ref: OwnerReference | undefined): void {
  if (!ref) throw new Error('controllerRef is nil');
  if (!ref.apiVersion) throw new Error('controllerRef has empty APIVersion');
  if (!ref.kind) throw new Error('controllerRef has empty Kind');
  if (ref.controller !== true) throw new Error('controllerRef.Controller is not set to true');
  if (ref.blockOwnerDeletion !== true) throw new Error('controllerRef.BlockOwnerDeletion is not set');
}

/**
 * The pod a controller creates from its template: the template's labels,
 * annotations, finalizers and spec (copied), generateName from the parent's
 * name, and `controllerRef` as its only ownerReference when given.
 */
export function getPodFromTemplate(template: PodTemplateSpec, parentObject: KubeObject, controllerRef?: OwnerReference): Pod {
  const tm = template.metadata ?? {};
  const metadata: Record<string, unknown> = {
    labels: { ...(tm.labels ?? {}) },
    annotations: { ...(tm.annotations ?? {}) },
    generateName: podsPrefix(parentObject.metadata?.name ?? ''),
    finalizers: [...(tm.finalizers ?? [])],
  };
  if (controllerRef) metadata.ownerReferences = [{ ...controllerRef }];
  return { metadata, spec: deepCopy(template.spec ?? { containers: [] }) } as Pod;
}

function hasNamespaceTerminatingCause(err: unknown): boolean {
  return isStatusError(err) && (err.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');
}

export interface PodControlOptions {
  client: Client;
  recorder: EventRecorder;
  logger?: Logger;
}

class RealPodControl implements PodControl {
  private readonly log: Logger;
  constructor(private readonly opts: PodControlOptions) {
    this.log = opts.logger ?? newLogger('pod-control');
  }

  private pods(namespace: string) {
    return this.opts.client.resource<Pod & KubeObject>(GVR.pods).namespace(namespace);
  }

  createPods(namespace: string, template: PodTemplateSpec, controllerObject: KubeObject, controllerRef: OwnerReference): Promise<Pod> {
    validateControllerRef(controllerRef);
    return this.create(namespace, getPodFromTemplate(template, controllerObject, controllerRef), controllerObject);
  }

  createPodsWithGenerateName(
    namespace: string,
    template: PodTemplateSpec,
    controllerObject: KubeObject,
    controllerRef: OwnerReference,
    generateName: string,
  ): Promise<Pod> {
    validateControllerRef(controllerRef);
    const pod = getPodFromTemplate(template, controllerObject, controllerRef);
    if (generateName) (pod.metadata as { generateName?: string }).generateName = generateName;
    return this.create(namespace, pod, controllerObject);
  }

  private async create(namespace: string, pod: Pod, object: KubeObject): Promise<Pod> {
    if (Object.keys(pod.metadata?.labels ?? {}).length === 0) throw new Error('unable to create pods, no labels');
    let created: Pod;
    try {
      created = await this.pods(namespace).create(pod as Pod & KubeObject);
    } catch (err) {
      // No event while the namespace is terminating: nothing can be created there any more.
      if (!hasNamespaceTerminatingCause(err)) {
        this.opts.recorder.eventf(object, 'Warning', FAILED_CREATE_POD_REASON, 'Error creating: %v', err);
      }
      throw err;
    }
    this.log.v(4).info({ controller: object.metadata?.name, pod: `${namespace}/${created.metadata?.name ?? ''}` }, 'controller created pod');
    this.opts.recorder.eventf(object, 'Normal', SUCCESSFUL_CREATE_POD_REASON, 'Created pod: %v', created.metadata?.name);
    return created;
  }

  async deletePod(namespace: string, name: string, object: KubeObject): Promise<void> {
    this.log.v(2).info({ controller: object.metadata?.name, pod: `${namespace}/${name}` }, 'deleting pod');
    try {
      await this.pods(namespace).delete(name, { discardResult: true });
    } catch (err) {
      if (isNotFound(err)) {
        this.log.v(4).info({ pod: `${namespace}/${name}` }, 'pod has already been deleted');
        throw err;
      }
      this.opts.recorder.eventf(object, 'Warning', FAILED_DELETE_POD_REASON, 'Error deleting: %v', err);
      throw new Error(`unable to delete pods: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    this.opts.recorder.eventf(object, 'Normal', SUCCESSFUL_DELETE_POD_REASON, 'Deleted pod: %v', name);
  }

  patchPod(namespace: string, name: string, patch: unknown, type: PatchType = 'strategic'): Promise<Pod> {
    return this.pods(namespace).patch(name, type, patch);
  }
}

export function newPodControl(opts: PodControlOptions): PodControl {
  return new RealPodControl(opts);
}
