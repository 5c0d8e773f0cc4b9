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
 * - a container that ends restarts when the restart policy says so, the first
 *   time at once, then after the backoff (CrashLoopBackOff meanwhile);
 * - once nothing will run again, the pod is Succeeded or Failed and stays so.
 */
import { randomBytes } from 'node:crypto';
import type { Container, ContainerStateTerminated, ContainerStatus, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import { parseProgram, type Program } from './command.js';
import { imageID, isPullable, pullErrorMessage } from './image.js';
import { formatGoDuration, type RestartBackoff } from './restart-backoff.js';

/** How long after a failed pull the next sync reports ImagePullBackOff (the kubelet's next pod sync). */
export const PULL_RESYNC_MS = 1000;

export type EventType = 'Normal' | 'Warning';
export type EmitFn = (type: EventType, reason: string, message: string, fieldPath?: string) => void;

export interface Terminated {
  id: string;
  exitCode: number;
  reason: string;
  startedAt: number;
  finishedAt: number;
}

export type ContainerState =
  | { kind: 'waiting'; reason: string; message?: string }
  | { kind: 'running'; id: string; startedAt: number; program: Program }
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
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

export interface PodRuntimeOptions {
  backoff: RestartBackoff;
  emit: EmitFn;
  /** Delay between admission and the sandbox being ready (default 0). */
  startDelayMs?: number;
}

export interface StepResult {
  /** Something visible in the status changed. */
  changed: boolean;
  /** When the next transition is due (epoch ms), if any. */
  nextAt?: number;
}

function newContainerId(): string {
  return randomBytes(32).toString('hex');
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
  private readonly restartPolicy: string;

  constructor(
    readonly pod: Pod,
    now: number,
    private readonly opts: PodRuntimeOptions,
  ) {
    this.admittedAt = now;
    const spec = pod.spec;
    this.restartPolicy = spec?.restartPolicy ?? 'Always';
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
        c.state = { kind: 'running', id: id(cs.containerID), startedAt: ms(cs.state.running.startedAt, this.admittedAt), program: parseProgram(c.spec.command, c.spec.args) };
        c.everStarted = true;
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

  /** Applies every transition due at `now`. */
  step(now: number): StepResult {
    let changed = false;
    const due: number[] = [];
    if (this.terminal || this.terminating) return { changed };
    if (this.sandboxReadyAt === undefined) {
      // The kubelet waits for volumes (WaitForAttachAndMount) before it creates the sandbox.
      if (this.volumesPending) return { changed };
      const at = this.admittedAt + (this.opts.startDelayMs ?? 0);
      if (now < at) return { changed, nextAt: at };
      this.sandboxReadyAt = now;
      changed = true;
    }
    // Containers whose program has ended.
    for (const c of [...this.initContainers, ...this.containers]) {
      if (c.state.kind !== 'running' || c.state.program.kind !== 'exits') continue;
      const endAt = c.state.startedAt + c.state.program.afterMs;
      if (endAt > now) {
        due.push(endAt);
        continue;
      }
      const code = c.state.program.exitCode;
      c.state = { kind: 'terminated', id: c.state.id, exitCode: code, reason: code === 0 ? 'Completed' : 'Error', startedAt: c.state.startedAt, finishedAt: endAt };
      changed = true;
    }
    // Init containers, one at a time.
    let initDone = true;
    for (const c of this.initContainers) {
      if (c.sidecar) {
        if (c.state.kind !== 'running') changed = this.startOrBackoff(c, now, true, due) || changed;
        if (c.state.kind === 'running') continue;
        initDone = false;
        break;
      }
      if (c.state.kind === 'terminated' && c.state.exitCode === 0) continue;
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
          if (!this.shouldRestart(code)) continue;
        }
        changed = this.startOrBackoff(c, now, true, due) || changed;
      }
    }
    // Readiness and startup probes become true after their initial delays.
    for (const c of [...this.initContainers, ...this.containers]) {
      if (c.state.kind !== 'running') continue;
      for (const at of [this.startedAt(c), this.readyAt(c)]) if (at !== undefined && at > now) due.push(at);
    }
    const phase = this.computePhase();
    if (phase !== this.phase) {
      this.phase = phase;
      changed = true;
    }
    if (this.terminal) return { changed };
    const nextAt = due.length > 0 ? Math.min(...due) : undefined;
    return nextAt === undefined ? { changed } : { changed, nextAt };
  }

  private shouldRestart(exitCode: number): boolean {
    return this.restartPolicy === 'Always' || (this.restartPolicy === 'OnFailure' && exitCode !== 0);
  }

  /**
   * Starts `c` unless its restart backoff or image pull backoff holds it.
   * `restartable` is false for a first start. Returns whether anything changed.
   */
  private startOrBackoff(c: ContainerSim, now: number, restartable: boolean, due: number[]): boolean {
    const name = c.name;
    const bkey = `${this.key}/${name}`;
    // Restart backoff, measured from the last finish (kuberuntime doBackOff).
    const finished = c.state.kind === 'terminated' ? c.state : c.lastTerminated;
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
    if (!isPullable(image)) {
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
      this.pullFailures.set(name, now);
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
    this.opts.emit('Normal', 'Created', `Created container: ${name}`, c.fieldPath);
    this.opts.emit('Normal', 'Started', `Started container ${name}`, c.fieldPath);
    if (c.state.kind === 'terminated') c.lastTerminated = { ...c.state };
    if (c.everStarted) c.restartCount++;
    c.everStarted = true;
    const program = parseProgram(c.spec.command, c.spec.args);
    c.state = { kind: 'running', id: newContainerId(), startedAt: now, program };
    if (program.kind === 'exits') {
      if (program.afterMs === 0) {
        // Ends within this sync; the caller's next step (due now) records it.
        due.push(now);
      } else due.push(now + program.afterMs);
    }
    return true;
  }

  private readonly pullFailures = new Map<string, number>();
  private pullFailedAt(c: ContainerSim): number {
    return this.pullFailures.get(c.name) ?? 0;
  }

  /** When the container counts as started (startup probe's initial delay), or undefined when not running. */
  startedAt(c: ContainerSim): number | undefined {
    if (c.state.kind !== 'running') return undefined;
    return c.state.startedAt + (c.spec.startupProbe?.initialDelaySeconds ?? 0) * 1000;
  }

  /** When the running container becomes ready: after startup, plus the readiness probe's initial delay. */
  readyAt(c: ContainerSim): number | undefined {
    const started = this.startedAt(c);
    if (started === undefined) return undefined;
    const probe = c.spec.readinessProbe;
    return probe ? Math.max(started, c.state.kind === 'running' ? c.state.startedAt + (probe.initialDelaySeconds ?? 0) * 1000 : started) : started;
  }

  isStarted(c: ContainerSim, now: number): boolean {
    const at = this.startedAt(c);
    return at !== undefined && at <= now;
  }

  isReady(c: ContainerSim, now: number): boolean {
    const at = this.readyAt(c);
    return at !== undefined && at <= now;
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
      let end: Terminated;
      if (s.program.kind === 'exits' && s.startedAt + s.program.afterMs <= now) {
        const code = s.program.exitCode;
        end = { id: s.id, exitCode: code, reason: code === 0 ? 'Completed' : 'Error', startedAt: s.startedAt, finishedAt: s.startedAt + s.program.afterMs };
      } else if (s.program.kind === 'forever') {
        end = { id: s.id, exitCode: 0, reason: 'Completed', startedAt: s.startedAt, finishedAt: now };
      } else {
        end = { id: s.id, exitCode: 137, reason: 'Error', startedAt: s.startedAt, finishedAt: now };
      }
      c.state = { kind: 'terminated', ...end };
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
