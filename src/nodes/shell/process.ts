/**
 * A simulated process on virtual time: the scheduler that drives the
 * interpreter's generators (the main shell and its background jobs),
 * collects timestamped output, and delivers signals.
 */
import { createStandardFs, type FileSystem } from './fs.js';
import {
  ExitSignal,
  Shell,
  ShellError,
  checkTraps,
  runCommand,
  runScript,
  runSubshell,
  type ExternalHandler,
  type G,
  type HttpHandler,
  type IO,
  type Out,
  type ProcState,
  type ProcessContext,
  type Wake,
} from './interpreter.js';
import { SIGNALS, signalName } from './builtins.js';

export interface OutputChunk {
  stream: 'stdout' | 'stderr';
  data: string;
  /** Virtual time (ms) at which it was written. */
  atMs: number;
}

/**
 * - `sleeping`: waiting for a virtual time (`wakeAt`); advance to it to go on.
 * - `forever`: blocked with nothing scheduled (an unknown program, `sleep infinity`,
 *   `tail -f`, `wait` on such a job): runs until stopped.
 * - `busy`: ran out of its step budget without blocking (a CPU loop); it goes on
 *   at the next advance.
 * - `exited`: `exitCode` at `exitedAt`.
 */
export type ProcessState = 'sleeping' | 'forever' | 'busy' | 'exited';

export interface ProcessStatus {
  state: ProcessState;
  /** The process's virtual clock after the call. */
  now: number;
  /** Output written since the previous call, in order. */
  output: OutputChunk[];
  exitCode?: number;
  exitedAt?: number;
  /** When sleeping: the next virtual time something happens. */
  wakeAt?: number;
}

export interface SignalResult extends ProcessStatus {
  /** `trap`: a trap ran; `ignored`: no effect; `terminated`: the signal ended the process; `not-running`: it had already exited. */
  handled: 'trap' | 'ignored' | 'terminated' | 'not-running';
  ended: boolean;
}

export interface StartOptions {
  /** The container command: `['sh', '-c', script, arg0?, ...args]`, `['sleep', '10']`, ... */
  argv?: string[];
  /** A script to run as `sh -c script` (then `args` are `$0 $1 ...`). */
  script?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** The container's file system; default a standard one. */
  fs?: FileSystem;
  /** Start time (virtual ms since epoch). */
  clock: number;
  hostname?: string;
  http?: HttpHandler;
  dns?: (name: string) => string[] | undefined;
  external?: ExternalHandler;
  stdin?: string;
  /** Steps (simple commands, loop iterations) per job per advance before the job counts as busy. Default 10000 (about 50 ms of CPU). */
  maxSteps?: number;
  /** The process is the container's PID 1 (signals without a handler are ignored). Default true. */
  pid1?: boolean;
  /** A trapped signal interrupts `sleep`/`wait`/blocked programs at once (default true). */
  trapInterruptsSleep?: boolean;
  nproc?: number;
  /** uid, gid and supplementary groups for `id` (default root). */
  user?: { uid: number; gid: number; groups: number[] };
  uname?: Partial<ProcessContext['uname']>;
}

interface Job {
  pid: number;
  /** Undefined once released: blocked for good, it will never run again (see block). */
  gen: G<number> | undefined;
  state: 'ready' | 'sleep' | 'forever' | 'wait' | 'done' | 'busy';
  wakeAt: number;
  resume: Wake;
  waitFor: number[] | null;
  exitCode?: number;
  main: boolean;
  steps: number;
}

const SHELLS = new Set(['sh', 'bash', 'ash', 'dash']);

/** What `uname` reports unless StartOptions.uname says otherwise (one object for every process). */
const UNAME: ProcessContext['uname'] = Object.freeze({ sysname: 'Linux', release: '6.6.0-kcm', machine: 'x86_64', version: '#1 SMP PREEMPT_DYNAMIC' });

export class ShellProcess {
  readonly fs: FileSystem;
  private readonly proc: ProcState;
  /**
   * The main shell; dropped (with its functions, traps and options) once PID 1
   * is a program blocked for good (block), when nothing can use it any more.
   */
  private mainShell: Shell | undefined;
  /** The main shell's variables (getVar), kept after the shell was dropped. */
  private readonly mainVars: Map<string, string>;
  private readonly jobs: Job[] = [];
  private pendingOut: OutputChunk[] = [];
  private exit: { code: number; at: number } | undefined;
  private readonly maxSteps: number;
  private readonly isPid1: boolean;

  constructor(o: StartOptions) {
    const hostname = o.hostname ?? 'localhost';
    this.fs = o.fs ?? createStandardFs({ hostname, now: o.clock });
    this.maxSteps = o.maxSteps ?? 10_000;
    this.isPid1 = o.pid1 ?? true;
    const ctx: ProcessContext = {
      fs: this.fs,
      hostname,
      http: o.http,
      dns: o.dns,
      external: o.external,
      nproc: o.nproc ?? 2,
      ...(o.user ? { user: o.user } : {}),
      uname: o.uname ? { ...UNAME, ...o.uname } : UNAME,
      trapInterruptsSleep: o.trapInterruptsSleep ?? true,
    };
    const sink = (stream: 'stdout' | 'stderr'): Out => ({
      write: (s: string) => {
        if (s === '') return;
        const last = this.pendingOut[this.pendingOut.length - 1];
        if (last && last.stream === stream && last.atMs === this.proc.now) last.data += s;
        else this.pendingOut.push({ stream, data: s, atMs: this.proc.now });
      },
    });
    const out: IO = { stdin: { data: o.stdin ?? '', pos: 0 }, stdout: sink('stdout'), stderr: sink('stderr') };
    const self = this;
    let seed = (Math.abs(Math.trunc(o.clock)) % 2147483647) || 1;
    this.proc = {
      ctx,
      now: o.clock,
      nextPid: 2,
      pending: [],
      pid1: { kind: 'shell', sigterm: 'ignore', exitCode: 0 },
      out,
      spawn(sh: Shell, run: (sh: Shell) => G<number>): number {
        const sub = sh.subshell();
        const pid = this.nextPid++;
        sub.pid = sh.pid;
        self.jobs.push({ pid, gen: runSubshell(sub, () => run(sub)), state: 'ready', wakeAt: 0, resume: undefined, waitFor: null, main: false, steps: 0 });
        return pid;
      },
      random(): number {
        // xorshift32, seeded from the start time: deterministic
        let x = seed;
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        seed = x >>> 0 || 1;
        return seed % 32768;
      },
      jobStatus(pid: number): number | undefined {
        return self.jobs.find((j) => j.pid === pid)?.exitCode;
      },
    };
    const sh = new Shell(this.proc);
    this.mainShell = sh;
    this.mainVars = sh.vars;
    sh.cwd = o.cwd ?? '/';
    const env: Record<string, string> = {};
    if (!o.env || !('PATH' in o.env)) env['PATH'] = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
    if (!o.env || !('HOSTNAME' in o.env)) env['HOSTNAME'] = hostname;
    Object.assign(env, o.env ?? {});
    if (!('HOME' in env)) env['HOME'] = '/root';
    for (const [k, v] of Object.entries(env)) {
      sh.vars.set(k, v);
      sh.exported.add(k);
    }
    sh.vars.set('PWD', sh.cwd);
    sh.vars.set('IFS', ' \t\n');
    this.jobs.push({ pid: 1, gen: this.mainGen(o, sh, out), state: 'ready', wakeAt: 0, resume: undefined, waitFor: null, main: true, steps: 0 });
  }

  private *mainGen(o: StartOptions, sh: Shell, io: IO): G<number> {
    let status: number;
    try {
      status = yield* this.runMain(o, sh, io);
      sh.status = status;
      // a signal that arrived during the last command is still handled
      yield* checkTraps(sh, io);
    } catch (e) {
      if (e instanceof ExitSignal) status = e.code;
      else if (e instanceof ShellError) {
        sh.error(io, `${sh.arg0}: ${e.message}`);
        status = e.status;
      } else throw e;
    }
    const exitTrap = sh.traps.get('EXIT');
    if (exitTrap && this.proc.pid1.kind === 'shell') {
      sh.traps.delete('EXIT');
      try {
        sh.status = status;
        yield* runScript(sh, exitTrap, io);
      } catch (e) {
        if (e instanceof ExitSignal) status = e.code;
        else throw e;
      }
    }
    return status;
  }

  private *runMain(o: StartOptions, sh: Shell, io: IO): G<number> {
    if (o.script !== undefined) {
      sh.arg0 = o.args?.[0] ?? 'sh';
      sh.params = o.args?.slice(1) ?? [];
      return yield* runScript(sh, o.script, io);
    }
    const argv = o.argv ?? [];
    if (argv.length === 0) return 0;
    const base = argv[0]!.slice(argv[0]!.lastIndexOf('/') + 1);
    if (SHELLS.has(base)) {
      let i = 1;
      let script: string | undefined;
      for (; i < argv.length; i++) {
        const a = argv[i]!;
        if (/^-[a-z]*c[a-z]*$/.test(a)) {
          for (const c of a.slice(1)) if (c === 'e') sh.opts.errexit = true;
          script = argv[++i] ?? '';
          i++;
          break;
        }
        if (/^-[a-z]+$/.test(a)) {
          for (const c of a.slice(1)) if (c === 'e') sh.opts.errexit = true;
          continue;
        }
        break;
      }
      if (script === undefined) {
        const file = argv[i];
        if (file === undefined) script = io.stdin.data;
        else {
          try {
            script = this.fs.readText(file, sh.cwd);
          } catch {
            sh.error(io, `${base}: can't open '${file}': No such file or directory`);
            return 2;
          }
          sh.arg0 = file;
          sh.params = argv.slice(i + 1);
          return yield* runScript(sh, script, io);
        }
      }
      sh.arg0 = argv[i] ?? argv[0]!;
      sh.params = argv.slice(i + 1);
      return yield* runScript(sh, script, io);
    }
    // a program run directly: it is PID 1
    sh.arg0 = base;
    this.proc.pid1 = { kind: 'program', sigterm: 'ignore', exitCode: 0 };
    return yield* runCommand(argv, sh, io);
  }

  /** Current virtual time of the process. */
  get now(): number {
    return this.proc.now;
  }

  get state(): ProcessState {
    return this.status([]).state;
  }

  get exitCode(): number | undefined {
    return this.exit?.code;
  }

  /** Whether the shell has a trap for the signal (`TERM`, `SIGTERM`, `15`). */
  hasTrap(sig: string): boolean {
    const n = signalName(sig);
    return n !== undefined && this.proc.pid1.kind === 'shell' && !!this.mainShell?.traps.has(n);
  }

  /** The trap's command text, if any ('' = signal ignored). */
  trapAction(sig: string): string | undefined {
    const n = signalName(sig);
    return n === undefined || this.proc.pid1.kind !== 'shell' ? undefined : this.mainShell?.traps.get(n);
  }

  /** The shell's variables (for tests and `kubectl exec` environment). */
  getVar(name: string): string | undefined {
    return this.mainVars.get(name);
  }

  /** Runs the process until it blocks past `untilMs` or exits. */
  advance(untilMs: number): ProcessStatus {
    if (this.exit) return this.status(this.drain());
    const until = Math.max(untilMs, this.proc.now);
    for (const j of this.jobs) {
      j.steps = 0;
      if (j.state === 'busy') j.state = 'ready';
    }
    while (!this.exit) {
      for (const j of this.jobs) if (j.state === 'wait' && this.waitDone(j)) j.state = 'ready';
      let job = this.jobs.find((j) => j.state === 'ready');
      if (!job) {
        let best: Job | undefined;
        for (const j of this.jobs) if (j.state === 'sleep' && j.wakeAt <= until && (!best || j.wakeAt < best.wakeAt)) best = j;
        if (!best) break;
        this.proc.now = Math.max(this.proc.now, best.wakeAt);
        best.state = 'ready';
        job = best;
      }
      this.runJob(job);
    }
    if (!this.exit) this.proc.now = until;
    return this.status(this.drain());
  }

  private runJob(job: Job): void {
    for (;;) {
      let r: IteratorResult<import('./interpreter.js').Yield, number>;
      const resume = job.resume;
      job.resume = undefined;
      if (!job.gen) throw new Error(`job ${job.pid} resumed after it was released`);
      try {
        this.fs.now = this.proc.now;
        r = job.gen.next(resume);
      } catch (e) {
        if (e instanceof ExitSignal) r = { done: true, value: e.code };
        else {
          this.proc.out.stderr.write(`sh: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
          r = { done: true, value: 2 };
        }
      }
      if (r.done) {
        job.state = 'done';
        job.exitCode = r.value;
        if (job.main) {
          this.exit = { code: r.value, at: this.proc.now };
          for (const j of this.jobs) if (!j.main && j.state !== 'done') j.state = 'done';
        }
        return;
      }
      const y = r.value;
      switch (y.k) {
        case 'step':
          if (++job.steps >= this.maxSteps) {
            job.state = 'busy';
            return;
          }
          continue;
        case 'sleep':
          if (y.until <= this.proc.now) continue;
          job.state = 'sleep';
          job.wakeAt = y.until;
          // let other jobs that are due earlier run first
          return;
        case 'forever':
          this.block(job);
          return;
        case 'wait':
          job.waitFor = y.pids;
          job.state = 'wait';
          if (this.waitDone(job)) {
            job.state = 'ready';
            continue;
          }
          return;
      }
    }
  }

  /**
   * A job blocked with nothing scheduled (a server program, `sleep infinity`).
   * Only signal() wakes such a job, and only the main shell's when a trap can
   * run. Any other is never resumed: its generator is dropped instead of
   * being kept for the life of the container, with the interpreter's frames
   * down to the program and the shells they hold (e.g. the subshell of the
   * `exec "$@"` of an image's docker-entrypoint.sh, with its copy of the
   * variables). The frames' `finally` blocks do not run; they would not
   * have run either: the job ends only by being marked done. When PID 1 is a
   * program (run directly or by `exec`), the main shell goes too: signals
   * then go to the program (signal() reads no trap), so only its variables
   * are still read (getVar).
   * Neither can change while the job is blocked: traps and `pid1` belong to
   * the main shell, and the main job is what runs it.
   */
  private block(job: Job): void {
    job.state = 'forever';
    const program = this.proc.pid1.kind === 'program';
    const traps = this.mainShell?.traps;
    const wakeable = job.main && !program && this.proc.ctx.trapInterruptsSleep && !!traps && [...traps.values()].some((action) => action !== '');
    if (wakeable) return;
    job.gen = undefined;
    if (job.main && program) this.mainShell = undefined;
  }

  private waitDone(j: Job): boolean {
    const others = this.jobs.filter((x) => x !== j && !x.main);
    if (j.waitFor === null) return others.every((x) => x.state === 'done');
    return j.waitFor.every((pid) => {
      const t = this.jobs.find((x) => x.pid === pid);
      return !t || t.state === 'done';
    });
  }

  private drain(): OutputChunk[] {
    const o = this.pendingOut;
    this.pendingOut = [];
    return o;
  }

  private status(output: OutputChunk[]): ProcessStatus {
    if (this.exit) return { state: 'exited', now: this.proc.now, output, exitCode: this.exit.code, exitedAt: this.exit.at };
    const main = this.jobs[0]!;
    if (main.state === 'busy' || main.state === 'ready') return { state: 'busy', now: this.proc.now, output };
    let wake: number | undefined;
    for (const j of this.jobs) if (j.state === 'sleep' && (wake === undefined || j.wakeAt < wake)) wake = j.wakeAt;
    const mainBlocked = main.state === 'forever' || main.state === 'wait';
    if (wake !== undefined && (!mainBlocked || this.jobs.some((j) => !j.main && j.state === 'sleep')) ) {
      return { state: 'sleeping', now: this.proc.now, output, wakeAt: wake };
    }
    if (this.jobs.some((j) => !j.main && j.state === 'busy')) return { state: 'busy', now: this.proc.now, output };
    return { state: 'forever', now: this.proc.now, output };
  }

  /**
   * Delivers a signal at `atMs` (the process is advanced to then first). A
   * shell with a trap for it runs the trap (interrupting `sleep`/`wait`);
   * a PID 1 without a handler ignores it; a program run directly or by
   * `exec` takes it as its `external` result says (default: exits 0).
   */
  signal(sig: string, atMs: number): SignalResult {
    const before = this.advance(atMs);
    const output = before.output;
    if (this.exit) return { ...before, handled: 'not-running', ended: true };
    const name = signalName(sig) ?? sig.toUpperCase().replace(/^SIG/, '');
    if (name === 'KILL') {
      const k = this.kill(atMs);
      return { ...k, output: [...output, ...k.output], handled: 'terminated', ended: true };
    }
    const num = SIGNALS[name] ?? 15;
    const pid1 = this.proc.pid1;
    const action = pid1.kind === 'shell' ? this.mainShell?.traps.get(name) : undefined;
    if (action !== undefined) {
      if (action === '') return { ...before, handled: 'ignored', ended: false };
      this.proc.pending.push(name);
      const main = this.jobs[0]!;
      if (main.state === 'busy') main.state = 'ready';
      else if ((main.state === 'sleep' || main.state === 'forever' || main.state === 'wait') && this.proc.ctx.trapInterruptsSleep) {
        main.state = 'ready';
        main.resume = 'interrupted';
      }
      const after = this.advance(atMs);
      return { ...after, output: [...output, ...after.output], handled: 'trap', ended: after.state === 'exited' };
    }
    const terminate = (code: number): SignalResult => {
      this.exit = { code, at: this.proc.now };
      for (const j of this.jobs) j.state = 'done';
      return { ...this.status([]), output, handled: 'terminated', ended: true };
    };
    if (!this.isPid1) return terminate(128 + num);
    if (pid1.kind === 'program' && pid1.sigterm === 'exit' && name !== 'CHLD' && name !== 'WINCH' && name !== 'CONT') return terminate(pid1.exitCode);
    return { ...before, handled: 'ignored', ended: false };
  }

  /** SIGKILL at `atMs`: exits 137 (unless it already exited before). */
  kill(atMs: number): ProcessStatus {
    const before = this.advance(atMs);
    if (this.exit) return before;
    this.exit = { code: 137, at: this.proc.now };
    for (const j of this.jobs) j.state = 'done';
    return { ...this.status([]), output: before.output };
  }
}

/** Starts a process (nothing runs until `advance`). */
export function startProcess(o: StartOptions): ShellProcess {
  return new ShellProcess(o);
}

/** Runs a command to completion or until `timeoutMs` of virtual time (exec probes, hooks, kubectl exec). */
export function runToCompletion(o: StartOptions, timeoutMs: number): ProcessStatus & { stdout: string; stderr: string; timedOut: boolean } {
  const p = startProcess(o);
  const st = p.advance(o.clock + timeoutMs);
  const stdout = st.output.filter((c) => c.stream === 'stdout').map((c) => c.data).join('');
  const stderr = st.output.filter((c) => c.stream === 'stderr').map((c) => c.data).join('');
  return { ...st, stdout, stderr, timedOut: st.state !== 'exited' };
}
