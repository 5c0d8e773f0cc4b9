/**
 * One run of a simulated container: its main process (the shell of
 * shell/, on the node's clock), its file system and its log. The pod runtime
 * advances it as time passes, signals it when the container is stopped, and
 * runs exec probes, hooks and `kubectl exec` in the same file system.
 *
 * What runs is the container's command and args, or the image's entrypoint
 * (images/); a container with neither runs until stopped and exits 0 on
 * SIGTERM, as a server would. Programs the shell does not know go to the
 * `external` hook (known images first, then the few one-shot tools below);
 * anything else runs until stopped.
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import { createStandardFs, runToCompletion, startProcess, type ExternalHandler, type FileSystem, type HttpHandler, type OutputChunk, type ShellProcess, type StartOptions } from './shell/index.js';

/** The log of one container instance: what its main process wrote, with virtual timestamps (kubelet's CRI log file). */
export class ContainerLog {
  readonly chunks: OutputChunk[] = [];
  private bytes = 0;
  /** Bytes dropped from the front when the log outgrew `maxBytes` (kubelet rotates at containerLogMaxSize). */
  dropped = 0;
  // Followers (`kubectl logs -f`) are rare: their sets are made by the first one.
  private listeners: Set<(c: OutputChunk) => void> | undefined;
  /** Set when the instance ended: followers stop. */
  ended = false;
  private endListeners: Set<() => void> | undefined;

  constructor(private readonly maxBytes = 2 * 1024 * 1024) {}

  append(chunks: readonly OutputChunk[]): void {
    for (const c of chunks) {
      if (c.data.length === 0) continue;
      this.chunks.push(c);
      this.bytes += c.data.length;
      if (this.listeners) for (const l of this.listeners) l(c);
    }
    while (this.bytes > this.maxBytes && this.chunks.length > 1) {
      const first = this.chunks.shift()!;
      this.bytes -= first.data.length;
      this.dropped += first.data.length;
    }
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.endListeners) for (const l of this.endListeners) l();
    this.endListeners = this.listeners = undefined;
  }

  /** Follows new output until the instance ends; returns the unsubscribe function. */
  follow(onChunk: (c: OutputChunk) => void, onEnd: () => void): () => void {
    if (this.ended) {
      onEnd();
      return () => {};
    }
    (this.listeners ??= new Set()).add(onChunk);
    (this.endListeners ??= new Set()).add(onEnd);
    return () => {
      this.listeners?.delete(onChunk);
      this.endListeners?.delete(onEnd);
    };
  }

  /**
   * The log as kubelet's log reader returns it: lines (a chunk without a
   * trailing newline is a partial line), optionally since a time, the last
   * `tail` lines, and at most `limitBytes`; with `timestamps` each line is
   * prefixed by its RFC 3339 time with nanoseconds.
   */
  read(o: { sinceMs?: number; tailLines?: number; timestamps?: boolean; limitBytes?: number } = {}): string {
    let lines = toLines(this.chunks);
    if (o.sinceMs !== undefined) lines = lines.filter((l) => l.atMs >= o.sinceMs!);
    if (o.tailLines !== undefined && o.tailLines >= 0) lines = o.tailLines === 0 ? [] : lines.slice(-o.tailLines);
    let text = lines.map((l) => formatLogLine(l, !!o.timestamps)).join('');
    if (o.limitBytes !== undefined && o.limitBytes >= 0 && Buffer.byteLength(text) > o.limitBytes) text = Buffer.from(text).subarray(0, o.limitBytes).toString();
    return text;
  }
}

export interface LogLine {
  atMs: number;
  stream: 'stdout' | 'stderr';
  text: string;
}

/** Splits output chunks into lines (each keeps the time of its first chunk; a line ends with its `\n` when it has one). */
export function toLines(chunks: readonly OutputChunk[]): LogLine[] {
  const out: LogLine[] = [];
  const open: Partial<Record<'stdout' | 'stderr', LogLine>> = {};
  for (const c of chunks) {
    let rest = c.data;
    while (rest.length > 0) {
      const nl = rest.indexOf('\n');
      const piece = nl < 0 ? rest : rest.slice(0, nl + 1);
      rest = nl < 0 ? '' : rest.slice(nl + 1);
      const cur = open[c.stream];
      if (cur) cur.text += piece;
      else {
        const line = { atMs: c.atMs, stream: c.stream, text: piece };
        out.push(line);
        open[c.stream] = line;
      }
      if (piece.endsWith('\n')) delete open[c.stream];
    }
  }
  return out;
}

/** kubelet's `--timestamps` prefix: RFC 3339 with nanoseconds (`2026-11-26T18:02:07.000000000Z`). */
export function formatLogTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}000000Z`;
}

export function formatLogLine(l: LogLine, timestamps: boolean): string {
  return timestamps ? `${formatLogTime(l.atMs)} ${l.text}` : l.text;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr in the order written (what kubelet's ExecSync returns for probes and hooks). */
  output: string;
  durationMs: number;
  timedOut: boolean;
}

/** What a container's processes need from their node (file system, environment, network). */
export interface SpawnContext {
  fs: FileSystem;
  env: Record<string, string>;
  hostname: string;
  cwd?: string;
  /** The argv to run as the container's main process; [] = no command (runs until stopped). */
  argv: string[];
  external?: ExternalHandler;
  http?: HttpHandler;
  dns?: (name: string) => string[] | undefined;
  /** The user its processes run as (securityContext); default root. */
  user?: { uid: number; gid: number; groups: number[] };
}

/**
 * One running instance of a container.
 *
 * Made with a function instead of a context, a run is deferred: its file
 * system and process are made when something first needs them (exec, a
 * probe or hook, HTTP, its file system, a signal), started as of
 * `startedAt`, so what they do is what they would have done from the start.
 * Only for a main process known to block at once, silently, until signalled
 * (a known server run by its image's own command: see silentServer): until
 * then it has no output and no end to report. At 30,000 nginx pods that
 * saved the controller side about 150 MB and 6 s of CPU.
 */
export class ContainerRun {
  readonly log = new ContainerLog();
  private ctx: SpawnContext | undefined;
  private make: (() => SpawnContext) | undefined;
  private proc: ShellProcess | undefined;
  private exited: { code: number; at: number } | undefined;

  constructor(
    ctx: SpawnContext | (() => SpawnContext),
    readonly startedAt: number,
  ) {
    if (typeof ctx === 'function') this.make = ctx;
    else this.start(ctx);
  }

  private start(ctx: SpawnContext): void {
    this.ctx = ctx;
    this.proc =
      ctx.argv.length === 0
        ? undefined
        : startProcess({
            argv: ctx.argv,
            env: ctx.env,
            fs: ctx.fs,
            clock: this.startedAt,
            hostname: ctx.hostname,
            ...(ctx.cwd ? { cwd: ctx.cwd } : {}),
            ...(ctx.external ? { external: ctx.external } : {}),
            ...(ctx.http ? { http: ctx.http } : {}),
            ...(ctx.dns ? { dns: ctx.dns } : {}),
            ...(ctx.user ? { user: ctx.user } : {}),
          });
  }

  /** The context, made now for a deferred run. */
  private context(): SpawnContext {
    if (this.make) {
      const make = this.make;
      this.make = undefined;
      this.start(make());
    }
    return this.ctx!;
  }

  /** Whether the file system and process exist (a deferred run makes them at first use). */
  get started(): boolean {
    return this.make === undefined;
  }

  /** The container's file system (made now for a deferred run). */
  get fs(): FileSystem {
    return this.context().fs;
  }

  /** The process's end, once it ended. */
  get exit(): { code: number; at: number } | undefined {
    return this.exited;
  }

  private record(st: { output: OutputChunk[]; state: string; exitCode?: number; exitedAt?: number }): void {
    this.log.append(st.output);
    if (st.state === 'exited' && !this.exited) {
      this.exited = { code: st.exitCode ?? 0, at: st.exitedAt ?? this.startedAt };
      this.log.end();
    }
  }

  /**
   * Runs the process up to `now`. Returns its exit if it ended by then, else
   * when it next needs to run (a sleep's end; a busy loop gets another slice
   * a second later; a blocked program needs nothing).
   */
  advance(now: number): { exited?: { code: number; at: number }; wakeAt?: number } {
    if (this.exited) return { exited: this.exited };
    // A deferred run's process blocks silently until used: nothing to run yet.
    if (this.make || !this.proc) return {};
    const st = this.proc.advance(now);
    this.record(st);
    if (this.exited) return { exited: this.exited };
    if (st.state === 'sleeping' && st.wakeAt !== undefined) return { wakeAt: st.wakeAt };
    if (st.state === 'busy') return { wakeAt: now + 1000 };
    return {};
  }

  /** SIGTERM at `now`: the exit if the process ended (a trap, a program that exits on it), undefined if it ignores it. */
  term(now: number): { code: number; at: number } | undefined {
    if (this.exited) return this.exited;
    this.context();
    if (!this.proc) {
      this.exited = { code: 0, at: now };
      this.log.end();
      return this.exited;
    }
    const r = this.proc.signal('TERM', now);
    this.record(r);
    return this.exited;
  }

  /** The process ends by itself at `now` with `code` (a simulated server told to exit, e.g. netexec `/exit`). */
  exitNow(code: number, now: number): void {
    if (this.exited) return;
    this.context();
    if (this.proc) this.log.append(this.proc.advance(now).output);
    this.exited = { code, at: now };
    this.log.end();
  }

  /** A line the simulated program logs from outside the shell (a server's request log), on stderr as Go's log package writes. */
  logLine(stream: 'stdout' | 'stderr', data: string, now: number): void {
    if (!this.exited) this.log.append([{ stream, data, atMs: now }]);
  }

  /** SIGKILL at `now` (137), unless the process ended before. */
  kill(now: number): { code: number; at: number } {
    if (this.exited) return this.exited;
    this.context();
    if (!this.proc) {
      this.exited = { code: 137, at: now };
      this.log.end();
      return this.exited;
    }
    this.record(this.proc.kill(now));
    return this.exited ?? { code: 137, at: now };
  }

  /**
   * Runs `argv` in the container (exec probes, lifecycle hooks, `kubectl
   * exec`) at `now`, after bringing the main process up to then, with at most
   * `timeoutMs` of virtual time.
   */
  exec(argv: readonly string[], now: number, timeoutMs: number, stdin?: string): ExecResult {
    this.context();
    this.advance(now);
    if (argv.length === 0) return { exitCode: 126, stdout: '', stderr: '', output: 'exec: no command\n', durationMs: 0, timedOut: false };
    const r = runToCompletion(this.execOptions(argv, now, stdin), timeoutMs);
    const output = r.output.map((c) => c.data).join('');
    const durationMs = r.state === 'exited' ? (r.exitedAt ?? now) - now : timeoutMs;
    return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr, output, durationMs, timedOut: r.timedOut };
  }

  /** A process for `kubectl exec`, started at `now` in the container (the caller drives it). */
  startExec(argv: readonly string[], now: number, stdin?: string): ShellProcess {
    this.context();
    this.advance(now);
    return startProcess(this.execOptions(argv, now, stdin));
  }

  private execOptions(argv: readonly string[], now: number, stdin?: string): StartOptions {
    const ctx = this.context();
    return {
        argv: [...argv],
        env: ctx.env,
        fs: ctx.fs,
        clock: now,
        hostname: ctx.hostname,
        pid1: false,
        ...(ctx.cwd ? { cwd: ctx.cwd } : {}),
        // In exec (probes, hooks, kubectl exec) a program kcm does not know ends at once with 0 instead of running until stopped.
        external: (a, c) => ctx.external?.(a, c) ?? { exitCode: 0 },
        ...(ctx.http ? { http: ctx.http } : {}),
        ...(ctx.dns ? { dns: ctx.dns } : {}),
        ...(ctx.user ? { user: ctx.user } : {}),
        ...(stdin !== undefined ? { stdin } : {}),
      };
  }
}

/** Programs outside the shell that end by themselves: run, they print nothing and exit 0 (a documented simplification). */
const ONE_SHOT = new Set(['awk', 'find', 'xargs', 'ps', 'df', 'du', 'sync', 'dig', 'host', 'getent', 'ping', 'nc', 'python', 'python3', 'node', 'perl', 'ruby']);

/**
 * The last resort for programs nobody simulates: `awk` column picking (miniAwk), the one-shot tools above
 * end at once (`perl -Mbignum=bpi -wle 'print bpi(N)'`, the Job example,
 * prints pi), servers and anything else run until stopped.
 */
export const fallbackPrograms: ExternalHandler = (argv, ctx) => {
  const name = argv[0]!.slice(argv[0]!.lastIndexOf('/') + 1);
  if (name === 'awk') return miniAwk(argv.slice(1), ctx);
  if (name === 'perl') {
    const m = /bpi\((\d+)\)/.exec(argv.join(' '));
    if (m) return { exitCode: 0, stdout: `${piDigits(Number(m[1]))}\n` };
  }
  if (!ONE_SHOT.has(name)) return undefined;
  const rest = argv.slice(1);
  // Long-running forms: ping without -c, nc -l, python -m http.server, node server.js.
  if (name === 'ping' && !rest.some((a) => a.startsWith('-c'))) return undefined;
  if (name === 'nc' && rest.some((a) => /^-[a-zA-Z]*l/.test(a))) return undefined;
  if ((name.startsWith('python') && !rest.includes('-c')) || (name === 'node' && !rest.includes('-e')) || (name === 'ruby' && !rest.includes('-e'))) return undefined;
  return { exitCode: 0 };
};

/**
 * A small awk: `awk [-F SEP] 'PROGRAM' [FILE...]` where PROGRAM is
 * `[/regex/] { print [EXPR[, EXPR...]] }` with `$0`, `$N`, `$NF`, `NR`, `NF`
 * and string literals (what scripts use to pick a column). Anything else
 * fails with awk's syntax error.
 */
export function miniAwk(args: string[], ctx: Parameters<ExternalHandler>[1]): ReturnType<ExternalHandler> {
  let sep: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-F') sep = args[++i];
    else if (a.startsWith('-F')) sep = a.slice(2);
    else rest.push(a);
  }
  const [program = '', ...files] = rest;
  const m = /^\s*(?:\/((?:[^/\\]|\\.)*)\/)?\s*\{\s*print\s*([^}]*?)\s*;?\s*\}\s*$/.exec(program);
  if (!m) return { exitCode: 2, stderr: `awk: cmd. line:1: ${program}\nawk: cmd. line:1: syntax error (only '{ print ... }' is simulated)\n` };
  const re = m[1] !== undefined ? new RegExp(m[1]) : undefined;
  const exprs = m[2] ? m[2].split(',').map((e) => e.trim()) : ['$0'];
  let input = '';
  if (files.length === 0) input = ctx.stdin;
  else {
    for (const f of files) {
      try {
        input += ctx.fs.readText(f, ctx.cwd);
      } catch {
        return { exitCode: 2, stderr: `awk: fatal: cannot open file \`${f}' for reading: No such file or directory\n` };
      }
    }
  }
  const lines = input.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let out = '';
  lines.forEach((line, i) => {
    if (re && !re.test(line)) return;
    const fields = sep === undefined ? line.trim().split(/\s+/).filter((x) => x !== '') : line.split(sep.length === 1 ? sep : new RegExp(sep));
    const value = (e: string): string => {
      if (/^".*"$/.test(e)) return e.slice(1, -1);
      if (e === 'NR') return String(i + 1);
      if (e === 'NF') return String(fields.length);
      const f = /^\$(\d+|NF)$/.exec(e);
      if (!f) return '';
      const n = f[1] === 'NF' ? fields.length : Number(f[1]);
      return n === 0 ? line : (fields[n - 1] ?? '');
    };
    out += exprs.map(value).join(' ') + '\n';
  });
  return { exitCode: 0, stdout: out };
}

/** π to `n` significant digits as Perl's bignum bpi(n) prints it (Machin's formula on BigInt). */
export function piDigits(n: number): string {
  const digits = Math.max(1, Math.min(n, 100_000));
  const scale = 10n ** BigInt(digits + 10);
  const arctanInv = (x: bigint): bigint => {
    let sum = 0n;
    let term = scale / x;
    const x2 = x * x;
    for (let k = 0n; term !== 0n; k++) {
      sum += k % 2n === 0n ? term / (2n * k + 1n) : -term / (2n * k + 1n);
      term /= x2;
    }
    return sum;
  };
  const pi = 4n * (4n * arctanInv(5n) - arctanInv(239n));
  // Round to `digits` significant digits (1 before the point).
  const s = (pi / 10n ** 10n).toString();
  const kept = BigInt(s.slice(0, digits));
  const next = Number(s[digits] ?? '0');
  const rounded = (next >= 5 ? kept + 1n : kept).toString();
  return digits === 1 ? rounded : `${rounded[0]}.${rounded.slice(1)}`;
}

/** kubelet bind-mounts an empty, writable file at terminationMessagePath (default /dev/termination-log). */
export function prepareTerminationLog(fs: FileSystem, c: Container): void {
  const path = c.terminationMessagePath || '/dev/termination-log';
  try {
    if (fs.exists(path)) return;
    fs.mkdirp(path.slice(0, path.lastIndexOf('/')) || '/');
    fs.writeFile(path, '', { mode: 0o666 });
  } catch {
    /* a read-only or conflicting mount: no termination message file */
  }
}

const SHELL_NAMES = new Set(['sh', 'bash', 'ash', 'dash']);

/** A shell run without a script (`sh`, `/bin/bash -i`): it reads its commands from stdin. */
export function isInteractiveShell(argv: readonly string[]): boolean {
  if (argv.length === 0 || !SHELL_NAMES.has(argv[0]!.slice(argv[0]!.lastIndexOf('/') + 1))) return false;
  return argv.slice(1).every((a) => /^-[a-z]*$/.test(a) && !/^-[a-z]*c[a-z]*$/.test(a));
}

/**
 * The main process's argv: a shell reading stdin of a container with
 * `stdin: true` waits for input that `kubectl attach` may send, so it runs
 * until stopped (`[]`) instead of ending at once on an empty stdin.
 */
export function mainArgv(c: Container, argv: string[]): string[] {
  return c.stdin && isInteractiveShell(argv) ? [] : argv;
}

/** A container's argv from its spec alone (command, then args); [] when it has neither. */
export function specArgv(c: Container): string[] {
  return [...(c.command ?? []), ...(c.args ?? [])];
}

/** A run with a standard file system and no environment: what tests and callers without a node use. */
export function defaultSpawn(c: Container, now: number, hostname = 'localhost'): ContainerRun {
  const fs = createStandardFs({ hostname, now });
  prepareTerminationLog(fs, c);
  return new ContainerRun({ fs, env: {}, hostname, argv: mainArgv(c, specArgv(c)), external: fallbackPrograms }, now);
}
