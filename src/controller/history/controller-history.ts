/**
 * ControllerRevision history (pkg/controller/history): immutable snapshots of
 * a workload's pod template, stored as `apps/v1` ControllerRevisions owned by
 * their StatefulSet or DaemonSet.
 *
 * - A revision is named `<parent>-<hash>`; the hash covers the revision's
 *   data and, when given, the parent's collision count, so a name clash with
 *   a different revision is resolved by bumping the collision count.
 * - `revision` numbers only grow: a new snapshot gets max+1, and rolling back
 *   to an equal template reuses the old object with a bumped number.
 * - Objects from the lister are shared cache state: every write copies.
 */
import type { ControllerRevision } from 'kubernetes-types/apps/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Selector } from '../../api/labels-selector.js';
import type { GroupVersionKind, KubeObject } from '../../api/types.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../client/errors.js';
import type { Client } from '../../client/interfaces.js';
import type { Lister } from '../../tools/cache/interfaces.js';
import { adoptPatch, newControllerRef, releasePatch } from '../controller-ref-manager.js';
import { canonicalJson, deepHashObject, newFnv32a, safeEncodeString } from '../hash.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export type Revision = ControllerRevision & KubeObject;

/** The label carrying a revision's hash, on revisions and on the pods created from them. */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';
/**
 * The hash label a ControllerRevision made by newControllerRevision carries
 * (history.ControllerRevisionHashLabel, on StatefulSet revisions); DaemonSet
 * revisions and pods carry CONTROLLER_REVISION_HASH_LABEL instead.
 */
export const REVISION_HASH_LABEL = 'controller.kubernetes.io/hash';

/** Longest prefix kept in a revision name (253 minus room for `-` and the hash). */
const MAX_PREFIX_LENGTH = 223;

/** `<prefix>-<hash>`, the prefix cut to 223 characters (ControllerRevisionName). */
export function controllerRevisionName(prefix: string, hash: string): string {
  if (prefix.length > MAX_PREFIX_LENGTH) prefix = prefix.slice(0, MAX_PREFIX_LENGTH);
  return `${prefix}-${hash}`;
}

/**
 * The hash of a revision's data, with `probe` (the collision count) written
 * after it as a decimal string, as HashControllerRevision does: FNV-32a of
 * the canonical JSON of `data`, encoded with the safe alphabet.
 */
export function hashControllerRevision(revision: Pick<ControllerRevision, 'data'>, probe?: number | null): string {
  const hasher = newFnv32a();
  if (revision.data !== undefined && revision.data !== null) deepHashObject(hasher, revision.data);
  if (probe !== undefined && probe !== null) hasher.write(new TextEncoder().encode(String(probe)));
  return safeEncodeString(String(hasher.sum32()));
}

/**
 * A new (unsaved) revision of `parent` holding `data`: the template's labels,
 * a controller ownerReference to the parent, the hash label, and the name
 * `<parent>-<hash>` (NewControllerRevision).
 */
export function newControllerRevision(
  parent: KubeObject,
  parentKind: GroupVersionKind,
  templateLabels: Record<string, string> | undefined,
  data: unknown,
  revision: number,
  collisionCount?: number | null,
): Revision {
  const labels: Record<string, string> = { ...(templateLabels ?? {}) };
  const cr: Revision = {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      labels,
      namespace: parent.metadata?.namespace ?? '',
      ownerReferences: [newControllerRef(parent, parentKind)],
    },
    data: data as ControllerRevision['data'],
    revision,
  };
  const hash = hashControllerRevision(cr, collisionCount);
  cr.metadata!.name = controllerRevisionName(parent.metadata?.name ?? '', hash);
  labels[REVISION_HASH_LABEL] = hash;
  return cr;
}

/**
 * Two revisions are equal when their hash labels agree and their data is
 * deeply equal (EqualRevision). Revisions without a hash label are never
 * equal to anything.
 */
export function equalRevision(a: Revision | undefined, b: Revision | undefined): boolean {
  if (!a || !b) return a === b;
  const ha = a.metadata?.labels?.[REVISION_HASH_LABEL];
  const hb = b.metadata?.labels?.[REVISION_HASH_LABEL];
  if (ha === undefined || hb === undefined || ha !== hb) return false;
  return canonicalJson(a.data) === canonicalJson(b.data);
}

/** The revisions in `revisions` equal to `needle` (FindEqualRevisions). */
export function findEqualRevisions(revisions: readonly Revision[], needle: Revision): Revision[] {
  return revisions.filter((r) => equalRevision(r, needle));
}

/** Orders by revision number, then creation time, then name (SortControllerRevisions). Sorts in place and returns the array. */
export function sortControllerRevisions(revisions: Revision[]): Revision[] {
  return revisions.sort((a, b) => {
    const ra = a.revision ?? 0;
    const rb = b.revision ?? 0;
    if (ra !== rb) return ra - rb;
    const ta = a.metadata?.creationTimestamp ?? '';
    const tb = b.metadata?.creationTimestamp ?? '';
    if (ta !== tb) return ta < tb ? -1 : 1;
    const na = a.metadata?.name ?? '';
    const nb = b.metadata?.name ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
}

/** The next revision number: one more than the highest in `revisions` (0 when none: 1). */
export function nextRevision(revisions: readonly Revision[]): number {
  let max = 0;
  for (const r of revisions) max = Math.max(max, r.revision ?? 0);
  return max + 1;
}

/** A mutable collision count shared with the caller (the parent's status.collisionCount). */
export interface CollisionCount {
  value: number;
}

export interface History {
  /** Revisions in the parent's namespace matching `selector` that the parent owns or that are orphans (from the lister). */
  listControllerRevisions(parent: KubeObject, selector: Selector): Revision[];
  /**
   * Creates `revision` under its hashed name. When a different revision
   * already holds that name, bumps `collisionCount.value` and retries with a
   * new hash; when an equal one holds it, returns that one.
   */
  createControllerRevision(parent: KubeObject, revision: Revision, collisionCount: CollisionCount): Promise<Revision>;
  deleteControllerRevision(revision: Revision): Promise<void>;
  /** Sets the revision number (retrying on conflicts); returns the stored revision. */
  updateControllerRevision(revision: Revision, newRevision: number): Promise<Revision>;
  /** Adds a controller ownerReference to `parent` (kind `parentKind`) to an orphan revision. */
  adoptControllerRevision(parent: KubeObject, parentKind: GroupVersionKind, revision: Revision): Promise<Revision>;
  /** Removes `parent`'s ownerReference from the revision (NotFound is not an error). */
  releaseControllerRevision(parent: KubeObject, revision: Revision): Promise<Revision | undefined>;
}

class RealHistory implements History {
  constructor(
    private readonly client: Client,
    private readonly lister: Lister<Revision>,
  ) {}

  private api(namespace: string) {
    return this.client.resource<Revision>(GVR.controllerRevisions).namespace(namespace);
  }

  listControllerRevisions(parent: KubeObject, selector: Selector): Revision[] {
    const uid = parent.metadata?.uid;
    return this.lister
      .namespace(parent.metadata?.namespace ?? '')
      .list(selector)
      .filter((r) => {
        const ref = r.metadata?.ownerReferences?.find((o) => o.controller === true);
        return !ref || ref.uid === uid;
      });
  }

  async createControllerRevision(parent: KubeObject, revision: Revision, collisionCount: CollisionCount): Promise<Revision> {
    const namespace = parent.metadata?.namespace ?? '';
    for (;;) {
      const clone = deepCopy(revision);
      const hash = hashControllerRevision(clone, collisionCount.value);
      clone.metadata = { ...clone.metadata, namespace, name: controllerRevisionName(parent.metadata?.name ?? '', hash) };
      clone.metadata.labels = { ...(clone.metadata.labels ?? {}), [REVISION_HASH_LABEL]: hash };
      try {
        return await this.api(namespace).create(clone);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        let existing: Revision | undefined = this.lister.namespace(namespace).get(clone.metadata.name!);
        if (!existing) {
          try {
            existing = await this.api(namespace).get(clone.metadata.name!);
          } catch (getErr) {
            throw new Error(`revision ${clone.metadata.name} exists but cannot be read`, { cause: getErr });
          }
        }
        if (equalRevision(existing, clone)) return existing;
        collisionCount.value++;
      }
    }
  }

  async deleteControllerRevision(revision: Revision): Promise<void> {
    await this.api(revision.metadata?.namespace ?? '').delete(revision.metadata?.name ?? '');
  }

  async updateControllerRevision(revision: Revision, newRevision: number): Promise<Revision> {
    let current = deepCopy(revision);
    for (let attempt = 0; ; attempt++) {
      if (current.revision === newRevision) return current;
      current.revision = newRevision;
      try {
        return await this.api(current.metadata?.namespace ?? '').update(current);
      } catch (err) {
        if (!isConflict(err) || attempt >= 4) throw err;
        const fresh = await this.api(current.metadata?.namespace ?? '').get(current.metadata?.name ?? '');
        current = deepCopy(fresh);
      }
    }
  }

  async adoptControllerRevision(parent: KubeObject, parentKind: GroupVersionKind, revision: Revision): Promise<Revision> {
    if (revision.metadata?.ownerReferences?.some((r) => r.controller === true)) {
      throw new Error(`attempt to adopt revision owned by ${revision.metadata.ownerReferences.find((r) => r.controller)?.name}`);
    }
    return this.api(revision.metadata?.namespace ?? '').patch(
      revision.metadata?.name ?? '',
      'strategic',
      adoptPatch(newControllerRef(parent, parentKind), revision.metadata?.uid ?? ''),
    );
  }

  async releaseControllerRevision(parent: KubeObject, revision: Revision): Promise<Revision | undefined> {
    try {
      return await this.api(revision.metadata?.namespace ?? '').patch(
        revision.metadata?.name ?? '',
        'strategic',
        releasePatch(parent.metadata?.uid ?? '', revision.metadata?.uid ?? ''),
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

/** History backed by the API client (writes) and a ControllerRevision lister (reads). */
export function newHistory(client: Client, lister: Lister<Revision>): History {
  return new RealHistory(client, lister);
}

/**
 * The patch Kubernetes stores in a revision of a StatefulSet or DaemonSet:
 * `{spec: {template: <template with $patch: replace>}}` (getPatch). Upstream
 * builds it from a generic map and json.Marshal, so its keys are sorted at
 * every level; ours are too, so the bytes the server stores equal the ones
 * client-go's daemon.Match and kubectl's rollout history compute from the
 * object as the server returns it.
 */
export function templatePatch(template: unknown): { spec: { template: Record<string, unknown> } } {
  const t = deepCopy((template ?? {}) as Record<string, unknown>);
  t['$patch'] = 'replace';
  return sortKeysDeep({ spec: { template: t } });
}

/** A copy with object keys in Go's map order (sorted by UTF-8 bytes, which for JSON keys is code-unit order). */
export function sortKeysDeep<T>(v: T): T {
  if (Array.isArray(v)) return v.map(sortKeysDeep) as T;
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) out[k] = sortKeysDeep(o[k]);
  return out as T;
}

/** The template stored in a revision made by templatePatch (without `$patch`). */
export function templateFromRevision<T>(revision: Pick<ControllerRevision, 'data'>): T {
  const data = (revision.data ?? {}) as { spec?: { template?: Record<string, unknown> } };
  const t = deepCopy(data.spec?.template ?? {});
  delete t['$patch'];
  return t as T;
}

/**
 * The revisions to delete so that at most `limit` revisions not in use
 * remain, oldest first (truncateHistory / cleanupHistory). A revision is in
 * use when `inUse(revision)` says so (the current and update revisions, and
 * those whose hash a live pod carries).
 */
export function revisionsToPrune(revisions: readonly Revision[], limit: number, inUse: (r: Revision) => boolean): Revision[] {
  const unused = sortControllerRevisions(revisions.filter((r) => !inUse(r)));
  const excess = unused.length - Math.max(0, limit);
  return excess > 0 ? unused.slice(0, excess) : [];
}
