/**
 * Test support (not shipped in the public entries): drives one PodRuntime on
 * a fake clock as the node simulator does, stepping at each due time.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { FakeClock } from '../util/clock/clock.js';
import { PodRuntime } from './pod-runtime.js';
import { buildPodStatus } from './pod-status.js';
import { newRestartBackoff } from './restart-backoff.js';

/** A pod `ns/p` (uid u1) with these containers. */
export function runtimePod(containers: Container[], extra: Partial<NonNullable<Pod['spec']>> = {}, annotations?: Record<string, string>): Pod {
  return { metadata: { name: 'p', namespace: 'ns', uid: 'u1', ...(annotations ? { annotations } : {}) }, spec: { containers, ...extra } };
}

export function runtimeHarness(p: Pod, podIP = '10.244.0.5') {
  const clock = new FakeClock();
  const events: string[] = [];
  const rt = new PodRuntime(p, clock.now(), {
    backoff: newRestartBackoff({ clock }),
    emit: (type, reason, message) => events.push(`${type} ${reason} ${message}`),
  });
  rt.podIP = podIP;
  let next: number | undefined = clock.now();
  const t0 = clock.now();
  /** Runs `ms` more milliseconds. */
  const run = async (ms: number) => {
    const until = clock.now() + ms;
    for (;;) {
      if (next === undefined || next > until) break;
      await clock.advance(Math.max(0, next - clock.now()));
      next = rt.step(clock.now()).nextAt;
    }
    await clock.advance(until - clock.now());
  };
  /** Runs until `sec` seconds after the start. */
  const at = (sec: number) => run(t0 + sec * 1000 - clock.now());
  /** Steps at the next run (after a change from outside, e.g. the pod object). */
  const kick = () => {
    next = clock.now();
  };
  /** Deletion with `grace` seconds, as the simulator starts it. */
  const del = (grace: number) => {
    rt.beginTermination(clock.now(), grace);
    next = clock.now();
  };
  const status = () => buildPodStatus(rt, p, { hostIP: '172.18.0.2', podIP }, clock.now());
  const cs = (i = 0) => status().containerStatuses![i]!;
  const ready = () => status().conditions!.find((c) => c.type === 'Ready')!.status;
  const state = (name: string) => [...(status().initContainerStatuses ?? []), ...status().containerStatuses!].find((c) => c.name === name)!.state!;
  return { clock, rt, events, run, at, kick, del, status, cs, ready, state };
}
