/**
 * The generic strategy builder: what rest.BeforeCreate / rest.BeforeUpdate
 * and the store do for every resource (status split, generation, object
 * metadata validation, metadata field selectors), with per-kind hooks on top.
 */
import type { KubeObject, ObjectMeta } from '../../api/types.js';
import type { Strategy, ScaleAccess } from './strategy.js';
import { type FieldError, type NameRule, validateObjectMeta, validateObjectMetaUpdate, deepEqual } from './meta-validation.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export interface StrategySpec {
  group: string;
  kind: string;
  resource: string;
  namespaced: boolean;
  /** Has a /status subresource: status is cleared on create, kept on main updates. */
  hasStatus?: boolean;
  /** Create keeps the given status (nodes: kubelets register with it). */
  keepStatusOnCreate?: boolean;
  /** metadata.generation is 1 on create and bumped when `generationSource` changes. */
  tracksGeneration?: boolean;
  /** What a generation bump compares (default: `spec`). */
  generationSource?(obj: KubeObject): unknown;
  /** Name rule (default DNS-1123 subdomain). */
  names?: NameRule;
  /** On a /status update, these top-level keys keep their old values (default: ['spec']). */
  statusResets?: string[];
  /** On a /status update, these metadata keys keep their old values (default: none). */
  statusMetaResets?: string[];
  defaults?(obj: KubeObject): void;
  /** Runs after the generic create preparation (status cleared, generation 1). */
  prepareForCreate?(obj: KubeObject): void;
  /** Runs after status is restored and before the generation comparison. */
  prepareForUpdate?(newObj: KubeObject, oldObj: KubeObject): void;
  /** Runs after the generic status-update preparation. */
  prepareForStatusUpdate?(newObj: KubeObject, oldObj: KubeObject, now?: string): void;
  /** See Strategy.subresourcePrepare. */
  subresourcePrepare?: Strategy['subresourcePrepare'];
  /** Kind-specific validation (object metadata is checked generically). */
  validate?(obj: KubeObject): FieldError[];
  /** Kind-specific update checks, added to validate(newObj). */
  validateUpdate?(newObj: KubeObject, oldObj: KubeObject): FieldError[];
  /** Selectable fields beyond metadata.name / metadata.namespace. */
  fields?: Record<string, (obj: KubeObject) => string>;
  defaultDeletePropagation?: 'Orphan' | 'Background';
  scale?: ScaleAccess;
  gracePeriod?(obj: KubeObject, requested?: number): number | undefined;
  allowCreateOnUpdate?: boolean;
}

/** Builds a Strategy from a spec; every hook is optional. */
export function newStrategy(spec: StrategySpec): Strategy {
  const nameRule = spec.names ?? 'subdomain';
  const genSource = spec.generationSource ?? ((o: KubeObject) => o.spec);
  const fieldFns: Record<string, (obj: KubeObject) => string> = {
    'metadata.name': (o) => o.metadata?.name ?? '',
    ...(spec.namespaced ? { 'metadata.namespace': (o: KubeObject) => o.metadata?.namespace ?? '' } : {}),
    ...spec.fields,
  };
  const hasStatus = spec.hasStatus ?? false;
  const strategy: Strategy = {
    group: spec.group,
    kind: spec.kind,
    resource: spec.resource,
    namespaced: spec.namespaced,
    hasStatus,
    defaultDeletePropagation: spec.defaultDeletePropagation ?? 'Background',
    allowCreateOnUpdate: spec.allowCreateOnUpdate ?? false,
    selectableFields: Object.keys(fieldFns),
    defaults(obj) {
      spec.defaults?.(obj);
    },
    prepareForCreate(obj) {
      if (hasStatus && !spec.keepStatusOnCreate) obj.status = {};
      if (spec.tracksGeneration) meta(obj).generation = 1;
      spec.prepareForCreate?.(obj);
    },
    prepareForUpdate(newObj, oldObj) {
      // Requests cannot set generation: it starts from the stored value.
      setOrDelete(meta(newObj), 'generation', oldObj.metadata?.generation);
      if (hasStatus) setOrDelete(newObj, 'status', clone(oldObj.status));
      spec.prepareForUpdate?.(newObj, oldObj);
      if (spec.tracksGeneration && !deepEqual(genSource(newObj), genSource(oldObj))) {
        meta(newObj).generation = (oldObj.metadata?.generation ?? 0) + 1;
      }
    },
    validate(obj) {
      return [...validateObjectMeta(obj, spec.namespaced, nameRule), ...(spec.validate?.(obj) ?? [])];
    },
    validateUpdate(newObj, oldObj) {
      return [
        ...validateObjectMetaUpdate(newObj, oldObj, spec.namespaced, nameRule),
        ...(spec.validate?.(newObj) ?? []),
        ...(spec.validateUpdate?.(newObj, oldObj) ?? []),
      ];
    },
    fields(obj) {
      const out: Record<string, string> = {};
      for (const [k, fn] of Object.entries(fieldFns)) out[k] = fn(obj);
      return out;
    },
  };
  if (hasStatus) {
    strategy.prepareForStatusUpdate = (newObj, oldObj, now) => {
      setOrDelete(meta(newObj), 'generation', oldObj.metadata?.generation);
      for (const k of spec.statusResets ?? ['spec']) setOrDelete(newObj, k, clone(oldObj[k]));
      for (const k of spec.statusMetaResets ?? []) {
        setOrDelete(meta(newObj), k, clone((oldObj.metadata as Record<string, unknown> | undefined)?.[k]));
      }
      spec.prepareForStatusUpdate?.(newObj, oldObj, now);
    };
  }
  if (spec.subresourcePrepare) strategy.subresourcePrepare = spec.subresourcePrepare;
  if (spec.scale) strategy.scale = spec.scale;
  if (spec.gracePeriod) strategy.gracePeriod = spec.gracePeriod;
  return strategy;
}

/** T with its top-level readonly modifiers removed. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The object's metadata (writable), created when missing. */
export function meta(obj: KubeObject): Mutable<ObjectMeta> {
  obj.metadata ??= {};
  return obj.metadata as Mutable<ObjectMeta>;
}

export function setOrDelete(target: object, key: string, value: unknown): void {
  const t = target as Record<string, unknown>;
  if (value === undefined) delete t[key];
  else t[key] = value;
}

export function clone<T>(v: T): T {
  return v === undefined ? v : deepCopy(v);
}

/** `obj[key]` as an object, created when missing. */
export function child(target: object, key: string): Record<string, unknown> {
  const obj = target as Record<string, unknown>;
  const v = obj[key];
  if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  const created: Record<string, unknown> = {};
  obj[key] = created;
  return created;
}

/** Sets `obj[key] = value` when the key is absent (null counts as absent, as Go's nil). */
export function dflt(target: object, key: string, value: unknown): void {
  const obj = target as Record<string, unknown>;
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

/**
 * Sets `obj[key] = value` when the key is absent or holds Go's zero value
 * ('' or 0): the defaulting of non-pointer Go fields (`if obj.Type == ""`).
 */
export function dfltZero(target: object, key: string, value: unknown): void {
  const obj = target as Record<string, unknown>;
  const v = obj[key];
  if (v === undefined || v === null || v === '' || v === 0) obj[key] = value;
}

/** The array at `obj[key]`, or [] when it is not an array. */
export function items(target: unknown, key: string): Record<string, unknown>[] {
  const v = target && typeof target === 'object' ? (target as Record<string, unknown>)[key] : undefined;
  return Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Record<string, unknown>[]) : [];
}

/** `obj[key]` when it is a (non-array) object, else undefined. Never creates. */
export function objAt(target: unknown, key: string): Record<string, unknown> | undefined {
  const v = target && typeof target === 'object' ? (target as Record<string, unknown>)[key] : undefined;
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
