/**
 * Per-resource strategies of the embedded API server, as kube-apiserver's
 * pkg/registry/<group>/<resource>/strategy.go plus scheme defaulting and
 * validation. Strategies are pure functions on plain JSON objects: no HTTP,
 * no storage. The server calls, in order:
 *   create: defaults -> prepareForCreate -> validate
 *   update: defaults -> prepareForUpdate (or prepareForStatusUpdate) -> validateUpdate
 */
import type { KubeObject } from '../../api/types.js';
import type { Scale } from 'kubernetes-types/autoscaling/v1.js';
import type { FieldError } from './meta-validation.js';
import { newStrategy } from './generic.js';
import { podStrategies } from './pods.js';
import { coreStrategies } from './core.js';
import { appsStrategies } from './apps.js';
import { batchStrategies } from './batch.js';
import { otherStrategies } from './others.js';
import { serverConfigStrategies } from './server-config.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export type { FieldError, Scale };

/** Read and write access to a resource's /scale subresource (autoscaling/v1 Scale). */
export interface ScaleAccess {
  get(obj: KubeObject): Scale;
  /** Sets spec.replicas. Mutates obj. */
  set(obj: KubeObject, replicas: number): void;
  /** The status.selector string of the Scale (label selector in string form). */
  selector(obj: KubeObject): string;
}

export interface Strategy {
  group: string;
  kind: string;
  resource: string;
  namespaced: boolean;
  /** Fills defaults (scheme defaulting). Mutates obj. Called on create, update and for SSA/patch results. */
  defaults(obj: KubeObject): void;
  /** On create: clears status when there is a status subresource, sets generation 1 where upstream does, plus kind rules (pods: phase Pending, qosClass; jobs: selector). Mutates obj. */
  prepareForCreate(obj: KubeObject): void;
  /** On update of the main resource: keeps old status, keeps metadata.generation and bumps it when the spec (or what upstream compares) changed. Mutates newObj. */
  prepareForUpdate(newObj: KubeObject, oldObj: KubeObject): void;
  /** On update of /status: keeps everything but status (and what upstream lets through). Mutates newObj. Present iff hasStatus. */
  prepareForStatusUpdate?(newObj: KubeObject, oldObj: KubeObject, now?: string): void;
  /** Updates of other writable subresources (certificatesigningrequests/approval), by name. Mutates newObj. */
  subresourcePrepare?: Record<string, (newObj: KubeObject, oldObj: KubeObject, now: string) => void>;
  /** Errors for a new object (after defaults and prepareForCreate). Empty means valid. */
  validate(obj: KubeObject): FieldError[];
  /** Errors for an update, including immutable fields. */
  validateUpdate(newObj: KubeObject, oldObj: KubeObject): FieldError[];
  /** Values of the selectable fields (field selectors); always metadata.name, and metadata.namespace when namespaced. */
  fields(obj: KubeObject): Record<string, string>;
  /** The field-selector keys fields() returns; anything else is `field label not supported`. */
  selectableFields: readonly string[];
  /** Propagation when DeleteOptions say nothing (upstream DefaultGarbageCollectionPolicy). */
  defaultDeletePropagation: 'Orphan' | 'Background';
  /** PUT to a missing object creates it (upstream AllowCreateOnUpdate). */
  allowCreateOnUpdate: boolean;
  hasStatus: boolean;
  scale?: ScaleAccess;
  /** Graceful deletion (pods): grace period in seconds to use, or undefined when the kind deletes at once. */
  gracePeriod?(obj: KubeObject, requested?: number): number | undefined;
}

let table: Map<string, Strategy> | undefined;

function key(group: string, resource: string): string {
  return `${resource}.${group}`;
}

function strategies(): Map<string, Strategy> {
  if (!table) {
    table = new Map();
    for (const s of [...podStrategies(), ...coreStrategies(), ...appsStrategies(), ...batchStrategies(), ...otherStrategies(), ...serverConfigStrategies()]) {
      table.set(key(s.group, s.resource), s);
    }
  }
  return table;
}

/**
 * The strategy for a resource. Resources without special rules (custom
 * resources, unknown kinds) get a generic strategy: namespaced, no status
 * subresource, metadata validation only; pass `opts` to describe them.
 */
export function strategyFor(group: string, resource: string, opts?: { kind?: string; namespaced?: boolean; hasStatus?: boolean }): Strategy {
  const known = strategies().get(key(group, resource));
  if (known) return known;
  return newStrategy({
    group,
    resource,
    kind: opts?.kind ?? '',
    namespaced: opts?.namespaced ?? true,
    hasStatus: opts?.hasStatus ?? false,
    // Custom resources always track generation (customresource strategy).
    tracksGeneration: true,
    generationSource: withoutMetaAndStatus,
    statusResets: [],
    statusMetaResets: ['labels', 'annotations', 'finalizers', 'ownerReferences', 'deletionTimestamp'],
    // A custom resource's /status changes nothing but status.
    prepareForStatusUpdate(newObj, oldObj) {
      for (const k of Object.keys(withoutMetaAndStatus(newObj))) delete newObj[k];
      Object.assign(newObj, deepCopy(withoutMetaAndStatus(oldObj)));
    },
  });
}

function withoutMetaAndStatus(o: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

/** True when the resource has a dedicated (non-generic) strategy. */
export function hasStrategy(group: string, resource: string): boolean {
  return strategies().has(key(group, resource));
}

/** The field-selector keys a resource supports. */
export function selectableFields(group: string, resource: string): string[] {
  return [...strategyFor(group, resource).selectableFields];
}
