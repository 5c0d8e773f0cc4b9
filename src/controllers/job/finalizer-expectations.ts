/**
 * Pod UIDs whose tracking finalizer a Job sync removed and whose removal the
 * pod informer has not shown yet (uidTrackingExpectations in upstream's
 * job tracking_utils.go). A pod in this set is never counted again.
 */
export interface FinalizerExpectations {
  expectRemoved(jobKey: string, uids: readonly string[]): void;
  /** The pod informer showed the pod without its finalizer (or gone). */
  removalObserved(jobKey: string, uid: string): void;
  expectedUIDs(jobKey: string): ReadonlySet<string>;
  deleteExpectations(jobKey: string): void;
}

export function newFinalizerExpectations(): FinalizerExpectations {
  const byJob = new Map<string, Set<string>>();
  return {
    expectRemoved(jobKey, uids) {
      let s = byJob.get(jobKey);
      if (!s) byJob.set(jobKey, (s = new Set()));
      for (const u of uids) s.add(u);
    },
    removalObserved(jobKey, uid) {
      const s = byJob.get(jobKey);
      if (!s) return;
      s.delete(uid);
      if (s.size === 0) byJob.delete(jobKey);
    },
    expectedUIDs(jobKey) {
      return new Set(byJob.get(jobKey) ?? []);
    },
    deleteExpectations(jobKey) {
      byJob.delete(jobKey);
    },
  };
}
