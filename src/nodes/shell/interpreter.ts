/**
 * The interpreter: executes a parsed script on virtual time. Every execution
 * function is a generator; it yields when the process must wait (sleep until
 * a virtual time, block forever on an unknown program, wait for background
 * jobs) and after each simple command (a step, so that CPU loops can be cut
 * off). The process driver (process.ts) resumes the generators, so a script
 * suspended in `sleep` inside a loop inside an `if` simply continues.
 */
import { parse, parseDoubleQuotedText, type AndOr, type Command, type CondExpr, type List, type Pipeline, type Redir, type Word, ShellSyntaxError } from './parser.js';
import { FileSystem, FsError, joinPath, splitPath } from './fs.js';
import { BUILTINS } from './builtins.js';

// ---------------------------------------------------------------------------
// Suspension protocol

export type Yield =
  | { k: 'step' }
  | { k: 'sleep'; until: number }
  | { k: 'forever' }
  | { k: 'wait'; pids: number[] | null };

/** How a suspended generator is resumed: normally, or interrupted by a trapped signal. */
export type Wake = 'interrupted' | undefined;

export type G<T> = Generator<Yield, T, Wake>;

// ---------------------------------------------------------------------------
// I/O

export interface Out {
  write(s: string): void;
}
export interface In {
  data: string;
  pos: number;
}
export interface IO {
  stdin: In;
  stdout: Out;
  stderr: Out;
}

export class BufferOut implements Out {
  text = '';
  write(s: string): void {
    this.text += s;
  }
}
export const NULL_OUT: Out = { write: () => {} };
export function emptyIn(): In {
  return { data: '', pos: 0 };
}
/** Reads the rest of stdin. */
export function readAll(i: In): string {
  const s = i.data.slice(i.pos);
  i.pos = i.data.length;
  return s;
}

// ---------------------------------------------------------------------------
// Control flow signals

export class ExitSignal {
  constructor(readonly code: number) {}
}
class ReturnSignal {
  constructor(readonly code: number) {}
}
class LoopSignal {
  constructor(
    readonly kind: 'break' | 'continue',
    public n: number,
  ) {}
}
/** A fatal shell error (bad substitution, arithmetic error): message printed, shell exits. */
export class ShellError extends Error {
  constructor(
    message: string,
    readonly status = 2,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------
// Context supplied by the caller

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}
export type HttpResult =
  | { status: number; body: string; headers?: Record<string, string>; durationMs?: number }
  | { error: 'refused' | 'timeout' | 'dns' | 'unreachable' | 'reset'; durationMs?: number };
export type HttpHandler = (req: HttpRequest, ctx: ExternalContext) => HttpResult;

export interface ExternalContext {
  cwd: string;
  env: Record<string, string>;
  fs: FileSystem;
  now: number;
  stdin: string;
  hostname: string;
}

export type ExternalResult =
  | { exitCode: number; stdout?: string; stderr?: string; durationMs?: number }
  | {
      forever: true;
      stdout?: string;
      stderr?: string;
      /** How the program takes SIGTERM when it is PID 1 (exec'd or run directly); default exit 0. */
      sigterm?: 'exit' | 'ignore';
      sigtermExitCode?: number;
    }
  | { notFound: true }
  /**
   * A program simulated by a shell script (a known image's entrypoint, e.g.
   * agnhost mounttest as a loop of `cat` and `sleep`): runs as `sh -c script
   * arg0 args...` in the same process, on the same virtual clock and file
   * system, with the caller's exported variables plus `env`. When it is PID 1
   * it takes SIGTERM as `sigterm` says (default exit 0).
   */
  | { script: string; arg0?: string; args?: string[]; env?: Record<string, string>; sigterm?: 'exit' | 'ignore'; sigtermExitCode?: number };

/** Decides what a program the interpreter does not know does; undefined = runs until stopped. */
export type ExternalHandler = (argv: string[], ctx: ExternalContext) => ExternalResult | undefined;

export interface ProcessContext {
  fs: FileSystem;
  hostname: string;
  http?: HttpHandler | undefined;
  /** Name -> addresses, for nslookup; undefined = NXDOMAIN. */
  dns?: ((name: string) => string[] | undefined) | undefined;
  external?: ExternalHandler | undefined;
  nproc: number;
  /** The process's user and groups (securityContext runAsUser, runAsGroup, supplementalGroups/fsGroup); default root. */
  user?: { uid: number; gid: number; groups: number[] };
  uname: { sysname: string; release: string; machine: string; version: string };
  /** A trapped signal interrupts `sleep`, `wait` and blocked programs (default true). */
  trapInterruptsSleep: boolean;
}

/** What the process (PID 1) is when it is not a shell with traps: how it takes SIGTERM. */
export interface Pid1 {
  kind: 'shell' | 'program';
  sigterm: 'ignore' | 'exit';
  exitCode: number;
}

/** Shared by all shells (subshells, background jobs) of one process. */
export interface ProcState {
  ctx: ProcessContext;
  now: number;
  nextPid: number;
  /** Signals delivered to the main shell and not yet handled. */
  pending: string[];
  pid1: Pid1;
  /** Background jobs, started by `cmd &`. */
  spawn(sh: Shell, run: (sh: Shell) => G<number>): number;
  jobStatus(pid: number): number | undefined;
  out: IO;
  /** Deterministic pseudo-random numbers 0..32767 for $RANDOM. */
  random(): number;
}

// ---------------------------------------------------------------------------
// Shell state

export interface ShellOptions {
  errexit: boolean;
  xtrace: boolean;
  nounset: boolean;
  pipefail: boolean;
}

export class Shell {
  vars = new Map<string, string>();
  exported = new Set<string>();
  readonly_ = new Set<string>();
  funcs = new Map<string, Command>();
  traps = new Map<string, string>();
  params: string[] = [];
  arg0 = 'sh';
  cwd = '/';
  status = 0;
  lastBg = 0;
  opts: ShellOptions = { errexit: false, xtrace: false, nounset: false, pipefail: false };
  /** > 0 inside if/while conditions, `!` and non-final parts of && || lists. */
  noErrexit = 0;
  /** The main shell of the process (PID 1 when the process is a shell). */
  main = true;
  pid = 1;
  /** Local variable frames of running functions. */
  locals: Array<Map<string, string | undefined>> = [];
  loopDepth = 0;
  exitTrapRan = false;
  /** Status of the last command substitution (the status of a bare assignment). */
  subStatus = 0;
  /** > 0 while running a file with `.` / `source` (where `return` is allowed). */
  sourceDepth = 0;
  /** Set by `exec` without a command: redirections that stay for the rest of the script. */
  ioOverride: { from: IO; to: IO } | undefined;

  constructor(readonly proc: ProcState) {}

  get fs(): FileSystem {
    return this.proc.ctx.fs;
  }

  /** A copy for a subshell, pipeline stage, command substitution or background job. */
  subshell(): Shell {
    const s = new Shell(this.proc);
    s.vars = new Map(this.vars);
    s.exported = new Set(this.exported);
    s.readonly_ = new Set(this.readonly_);
    s.funcs = new Map(this.funcs);
    // traps are reset in subshells except ignored ones
    for (const [k, v] of this.traps) if (v === '') s.traps.set(k, v);
    s.params = [...this.params];
    s.arg0 = this.arg0;
    s.cwd = this.cwd;
    s.status = this.status;
    s.lastBg = this.lastBg;
    s.opts = { ...this.opts };
    s.main = false;
    s.pid = this.pid;
    s.exitTrapRan = true;
    return s;
  }

  get(name: string): string | undefined {
    return this.vars.get(name);
  }
  set(name: string, value: string): void {
    if (this.readonly_.has(name)) throw new ShellError(`${name}: is read only`, 2);
    this.vars.set(name, value);
  }
  unset(name: string): void {
    this.vars.delete(name);
    this.exported.delete(name);
  }
  env(): Record<string, string> {
    const e: Record<string, string> = {};
    for (const n of this.exported) {
      const v = this.vars.get(n);
      if (v !== undefined) e[n] = v;
    }
    return e;
  }

  write(io: IO, s: string): void {
    io.stdout.write(s);
  }
  error(io: IO, s: string): void {
    io.stderr.write(s.endsWith('\n') ? s : s + '\n');
  }
}

// ---------------------------------------------------------------------------
// Execution

export function* runScript(sh: Shell, src: string, io: IO): G<number> {
  let list: List;
  try {
    list = parse(src);
  } catch (e) {
    if (e instanceof ShellSyntaxError) {
      sh.error(io, `${sh.arg0}: line ${e.line}: ${e.message}`);
      sh.status = 2;
      return 2;
    }
    throw e;
  }
  return yield* execList(list, sh, io);
}

/** Runs pending trapped signals on the main shell. */
export function* checkTraps(sh: Shell, io: IO): G<void> {
  if (!sh.main) return;
  while (sh.proc.pending.length > 0) {
    const sig = sh.proc.pending.shift()!;
    const action = sh.traps.get(sig);
    if (action === undefined || action === '') continue;
    const saved = sh.status;
    yield* runScript(sh, action, io);
    sh.status = saved;
  }
}

/**
 * Runs one pass of a loop body: `break` / `continue` aimed at this loop come
 * back as 'break' / 'continue'; those aimed at an outer loop (`break 2`) go
 * up one level.
 */
function* loopBody(body: List, sh: Shell, io: IO): G<number | 'break' | 'continue'> {
  try {
    return yield* execList(body, sh, io);
  } catch (e) {
    if (e instanceof LoopSignal) {
      if (e.n > 1) {
        e.n--;
        throw e;
      }
      return e.kind;
    }
    throw e;
  }
}

export function* execList(list: List, sh: Shell, io: IO): G<number> {
  let status = sh.status;
  for (const item of list.items) {
    if (item.bg) {
      const ao = item.ao;
      // an asynchronous list reads from /dev/null
      const bgIo: IO = { stdin: emptyIn(), stdout: io.stdout, stderr: io.stderr };
      const pid = sh.proc.spawn(sh, (child) => execAndOr(ao, child, bgIo));
      sh.lastBg = pid;
      status = 0;
      sh.status = 0;
      continue;
    }
    status = yield* execAndOr(item.ao, sh, io);
  }
  return status;
}

function* execAndOr(ao: AndOr, sh: Shell, io: IO): G<number> {
  const n = ao.rest.length;
  let status: number;
  let lastRan = n === 0;
  sh.noErrexit += n > 0 ? 1 : 0;
  try {
    status = yield* execPipeline(ao.first, sh, io, n === 0);
  } finally {
    sh.noErrexit -= n > 0 ? 1 : 0;
  }
  let negated = ao.first.neg;
  for (let i = 0; i < n; i++) {
    const { op, p } = ao.rest[i]!;
    if ((op === '&&' && status !== 0) || (op === '||' && status === 0)) continue;
    const last = i === n - 1;
    if (!last) sh.noErrexit++;
    try {
      status = yield* execPipeline(p, sh, io, last);
    } finally {
      if (!last) sh.noErrexit--;
    }
    lastRan = last;
    negated = p.neg;
  }
  sh.status = status;
  if (status !== 0 && lastRan && !negated && sh.opts.errexit && sh.noErrexit === 0) {
    throw new ExitSignal(status);
  }
  return status;
}

function* execPipeline(p: Pipeline, sh: Shell, io: IO, _final: boolean): G<number> {
  if (p.neg) sh.noErrexit++;
  let status: number;
  try {
    if (p.cmds.length === 1) {
      status = yield* execCommand(p.cmds[0]!, sh, io);
    } else {
      let stdin = io.stdin;
      status = 0;
      for (let i = 0; i < p.cmds.length; i++) {
        const last = i === p.cmds.length - 1;
        const buf = new BufferOut();
        const stageIo: IO = { stdin, stdout: last ? io.stdout : buf, stderr: io.stderr };
        const sub = sh.subshell();
        const st = yield* runSubshell(sub, () => execCommand(p.cmds[i]!, sub, stageIo));
        if (last) status = sh.opts.pipefail && status !== 0 && st === 0 ? status : st;
        else if (st !== 0) status = st;
        stdin = { data: buf.text, pos: 0 };
      }
    }
  } finally {
    if (p.neg) sh.noErrexit--;
  }
  if (p.neg) status = status === 0 ? 1 : 0;
  sh.status = status;
  return status;
}

/** Runs a generator as a subshell: `exit` ends only the subshell. */
export function* runSubshell(sub: Shell, body: () => G<number>): G<number> {
  try {
    return yield* body();
  } catch (e) {
    if (e instanceof ExitSignal) return e.code;
    if (e instanceof ReturnSignal) return e.code;
    if (e instanceof LoopSignal) return sub.status;
    if (e instanceof ShellError) {
      // a fatal expansion error ends only the subshell
      sub.proc.out.stderr.write(`${sub.arg0}: ${e.message}\n`);
      return e.status;
    }
    throw e;
  }
}

export function* execCommand(cmd: Command, sh: Shell, io0: IO): G<number> {
  // `exec >file` changed this shell's output for the rest of the script
  const io = sh.ioOverride && sh.ioOverride.from === io0 ? sh.ioOverride.to : io0;
  if (cmd.t === 'simple') return yield* execSimple(cmd, sh, io);
  if (cmd.t === 'func') {
    sh.funcs.set(cmd.name, cmd.body);
    sh.status = 0;
    return 0;
  }
  const rio = yield* applyRedirs(cmd.redirs, sh, io);
  if (!rio) {
    sh.status = 1;
    return 1;
  }
  const status = yield* execCompound(cmd, sh, rio);
  sh.status = status;
  return status;
}

function* execCompound(cmd: Command, sh: Shell, io: IO): G<number> {
  switch (cmd.t) {
    case 'group':
      return yield* execList(cmd.body, sh, io);
    case 'subshell': {
      const sub = sh.subshell();
      return yield* runSubshell(sub, () => execList(cmd.body, sub, io));
    }
    case 'if': {
      for (const c of cmd.clauses) {
        sh.noErrexit++;
        let st: number;
        try {
          st = yield* execList(c.cond, sh, io);
        } finally {
          sh.noErrexit--;
        }
        if (st === 0) return yield* execList(c.body, sh, io);
      }
      if (cmd.else) return yield* execList(cmd.else, sh, io);
      return 0;
    }
    case 'loop': {
      let status = 0;
      sh.loopDepth++;
      try {
        for (;;) {
          sh.noErrexit++;
          let st: number;
          try {
            st = yield* execList(cmd.cond, sh, io);
          } finally {
            sh.noErrexit--;
          }
          if ((st === 0) === cmd.until) break;
          yield { k: 'step' };
          const r = yield* loopBody(cmd.body, sh, io);
          if (r === 'break') break;
          if (r === 'continue') continue;
          status = r;
        }
      } finally {
        sh.loopDepth--;
      }
      return status;
    }
    case 'for': {
      let items: string[];
      if (cmd.items) {
        items = [];
        for (const w of cmd.items) items.push(...(yield* expandFields(w, sh, io)));
      } else items = [...sh.params];
      let status = 0;
      sh.loopDepth++;
      try {
        for (const it of items) {
          sh.set(cmd.name, it);
          yield { k: 'step' };
          const r = yield* loopBody(cmd.body, sh, io);
          if (r === 'break') break;
          if (r === 'continue') continue;
          status = r;
        }
      } finally {
        sh.loopDepth--;
      }
      return status;
    }
    case 'case': {
      const w = yield* expandString(cmd.word, sh, io);
      for (let i = 0; i < cmd.items.length; i++) {
        const item = cmd.items[i]!;
        let hit = false;
        for (const p of item.patterns) {
          const pat = yield* expandPattern(p, sh, io);
          if (globMatch(pat, w)) {
            hit = true;
            break;
          }
        }
        if (hit) {
          let st = yield* execList(item.body, sh, io);
          let j = i;
          while (cmd.items[j]!.fall && j + 1 < cmd.items.length) {
            j++;
            st = yield* execList(cmd.items[j]!.body, sh, io);
          }
          return st;
        }
      }
      return 0;
    }
    case 'cond': {
      yield { k: 'step' };
      try {
        return (yield* evalCond(cmd.expr, sh, io)) ? 0 : 1;
      } catch (e) {
        if (e instanceof ShellError) {
          sh.error(io, `${sh.arg0}: ${e.message}`);
          return 2;
        }
        throw e;
      }
    }
    case 'arithcmd': {
      yield { k: 'step' };
      const s = yield* expandString(cmd.expr, sh, io);
      const v = arith(s, sh);
      return v !== 0 ? 0 : 1;
    }
    case 'simple':
    case 'func':
      return yield* execCommand(cmd, sh, io);
  }
}

function* evalCond(e: CondExpr, sh: Shell, io: IO): G<boolean> {
  switch (e.t) {
    case 'and':
      return (yield* evalCond(e.a, sh, io)) && (yield* evalCond(e.b, sh, io));
    case 'or':
      return (yield* evalCond(e.a, sh, io)) || (yield* evalCond(e.b, sh, io));
    case 'not':
      return !(yield* evalCond(e.a, sh, io));
    case 'word':
      return (yield* expandString(e.a, sh, io)) !== '';
    case 'unary': {
      const a = yield* expandString(e.a, sh, io);
      return unaryTest(e.op, a, sh);
    }
    case 'binary': {
      const a = yield* expandString(e.a, sh, io);
      if (e.op === '==' || e.op === '=' || e.op === '!=') {
        const pat = yield* expandPattern(e.b, sh, io);
        const m = globMatch(pat, a);
        return e.op === '!=' ? !m : m;
      }
      if (e.op === '=~') {
        const re = yield* expandPattern(e.b, sh, io);
        let rx: RegExp;
        try {
          rx = new RegExp(patternToRegexSource(re));
        } catch {
          return false;
        }
        const m = rx.exec(a);
        if (m) {
          // BASH_REMATCH as separate variables is not supported; keep the whole match.
          sh.vars.set('BASH_REMATCH', m[0]);
        }
        return m !== null;
      }
      const b = yield* expandString(e.b, sh, io);
      return binaryTest(e.op, a, b, sh, true);
    }
  }
}

/** `[[ =~ ]]`: quoted parts were escaped as glob text; turn that into regex text. */
function patternToRegexSource(p: string): string {
  let out = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\' && i + 1 < p.length) {
      out += escapeRegex(p[i + 1]!);
      i++;
    } else out += c;
  }
  return out;
}

export function unaryTest(op: string, a: string, sh: Shell): boolean {
  const fs = sh.fs;
  const cwd = sh.cwd;
  switch (op) {
    case '-z':
      return a === '';
    case '-n':
      return a !== '';
    case '-e':
    case '-a':
      return a !== '' && fs.stat(a, cwd) !== undefined;
    case '-f':
      return fs.stat(a, cwd)?.type === 'file';
    case '-d':
      return fs.stat(a, cwd)?.type === 'dir';
    case '-h':
    case '-L':
      return fs.stat(a, cwd, false)?.type === 'symlink';
    case '-c':
      return fs.stat(a, cwd)?.type === 'dev';
    case '-p':
    case '-S':
    case '-b':
      return false;
    case '-s': {
      const n = fs.stat(a, cwd);
      return n !== undefined && (n.type === 'file' ? n.data.length > 0 : n.type === 'dir');
    }
    case '-r':
      return fs.stat(a, cwd) !== undefined; // root reads everything
    case '-w': {
      const n = fs.stat(a, cwd);
      return n !== undefined && !fs.isReadOnly(a, cwd);
    }
    case '-x': {
      const n = fs.stat(a, cwd);
      return n !== undefined && (n.type === 'dir' || (n.mode & 0o111) !== 0);
    }
    case '-u':
      return ((fs.stat(a, cwd)?.mode ?? 0) & 0o4000) !== 0;
    case '-g':
      return ((fs.stat(a, cwd)?.mode ?? 0) & 0o2000) !== 0;
    case '-k':
      return ((fs.stat(a, cwd)?.mode ?? 0) & 0o1000) !== 0;
    case '-t':
      return false;
    case '-v':
      return sh.vars.has(a);
    case '-o':
      return false;
    default:
      throw new ShellError(`${op}: unary operator expected`);
  }
}

export function binaryTest(op: string, a: string, b: string, sh: Shell, bash: boolean): boolean {
  const num = (s: string): number => {
    const t = s.trim();
    if (bash) return arith(t === '' ? '0' : t, sh);
    if (!/^[+-]?\d+$/.test(t)) throw new ShellError(`invalid number '${s}'`);
    return Number(t);
  };
  switch (op) {
    case '=':
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '>':
      return a > b;
    case '-eq':
      return num(a) === num(b);
    case '-ne':
      return num(a) !== num(b);
    case '-lt':
      return num(a) < num(b);
    case '-le':
      return num(a) <= num(b);
    case '-gt':
      return num(a) > num(b);
    case '-ge':
      return num(a) >= num(b);
    case '-nt':
    case '-ot': {
      const x = sh.fs.stat(a, sh.cwd)?.mtime ?? -Infinity;
      const y = sh.fs.stat(b, sh.cwd)?.mtime ?? -Infinity;
      return op === '-nt' ? x > y : x < y;
    }
    case '-ef':
      return sh.fs.stat(a, sh.cwd) !== undefined && sh.fs.stat(a, sh.cwd) === sh.fs.stat(b, sh.cwd);
    default:
      throw new ShellError(`${op}: binary operator expected`);
  }
}

// --- simple commands --------------------------------------------------------

const SPECIAL = new Set([':', '.', 'source', 'break', 'continue', 'eval', 'exec', 'exit', 'export', 'readonly', 'return', 'set', 'shift', 'trap', 'unset', 'local']);

function* execSimple(cmd: Extract<Command, { t: 'simple' }>, sh: Shell, io: IO): G<number> {
  yield* checkTraps(sh, io);
  yield { k: 'step' };
  sh.proc.ctx.fs.now = sh.proc.now;
  sh.subStatus = 0;
  let argv: string[];
  const assigns: Array<[string, string, boolean]> = [];
  try {
    argv = [];
    for (const w of cmd.words) argv.push(...(yield* expandFields(w, sh, io)));
    for (const a of cmd.assigns) assigns.push([a.name, yield* expandString(a.value, sh, io), a.append]);
  } catch (e) {
    if (e instanceof ShellError) {
      sh.error(io, `${sh.arg0}: ${e.message}`);
      throw new ExitSignal(e.status);
    }
    throw e;
  }
  if (argv.length === 0) {
    for (const [n, v, app] of assigns) {
      try {
        sh.set(n, app ? (sh.get(n) ?? '') + v : v);
      } catch (e) {
        if (e instanceof ShellError) {
          sh.error(io, `${sh.arg0}: ${e.message}`);
          return 1;
        }
        throw e;
      }
    }
    const rio = yield* applyRedirs(cmd.redirs, sh, io);
    // the status of a bare assignment is that of its last command substitution, else 0
    const status = rio ? sh.subStatus : 1;
    sh.status = status;
    return status;
  }
  if (sh.opts.xtrace) io.stderr.write(`+ ${argv.join(' ')}\n`);
  const rio = yield* applyRedirs(cmd.redirs, sh, io);
  if (!rio) {
    sh.status = 1;
    return 1;
  }
  const name = argv[0]!;
  if (name === 'exec' && argv.length === 1) {
    if (cmd.redirs.length > 0) sh.ioOverride = { from: sh.ioOverride?.from ?? io, to: rio };
    sh.status = 0;
    return 0;
  }
  // prefix assignments: permanent for special builtins, temporary otherwise
  const restore: Array<[string, string | undefined, boolean]> = [];
  for (const [n, v, app] of assigns) {
    if (!SPECIAL.has(name)) restore.push([n, sh.vars.get(n), sh.exported.has(n)]);
    sh.vars.set(n, app ? (sh.get(n) ?? '') + v : v);
    if (!SPECIAL.has(name)) sh.exported.add(n);
  }
  let status: number;
  try {
    status = yield* runCommand(argv, sh, rio);
  } finally {
    for (const [n, v, ex] of restore) {
      if (v === undefined) sh.vars.delete(n);
      else sh.vars.set(n, v);
      if (!ex) sh.exported.delete(n);
    }
  }
  sh.status = status;
  yield* checkTraps(sh, io);
  return status;
}


/** Runs argv: function, builtin or external program. */
export function* runCommand(argv: string[], sh: Shell, io: IO): G<number> {
  const name = argv[0]!;
  const fn = sh.funcs.get(name);
  if (fn) return yield* callFunction(fn, argv, sh, io);
  const b = BUILTINS.get(name.includes('/') ? baseName(name) : name);
  if (b && (!name.includes('/') || /^\/(usr\/)?(s?bin)\//.test(name))) {
    try {
      return yield* b(argv, sh, io);
    } catch (e) {
      if (e instanceof ShellError) {
        sh.error(io, `${sh.arg0}: ${e.message}`);
        return e.status;
      }
      if (e instanceof FsError) {
        sh.error(io, `${baseName(name)}: ${e.path}: ${e.message}`);
        return 1;
      }
      throw e;
    }
  }
  return yield* runExternal(argv, sh, io);
}

function baseName(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? p : p.slice(i + 1);
}

export function* callFunction(body: Command, argv: string[], sh: Shell, io: IO): G<number> {
  const savedParams = sh.params;
  sh.params = argv.slice(1);
  sh.locals.push(new Map());
  try {
    return yield* execCommand(body, sh, io);
  } catch (e) {
    if (e instanceof ReturnSignal) return e.code;
    throw e;
  } finally {
    sh.params = savedParams;
    const frame = sh.locals.pop()!;
    for (const [n, v] of frame) {
      if (v === undefined) sh.vars.delete(n);
      else sh.vars.set(n, v);
    }
  }
}

export function* runExternal(argv: string[], sh: Shell, io: IO): G<number> {
  const ctx = sh.proc.ctx;
  // a shell script in the file system (e.g. from a ConfigMap volume) runs here
  if (argv[0]!.includes('/')) {
    const n = ctx.fs.stat(argv[0]!, sh.cwd);
    if (n?.type === 'file') {
      const text = n.data.toString('utf8');
      const m = /^#!\s*(\S+)/.exec(text);
      const interp = m ? baseName(m[1]!) : undefined;
      if (interp === 'sh' || interp === 'bash' || interp === 'ash' || interp === 'dash' || (!m && !text.includes('\0'))) {
        if ((n.mode & 0o111) === 0) {
          sh.error(io, `${sh.arg0}: ${argv[0]}: Permission denied`);
          return 126;
        }
        const child = sh.subshell();
        child.vars = new Map([...sh.vars].filter(([k]) => sh.exported.has(k)));
        child.funcs = new Map();
        child.arg0 = argv[0]!;
        child.params = argv.slice(1);
        child.opts = { errexit: false, xtrace: false, nounset: false, pipefail: false };
        return yield* runSubshell(child, () => runScript(child, text, io));
      }
    }
  }
  const stdin = readAll(io.stdin);
  const r = ctx.external?.(argv, { cwd: sh.cwd, env: sh.env(), fs: ctx.fs, now: sh.proc.now, stdin, hostname: ctx.hostname });
  if (r && 'notFound' in r) {
    sh.error(io, `${sh.arg0}: ${argv[0]}: not found`);
    return 127;
  }
  if (r && 'script' in r) {
    if (sh.main && sh.proc.pid1.kind === 'program') {
      sh.proc.pid1 = { kind: 'program', sigterm: r.sigterm ?? 'exit', exitCode: r.sigtermExitCode ?? 0 };
    }
    const child = sh.subshell();
    child.vars = new Map([...sh.vars].filter(([k]) => sh.exported.has(k)));
    for (const [k, v] of Object.entries(r.env ?? {})) child.vars.set(k, v);
    child.funcs = new Map();
    child.arg0 = r.arg0 ?? argv[0]!;
    child.params = r.args ?? argv.slice(1);
    child.opts = { errexit: false, xtrace: false, nounset: false, pipefail: false };
    const script = r.script;
    return yield* runSubshell(child, () => runScript(child, script, stdin ? { ...io, stdin: { data: stdin, pos: 0 } } : io));
  }
  if (r && 'exitCode' in r) {
    if (r.durationMs && r.durationMs > 0) {
      const w = yield { k: 'sleep', until: sh.proc.now + r.durationMs };
      if (w === 'interrupted') return 128 + 15;
    }
    if (r.stdout) io.stdout.write(r.stdout);
    if (r.stderr) io.stderr.write(r.stderr);
    return r.exitCode;
  }
  // runs until stopped
  if (r?.stdout) io.stdout.write(r.stdout);
  if (r?.stderr) io.stderr.write(r.stderr);
  if (sh.main && sh.proc.pid1.kind === 'program') {
    sh.proc.pid1 = { kind: 'program', sigterm: r?.sigterm ?? 'exit', exitCode: r?.sigtermExitCode ?? 0 };
  }
  for (;;) {
    const w = yield { k: 'forever' };
    if (w === 'interrupted') return 128 + 15;
  }
}

/** Flow-control builtins need the signal classes. */
export function breakLoop(sh: Shell, kind: 'break' | 'continue', n: number): never {
  void sh;
  throw new LoopSignal(kind, n);
}
export function returnFrom(code: number): never {
  throw new ReturnSignal(code);
}
export function isReturn(e: unknown): e is { code: number } {
  return e instanceof ReturnSignal;
}

// --- redirections -------------------------------------------------------------

function fileOut(sh: Shell, path: string, cwd: string): Out {
  const fs = sh.fs;
  return {
    write: (s: string) => {
      fs.now = sh.proc.now;
      try {
        fs.writeFile(path, s, { append: true, cwd });
      } catch {
        /* the file vanished or became read-only: output is lost */
      }
    },
  };
}

/** Applies redirections; returns the new IO, or undefined (after an error message) on failure. */
export function* applyRedirs(redirs: Redir[], sh: Shell, io: IO): G<IO | undefined> {
  if (redirs.length === 0) return io;
  const fds: Array<In | Out> = [io.stdin, io.stdout, io.stderr];
  const fs = sh.fs;
  fs.now = sh.proc.now;
  for (const r of redirs) {
    if (r.op === '<<') {
      const body = r.heredoc ? yield* expandString(r.heredoc, sh, io) : '';
      fds[r.fd] = { data: body, pos: 0 };
      continue;
    }
    const target = yield* expandString(r.target, sh, io);
    if (r.op === '<<<') {
      fds[r.fd] = { data: target + '\n', pos: 0 };
      continue;
    }
    if (r.op === '>&' || r.op === '<&') {
      if (target === '-') {
        fds[r.fd] = r.op === '>&' ? NULL_OUT : emptyIn();
        continue;
      }
      if (/^\d+$/.test(target)) {
        const src = fds[Number(target)];
        if (src === undefined) {
          sh.error(io, `${sh.arg0}: ${target}: Bad file descriptor`);
          return undefined;
        }
        fds[r.fd] = src;
        continue;
      }
      if (r.op === '<&') {
        sh.error(io, `${sh.arg0}: ${target}: Bad file descriptor`);
        return undefined;
      }
      // `>& file` = `&> file`
    }
    if (r.op === '<' || r.op === '<>') {
      try {
        const data = fs.readText(target, sh.cwd);
        fds[r.fd] = { data, pos: 0 };
      } catch (e) {
        if (r.op === '<>' && e instanceof FsError && e.code === 'ENOENT') {
          try {
            fs.writeFile(target, '', { cwd: sh.cwd });
            fds[r.fd] = emptyIn();
            continue;
          } catch {
            /* fall through */
          }
        }
        const msg = e instanceof FsError && e.code === 'ENOENT' ? 'no such file' : e instanceof Error ? e.message : String(e);
        sh.error(io, `${sh.arg0}: can't open ${target}: ${msg}`);
        return undefined;
      }
      continue;
    }
    // output: >, >>, >|, &>, &>>, >& file
    const append = r.op === '>>' || r.op === '&>>';
    try {
      const node = fs.stat(target, sh.cwd);
      if (node?.type === 'dir') throw new FsError('EISDIR', target);
      if (!append || !node) fs.writeFile(target, '', { cwd: sh.cwd });
    } catch (e) {
      const msg = e instanceof FsError && e.code === 'ENOENT' ? 'nonexistent directory' : e instanceof Error ? e.message : String(e);
      sh.error(io, `${sh.arg0}: can't create ${target}: ${msg}`);
      return undefined;
    }
    const out = fs.stat(target, sh.cwd)?.type === 'dev' ? NULL_OUT : fileOut(sh, target, sh.cwd);
    if (r.op === '&>' || r.op === '&>>' || r.op === '>&') {
      fds[1] = out;
      fds[2] = out;
    } else fds[r.fd] = out;
  }
  return { stdin: fds[0] as In, stdout: fds[1] as Out, stderr: fds[2] as Out };
}

// --- expansion ----------------------------------------------------------------

type Seg = { s: string; q: boolean; split: boolean } | { brk: true };

const GLOB_CHARS = new Set(['*', '?', '[', ']', '\\']);

function* segments(w: Word, sh: Shell, io: IO): G<Seg[]> {
  const out: Seg[] = [];
  for (const p of w.parts) {
    switch (p.t) {
      case 'lit':
        out.push({ s: p.v, q: p.q, split: false });
        break;
      case 'tilde':
        if (p.user === '' || p.user === 'root') out.push({ s: p.user === '' ? (sh.get('HOME') ?? '/root') : '/root', q: true, split: false });
        else out.push({ s: '~' + p.user, q: false, split: false });
        break;
      case 'param': {
        if ((p.name === '@' || p.name === '*') && !p.op) {
          if (p.q && p.name === '@') {
            sh.params.forEach((v, i) => {
              if (i > 0) out.push({ brk: true });
              out.push({ s: v, q: true, split: false });
            });
          } else out.push({ s: sh.params.join(p.q ? ifsFirst(sh) : ' '), q: p.q, split: !p.q });
          break;
        }
        const v = yield* expandParam(p, sh, io);
        out.push({ s: v, q: p.q, split: !p.q });
        break;
      }
      case 'cmdsub': {
        const v = yield* commandSubstitution(p.body, sh, io);
        out.push({ s: v, q: p.q, split: !p.q });
        break;
      }
      case 'arith': {
        const e = yield* expandString(p.expr, sh, io);
        out.push({ s: String(arith(e, sh)), q: p.q, split: !p.q });
        break;
      }
    }
  }
  return out;
}

function ifsFirst(sh: Shell): string {
  const ifs = sh.get('IFS');
  return ifs === undefined ? ' ' : ifs.slice(0, 1);
}

export function* commandSubstitution(body: List, sh: Shell, io: IO): G<string> {
  const sub = sh.subshell();
  const buf = new BufferOut();
  const st = yield* runSubshell(sub, () => execList(body, sub, { stdin: io.stdin, stdout: buf, stderr: io.stderr }));
  sh.subStatus = st;
  sh.status = st;
  return buf.text.replace(/\n+$/, '');
}

/** Expands a word to one string (no field splitting, no globbing). */
export function* expandString(w: Word, sh: Shell, io: IO): G<string> {
  const segs = yield* segments(w, sh, io);
  return segs.map((s) => ('brk' in s ? ' ' : s.s)).join('');
}

/** Expands a word to a glob pattern (quoted characters escaped). */
export function* expandPattern(w: Word, sh: Shell, io: IO): G<string> {
  const segs = yield* segments(w, sh, io);
  let out = '';
  for (const s of segs) {
    if ('brk' in s) out += ' ';
    else if (s.q) out += [...s.s].map((c) => (GLOB_CHARS.has(c) ? '\\' + c : c)).join('');
    else out += s.s;
  }
  return out;
}

/** Expands a word to fields: parameter/command/arithmetic expansion, field splitting, globbing. */
export function* expandFields(w: Word, sh: Shell, io: IO): G<string[]> {
  const segs = yield* segments(w, sh, io);
  const ifs = sh.get('IFS') ?? ' \t\n';
  const fields: Array<{ s: string; pat: string; glob: boolean }> = [];
  let cur = { s: '', pat: '', glob: false };
  let has = false;
  const push = (): void => {
    fields.push(cur);
    cur = { s: '', pat: '', glob: false };
    has = false;
  };
  for (const seg of segs) {
    if ('brk' in seg) {
      push();
      continue;
    }
    if (seg.q) has = true;
    for (const c of seg.s) {
      if (seg.split && ifs.includes(c)) {
        if (has || cur.s !== '') push();
        continue;
      }
      cur.s += c;
      if (seg.q) cur.pat += GLOB_CHARS.has(c) ? '\\' + c : c;
      else {
        cur.pat += c;
        if (c === '*' || c === '?' || c === '[') cur.glob = true;
      }
    }
  }
  if (has || cur.s !== '') push();
  const out: string[] = [];
  for (const f of fields) {
    if (f.glob) {
      const m = globPaths(f.pat, sh);
      if (m.length > 0) {
        out.push(...m);
        continue;
      }
    }
    out.push(f.s);
  }
  return out;
}

function* expandParam(p: Extract<Word['parts'][number], { t: 'param' }>, sh: Shell, io: IO): G<string> {
  const v = paramValue(p.name, sh);
  const op = p.op;
  if (!op) {
    if (v === undefined && sh.opts.nounset && !/^[@*#?$!0-]$/.test(p.name)) throw new ShellError(`${p.name}: parameter not set`);
    return v ?? '';
  }
  if (op === 'len') return String((v ?? '').length);
  const arg = p.arg ?? { parts: [] };
  const colon = op.startsWith(':') && op.length === 2;
  const unsetOrNull = v === undefined || (colon && v === '');
  switch (op) {
    case '-':
    case ':-':
      return unsetOrNull ? yield* expandString(arg, sh, io) : v!;
    case '=':
    case ':=':
      if (unsetOrNull) {
        const nv = yield* expandString(arg, sh, io);
        sh.set(p.name, nv);
        return nv;
      }
      return v!;
    case '+':
    case ':+':
      return unsetOrNull ? '' : yield* expandString(arg, sh, io);
    case '?':
    case ':?': {
      if (!unsetOrNull) return v!;
      const msg = yield* expandString(arg, sh, io);
      throw new ShellError(`${p.name}: ${msg || (colon ? 'parameter null or not set' : 'parameter not set')}`);
    }
    case '#':
    case '##':
    case '%':
    case '%%': {
      const val = v ?? '';
      const pat = yield* expandPattern(arg, sh, io);
      const longest = op.length === 2;
      if (op[0] === '#') {
        const idx = longest ? range(val.length, -1) : range(0, val.length + 1);
        for (const i of idx) if (globMatch(pat, val.slice(0, i))) return val.slice(i);
      } else {
        const idx = longest ? range(0, val.length + 1) : range(val.length, -1);
        for (const i of idx) if (globMatch(pat, val.slice(i))) return val.slice(0, i);
      }
      return val;
    }
    case '/':
    case '//': {
      const val = v ?? '';
      // split the argument at its first unquoted '/': pattern / replacement
      const patParts: Word['parts'] = [];
      const repParts: Word['parts'] = [];
      let seen = false;
      for (const part of arg.parts) {
        if (!seen && part.t === 'lit' && !part.q && part.v.includes('/')) {
          const k = part.v.indexOf('/');
          if (k > 0) patParts.push({ t: 'lit', v: part.v.slice(0, k), q: false });
          if (k + 1 < part.v.length) repParts.push({ t: 'lit', v: part.v.slice(k + 1), q: false });
          seen = true;
        } else (seen ? repParts : patParts).push(part);
      }
      const pat = yield* expandPattern({ parts: patParts }, sh, io);
      const rep = yield* expandString({ parts: repParts }, sh, io);
      if (pat === '') return val;
      const rx = new RegExp(globToRegexSource(pat), op === '//' ? 'g' : '');
      return val.replace(rx, () => rep);
    }
    case ':': {
      const val = v ?? '';
      const spec = yield* expandString(arg, sh, io);
      const [a, b] = splitTop(spec);
      let off = arith(a, sh);
      if (off < 0) off = Math.max(0, val.length + off);
      if (b === undefined) return val.slice(off);
      let len = arith(b, sh);
      if (len < 0) return val.slice(off, val.length + len);
      return val.slice(off, off + len);
    }
  }
  return v ?? '';
}

function splitTop(s: string): [string, string | undefined] {
  const i = s.indexOf(':');
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  if (from <= to) for (let i = from; i < to; i++) out.push(i);
  else for (let i = from; i > to; i--) out.push(i);
  return out;
}

function unescapeGlob(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

export function paramValue(name: string, sh: Shell): string | undefined {
  switch (name) {
    case '?':
      return String(sh.status);
    case '$':
      return String(sh.pid);
    case 'RANDOM':
      return String(sh.proc.random());
    case '!':
      return sh.lastBg ? String(sh.lastBg) : '';
    case '#':
      return String(sh.params.length);
    case '@':
    case '*':
      return sh.params.join(' ');
    case '-':
      return (sh.opts.errexit ? 'e' : '') + (sh.opts.xtrace ? 'x' : '') + (sh.opts.nounset ? 'u' : '');
    case '0':
      return sh.arg0;
  }
  if (/^[0-9]+$/.test(name)) return sh.params[Number(name) - 1];
  return sh.vars.get(name);
}

// --- globbing ------------------------------------------------------------------

function escapeRegex(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? '\\' + c : c;
}

/** Glob pattern (with `\` escapes) to regex source, not anchored. */
export function globToRegexSource(pat: string): string {
  let out = '';
  for (let i = 0; i < pat.length; i++) {
    const c = pat[i]!;
    if (c === '\\') {
      out += escapeRegex(pat[i + 1] ?? '\\');
      i++;
    } else if (c === '*') out += '[\\s\\S]*';
    else if (c === '?') out += '[\\s\\S]';
    else if (c === '[') {
      const end = pat.indexOf(']', i + 2);
      if (end < 0) {
        out += '\\[';
        continue;
      }
      let body = pat.slice(i + 1, end);
      let neg = false;
      if (body.startsWith('!') || body.startsWith('^')) {
        neg = true;
        body = body.slice(1);
      }
      body = body.replace(/\[:(\w+):\]/g, (_m, cls: string) => POSIX_CLASSES[cls] ?? '');
      out += '[' + (neg ? '^' : '') + body.replace(/\\/g, '\\\\').replace(/\]/g, '\\]') + ']';
      i = end;
    } else out += escapeRegex(c);
  }
  return out;
}

const POSIX_CLASSES: Record<string, string> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: ' \\t\\n\\r\\f\\v',
  xdigit: '0-9a-fA-F',
  punct: '!-\\/:-@\\[-`{-~',
};

export function globMatch(pat: string, s: string): boolean {
  try {
    return new RegExp('^' + globToRegexSource(pat) + '$').test(s);
  } catch {
    return pat === s;
  }
}

function hasGlob(component: string): boolean {
  for (let i = 0; i < component.length; i++) {
    const c = component[i];
    if (c === '\\') i++;
    else if (c === '*' || c === '?' || c === '[') return true;
  }
  return false;
}

/** Pathname expansion against the file system; sorted matches, or [] for none. */
export function globPaths(pat: string, sh: Shell): string[] {
  const abs = pat.startsWith('/');
  const comps = pat.split('/').filter((c, i) => c !== '' || i === 0);
  let paths: string[] = [abs ? '' : '.'];
  const start = abs ? 1 : 0;
  for (let i = start; i < comps.length; i++) {
    const comp = comps[i]!;
    const next: string[] = [];
    for (const base of paths) {
      const dir = base === '' ? '/' : base;
      if (!hasGlob(comp)) {
        const p = (base === '.' && !abs ? '' : base + '/') + unescapeGlob(comp);
        const full = base === '.' && !abs ? unescapeGlob(comp) : p;
        if (sh.fs.stat(full, sh.cwd, false) !== undefined) next.push(full);
        continue;
      }
      let names: string[];
      try {
        names = sh.fs.readdir(dir, sh.cwd);
      } catch {
        continue;
      }
      for (const n of names) {
        if (n.startsWith('.') && !comp.startsWith('.') && !comp.startsWith('\\.')) continue;
        if (globMatch(comp, n)) next.push(base === '.' && !abs ? n : `${base}/${n}`);
      }
    }
    paths = next;
    if (paths.length === 0) return [];
  }
  return paths.sort();
}

// --- arithmetic ------------------------------------------------------------------

/** Evaluates a shell arithmetic expression (integers). */
export function arith(src: string, sh: Shell): number {
  const toks = src.match(/0[xX][0-9a-fA-F]+|\d+|[A-Za-z_][A-Za-z0-9_]*|\*\*|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|[+\-*/%]=|[&|^]=|[-+*/%()<>!~&|^?:=,]|\S/g) ?? [];
  let i = 0;
  const peek = (): string | undefined => toks[i];
  const fail = (): never => {
    throw new ShellError(`arithmetic syntax error`);
  };
  const varNum = (name: string): number => {
    const v = sh.get(name) ?? paramValue(name, sh);
    if (v === undefined || v === '') return 0;
    if (/^\s*[+-]?\d+\s*$/.test(v)) return Number(v.trim());
    if (v === name) return 0;
    return arith(v, sh);
  };
  const assign = (name: string, v: number): number => {
    sh.set(name, String(v));
    return v;
  };
  const comma = (): number => {
    let v = assignment();
    while (peek() === ',') {
      i++;
      v = assignment();
    }
    return v;
  };
  const assignment = (): number => {
    const t = peek();
    const op = toks[i + 1];
    if (t && /^[A-Za-z_]/.test(t) && op && /^([+\-*/%&|^]|<<|>>)?=$/.test(op) && op !== '==') {
      i += 2;
      const rhs = assignment();
      const cur = varNum(t);
      const o = op.slice(0, -1);
      return assign(t, o === '' ? rhs : binop(o, cur, rhs));
    }
    return ternary();
  };
  const ternary = (): number => {
    const c = binary(0);
    if (peek() === '?') {
      i++;
      const a = assignment();
      if (peek() !== ':') fail();
      i++;
      const b = assignment();
      return c !== 0 ? a : b;
    }
    return c;
  };
  const LEVELS: string[][] = [['||'], ['&&'], ['|'], ['^'], ['&'], ['==', '!='], ['<', '<=', '>', '>='], ['<<', '>>'], ['+', '-'], ['*', '/', '%'], ['**']];
  const binop = (o: string, a: number, b: number): number => {
    switch (o) {
      case '||':
        return a !== 0 || b !== 0 ? 1 : 0;
      case '&&':
        return a !== 0 && b !== 0 ? 1 : 0;
      case '|':
        return a | b;
      case '^':
        return a ^ b;
      case '&':
        return a & b;
      case '==':
        return a === b ? 1 : 0;
      case '!=':
        return a !== b ? 1 : 0;
      case '<':
        return a < b ? 1 : 0;
      case '<=':
        return a <= b ? 1 : 0;
      case '>':
        return a > b ? 1 : 0;
      case '>=':
        return a >= b ? 1 : 0;
      case '<<':
        return a << b;
      case '>>':
        return a >> b;
      case '+':
        return a + b;
      case '-':
        return a - b;
      case '*':
        return a * b;
      case '/':
        if (b === 0) throw new ShellError('divide by zero');
        return Math.trunc(a / b);
      case '%':
        if (b === 0) throw new ShellError('divide by zero');
        return a % b;
      case '**':
        return a ** b;
    }
    return fail();
  };
  const binary = (level: number): number => {
    if (level >= LEVELS.length) return unary();
    let a = binary(level + 1);
    while (peek() !== undefined && LEVELS[level]!.includes(peek()!)) {
      const o = toks[i++]!;
      const b = o === '**' ? binary(level) : binary(level + 1);
      a = binop(o, a, b);
    }
    return a;
  };
  const unary = (): number => {
    const t = peek();
    if (t === '-') {
      i++;
      return -unary();
    }
    if (t === '+') {
      i++;
      return unary();
    }
    if (t === '!') {
      i++;
      return unary() === 0 ? 1 : 0;
    }
    if (t === '~') {
      i++;
      return ~unary();
    }
    if (t === '++' || t === '--') {
      i++;
      const n = toks[i++];
      if (!n || !/^[A-Za-z_]/.test(n)) fail();
      return assign(n!, varNum(n!) + (t === '++' ? 1 : -1));
    }
    return postfix();
  };
  const postfix = (): number => {
    const t = toks[i++];
    if (t === undefined) return fail();
    if (t === '(') {
      const v = comma();
      if (toks[i++] !== ')') fail();
      return v;
    }
    if (/^0[xX][0-9a-fA-F]+$/.test(t)) return parseInt(t, 16);
    if (/^\d+$/.test(t)) {
      if (t.length > 1 && t.startsWith('0')) return parseInt(t, 8);
      return Number(t);
    }
    if (/^[A-Za-z_]/.test(t)) {
      const nx = peek();
      if (nx === '++' || nx === '--') {
        i++;
        const v = varNum(t);
        assign(t, v + (nx === '++' ? 1 : -1));
        return v;
      }
      return varNum(t);
    }
    return fail();
  };
  if (toks.length === 0) return 0;
  const v = comma();
  if (i < toks.length) fail();
  return v;
}

// --- helpers for builtins ------------------------------------------------------

export function resolvePath(sh: Shell, p: string): string {
  return joinPath(splitPath(p, sh.cwd));
}

/** Parses a script and runs it in the given shell (eval, trap actions, `.`). */
export function* evalString(sh: Shell, src: string, io: IO): G<number> {
  return yield* runScript(sh, src, io);
}

export { parseDoubleQuotedText };
