/**
 * The last-change trigger time of a service's endpoints (endpointslice util
 * TriggerTimeTracker): the earliest time, among changes not seen at the
 * previous sync, of a pod's Ready transition or the service's creation. A new
 * service reports its creation time. Safe for one sync per service at a time
 * (the work queue guarantees that).
 */
import type { Pod, Service } from 'kubernetes-types/core/v1.js';
import { getPodReadyCondition } from '../../controller/pod-util.js';
import { parseTime } from '../../util/clock/clock.js';

interface ServiceState {
  lastPodTriggerTimes: Map<string, number>;
  lastServiceTriggerTime: number | undefined;
}

export interface TriggerTimeTracker {
  /** Epoch ms of the trigger time, or undefined when nothing changed since the last call. */
  compute(namespace: string, service: Service, pods: readonly Pod[]): number | undefined;
  deleteService(namespace: string, name: string): void;
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

class Tracker implements TriggerTimeTracker {
  private readonly states = new Map<string, ServiceState>();

  compute(namespace: string, service: Service, pods: readonly Pod[]): number | undefined {
    const key = `${namespace}/${service.metadata?.name ?? ''}`;
    const state = this.states.get(key);
    let min: number | undefined;
    const podTimes = new Map<string, number>();
    for (const pod of pods) {
      const t = parseTime(getPodReadyCondition(pod.status)?.lastTransitionTime);
      if (t === undefined) continue;
      const name = pod.metadata?.name ?? '';
      podTimes.set(name, t);
      const last = state?.lastPodTriggerTimes.get(name);
      if (last === undefined || t > last) min = minDefined(min, t);
    }
    const svcTime = parseTime(service.metadata?.creationTimestamp);
    if (svcTime !== undefined && (state?.lastServiceTriggerTime === undefined || svcTime > state.lastServiceTriggerTime)) {
      min = minDefined(min, svcTime);
    }
    this.states.set(key, { lastPodTriggerTimes: podTimes, lastServiceTriggerTime: svcTime });
    return state ? min : svcTime;
  }

  deleteService(namespace: string, name: string): void {
    this.states.delete(`${namespace}/${name}`);
  }
}

export function newTriggerTimeTracker(): TriggerTimeTracker {
  return new Tracker();
}
