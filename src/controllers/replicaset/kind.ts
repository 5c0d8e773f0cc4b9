/**
 * What differs between the ReplicaSet and the ReplicationController
 * controllers: the resource, its kind, how its selector is read and the
 * event source. Everything else is one controller (as upstream's replication
 * package adapts ReplicationControllers to the ReplicaSet controller).
 */
import type { ReplicaSetStatus } from 'kubernetes-types/apps/v1.js';
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import type { PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { selectorFromLabelSelector, selectorFromSet } from '../../api/labels.js';
import type { Selector } from '../../api/labels-selector.js';
import type { GroupVersionKind, GroupVersionResource, KubeObject } from '../../api/types.js';
import type { SharedInformerFactory } from '../../tools/cache/factory.js';
import type { SharedIndexInformer } from '../../tools/cache/interfaces.js';

/** A ReplicaSet or a ReplicationController, as far as this controller reads and writes it. */
export interface ReplicaSetLike extends KubeObject {
  spec?: {
    replicas?: number;
    minReadySeconds?: number;
    template?: PodTemplateSpec;
    /** A LabelSelector (ReplicaSet) or a label map (ReplicationController). */
    selector?: unknown;
  };
  status?: ReplicaSetStatus;
}

export interface ReplicaSetKind {
  /** Queue and logger name. */
  name: string;
  gvr: GroupVersionResource;
  gvk: GroupVersionKind;
  /** The events' source component. */
  eventComponent: string;
  informer(factory: SharedInformerFactory): SharedIndexInformer<ReplicaSetLike>;
  /** The selector of `obj`; throws on an invalid selector. */
  selector(obj: ReplicaSetLike): Selector;
}

export const replicaSetKind: ReplicaSetKind = {
  name: 'replicaset',
  gvr: GVR.replicaSets,
  gvk: { group: 'apps', version: 'v1', kind: 'ReplicaSet' },
  eventComponent: 'replicaset-controller',
  informer: (f) => f.replicaSets() as unknown as SharedIndexInformer<ReplicaSetLike>,
  selector: (obj) => selectorFromLabelSelector(obj.spec?.selector as LabelSelector | undefined),
};

export const replicationControllerKind: ReplicaSetKind = {
  name: 'replicationmanager',
  gvr: GVR.replicationControllers,
  gvk: { group: '', version: 'v1', kind: 'ReplicationController' },
  eventComponent: 'replication-controller',
  informer: (f) => f.replicationControllers() as unknown as SharedIndexInformer<ReplicaSetLike>,
  // A ReplicationController selects with a plain map; an empty one selects nothing useful (validation forbids it).
  selector: (obj) => selectorFromSet((obj.spec?.selector as Record<string, string> | undefined) ?? {}),
};
