/**
 * Status conditions the namespace deleter keeps on a terminating namespace
 * (pkg/controller/namespace/deletion/status_condition_utils.go): each of the
 * five types is always present, True with a failure reason, or False with
 * its "ok" reason and message.
 */
import type { NamespaceCondition, NamespaceStatus } from 'kubernetes-types/core/v1.js';
import { GroupDiscoveryFailedError } from '../../client/discovery.js';

export const NAMESPACE_DELETION_DISCOVERY_FAILURE = 'NamespaceDeletionDiscoveryFailure';
export const NAMESPACE_DELETION_GV_PARSING_FAILURE = 'NamespaceDeletionGroupVersionParsingFailure';
export const NAMESPACE_DELETION_CONTENT_FAILURE = 'NamespaceDeletionContentFailure';
export const NAMESPACE_CONTENT_REMAINING = 'NamespaceContentRemaining';
export const NAMESPACE_FINALIZERS_REMAINING = 'NamespaceFinalizersRemaining';

export const CONDITION_TYPES = [
  NAMESPACE_DELETION_DISCOVERY_FAILURE,
  NAMESPACE_DELETION_GV_PARSING_FAILURE,
  NAMESPACE_DELETION_CONTENT_FAILURE,
  NAMESPACE_CONTENT_REMAINING,
  NAMESPACE_FINALIZERS_REMAINING,
] as const;

const OK_MESSAGES: Record<string, string> = {
  [NAMESPACE_DELETION_DISCOVERY_FAILURE]: 'All resources successfully discovered',
  [NAMESPACE_DELETION_GV_PARSING_FAILURE]: 'All legacy kube types successfully parsed',
  [NAMESPACE_DELETION_CONTENT_FAILURE]: 'All content successfully deleted, may be waiting on finalization',
  [NAMESPACE_CONTENT_REMAINING]: 'All content successfully removed',
  [NAMESPACE_FINALIZERS_REMAINING]: 'All content-preserving finalizers finished',
};
const OK_REASONS: Record<string, string> = {
  [NAMESPACE_DELETION_DISCOVERY_FAILURE]: 'ResourcesDiscovered',
  [NAMESPACE_DELETION_GV_PARSING_FAILURE]: 'ParsedGroupVersions',
  [NAMESPACE_DELETION_CONTENT_FAILURE]: 'ContentDeleted',
  [NAMESPACE_CONTENT_REMAINING]: 'ContentRemoved',
  [NAMESPACE_FINALIZERS_REMAINING]: 'ContentHasNoFinalizers',
};

/** Remaining content after one pass: instances per `resource.group`, instances per finalizer. */
export interface ContentTotals {
  remainingByResource: Map<string, number>;
  remainingByFinalizer: Map<string, number>;
}

function errMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Collects one pass's failures, then writes them into a status (update). */
export class NamespaceConditionUpdater {
  private readonly conditions: NamespaceCondition[] = [];
  private readonly contentErrors: unknown[] = [];

  constructor(private readonly now: string) {}

  processDiscoverResourcesErr(err: unknown): void {
    const message =
      err instanceof GroupDiscoveryFailedError ? `Discovery failed for some groups, ${err.failed.size} failing: ${err.message}` : errMessage(err);
    this.conditions.push({ type: NAMESPACE_DELETION_DISCOVERY_FAILURE, status: 'True', lastTransitionTime: this.now, reason: 'DiscoveryFailed', message });
  }

  processGroupVersionErr(err: unknown): void {
    this.conditions.push({
      type: NAMESPACE_DELETION_GV_PARSING_FAILURE,
      status: 'True',
      lastTransitionTime: this.now,
      reason: 'GroupVersionParsingFailed',
      message: errMessage(err),
    });
  }

  processDeleteContentErr(err: unknown): void {
    this.contentErrors.push(err);
  }

  processContentTotals(t: ContentTotals): void {
    const resources = [...t.remainingByResource].filter(([, n]) => n > 0).map(([r, n]) => `${r} has ${n} resource instances`);
    if (t.remainingByResource.size) {
      resources.sort();
      this.conditions.push({
        type: NAMESPACE_CONTENT_REMAINING,
        status: 'True',
        lastTransitionTime: this.now,
        reason: 'SomeResourcesRemain',
        message: `Some resources are remaining: ${resources.join(', ')}`,
      });
    }
    const finalizers = [...t.remainingByFinalizer].filter(([, n]) => n > 0).map(([f, n]) => `${f} in ${n} resource instances`);
    if (t.remainingByFinalizer.size) {
      finalizers.sort();
      this.conditions.push({
        type: NAMESPACE_FINALIZERS_REMAINING,
        status: 'True',
        lastTransitionTime: this.now,
        reason: 'SomeFinalizersRemain',
        message: `Some content in the namespace has finalizers remaining: ${finalizers.join(', ')}`,
      });
    }
  }

  /** Writes the conditions into `status`; true when anything changed. */
  update(status: NamespaceStatus): boolean {
    if (!this.conditions.some((c) => c.type === NAMESPACE_DELETION_CONTENT_FAILURE) && this.contentErrors.length) {
      const msgs = this.contentErrors.map(errMessage).sort();
      this.conditions.push({
        type: NAMESPACE_DELETION_CONTENT_FAILURE,
        status: 'True',
        lastTransitionTime: this.now,
        reason: 'ContentDeletionFailed',
        message: `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(', ')}`,
      });
    }
    let changed = false;
    const list = (status.conditions ??= []);
    for (const type of CONDITION_TYPES) {
      const next = this.conditions.find((c) => c.type === type) ?? {
        type,
        status: 'False',
        lastTransitionTime: this.now,
        reason: OK_REASONS[type],
        message: OK_MESSAGES[type],
      };
      const old = list.find((c) => c.type === type);
      if (!old) {
        list.push(next);
        changed = true;
      } else if (old.status !== next.status || old.message !== next.message || old.reason !== next.reason) {
        if (old.status !== next.status) old.lastTransitionTime = this.now;
        old.status = next.status;
        old.reason = next.reason;
        old.message = next.message;
        changed = true;
      }
    }
    return changed;
  }
}
