/**
 * The simulated life of one pod on one node: a state machine over its init
 * and regular containers, driven only by time. `step(now)` applies every
 * transition due at `now` (as one kubelet SyncPod would) and says when the
 * next one is due; the caller schedules that on its Clock and writes the
 * resulting status. No I/O here: events go to the `emit` callback.
 *
 * Lifecycle, as the kubelet's kuberuntime manager:
 * - init containers run one at a time in spec order; a regular init container
 *   must exit 0 before the next starts; a sidecar (init container with
 *   restartPolicy Always) counts as done once started and keeps running;
 * - then every regular container starts; an image that cannot be pulled
 *   leaves its container waiting (ErrImagePull, then ImagePullBackOff with
 *   the 10 s .. 300 s backoff);
 * - a container that ends shows as terminated until the next sync (1 s), then
 *   restarts when the restart policy says so, the first time at once, then
 *   after the backoff (CrashLoopBackOff meanwhile);
 * - probes (probes.ts) run on the kubelet's timing: readiness sets `ready`,
 *   a failed liveness or startup probe stops the container and restarts it;
 * - postStart hooks run right after the start (a failing one stops the
 *   container); stopping a container (deletion, probe, deadline) runs its
 *   preStop hook, then SIGTERM, which some processes ignore (a shell or
 *   `sleep` as PID 1 without a trap), then SIGKILL (137) at the grace
 *   period's end; on deletion sidecars stop last;
 * - activeDeadlineSeconds fails the pod (DeadlineExceeded) and stops it;
 * - once nothing will run again, the pod is Succeeded or Failed and stays so.
 *
 * Each container instance is a ContainerRun (container-process.ts): its
 * command runs in the simulated shell on the same clock, so it ends when its
 * script ends, with its exit code, and what it prints is its log.
 */
import { randomFillSync } from 'node:crypto';
import type { Container, ContainerStateTerminated, ContainerStatus, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import { isForced, newProbeWorkers, parseForcedFailures, periodMs, probeKindTitle, recordOutcome, runProbe, type ProbeKind, type ProbeWorker } from './probes.js';
import { defaultSpawn, type ContainerLog, type ContainerRun } from './container-process.js';
import { imageID, isPullable, pullErrorMessage, type ImagePullRule } from './image.js';
import { formatGoDuration, type RestartBackoff } from './restart-backoff.js';

/** How long after a failed pull the next sync reports ImagePullBackOff (the kubelet's next pod sync). */
export const PULL_RESYNC_MS = 1000;
/** How long a container that ended shows as terminated before the next sync restarts it or backs off (the PLEG relist period). */
export const CONTAINER_RESYNC_MS = 1000;
/** How soon a container whose configuration could not be made (CreateContainerConfigError) is tried again (the pod worker's resync). */
export const CONFIG_RETRY_MS = 10_000;
/** The kubelet's minimum grace period when killing a container (minimumGracePeriodInSeconds). */
export const MIN_KILL_GRACE_MS = 2000;
/** Default terminationGracePeriodSeconds. */
export const DEFAULT_GRACE_SECONDS = 30;

export type KillReason = 'delete' | 'liveness' | 'startup' | 'postStart' | 'deadline' | 'evict';

/** A container being stopped: preStop, then SIGTERM at `termAt`, SIGKILL at `deadline`. */
export interface Kill {
  reason: KillReason;
  termAt: number;
  deadline: number;
  /** SIGTERM was delivered (the process ignored it if it still runs). */
  termSent: boolean;
}

export type EventType = 'Normal' | 'Warning';
export type EmitFn = (type: EventType, reason: string, message: string, fieldPath?: string) => void;

export interface Terminated {
  id: string;
  exitCode: number;
  reason: string;
  /** The termination message (terminationMessagePath, or the log's tail with FallbackToLogsOnError). */
  message?: string;
  startedAt: number;
  finishedAt: number;
}

export type ContainerState =
  | { kind: 'waiting'; reason: string; message?: string }
  | { kind: 'running'; id: string; startedAt: number; run: ContainerRun }
  | ({ kind: 'terminated' } & Terminated);

/** One container of the pod as the simulated runtime sees it. Read-only for callers. */
export interface ContainerSim {
  readonly name: string;
  readonly spec: Container;
  /** An init container (sidecar or not). */
  readonly init: boolean;
  /** An init container with restartPolicy Always. */
  readonly sidecar: boolean;
  /** Its spec index, for event field paths. */
  readonly fieldPath: string;
  state: ContainerState;
  lastTerminated?: Terminated;
  restartCount: number;
  /** An instance was created at least once. */
  everStarted: boolean;
  /** The log of the current (running or last ended) instance, and of the one before it (`kubectl logs --previous`). */
  log?: ContainerLog;
  previousLog?: ContainerLog;
  /** The prober workers of the running instance. */
  probes: ProbeWorker[];
  /** Where the probes' ticks fall in their periods (PodRuntimeOptions.probeJitter), by kind, once drawn. */
  probePhase?: Partial<Record<ProbeKind, number>>;
  /** Set while the running instance is being stopped. */
  kill?: Kill;
  /** Killed by a failed liveness/startup probe or postStart hook: restarts whatever its exit code (unless restartPolicy Never). */
  forceRestart?: boolean;
  /** After a CreateContainerConfigError: the next attempt (sooner when the pod object changes). */
  configRetryAt?: number;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

export interface PodRuntimeOptions {
  backoff: RestartBackoff;
  emit: EmitFn;
  /** Delay between admission and the sandbox being ready (default 0). */
  startDelayMs?: number;
  /** Starts an instance of a container at `now` (default: the shell with a standard file system, no environment). */
  spawn?: (c: ContainerSim, pod: Pod, now: number) => ContainerRun | { error: string };
  /** HTTP GET from the node to host:port (probes and hooks); undefined: no network, only declared ports answer (200). */
  http?: HttpGet;
  /** Images that fail to pull beyond those that cannot exist. */
  imagePullRule?: ImagePullRule;
  /**
   * A number in [0, 1) per container and probe kind, drawn once at admission: where in its period the probe's ticks
   * fall, as the kubelet's prober worker sleeps a random part of a period before its first tick (Math.random there).
   * Default: none, a probe first runs exactly initialDelaySeconds after its container started.
   */
  probeJitter?: () => number;
}

/** An HTTP GET as the kubelet's prober and hook runner make it: the status, or why no connection was made. */
export type HttpGet = (host: string, port: number, path: string) => { status: number; body: string } | { error: 'refused' | 'unreachable' | 'timeout' };

export interface StepResult {
  /** Something visible in the status changed. */
  changed: boolean;
  /** When the next transition is due (epoch ms), if any. */
  nextAt?: number;
}

/** Random bytes drawn ahead for container IDs: one call to the system's generator per 256 IDs, not per ID. */
const idPool = Buffer.alloc(32 * 256);
let idPoolNext = idPool.length;

function newContainerId(): string {
  if (idPoolNext === idPool.length) {
    randomFillSync(idPool);
    idPoolNext = 0;
  }
  idPoolNext += 32;
  return idPool.toString('hex', idPoolNext - 32, idPoolNext);
}

/** The pod's forced probe failures, or undefined when it forces none. */
function forcedFailures(pod: Pod): Map<string, Set<ProbeKind>> | undefined {
  const f = parseForcedFailures(pod);
  return f.size > 0 ? f : undefined;
}

/** `name_namespace(uid)`: the kubelet's format.Pod. */
export function formatPod(pod: Pod): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}(${pod.metadata?.uid ?? ''})`;
}

function waitingReasonBeforeStart(init: boolean, hasInit: boolean): string {
  return init || hasInit ? 'PodInitializing' : 'ContainerCreating';
}

export class PodRuntime {
  readonly containers: ContainerSim[];
  readonly initContainers: ContainerSim[];
  readonly admittedAt: number;
  /** The sandbox (network) is ready: containers may start, the pod has its IP. */
  sandboxReadyAt: number | undefined;
  phase: PodPhase = 'Pending';
  /** Set by stop(): the pod is being deleted. */
  terminating = false;
  /** Some volume is not attached or mounted yet: the sandbox waits (set by the caller before step()). */
  volumesPending = false;
  /** The pod's IP, for probe texts (set by the caller). */
  podIP = '';
  /** status.reason and status.message (DeadlineExceeded, Evicted). */
  statusReason?: { reason: string; message: string };
  /** The DisruptionTarget condition the eviction manager adds (reason TerminationByKubelet). */
  disruption?: { reason: string; message: string };
  /** Refused at admission (kubelet rejectPod): nothing ever ran, the status is phase, reason and message only. */
  rejected = false;
  /** When deletion started, the grace period's end (epoch ms). */
  private graceDeadline: number | undefined;
  /** probe.kcm.dev/fail's forced failures; undefined without any (most pods: no Map kept for them). */
  private forced: Map<string, Set<ProbeKind>> | undefined;
  private readonly restartPolicy: string;

  constructor(
    public pod: Pod,
    now: number,
    private readonly opts: PodRuntimeOptions,
  ) {
    this.admittedAt = now;
    const spec = pod.spec;
    this.restartPolicy = spec?.restartPolicy ?? 'Always';
    this.forced = forcedFailures(pod);
    const hasInit = (spec?.initContainers ?? []).length > 0;
    this.initContainers = (spec?.initContainers ?? []).map((c) => ({
      name: c.name,
      spec: c,
      init: true,
      sidecar: c.restartPolicy === 'Always',
      fieldPath: `spec.initContainers{${c.name}}`,
      state: { kind: 'waiting', reason: waitingReasonBeforeStart(true, hasInit) },
      restartCount: 0,
      everStarted: false,
      probes: [],
    }));
    this.containers = (spec?.containers ?? []).map((c) => ({
      name: c.name,
      spec: c,
      init: false,
      sidecar: false,
      fieldPath: `spec.containers{${c.name}}`,
      state: { kind: 'waiting', reason: waitingReasonBeforeStart(false, hasInit) },
      restartCount: 0,
      everStarted: false,
      probes: [],
    }));
  }

  /**
   * Takes over the containers a previous instance of this kubelet reported in
   * `status` (kcm restarted; real containers survive a kubelet restart): their
   * ids, start times, restart counts and last terminations are kept, no event
   * is emitted, and the sandbox counts as ready. Returns false, changing
   * nothing, when the status shows no container that was ever created.
   */
  adopt(status: PodStatus | undefined): boolean {
    const byName = new Map<string, ContainerStatus>();
    for (const cs of [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? [])]) byName.set(cs.name, cs);
    const ms = (t: string | undefined, fallback: number) => {
      const v = t ? Date.parse(t) : NaN;
      return Number.isNaN(v) ? fallback : v;
    };
    const id = (cid: string | undefined) => (cid ?? '').replace(/^[a-z]+:\/\//, '') || newContainerId();
    const term = (t: ContainerStateTerminated, cid?: string): Terminated => ({
      id: id(t.containerID ?? cid),
      exitCode: t.exitCode,
      reason: t.reason ?? (t.exitCode === 0 ? 'Completed' : 'Error'),
      startedAt: ms(t.startedAt, this.admittedAt),
      finishedAt: ms(t.finishedAt, this.admittedAt),
    });
    const all = [...this.initContainers, ...this.containers];
    if (!all.some((c) => { const cs = byName.get(c.name); return !!cs && (cs.state?.running || cs.state?.terminated || cs.lastState?.terminated); })) return false;
    for (const c of all) {
      const cs = byName.get(c.name);
      if (!cs) continue;
      c.restartCount = cs.restartCount ?? 0;
      if (cs.lastState?.terminated) c.lastTerminated = term(cs.lastState.terminated);
      if (cs.state?.running) {
        const startedAt = ms(cs.state.running.startedAt, this.admittedAt);
        const run = this.spawn(c, startedAt);
        c.state = 'error' in run ? { kind: 'waiting', reason: 'CreateContainerConfigError', message: run.error } : { kind: 'running', id: id(cs.containerID), startedAt, run };
        c.everStarted = true;
        c.probes = this.probeWorkers(c, startedAt);
        for (const w of c.probes) w.nextAt = Math.max(w.nextAt, this.admittedAt);
        // A kubelet restart keeps results it can see: started and ready as reported.
        for (const w of c.probes) {
          if (w.kind === 'startup' && cs.started) w.result = 'success';
          if (w.kind === 'readiness' && cs.ready) { w.result = 'success'; w.lastResult = 'success'; w.resultRun = 1; }
        }
      } else if (cs.state?.terminated) {
        c.state = { kind: 'terminated', ...term(cs.state.terminated, cs.containerID) };
        c.everStarted = true;
      } else if (c.lastTerminated) {
        c.everStarted = true;
        if (cs.state?.waiting?.reason) c.state = { kind: 'waiting', reason: cs.state.waiting.reason, ...(cs.state.waiting.message ? { message: cs.state.waiting.message } : {}) };
      }
    }
    this.sandboxReadyAt = this.admittedAt;
    if (status?.phase === 'Running' || status?.phase === 'Pending') this.phase = status.phase;
    return true;
  }

  get terminal(): boolean {
    return this.phase === 'Succeeded' || this.phase === 'Failed';
  }

  private get key(): string {
    return this.pod.metadata?.uid ?? '';
  }

  /** Every init container that must finish (or, for sidecars, start) has done so. */
  initialized(): boolean {
    return this.initContainers.every((c) => (c.sidecar ? c.everStarted : c.state.kind === 'terminated' && c.state.exitCode === 0));
  }

  /** Terminal, and no container is still being stopped. */
  get settled(): boolean {
    return this.terminal && this.all().every((c) => !c.kill);
  }

  /** Deletion started and every container has stopped. */
  get stopped(): boolean {
    return this.terminating && this.all().every((c) => c.state.kind !== 'running');
  }

  private all(): ContainerSim[] {
    return [...this.initContainers, ...this.containers];
  }

  /** Takes a newer version of the pod object (annotations such as probe.kcm.dev/fail apply from the next step). */
  updatePod(pod: Pod): void {
    if (pod !== this.pod) for (const c of this.all()) c.configRetryAt = undefined;
    this.pod = pod;
    this.forced = forcedFailures(pod);
  }

  private podGraceMs(): number {
    return (this.pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
  }

  /** Applies every transition due at `now`. */
  step(now: number): StepResult {
    let changed = false;
    const due: number[] = [];
    const result = (): StepResult => {
      for (const c of this.all()) if (c.kill && c.state.kind === 'running') due.push(c.kill.termSent ? c.kill.deadline : c.kill.termAt);
      // A container that just ended is acted on by the next sync.
      if (!this.terminal && !this.terminating) {
        for (const c of this.all()) if (c.state.kind === 'terminated' && c.state.finishedAt + CONTAINER_RESYNC_MS > now) due.push(c.state.finishedAt + CONTAINER_RESYNC_MS);
      }
      const finite = due.filter((d) => Number.isFinite(d));
      const nextAt = finite.length > 0 ? Math.max(now, Math.min(...finite)) : undefined;
      return nextAt === undefined ? { changed } : { changed, nextAt };
    };
    if (this.terminating) {
      changed = this.progressKills(now, due) || changed;
      changed = this.killSidecarsAfterMain(now, due) || changed;
      for (const c of this.all()) changed = this.runProbes(c, now, due, true) || changed;
      return result();
    }
    if (this.terminal) {
      changed = this.progressKills(now, due) || changed;
      return result();
    }
    if (this.sandboxReadyAt === undefined) {
      // The kubelet waits for volumes (WaitForAttachAndMount) before it creates the sandbox.
      if (this.volumesPending) return { changed };
      const at = this.admittedAt + (this.opts.startDelayMs ?? 0);
      if (now < at) return { changed, nextAt: at };
      this.sandboxReadyAt = now;
      changed = true;
    }
    // activeDeadlineSeconds (kubelet's activeDeadlineHandler), counted from the pod's start time.
    const ads = this.pod.spec?.activeDeadlineSeconds;
    if (ads !== undefined && ads !== null) {
      const at = this.admittedAt + ads * 1000;
      if (now >= at) {
        const message = 'Pod was active on the node longer than the specified deadline';
        this.opts.emit('Normal', 'DeadlineExceeded', message);
        this.phase = 'Failed';
        this.statusReason = { reason: 'DeadlineExceeded', message };
        for (const c of this.all()) if (c.state.kind === 'running' && !c.kill) this.beginKill(c, now, this.podGraceMs(), 'deadline');
        this.progressKills(now, due);
        changed = true;
        return result();
      }
      due.push(at);
    }
    changed = this.progressKills(now, due) || changed;
    // Containers whose process has ended.
    changed = this.advanceProcesses(now, due) || changed;
    // Init containers, one at a time.
    let initDone = true;
    // Once a regular container has run, restarting init containers no longer hold the others back.
    const initializedBefore = this.containers.some((c) => c.everStarted);
    for (const c of this.initContainers) {
      if (c.sidecar) {
        if (c.state.kind !== 'running') changed = this.startOrBackoff(c, now, true, due) || changed;
        // A sidecar lets the next container start once started (its startup probe, if any, succeeded).
        if ((c.state.kind === 'running' && this.isStarted(c)) || initializedBefore) continue;
        initDone = false;
        break;
      }
      if (c.state.kind === 'terminated' && c.state.exitCode === 0 && !c.forceRestart) continue;
      initDone = false;
      if (c.state.kind === 'running') break;
      if (c.state.kind === 'terminated' && this.restartPolicy === 'Never') {
        this.phase = 'Failed';
        return { changed: true };
      }
      changed = this.startOrBackoff(c, now, c.state.kind === 'terminated', due) || changed;
      break;
    }
    if (initDone) {
      for (const c of this.containers) {
        if (c.state.kind === 'running') continue;
        if (c.state.kind === 'terminated' || (c.state.kind === 'waiting' && c.lastTerminated && c.state.reason === 'CrashLoopBackOff')) {
          const code = c.state.kind === 'terminated' ? c.state.exitCode : c.lastTerminated!.exitCode;
          if (!this.shouldRestart(code) && !c.forceRestart) continue;
        }
        changed = this.startOrBackoff(c, now, true, due) || changed;
      }
    }
    // Probes of running containers.
    for (const c of this.all()) changed = this.runProbes(c, now, due, false) || changed;
    const phase = this.computePhase();
    if (phase !== this.phase) {
      this.phase = phase;
      changed = true;
    }
    if (this.terminal) {
      // The pod completed: sidecars still running are stopped (as kubelet does for a finished pod).
      for (const c of this.initContainers) if (c.sidecar && c.state.kind === 'running' && !c.kill) this.beginKill(c, now, this.podGraceMs(), 'delete');
      changed = this.progressKills(now, due) || changed;
    }
    return result();
  }

  /** Runs every container's process up to `now`; records those that ended. */
  private advanceProcesses(now: number, due: number[]): boolean {
    let changed = false;
    for (const c of this.all()) {
      if (c.state.kind !== 'running') continue;
      const r = c.state.run.advance(now);
      if (r.exited) {
        this.endContainer(c, r.exited.code, r.exited.at);
        changed = true;
      } else if (r.wakeAt !== undefined) due.push(r.wakeAt);
    }
    return changed;
  }

  private spawn(c: ContainerSim, now: number): ContainerRun | { error: string } {
    const run = this.opts.spawn ? this.opts.spawn(c, this.pod, now) : defaultSpawn(c.spec, now, this.pod.metadata?.name ?? 'localhost');
    if ('error' in run) return run;
    if (c.log) c.previousLog = c.log;
    c.log = run.log;
    return run;
  }

  /** Records the end of the running instance of `c`. */
  private endContainer(c: ContainerSim, exitCode: number, at: number): void {
    if (c.state.kind !== 'running') return;
    const message = terminationMessage(c.spec, c.state.run, exitCode);
    c.state.run.log.end();
    c.state = {
      ...(message ? { message } : {}), kind: 'terminated', id: c.state.id, exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: c.state.startedAt, finishedAt: at };
    c.kill = undefined;
    c.probes = [];
  }

  /** Ends the containers being stopped whose time has come; returns whether any did. */
  private progressKills(now: number, due: number[]): boolean {
    let changed = false;
    for (const c of this.all()) {
      const k = c.kill;
      if (!k || c.state.kind !== 'running') continue;
      const run = c.state.run;
      let end: { code: number; at: number } | undefined;
      if (!k.termSent && k.termAt <= now) {
        end = run.advance(k.termAt).exited ?? run.term(k.termAt);
        k.termSent = true;
      }
      if (!end) {
        const r = run.advance(Math.min(now, k.deadline));
        end = r.exited ?? (k.deadline <= now ? run.kill(k.deadline) : undefined);
        if (!end) due.push(Math.min(k.termSent ? k.deadline : k.termAt, r.wakeAt ?? Infinity));
      }
      if (end) {
        this.endContainer(c, end.code, end.at);
        changed = true;
      }
    }
    return changed;
  }

  /** During deletion: once every other container stopped, sidecars are stopped one by one in reverse order. */
  private killSidecarsAfterMain(now: number, due: number[]): boolean {
    let changed = false;
    for (let guard = 0; guard < this.initContainers.length + 1; guard++) {
      const others = [...this.containers, ...this.initContainers.filter((c) => !c.sidecar)];
      if (others.some((c) => c.state.kind === 'running')) return changed;
      const running = this.initContainers.filter((c) => c.sidecar && c.state.kind === 'running');
      if (running.length === 0 || running.some((c) => c.kill)) return changed;
      const last = running[running.length - 1]!;
      this.beginKill(last, now, Math.max(0, (this.graceDeadline ?? now) - now), 'delete');
      changed = this.progressKills(now, due) || changed;
    }
    return changed;
  }

  /**
   * Starts stopping the running container `c` as kuberuntime killContainer:
   * its preStop hook, then SIGTERM, then SIGKILL when `graceMs` (at least
   * 2 s after the hook) has passed.
   */
  private beginKill(c: ContainerSim, now: number, graceMs: number, reason: KillReason): void {
    if (c.state.kind !== 'running') return;
    // kuberuntime computePodActions (computeInitContainerActions for sidecars, which always restart).
    const message =
      reason === 'liveness' || reason === 'startup'
        ? c.sidecar
          ? `Init container ${c.name} failed ${reason} probe`
          : `Container ${c.name} failed ${reason} probe${this.restartPolicy !== 'Never' ? ', will be restarted' : ''}`
        : reason === 'postStart'
          ? 'FailedPostStartHook'
          : `Stopping container ${c.name}`;
    this.opts.emit('Normal', 'Killing', message, c.fieldPath);
    let hookMs = 0;
    const ps = c.spec.lifecycle?.preStop;
    if (ps?.exec) {
      const cmd = ps.exec.command ?? [];
      const r = c.state.run.exec(cmd, now, graceMs);
      hookMs = r.durationMs;
      if (r.exitCode !== 0 && !r.timedOut) this.opts.emit('Warning', 'FailedPreStopHook', execHookMessage(cmd, c.name, this.pod, r.exitCode, r.output), c.fieldPath);
    } else if (ps?.httpGet) {
      const err = this.httpHook(c, ps.httpGet);
      if (err) this.opts.emit('Warning', 'FailedPreStopHook', `Http lifecycle hook (${ps.httpGet.path ?? ''}) for Container "${c.name}" in Pod "${formatPod(this.pod)}" failed - error: ${err}, message: ""`, c.fieldPath);
    } else if (ps?.sleep) hookMs = (ps.sleep.seconds ?? 0) * 1000;
    hookMs = Math.min(hookMs, graceMs);
    const termAt = now + hookMs;
    const deadline = termAt + Math.max(graceMs - hookMs, MIN_KILL_GRACE_MS);
    c.kill = { reason, termAt, deadline, termSent: false };
    if (reason !== 'delete' && reason !== 'deadline' && reason !== 'evict') c.forceRestart = c.sidecar || this.restartPolicy !== 'Never';
  }

  /**
   * The eviction manager's evictPod: the pod turns Failed with reason
   * Evicted and `message`, gets the DisruptionTarget condition, and every
   * running container is stopped with `graceSeconds` (0 for hard thresholds).
   * Returns false when the pod is already terminal or being deleted.
   */
  evict(now: number, message: string, graceSeconds = 0): boolean {
    if (this.terminal || this.terminating) return false;
    this.phase = 'Failed';
    this.statusReason = { reason: 'Evicted', message };
    this.disruption = { reason: 'TerminationByKubelet', message };
    for (const c of this.all()) if (c.state.kind === 'running' && !c.kill) this.beginKill(c, now, graceSeconds * 1000, 'evict');
    this.progressKills(now, []);
    return true;
  }

  /** Kubelet's rejectPod at admission: Failed with `reason` and `Pod was rejected: <message>`; nothing runs. */
  reject(reason: string, message: string): void {
    this.rejected = true;
    this.phase = 'Failed';
    this.statusReason = { reason, message: `Pod was rejected: ${message}` };
  }

  /** Starts stopping every container for the pod's deletion with `graceSeconds` (sidecars after the others). */
  beginTermination(now: number, graceSeconds: number): void {
    this.terminating = true;
    const graceMs = Math.max(0, graceSeconds) * 1000;
    this.graceDeadline = now + Math.max(graceMs, MIN_KILL_GRACE_MS);
    for (const c of this.all()) if (!c.sidecar && c.state.kind === 'running' && !c.kill) this.beginKill(c, now, graceMs, 'delete');
  }

  /** The prober workers of an instance of `c` started at `startedAt`. */
  private probeWorkers(c: ContainerSim, startedAt: number): ProbeWorker[] {
    const jitter = this.opts.probeJitter;
    if (!jitter) return newProbeWorkers(c.spec, startedAt);
    const phase = (c.probePhase ??= {});
    return newProbeWorkers(c.spec, startedAt, (kind, period) => this.admittedAt + (phase[kind] ??= jitter()) * period);
  }

  /** Runs the probes of `c` due by `now`; returns whether its started or ready state changed. */
  private runProbes(c: ContainerSim, now: number, due: number[], readinessOnly: boolean): boolean {
    if (c.state.kind !== 'running') return false;
    const startedAt = c.state.startedAt;
    let changed = false;
    const startup = c.probes.find((w) => w.kind === 'startup');
    for (const w of c.probes) {
      if (readinessOnly && w.kind !== 'readiness') continue;
      if (c.kill && w.kind !== 'readiness') continue;
      // Ticks missed while no step ran (a paused node) are not caught up one by one.
      const period = periodMs(w.probe);
      if (now - w.nextAt > period) w.nextAt += Math.floor((now - w.nextAt) / period) * period;
      while (!w.onHold && w.nextAt <= now && c.state.kind === 'running') {
        const at = w.nextAt;
        w.nextAt += periodMs(w.probe);
        const started = !startup || startup.result === 'success';
        if (w.kind === 'startup' ? started : !started) continue;
        const run = c.state.run;
        const r = runProbe(w.probe, {
          container: c.spec,
          podIP: this.podIP,
          elapsedMs: at - startedAt,
          exec: (argv, timeoutMs) => run.exec(argv, at, timeoutMs),
          ...(this.opts.http ? { http: this.opts.http } : {}),
          forced: this.forced !== undefined && isForced(this.forced, c.name, w.kind),
        });
        if (r.result === 'failure') this.opts.emit('Warning', 'Unhealthy', `${probeKindTitle(w.kind)} probe failed: ${r.output}`, c.fieldPath);
        if (!recordOutcome(w, r.result)) continue;
        changed = true;
        if (w.kind === 'startup' && w.result === 'success') {
          due.push(now); // the next sync may start the containers after a sidecar
          // The kubelet probes readiness at once when the container turns started.
          const readiness = c.probes.find((x) => x.kind === 'readiness');
          if (readiness && readiness.result === undefined) readiness.nextAt = Math.max(at, startedAt + (readiness.probe.initialDelaySeconds ?? 0) * 1000);
        }
        if ((w.kind === 'liveness' || w.kind === 'startup') && w.result === 'failure') {
          const probeGrace = w.probe.terminationGracePeriodSeconds;
          this.beginKill(c, at, probeGrace !== undefined && probeGrace !== null ? probeGrace * 1000 : this.podGraceMs(), w.kind);
          this.progressKills(now, due);
          break;
        }
      }
      if (!w.onHold && c.state.kind === 'running' && !(w.kind === 'startup' && w.result === 'success')) due.push(w.nextAt);
    }
    return changed;
  }

  private shouldRestart(exitCode: number): boolean {
    return this.restartPolicy === 'Always' || (this.restartPolicy === 'OnFailure' && exitCode !== 0);
  }

  /**
   * Starts `c` unless its restart backoff or image pull backoff holds it.
   * `restartable` is false for a first start. Returns whether anything changed.
   */
  private startOrBackoff(c: ContainerSim, now: number, restartable: boolean, due: number[]): boolean {
    if (c.state.kind === 'waiting' && c.state.reason === 'CreateContainerConfigError' && c.configRetryAt !== undefined && now < c.configRetryAt) {
      due.push(c.configRetryAt);
      return false;
    }
    const name = c.name;
    const bkey = `${this.key}/${name}`;
    // Restart backoff, measured from the last finish (kuberuntime doBackOff).
    const finished = c.state.kind === 'terminated' ? c.state : c.lastTerminated;
    // The end shows as terminated until the next sync (PLEG relist) acts on it.
    if (restartable && c.state.kind === 'terminated' && now < c.state.finishedAt + CONTAINER_RESYNC_MS) {
      due.push(c.state.finishedAt + CONTAINER_RESYNC_MS);
      return false;
    }
    if (restartable && finished && c.everStarted) {
      if (this.opts.backoff.inBackoffSince(bkey, finished.finishedAt)) {
        const message = `back-off ${formatGoDuration(this.opts.backoff.get(bkey))} restarting failed container=${name} pod=${formatPod(this.pod)}`;
        due.push(this.opts.backoff.endsAt(bkey, finished.finishedAt));
        if (c.state.kind === 'waiting' && c.state.reason === 'CrashLoopBackOff' && c.state.message === message) return false;
        if (c.state.kind === 'terminated') c.lastTerminated = { ...c.state };
        c.state = { kind: 'waiting', reason: 'CrashLoopBackOff', message };
        this.opts.emit('Warning', 'BackOff', `Back-off restarting failed container ${name} in pod ${formatPod(this.pod)}`, c.fieldPath);
        return true;
      }
      this.opts.backoff.next(bkey, finished.finishedAt);
    }
    // Image pull (kubelet images.imageManager).
    const image = c.spec.image ?? '';
    if (!isPullable(image, this.opts.imagePullRule)) {
      const pkey = `${this.key}_${image}`;
      if (this.opts.backoff.inBackoffSinceUpdate(pkey, now)) {
        due.push(this.opts.backoff.endsAtSinceUpdate(pkey));
        if (c.state.kind === 'waiting' && c.state.reason === 'ImagePullBackOff') return false;
        if (c.state.kind === 'waiting' && c.state.reason === 'ErrImagePull' && now < this.pullFailedAt(c) + PULL_RESYNC_MS) {
          due.push(this.pullFailedAt(c) + PULL_RESYNC_MS);
          return false;
        }
        if (c.state.kind === 'terminated') c.lastTerminated = { ...c.state };
        const msg = `Back-off pulling image "${image}"`;
        c.state = { kind: 'waiting', reason: 'ImagePullBackOff', message: msg };
        this.opts.emit('Normal', 'BackOff', msg, c.fieldPath);
        this.opts.emit('Warning', 'Failed', 'Error: ImagePullBackOff', c.fieldPath);
        return true;
      }
      this.opts.emit('Normal', 'Pulling', `Pulling image "${image}"`, c.fieldPath);
      const err = pullErrorMessage(image);
      this.opts.emit('Warning', 'Failed', `Failed to pull image "${image}": ${err}`, c.fieldPath);
      this.opts.emit('Warning', 'Failed', 'Error: ErrImagePull', c.fieldPath);
      this.opts.backoff.next(pkey, now);
      if (c.state.kind === 'terminated') c.lastTerminated = { ...c.state };
      c.state = { kind: 'waiting', reason: 'ErrImagePull', message: err };
      (this.pullFailures ??= new Map()).set(name, now);
      due.push(now + PULL_RESYNC_MS);
      return true;
    }
    if (c.spec.imagePullPolicy === 'Always') {
      // The kubelet pulls on every start with Always; the simulated pull takes no time.
      this.opts.emit('Normal', 'Pulling', `Pulling image "${image}"`, c.fieldPath);
      this.opts.emit('Normal', 'Pulled', `Successfully pulled image "${image}" in 0s (0s including waiting). Image size: ${simulatedImageSize(image)} bytes.`, c.fieldPath);
    } else {
      this.opts.emit('Normal', 'Pulled', `Container image "${image}" already present on machine`, c.fieldPath);
    }
    const run = this.spawn(c, now);
    if ('error' in run) {
      c.configRetryAt = now + CONFIG_RETRY_MS;
      // kubelet's generateContainerConfig failed: the container waits, and the next sync tries again.
      this.opts.emit('Warning', 'Failed', `Error: ${run.error}`, c.fieldPath);
      due.push(now + CONFIG_RETRY_MS);
      if (c.state.kind === 'waiting' && c.state.reason === 'CreateContainerConfigError' && c.state.message === run.error) return false;
      if (c.state.kind === 'terminated') c.lastTerminated = { ...c.state };
      c.state = { kind: 'waiting', reason: 'CreateContainerConfigError', message: run.error };
      return true;
    }
    this.opts.emit('Normal', 'Created', `Created container: ${name}`, c.fieldPath);
    this.opts.emit('Normal', 'Started', `Started container ${name}`, c.fieldPath);
    if (c.state.kind === 'terminated') c.lastTerminated = { ...c.state };
    if (c.everStarted) c.restartCount++;
    c.everStarted = true;
    c.state = { kind: 'running', id: newContainerId(), startedAt: now, run };
    c.forceRestart = false;
    c.kill = undefined;
    c.probes = this.probeWorkers(c, now);
    for (const w of c.probes) due.push(w.nextAt);
    // The process runs from now on; the caller's next step (due now) sees whether it already ended.
    const first = run.advance(now);
    due.push(first.exited ? now : (first.wakeAt ?? Infinity));
    this.runPostStart(c, now);
    return true;
  }

  /** When each container's image pull last failed; made at the first failure (most pods have none). */
  private pullFailures: Map<string, number> | undefined;
  private pullFailedAt(c: ContainerSim): number {
    return this.pullFailures?.get(c.name) ?? 0;
  }

  /** The postStart hook, run right after the start; a failing one kills the container (kuberuntime startContainer). */
  private runPostStart(c: ContainerSim, now: number): void {
    const hook = c.spec.lifecycle?.postStart;
    if (!hook) return;
    let message: string | undefined;
    if (hook.exec && c.state.kind === 'running') {
      const cmd = hook.exec.command ?? [];
      const r = c.state.run.exec(cmd, now, this.podGraceMs());
      if (r.exitCode !== 0) message = execHookMessage(cmd, c.name, this.pod, r.exitCode, r.output);
    } else if (hook.httpGet) {
      const err = this.httpHook(c, hook.httpGet);
      if (err) message = `Http lifecycle hook (${hook.httpGet.path ?? ''}) for Container "${c.name}" in Pod "${formatPod(this.pod)}" failed - error: ${err}, message: ""`;
    }
    if (message === undefined) return;
    this.opts.emit('Warning', 'FailedPostStartHook', message, c.fieldPath);
    this.beginKill(c, now, this.podGraceMs(), 'postStart');
  }

  /** Runs an HTTP lifecycle hook (kubelet's runHTTPHandler): the transport error, if any; the status does not matter. */
  private httpHook(c: ContainerSim, g: NonNullable<NonNullable<Container['lifecycle']>['postStart']>['httpGet'] & object): string | undefined {
    const host = g.host || this.podIP;
    const named = typeof g.port === 'string' && !/^\d+$/.test(g.port) ? (c.spec.ports ?? []).find((p) => p.name === g.port)?.containerPort : undefined;
    const n = named ?? (Number(g.port) || 0);
    let path = g.path ?? '';
    if (path && !path.startsWith('/')) path = `/${path}`;
    const url = `${(g.scheme ?? 'HTTP').toLowerCase()}://${host}:${n}${path}`;
    if (this.opts.http) {
      const r = this.opts.http(host, n, path);
      return 'error' in r ? `Get "${url}": dial tcp ${host}:${n}: ${r.error === 'refused' ? 'connect: connection refused' : r.error === 'timeout' ? 'i/o timeout' : 'connect: no route to host'}` : undefined;
    }
    const declared = (c.spec.ports ?? []).some((p) => p.containerPort === n);
    return declared ? undefined : `Get "${url}": dial tcp ${host}:${n}: connect: connection refused`;
  }

  isStarted(c: ContainerSim, _now?: number): boolean {
    if (c.state.kind !== 'running') return false;
    const startup = c.probes.find((w) => w.kind === 'startup');
    return !startup || startup.result === 'success';
  }

  /** Ready: started, and its readiness probe (if any) holds success. */
  isReady(c: ContainerSim, now?: number): boolean {
    if (!this.isStarted(c, now)) return false;
    const readiness = c.probes.find((w) => w.kind === 'readiness');
    return !readiness || readiness.result === 'success';
  }

  /** The kubelet's getPhase over the current container states. */
  private computePhase(podIsTerminal = false): PodPhase {
    let pendingInit = 0;
    let failedInit = 0;
    for (const c of this.initContainers) {
      if (c.sidecar) {
        if (!c.everStarted) pendingInit++;
        continue;
      }
      const s = c.state;
      if (s.kind === 'terminated') {
        if (s.exitCode !== 0) failedInit++;
      } else if (s.kind === 'running') pendingInit++;
      else if (c.lastTerminated && c.lastTerminated.exitCode !== 0) failedInit++;
      else pendingInit++;
    }
    if (!podIsTerminal && (pendingInit > 0 || failedInit > 0)) {
      return failedInit > 0 && this.restartPolicy === 'Never' ? 'Failed' : 'Pending';
    }
    let running = 0;
    let waiting = 0;
    let stopped = 0;
    let succeeded = 0;
    for (const c of this.containers) {
      const s = c.state;
      if (s.kind === 'running') running++;
      else if (s.kind === 'terminated') {
        stopped++;
        if (s.exitCode === 0) succeeded++;
      } else if (c.lastTerminated) {
        stopped++;
        if (c.lastTerminated.exitCode === 0) succeeded++;
      } else waiting++;
    }
    if (podIsTerminal) return waiting === 0 && running === 0 && stopped === succeeded ? 'Succeeded' : 'Failed';
    if (waiting > 0) return 'Pending';
    if (running > 0) return 'Running';
    if (stopped > 0) {
      if (this.restartPolicy === 'Always') return 'Running';
      if (stopped === succeeded) return 'Succeeded';
      if (this.restartPolicy === 'Never') return 'Failed';
      return 'Running';
    }
    return 'Pending';
  }

  /**
   * Stops every running container at `now` for the pod's deletion (callers
   * that simulate a grace period call this at its end, after setting
   * `terminating` at its start so nothing restarts meanwhile). A program that
   * ended by `now` ends with its own exit code at its own time; a server-like
   * container (one that runs until stopped) exits 0 on SIGTERM; a `sleep`
   * program still running, which ignores SIGTERM as a shell's PID 1 does, is
   * killed with 137.
   */
  stop(now: number): void {
    this.terminating = true;
    for (const c of [...this.initContainers, ...this.containers]) {
      const s = c.state;
      if (s.kind !== 'running') continue;
      this.opts.emit('Normal', 'Killing', `Stopping container ${c.name}`, c.fieldPath);
      const e = s.run.advance(now).exited ?? s.run.term(now) ?? s.run.kill(now);
      s.run.log.end();
      const end: Terminated = { id: s.id, exitCode: e.code, reason: e.code === 0 ? 'Completed' : 'Error', startedAt: s.startedAt, finishedAt: e.at };
      c.state = { kind: 'terminated', ...end };
      c.kill = undefined;
      c.probes = [];
    }
  }

  /** After stop(): the terminal phase the kubelet reports before the pod is removed. */
  finishTermination(): void {
    if (!this.terminal) this.phase = this.computePhase(true);
  }

  /** Every container's image id, for status. */
  static imageIdOf(c: ContainerSim): string {
    return c.everStarted ? imageID(c.spec.image ?? '') : '';
  }
}

/** A stable, plausible image size (10-110 MB) for the simulated pull events. */
function simulatedImageSize(image: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < image.length; i++) h = Math.imul(h ^ image.charCodeAt(i), 0x01000193) >>> 0;
  return 10_000_000 + (h % 100_000_000);
}

/** The kubelet's message for a failed exec lifecycle hook (lifecycle handlerRunner with the CRI ExecSync error). */
function execHookMessage(cmd: readonly string[], container: string, pod: Pod, exitCode: number, output: string): string {
  return `Exec lifecycle hook ([${cmd.join(' ')}]) for Container "${container}" in Pod "${formatPod(pod)}" failed - error: command '${cmd.join(' ')}' exited with ${exitCode}: , message: ${JSON.stringify(output)}`;
}

/**
 * kubelet's termination message: the file at terminationMessagePath
 * (default /dev/termination-log, at most 4096 bytes), or, when it is empty
 * and terminationMessagePolicy is FallbackToLogsOnError and the container
 * failed, the last 80 lines of its log (at most 2048 bytes).
 */
function terminationMessage(spec: Container, run: ContainerRun, exitCode: number): string | undefined {
  let text = '';
  try {
    text = run.fs.readFile(spec.terminationMessagePath || '/dev/termination-log').subarray(0, 4096).toString('utf8');
  } catch {
    /* no file */
  }
  if (text === '' && spec.terminationMessagePolicy === 'FallbackToLogsOnError' && exitCode !== 0) {
    const tail = run.log.read({ tailLines: 80 });
    text = Buffer.from(tail).subarray(Math.max(0, Buffer.byteLength(tail) - 2048)).toString('utf8');
  }
  return text || undefined;
}
