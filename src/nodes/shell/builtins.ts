/**
 * Built-in commands, with busybox-like output, error texts and exit codes.
 * Each is a generator (`sleep`, `wget`, `wait`, `sh -c` suspend on virtual time).
 */
import { createHash } from 'node:crypto';
import { ansiEscape } from './parser.js';
import { FsError, basename, cloneNode, dirname, errorText, joinPath, modeString, nodeSize, splitPath, type FsNode } from './fs.js';
import {

  ExitSignal,
  ShellError,
  binaryTest,
  breakLoop,
  evalString,
  readAll,
  returnFrom,
  isReturn,
  runCommand,
  runSubshell,
  unaryTest,
  arith,
  type G,
  type HttpRequest,
  type HttpResult,
  type IO,
  type Shell,

} from './interpreter.js';

export type Builtin = (argv: string[], sh: Shell, io: IO) => G<number>;

export const BUILTINS = new Map<string, Builtin>();

function def(names: string | string[], fn: Builtin): void {
  for (const n of Array.isArray(names) ? names : [names]) BUILTINS.set(n, fn);
}

/** Names that are shell builtins rather than programs in /bin (for `command -v`). */
const SHELL_ONLY = new Set(['cd', 'export', 'unset', 'set', 'trap', 'exec', 'wait', 'eval', '.', 'source', 'shift', 'local', 'return', 'break', 'continue', 'read', 'exit', ':', 'command', 'type', 'readonly', 'umask', 'ulimit', 'jobs', 'hash', 'alias', 'unalias', 'getopts', 'let']);

// --- small helpers ------------------------------------------------------------

/** Splits combined short options (`-la` -> l, a) up to the first non-option; returns flags and operands. */
function opts(argv: string[], withValue = ''): { f: Set<string>; v: Map<string, string>; args: string[] } {
  const f = new Set<string>();
  const v = new Map<string, string>();
  const args: string[] = [];
  let i = 1;
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      i++;
      break;
    }
    if (!a.startsWith('-') || a === '-' ) break;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) v.set(a.slice(0, eq), a.slice(eq + 1));
      else f.add(a);
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if (withValue.includes(c)) {
        const rest = a.slice(j + 1);
        if (rest) v.set(c, rest);
        else v.set(c, argv[++i] ?? '');
        break;
      }
      f.add(c);
    }
  }
  args.push(...argv.slice(i));
  return { f, v, args };
}

function err(io: IO, s: string): void {
  io.stderr.write(s + '\n');
}

/** Reads the named files (or stdin for none or `-`); reports missing ones busybox-style. */
function readInputs(name: string, files: string[], sh: Shell, io: IO, style: 'open' | 'plain' = 'open'): { texts: Array<{ name: string; text: string }>; failed: boolean } {
  const texts: Array<{ name: string; text: string }> = [];
  let failed = false;
  if (files.length === 0) files = ['-'];
  for (const f of files) {
    if (f === '-') {
      texts.push({ name: '-', text: readAll(io.stdin) });
      continue;
    }
    try {
      texts.push({ name: f, text: sh.fs.readText(f, sh.cwd) });
    } catch (e) {
      failed = true;
      if (style === 'open' && e instanceof FsError && e.code === 'EISDIR') err(io, `${name}: read error: Is a directory`);
      else if (style === 'open') err(io, `${name}: can't open '${f}': ${errorText(e)}`);
      else err(io, `${name}: ${f}: ${errorText(e)}`);
    }
  }
  return { texts, failed };
}

function lines(text: string): string[] {
  if (text === '') return [];
  const l = text.split('\n');
  if (l[l.length - 1] === '') l.pop();
  return l;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const p2 = (n: number): string => String(n).padStart(2, '0');

/** `date +FORMAT` (UTC). */
export function formatDate(ms: number, fmt = '%a %b %e %H:%M:%S %Z %Y'): string {
  const d = new Date(ms);
  let out = '';
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    const k = fmt[++i] ?? '';
    switch (k) {
      case 'Y': out += d.getUTCFullYear(); break;
      case 'y': out += p2(d.getUTCFullYear() % 100); break;
      case 'm': out += p2(d.getUTCMonth() + 1); break;
      case 'd': out += p2(d.getUTCDate()); break;
      case 'e': out += String(d.getUTCDate()).padStart(2, ' '); break;
      case 'H': out += p2(d.getUTCHours()); break;
      case 'I': out += p2(((d.getUTCHours() + 11) % 12) + 1); break;
      case 'M': out += p2(d.getUTCMinutes()); break;
      case 'S': out += p2(d.getUTCSeconds()); break;
      case 'N': out += String((((ms % 1000) + 1000) % 1000) * 1_000_000).padStart(9, '0'); break;
      case 's': out += Math.floor(ms / 1000); break;
      case 'Z': out += 'UTC'; break;
      case 'z': out += '+0000'; break;
      case 'a': out += DAYS[d.getUTCDay()]; break;
      case 'A': out += ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'][d.getUTCDay()]; break;
      case 'b': case 'h': out += MONTHS[d.getUTCMonth()]; break;
      case 'B': out += ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'][d.getUTCMonth()]; break;
      case 'p': out += d.getUTCHours() < 12 ? 'AM' : 'PM'; break;
      case 'T': out += `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`; break;
      case 'R': out += `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}`; break;
      case 'F': out += `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}`; break;
      case 'D': out += `${p2(d.getUTCMonth() + 1)}/${p2(d.getUTCDate())}/${p2(d.getUTCFullYear() % 100)}`; break;
      case 'j': out += String(Math.floor((ms - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86400000) + 1).padStart(3, '0'); break;
      case 'u': out += d.getUTCDay() === 0 ? 7 : d.getUTCDay(); break;
      case 'w': out += d.getUTCDay(); break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case '%': out += '%'; break;
      default: out += '%' + k;
    }
  }
  return out;
}

/** Parses busybox sleep durations: `5`, `1.5`, `1s`, `2m`, `1h`, `1d`; undefined when invalid. */
export function parseDuration(s: string): number | undefined {
  const m = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/.exec(s);
  if (!m) return undefined;
  const mult = { '': 1000, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
  return Math.round(Number(m[1]) * mult);
}

function* sleepUntil(sh: Shell, until: number): G<boolean> {
  const w = yield { k: 'sleep', until };
  return w !== 'interrupted';
}

function* forever(): G<number> {
  for (;;) {
    const w = yield { k: 'forever' };
    if (w === 'interrupted') return 128 + 15;
  }
}

// --- shell builtins -------------------------------------------------------------

def([':', 'true'], function* () {
  return 0;
});
def('false', function* () {
  return 1;
});

def('exit', function* (argv, sh, io) {
  const a = argv[1];
  if (a === undefined) throw new ExitSignal(sh.status);
  if (!/^-?\d+$/.test(a)) {
    err(io, `${sh.arg0}: exit: Illegal number: ${a}`);
    throw new ExitSignal(2);
  }
  throw new ExitSignal(((Number(a) % 256) + 256) % 256);
});

def('return', function* (argv, sh) {
  const code = argv[1] !== undefined ? ((Number(argv[1]) % 256) + 256) % 256 : sh.status;
  // outside a function (and not in a sourced file) `return` ends the script, as in ash
  if (sh.locals.length === 0 && sh.sourceDepth === 0) throw new ExitSignal(code);
  returnFrom(code);
});
def(['break', 'continue'], function* (argv, sh) {
  if (sh.loopDepth === 0) return 0;
  breakLoop(sh, argv[0] as 'break' | 'continue', Math.max(1, Number(argv[1] ?? '1') || 1));
});

def('export', function* (argv, sh, io) {
  const args = argv.slice(1).filter((a) => a !== '-n');
  if (args.length === 0 || args[0] === '-p') {
    for (const n of sh.exported) {
      const v = sh.get(n);
      if (v !== undefined) io.stdout.write(`export ${n}=${shQuote(v)}\n`);
    }
    return 0;
  }
  for (const a of args) {
    const eq = a.indexOf('=');
    const name = eq < 0 ? a : a.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      err(io, `${sh.arg0}: export: ${a}: bad variable name`);
      return 2;
    }
    if (eq >= 0) sh.set(name, a.slice(eq + 1));
    sh.exported.add(name);
  }
  return 0;
});
def('readonly', function* (argv, sh) {
  for (const a of argv.slice(1)) {
    const eq = a.indexOf('=');
    const name = eq < 0 ? a : a.slice(0, eq);
    if (eq >= 0) sh.set(name, a.slice(eq + 1));
    sh.readonly_.add(name);
  }
  return 0;
});
def('local', function* (argv, sh) {
  const frame = sh.locals[sh.locals.length - 1];
  for (const a of argv.slice(1)) {
    const eq = a.indexOf('=');
    const name = eq < 0 ? a : a.slice(0, eq);
    if (frame && !frame.has(name)) frame.set(name, sh.vars.get(name));
    if (eq >= 0) sh.set(name, a.slice(eq + 1));
  }
  return 0;
});
def('unset', function* (argv, sh) {
  let fn = false;
  for (const a of argv.slice(1)) {
    if (a === '-f') fn = true;
    else if (a === '-v') fn = false;
    else if (fn) sh.funcs.delete(a);
    else sh.unset(a);
  }
  return 0;
});

def('set', function* (argv, sh, io) {
  if (argv.length === 1) {
    for (const [k, v] of [...sh.vars].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) io.stdout.write(`${k}=${shQuote(v)}\n`);
    return 0;
  }
  const names: Record<string, keyof Shell['opts']> = { e: 'errexit', x: 'xtrace', u: 'nounset' };
  const longNames: Record<string, keyof Shell['opts']> = { errexit: 'errexit', xtrace: 'xtrace', nounset: 'nounset', pipefail: 'pipefail' };
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      sh.params = argv.slice(i + 1);
      return 0;
    }
    if (a === '-o' || a === '+o') {
      const n = argv[++i] ?? '';
      const k = longNames[n];
      if (k) sh.opts[k] = a === '-o';
      continue;
    }
    if (/^[-+][a-zA-Z]+$/.test(a)) {
      for (const c of a.slice(1)) {
        const k = names[c];
        if (k) sh.opts[k] = a[0] === '-';
      }
      continue;
    }
    sh.params = argv.slice(i);
    return 0;
  }
  return 0;
});

def('shift', function* (argv, sh, io) {
  const n = Number(argv[1] ?? '1');
  if (n > sh.params.length) {
    err(io, `${sh.arg0}: shift: can't shift that many`);
    return 2;
  }
  sh.params = sh.params.slice(n);
  return 0;
});

export const SIGNALS: Record<string, number> = { HUP: 1, INT: 2, QUIT: 3, KILL: 9, USR1: 10, USR2: 12, PIPE: 13, ALRM: 14, TERM: 15, CHLD: 17, CONT: 18, STOP: 19, TSTP: 20, WINCH: 28 };

/** Normalizes `SIGTERM`, `term`, `15` to `TERM`; `0` to `EXIT`. */
export function signalName(s: string): string | undefined {
  const u = s.toUpperCase().replace(/^SIG/, '');
  if (u === '0' || u === 'EXIT') return 'EXIT';
  if (/^\d+$/.test(u)) return Object.keys(SIGNALS).find((k) => SIGNALS[k] === Number(u));
  return u in SIGNALS || u === 'ERR' || u === 'DEBUG' ? u : undefined;
}

def('trap', function* (argv, sh, io) {
  const args = argv.slice(1);
  if (args.length === 0 || args[0] === '-p') {
    for (const [sig, action] of sh.traps) io.stdout.write(`trap -- ${shQuote(action)} ${sig}\n`);
    return 0;
  }
  if (args[0] === '-l') {
    io.stdout.write(Object.entries(SIGNALS).map(([k, v]) => `${v}) ${k}`).join('\n') + '\n');
    return 0;
  }
  let action: string | undefined = args[0]!;
  let sigs = args.slice(1);
  if (args.length === 1 || /^\d+$/.test(action)) {
    // `trap - SIG` form or `trap 15`: reset
    sigs = args.length === 1 ? [action] : args;
    action = undefined;
  } else if (action === '-') action = undefined;
  let status = 0;
  for (const s of sigs) {
    const n = signalName(s);
    if (!n) {
      err(io, `${sh.arg0}: trap: ${s}: bad trap`);
      status = 1;
      continue;
    }
    if (action === undefined) sh.traps.delete(n);
    else sh.traps.set(n, action);
  }
  return status;
});

def('exec', function* (argv, sh, io) {
  const args = argv.slice(1);
  if (args.length === 0) return 0;
  if (sh.main) {
    sh.traps.clear();
    sh.proc.pid1 = { kind: 'program', sigterm: 'ignore', exitCode: 0 };
  }
  const st = yield* runCommand(args, sh, io);
  throw new ExitSignal(st);
});

def('wait', function* (argv, sh) {
  const pids = argv.slice(1).map(Number).filter((n) => Number.isFinite(n));
  const w = yield { k: 'wait', pids: pids.length ? pids : null };
  if (w === 'interrupted') return 128 + 15;
  if (pids.length === 0) return 0;
  return sh.proc.jobStatus(pids[pids.length - 1]!) ?? 127;
});

def('eval', function* (argv, sh, io) {
  return yield* evalString(sh, argv.slice(1).join(' '), io);
});
def(['.', 'source'], function* (argv, sh, io) {
  const f = argv[1];
  if (!f) return 0;
  let src: string;
  try {
    src = sh.fs.readText(f, sh.cwd);
  } catch {
    err(io, `${sh.arg0}: .: can't open '${f}'`);
    throw new ExitSignal(2);
  }
  sh.sourceDepth++;
  try {
    return yield* evalString(sh, src, io);
  } catch (e) {
    if (isReturn(e)) return e.code;
    throw e;
  } finally {
    sh.sourceDepth--;
  }
});

def('read', function* (argv, sh, io) {
  const o = opts(argv, 'pt');
  const names = o.args.length ? o.args : ['REPLY'];
  const i = io.stdin;
  if (i.pos >= i.data.length) {
    for (const n of names) sh.set(n, '');
    return 1;
  }
  let end = i.data.indexOf('\n', i.pos);
  const eof = end < 0;
  if (eof) end = i.data.length;
  let line = i.data.slice(i.pos, end);
  i.pos = Math.min(end + 1, i.data.length);
  if (!o.f.has('r')) line = line.replace(/\\(.)/g, '$1');
  if (names.length === 1 && names[0] === 'REPLY' && o.args.length === 0) {
    sh.set('REPLY', line);
    return 0;
  }
  const ifs = sh.get('IFS') ?? ' \t\n';
  const trimmed = line.replace(new RegExp(`^[${escapeClass(ifs)}]+|[${escapeClass(ifs)}]+$`, 'g'), '');
  const fields = trimmed === '' ? [] : trimmed.split(new RegExp(`[${escapeClass(ifs)}]+`));
  names.forEach((n, k) => {
    if (k === names.length - 1) sh.set(n, fields.slice(k).join(ifs[0] ?? ' '));
    else sh.set(n, fields[k] ?? '');
  });
  return eof ? 1 : 0;
});

function escapeClass(s: string): string {
  return s.replace(/[\\\]^-]/g, '\\$&').replace(/\t/g, '\\t').replace(/\n/g, '\\n');
}

def(['command', 'type', 'which'], function* (argv, sh, io) {
  const name0 = argv[0]!;
  let args = argv.slice(1);
  if (name0 === 'command') {
    if (args[0] === '-v' || args[0] === '-V') {
      args = args.slice(1);
    } else {
      if (args.length === 0) return 0;
      return yield* runCommand(args, sh, io);
    }
  }
  let status = 0;
  for (const n of args) {
    const path = lookPath(n, sh);
    if (sh.funcs.has(n) || SHELL_ONLY.has(n)) {
      if (name0 === 'which') status = 1;
      else io.stdout.write(name0 === 'type' ? `${n} is a shell builtin\n` : `${n}\n`);
    } else if (path) io.stdout.write(name0 === 'type' ? `${n} is ${path}\n` : `${path}\n`);
    else {
      if (name0 === 'type') io.stdout.write(`${n}: not found\n`);
      status = 1;
    }
  }
  return status;
});

function lookPath(n: string, sh: Shell): string | undefined {
  if (n.includes('/')) return sh.fs.stat(n, sh.cwd) ? n : undefined;
  if (BUILTINS.has(n) && !SHELL_ONLY.has(n)) return n === 'env' || n === 'wget' ? `/usr/bin/${n}` : `/bin/${n}`;
  for (const d of (sh.get('PATH') ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    const p = `${d}/${n}`;
    if (sh.fs.stat(p)?.type === 'file') return p;
  }
  return undefined;
}

def('kill', function* (argv, sh, io) {
  // Only checks that a process exists (`kill -0 PID`); signals are delivered by the caller.
  const pids = argv.slice(1).filter((a) => /^\d+$/.test(a));
  let status = 0;
  for (const a of pids) {
    const pid = Number(a);
    const alive = pid === sh.pid || (pid > 1 && pid < sh.proc.nextPid && sh.proc.jobStatus(pid) === undefined);
    if (!alive) {
      if (!argv.includes('-0')) err(io, `${sh.arg0}: kill: can't kill pid ${a}: No such process`);
      status = 1;
    }
  }
  return status;
});

def(['sh', 'bash', 'ash', 'dash', '/bin/sh', '/bin/bash'], function* (argv, sh, io) {
  let i = 1;
  let script: string | undefined;
  const setOpts: string[] = [];
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-c') {
      script = argv[++i] ?? '';
      i++;
      break;
    }
    if (/^-[a-z]+$/.test(a) && a.includes('c')) {
      setOpts.push(a.replace('c', ''));
      script = argv[++i] ?? '';
      i++;
      break;
    }
    if (/^[-+][a-z]+$/.test(a)) setOpts.push(a);
    else break;
  }
  const child = sh.subshell();
  child.vars = new Map([...sh.vars].filter(([k]) => sh.exported.has(k)));
  child.funcs = new Map();
  if (script === undefined) {
    const file = argv[i];
    if (file === undefined) script = readAll(io.stdin);
    else {
      try {
        script = sh.fs.readText(file, sh.cwd);
      } catch {
        err(io, `${argv[0]}: can't open '${file}': No such file or directory`);
        return 127;
      }
      child.arg0 = file;
      child.params = argv.slice(i + 1);
      i = argv.length;
    }
  } else {
    child.arg0 = argv[i] ?? argv[0]!;
    child.params = argv.slice(i + 1);
  }
  for (const o of setOpts) {
    for (const c of o.slice(1)) {
      if (c === 'e') child.opts.errexit = o[0] === '-';
      if (c === 'x') child.opts.xtrace = o[0] === '-';
      if (c === 'u') child.opts.nounset = o[0] === '-';
    }
  }
  child.pid = sh.proc.nextPid++;
  const src = script;
  return yield* runSubshell(child, () => evalString(child, src, io));
});

// --- output -----------------------------------------------------------------

function echoEscapes(s: string): { text: string; stop: boolean } {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') {
      if (s[i + 1] === 'c') return { text: out, stop: true };
      const [t, n] = ansiEscape(s, i);
      out += t;
      i += n - 1;
    } else out += s[i];
  }
  return { text: out, stop: false };
}

def('echo', function* (argv, _sh, io) {
  let i = 1;
  let nl = true;
  let esc = false;
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (!/^-[neE]+$/.test(a)) break;
    for (const c of a.slice(1)) {
      if (c === 'n') nl = false;
      else if (c === 'e') esc = true;
      else esc = false;
    }
  }
  let text = argv.slice(i).join(' ');
  if (esc) {
    const r = echoEscapes(text);
    text = r.text;
    if (r.stop) nl = false;
  }
  io.stdout.write(text + (nl ? '\n' : ''));
  return 0;
});

export function shQuote(s: string): string {
  if (s !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function bashQ(s: string): string {
  if (s === '') return "''";
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return s.replace(/[^A-Za-z0-9_@%+=:,./-]/g, (c) => (c === '\n' ? "$'\\n'" : '\\' + c));
}

def('printf', function* (argv, sh, io) {
  const fmt = argv[1];
  if (fmt === undefined) {
    err(io, 'printf: usage: printf FORMAT [ARGUMENT...]');
    return 1;
  }
  const args = argv.slice(2);
  let ai = 0;
  let out = '';
  let status = 0;
  const num = (s: string | undefined): number => {
    if (s === undefined || s === '') return 0;
    if (/^['"]/.test(s)) return s.charCodeAt(1) || 0;
    const t = s.trim();
    if (/^[+-]?0x[0-9a-f]+$/i.test(t)) return parseInt(t, 16);
    if (/^[+-]?\d+$/.test(t)) return Number(t);
    if (/^[+-]?\d*\.\d+$/.test(t)) return Number(t);
    err(io, `${sh.arg0}: printf: invalid number '${s}'`);
    status = 1;
    return parseInt(t) || 0;
  };
  do {
    for (let i = 0; i < fmt.length; i++) {
      const c = fmt[i]!;
      if (c === '\\') {
        const [t, n] = ansiEscape(fmt, i);
        out += t;
        i += n - 1;
        continue;
      }
      if (c !== '%') {
        out += c;
        continue;
      }
      const m = /^%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?([sdiouxXcfeEgGqb%])/.exec(fmt.slice(i));
      if (!m) {
        out += c;
        continue;
      }
      i += m[0].length - 1;
      const flags = m[1] ?? '';
      let width = m[2] === '*' ? num(args[ai++]) : m[2] ? Number(m[2]) : 0;
      const prec = m[3] === '*' ? num(args[ai++]) : m[3] !== undefined ? Number(m[3]) : undefined;
      const conv = m[4]!;
      if (conv === '%') {
        out += '%';
        continue;
      }
      const arg = args[ai++];
      let s: string;
      switch (conv) {
        case 's':
          s = arg ?? '';
          if (prec !== undefined) s = s.slice(0, prec);
          break;
        case 'b':
          s = echoEscapes(arg ?? '').text;
          break;
        case 'q':
          s = bashQ(arg ?? '');
          break;
        case 'c':
          s = (arg ?? '').slice(0, 1);
          break;
        case 'd':
        case 'i':
        case 'u': {
          const n = Math.trunc(num(arg));
          s = String(Math.abs(n));
          if (prec !== undefined) s = s.padStart(prec, '0');
          s = (n < 0 ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '') + s;
          break;
        }
        case 'o':
          s = Math.trunc(num(arg)).toString(8);
          break;
        case 'x':
          s = Math.trunc(num(arg)).toString(16);
          break;
        case 'X':
          s = Math.trunc(num(arg)).toString(16).toUpperCase();
          break;
        case 'f':
        case 'F':
          s = num(arg).toFixed(prec ?? 6);
          break;
        case 'e':
        case 'E':
          s = num(arg).toExponential(prec ?? 6).replace(/e([+-])(\d)$/, 'e$10$2');
          if (conv === 'E') s = s.toUpperCase();
          break;
        default:
          s = String(num(arg));
      }
      if (width < 0) width = -width;
      if (s.length < width) {
        if (flags.includes('-')) s = s.padEnd(width);
        else if (flags.includes('0') && /[diuoxXfeE]/.test(conv)) {
          const sign = /^[+\- ]/.test(s) ? s[0]! : '';
          s = sign + s.slice(sign.length).padStart(width - sign.length, '0');
        } else s = s.padStart(width);
      }
      out += s;
    }
  } while (ai < args.length && ai > 0);
  io.stdout.write(out);
  return status;
});

def(['env', 'printenv'], function* (argv, sh, io) {
  if (argv[0] === 'printenv') {
    const env = sh.env();
    if (argv.length === 1) {
      for (const [k, v] of Object.entries(env)) io.stdout.write(`${k}=${v}\n`);
      return 0;
    }
    let st = 0;
    for (const n of argv.slice(1)) {
      if (n in env) io.stdout.write(env[n] + '\n');
      else st = 1;
    }
    return st;
  }
  let env: Record<string, string> = sh.env();
  let i = 1;
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-i' || a === '-') env = {};
    else if (a === '-u') delete env[argv[++i] ?? ''];
    else if (/^[^=]+=/.test(a)) {
      const eq = a.indexOf('=');
      delete env[a.slice(0, eq)];
      env[a.slice(0, eq)] = a.slice(eq + 1);
    } else break;
  }
  if (i >= argv.length) {
    for (const [k, v] of Object.entries(env)) io.stdout.write(`${k}=${v}\n`);
    return 0;
  }
  const child = sh.subshell();
  child.vars = new Map(Object.entries(env));
  child.exported = new Set(Object.keys(env));
  child.funcs = new Map();
  const cmd = argv.slice(i);
  return yield* runSubshell(child, () => runCommand(cmd, child, io));
});

def('hostname', function* (argv, sh, io) {
  if (argv[1] === '-i' || argv[1] === '-I') {
    const hosts = (() => {
      try {
        return sh.fs.readText('/etc/hosts');
      } catch {
        return '';
      }
    })();
    const line = lines(hosts).find((l) => l.split(/\s+/).slice(1).includes(sh.proc.ctx.hostname));
    io.stdout.write((line?.split(/\s+/)[0] ?? '127.0.0.1') + '\n');
    return 0;
  }
  io.stdout.write(sh.proc.ctx.hostname + '\n');
  return 0;
});

def('date', function* (argv, sh, io) {
  let fmt: string | undefined;
  let ms = sh.proc.now;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('+')) fmt = a.slice(1);
    else if (a === '-u' || a === '--utc') continue;
    else if (a === '-R') fmt = '%a, %d %b %Y %H:%M:%S +0000';
    else if (a === '-I' || a === '--iso-8601') fmt = '%Y-%m-%d';
    else if (a === '-d' || a === '--date') {
      const d = argv[++i] ?? '';
      if (d.startsWith('@')) ms = Number(d.slice(1)) * 1000;
      else {
        const t = Date.parse(d);
        if (Number.isNaN(t)) {
          err(io, `date: invalid date '${d}'`);
          return 1;
        }
        ms = t;
      }
    } else {
      err(io, `date: invalid date '${a}'`);
      return 1;
    }
  }
  io.stdout.write(formatDate(ms, fmt) + '\n');
  return 0;
});

def('pwd', function* (_argv, sh, io) {
  io.stdout.write(sh.cwd + '\n');
  return 0;
});

def('cd', function* (argv, sh, io) {
  let target = argv[1] ?? sh.get('HOME') ?? '/';
  if (target === '-') {
    target = sh.get('OLDPWD') ?? sh.cwd;
    io.stdout.write(target + '\n');
  }
  let real: string;
  try {
    const n = sh.fs.stat(target, sh.cwd);
    if (!n) throw new FsError('ENOENT', target);
    if (n.type !== 'dir') throw new FsError('ENOTDIR', target);
    real = joinPath(splitPath(target, sh.cwd));
  } catch (e) {
    err(io, `${sh.arg0}: cd: can't cd to ${target}: ${errorText(e)}`);
    return 2;
  }
  sh.set('OLDPWD', sh.cwd);
  sh.cwd = real;
  sh.set('PWD', real);
  return 0;
});

def(['id', 'whoami'], function* (argv, sh, io) {
  const u = sh.proc.ctx.user;
  if (!u || u.uid === 0) {
    if (argv[0] === 'whoami') io.stdout.write('root\n');
    else {
      const o = opts(argv);
      if (o.f.has('u') || o.f.has('g') || o.f.has('G')) io.stdout.write(o.f.has('n') ? 'root\n' : `${o.f.has('G') && u ? [0, ...u.groups].join(' ') : '0'}\n`);
      else io.stdout.write('uid=0(root) gid=0(root) groups=0(root),1(bin),2(daemon),3(sys),4(adm),6(disk),10(wheel),11(floppy),20(dialout),26(tape),27(video)\n');
    }
    return 0;
  }
  // A user the image's /etc/passwd does not name (busybox: 65534 is nobody).
  const name = (id: number, kind: 'user' | 'group') => (id === 0 ? 'root' : id === 65534 ? (kind === 'user' ? 'nobody' : 'nogroup') : undefined);
  const fmt = (id: number, kind: 'user' | 'group') => (name(id, kind) ? `${id}(${name(id, kind)})` : String(id));
  if (argv[0] === 'whoami') {
    const n = name(u.uid, 'user');
    if (n) io.stdout.write(`${n}\n`);
    else {
      io.stderr.write(`whoami: unknown uid ${u.uid}\n`);
      return 1;
    }
    return 0;
  }
  const o = opts(argv);
  if (o.f.has('u')) io.stdout.write(`${o.f.has('n') ? (name(u.uid, 'user') ?? u.uid) : u.uid}\n`);
  else if (o.f.has('g')) io.stdout.write(`${o.f.has('n') ? (name(u.gid, 'group') ?? u.gid) : u.gid}\n`);
  else if (o.f.has('G')) io.stdout.write(`${[u.gid, ...u.groups.filter((g) => g !== u.gid)].join(' ')}\n`);
  else {
    const groups = [u.gid, ...u.groups.filter((g) => g !== u.gid)];
    io.stdout.write(`uid=${fmt(u.uid, 'user')} gid=${fmt(u.gid, 'group')}${groups.length > 0 ? ` groups=${groups.map((g) => fmt(g, 'group')).join(',')}` : ''}\n`);
  }
  return 0;
});

def('uname', function* (argv, sh, io) {
  const u = sh.proc.ctx.uname;
  const o = opts(argv);
  const parts: string[] = [];
  const all = o.f.has('a');
  if (all || o.f.has('s') || o.f.size === 0) parts.push(u.sysname);
  if (all || o.f.has('n')) parts.push(sh.proc.ctx.hostname);
  if (all || o.f.has('r')) parts.push(u.release);
  if (all || o.f.has('v')) parts.push(u.version);
  if (all || o.f.has('m')) parts.push(u.machine);
  if (all || o.f.has('o')) parts.push('GNU/Linux');
  io.stdout.write(parts.join(' ') + '\n');
  return 0;
});

def('nproc', function* (_argv, sh, io) {
  io.stdout.write(`${sh.proc.ctx.nproc}\n`);
  return 0;
});

def('sleep', function* (argv, sh, io) {
  const args = argv.slice(1);
  if (args.length === 0) {
    err(io, 'sleep: missing operand');
    return 1;
  }
  let total = 0;
  for (const a of args) {
    if (a === 'infinity' || a === 'inf') return yield* forever();
    const d = parseDuration(a);
    if (d === undefined) {
      err(io, `sleep: invalid number '${a}'`);
      return 1;
    }
    total += d;
  }
  return (yield* sleepUntil(sh, sh.proc.now + total)) ? 0 : 128 + 15;
});

def('yes', function* (argv, _sh, io) {
  // Endless output: write a bounded amount, then run until stopped.
  io.stdout.write(`${argv.slice(1).join(' ') || 'y'}\n`.repeat(1000));
  return yield* forever();
});

// --- files ------------------------------------------------------------------

def('cat', function* (argv, sh, io) {
  const o = opts(argv);
  const r = readInputs('cat', o.args, sh, io);
  let text = r.texts.map((t) => t.text).join('');
  if (o.f.has('n')) text = lines(text).map((l, i) => `${String(i + 1).padStart(6)}\t${l}\n`).join('');
  io.stdout.write(text);
  return r.failed ? 1 : 0;
});

function lsDate(ms: number, now: number): string {
  const d = new Date(ms);
  const recent = Math.abs(now - ms) < 182 * 86400000;
  return `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2)} ${recent ? `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}` : String(d.getUTCFullYear()).padStart(5)}`;
}

function lsLong(name: string, n: FsNode, sh: Shell): string {
  const nlink = n.type === 'dir' ? 2 + [...n.entries.values()].filter((e) => e.type === 'dir').length : 1;
  const size = n.type === 'dev' ? '  1,   3' : String(nodeSize(n)).padStart(9);
  const link = n.type === 'symlink' ? ` -> ${n.target}` : '';
  return `${modeString(n)} ${String(nlink).padStart(4)} root     root     ${size} ${lsDate(n.mtime, sh.proc.now)} ${name}${link}\n`;
}

def('ls', function* (argv, sh, io) {
  const o = opts(argv);
  const long = o.f.has('l') || o.f.has('n');
  const all = o.f.has('a');
  const almost = o.f.has('A');
  const dirOnly = o.f.has('d');
  const classify = o.f.has('F') || o.f.has('p');
  const args = o.args.length ? o.args : ['.'];
  let status = 0;
  const files: string[] = [];
  const dirs: string[] = [];
  for (const a of args) {
    const ln = sh.fs.stat(a, sh.cwd, false);
    const n = sh.fs.stat(a, sh.cwd);
    if (!ln) {
      err(io, `ls: ${a}: No such file or directory`);
      status = 1;
      continue;
    }
    if (n?.type === 'dir' && !dirOnly && !(long && ln.type === 'symlink')) dirs.push(a);
    else files.push(a);
  }
  const suffix = (n: FsNode): string => (!classify ? '' : n.type === 'dir' ? '/' : n.type === 'symlink' && o.f.has('F') ? '@' : '');
  for (const f of files.sort()) {
    const n = sh.fs.stat(f, sh.cwd, false)!;
    io.stdout.write(long ? lsLong(f, n, sh) : f + suffix(n) + '\n');
  }
  const sorted = dirs.sort();
  sorted.forEach((d, k) => {
    if (args.length > 1) io.stdout.write(`${files.length > 0 || k > 0 ? '\n' : ''}${d}:\n`);
    let names = sh.fs.readdir(d, sh.cwd);
    if (!all && !almost) names = names.filter((x) => !x.startsWith('.'));
    const entries: Array<[string, FsNode]> = names.map((x) => [x, sh.fs.entry(d, x, sh.cwd)!]);
    if (all) {
      const self = sh.fs.stat(d, sh.cwd)!;
      const parent = sh.fs.stat(joinPath([...splitPath(d, sh.cwd), '..']), '/') ?? self;
      entries.unshift(['..', parent]);
      entries.unshift(['.', self]);
    }
    if (o.f.has('r')) entries.reverse();
    if (long) {
      const blocks = entries.reduce((s, [, n]) => s + (n.type === 'file' ? Math.ceil(n.data.length / 4096) * 4 : n.type === 'dir' ? 0 : 0), 0);
      io.stdout.write(`total ${blocks}\n`);
      for (const [x, n] of entries) io.stdout.write(lsLong(x, n, sh));
    } else for (const [x, n] of entries) io.stdout.write(x + suffix(n) + '\n');
  });
  return status;
});

def('touch', function* (argv, sh, io) {
  const o = opts(argv, 'dtr');
  let status = 0;
  for (const f of o.args) {
    try {
      if (o.f.has('c') && !sh.fs.exists(f, sh.cwd)) continue;
      sh.fs.touch(f, sh.cwd);
    } catch (e) {
      err(io, `touch: ${f}: ${errorText(e)}`);
      status = 1;
    }
  }
  return status;
});

def('rm', function* (argv, sh, io) {
  const o = opts(argv);
  const force = o.f.has('f');
  const rec = o.f.has('r') || o.f.has('R');
  let status = 0;
  if (o.args.length === 0 && !force) {
    err(io, 'rm: missing operand');
    return 1;
  }
  for (const f of o.args) {
    try {
      sh.fs.remove(f, { recursive: rec, cwd: sh.cwd });
      if (o.f.has('v')) io.stdout.write(`removed '${f}'\n`);
    } catch (e) {
      if (force && e instanceof FsError && e.code === 'ENOENT') continue;
      if (e instanceof FsError && e.code === 'EISDIR') err(io, `rm: '${f}' is a directory`);
      else err(io, `rm: can't remove '${f}': ${errorText(e)}`);
      status = 1;
    }
  }
  return status;
});

def('rmdir', function* (argv, sh, io) {
  const o = opts(argv);
  let status = 0;
  for (const f of o.args) {
    try {
      sh.fs.remove(f, { dirOnly: true, cwd: sh.cwd });
    } catch (e) {
      err(io, `rmdir: '${f}': ${errorText(e)}`);
      status = 1;
    }
  }
  return status;
});

def('mkdir', function* (argv, sh, io) {
  const o = opts(argv, 'm');
  const mode = o.v.has('m') ? parseInt(o.v.get('m')!, 8) : 0o755;
  let status = 0;
  for (const d of o.args) {
    try {
      if (o.f.has('p')) sh.fs.mkdirp(d, mode, false, sh.cwd);
      else sh.fs.mkdir(d, mode, sh.cwd);
      if (o.f.has('v')) io.stdout.write(`mkdir: created directory '${d}'\n`);
    } catch (e) {
      err(io, `mkdir: can't create directory '${d}': ${errorText(e)}`);
      status = 1;
    }
  }
  return status;
});

def('mv', function* (argv, sh, io) {
  const o = opts(argv);
  if (o.args.length < 2) {
    err(io, 'mv: missing destination file operand');
    return 1;
  }
  const dest = o.args[o.args.length - 1]!;
  let status = 0;
  for (const src of o.args.slice(0, -1)) {
    try {
      const isDir = sh.fs.stat(dest, sh.cwd)?.type === 'dir';
      sh.fs.rename(src, dest, sh.cwd);
      if (o.f.has('v')) io.stdout.write(`renamed '${src}' -> '${isDir ? `${dest.replace(/\/+$/, '')}/${basename(src)}` : dest}'\n`);
    } catch (e) {
      err(io, `mv: can't rename '${src}': ${errorText(e)}`);
      status = 1;
    }
  }
  return status;
});

def('cp', function* (argv, sh, io) {
  const o = opts(argv);
  const rec = o.f.has('r') || o.f.has('R') || o.f.has('a');
  if (o.args.length < 2) {
    err(io, 'cp: missing destination file operand');
    return 1;
  }
  const dest = o.args[o.args.length - 1]!;
  let status = 0;
  const fs = sh.fs;
  for (const src of o.args.slice(0, -1)) {
    const n = fs.stat(src, sh.cwd);
    if (!n) {
      err(io, `cp: can't stat '${src}': No such file or directory`);
      status = 1;
      continue;
    }
    const destIsDir = fs.stat(dest, sh.cwd)?.type === 'dir';
    const target = destIsDir ? `${dest.replace(/\/+$/, '')}/${basename(src)}` : dest;
    try {
      if (n.type === 'dir') {
        if (!rec) {
          err(io, `cp: omitting directory '${src}'`);
          status = 1;
          continue;
        }
        const r = fs.resolve(target, sh.cwd, true);
        if (r.readOnly) throw new FsError('EROFS', target);
        if (r.node && r.node.type !== 'dir') throw new FsError('ENOTDIR', target);
        r.parent.entries.set(r.name, cloneNode(n, fs.now));
      } else {
        fs.writeFile(target, n.type === 'file' ? Buffer.from(n.data) : '', { cwd: sh.cwd, mode: n.mode });
      }
      if (o.f.has('v')) io.stdout.write(`'${src}' -> '${target}'\n`);
    } catch (e) {
      err(io, `cp: can't create '${target}': ${errorText(e)}`);
      status = 1;
    }
  }
  return status;
});

def('ln', function* (argv, sh, io) {
  const o = opts(argv);
  const [target, link0] = o.args;
  if (target === undefined) {
    err(io, 'ln: missing operand');
    return 1;
  }
  let link = link0 ?? basename(target);
  if (sh.fs.stat(link, sh.cwd)?.type === 'dir' && !o.f.has('n')) link = `${link}/${basename(target)}`;
  try {
    if (o.f.has('f') && sh.fs.stat(link, sh.cwd, false)) sh.fs.remove(link, { cwd: sh.cwd });
    if (o.f.has('s')) sh.fs.symlink(target, link, sh.cwd);
    else {
      const n = sh.fs.stat(target, sh.cwd);
      if (!n) throw new FsError('ENOENT', target);
      const r = sh.fs.resolve(link, sh.cwd, false);
      if (r.node) throw new FsError('EEXIST', link);
      if (r.readOnly) throw new FsError('EROFS', link);
      r.parent.entries.set(r.name, n);
    }
  } catch (e) {
    err(io, `ln: ${link}: ${errorText(e)}`);
    return 1;
  }
  return 0;
});

def('chmod', function* (argv, sh, io) {
  const o = opts(argv);
  // symbolic modes like -w look like options
  let args = o.args;
  if (argv[1] && /^[-+=][rwxXst]+$/.test(argv[1])) args = argv.slice(1);
  const [mode, ...files] = args;
  if (!mode || files.length === 0) {
    err(io, 'chmod: missing operand');
    return 1;
  }
  let status = 0;
  for (const f of files) {
    const n = sh.fs.stat(f, sh.cwd);
    if (!n) {
      err(io, `chmod: ${f}: No such file or directory`);
      status = 1;
      continue;
    }
    const m = applyMode(n.mode, mode, n.type === 'dir');
    if (m === undefined) {
      err(io, `chmod: invalid mode '${mode}'`);
      return 1;
    }
    try {
      sh.fs.chmod(f, m, sh.cwd);
    } catch (e) {
      err(io, `chmod: ${f}: ${errorText(e)}`);
      status = 1;
    }
  }
  return status;
});

export function applyMode(cur: number, spec: string, isDir: boolean): number | undefined {
  if (/^[0-7]+$/.test(spec)) return parseInt(spec, 8);
  let m = cur;
  for (const clause of spec.split(',')) {
    const x = /^([ugoa]*)([-+=])([rwxXst]*)$/.exec(clause);
    if (!x) return undefined;
    const who = x[1] || 'a';
    let bits = 0;
    for (const c of x[3]!) {
      if (c === 'r') bits |= 0o444;
      if (c === 'w') bits |= 0o222;
      if (c === 'x' || (c === 'X' && (isDir || (cur & 0o111) !== 0))) bits |= 0o111;
      if (c === 's') bits |= 0o6000;
      if (c === 't') bits |= 0o1000;
    }
    let mask = 0;
    if (who.includes('u') || who.includes('a')) mask |= 0o4700;
    if (who.includes('g') || who.includes('a')) mask |= 0o2070;
    if (who.includes('o') || who.includes('a')) mask |= 0o1007;
    bits &= mask;
    if (x[2] === '+') m |= bits;
    else if (x[2] === '-') m &= ~bits;
    else m = (m & ~mask) | bits;
  }
  return m;
}

def(['chown', 'chgrp', 'sync', 'umask', 'ulimit', 'hash', 'alias', 'unalias', 'jobs'], function* () {
  return 0;
});

def(['readlink', 'realpath'], function* (argv, sh, io) {
  const o = opts(argv);
  const f = o.args[0];
  if (!f) return 1;
  try {
    if (argv[0] === 'realpath' || o.f.has('f') || o.f.has('e') || o.f.has('m')) io.stdout.write(sh.fs.realpath(f, sh.cwd) + '\n');
    else io.stdout.write(sh.fs.readlink(f, sh.cwd) + '\n');
    return 0;
  } catch (e) {
    if (argv[0] === 'realpath') err(io, `realpath: ${f}: ${errorText(e)}`);
    return 1;
  }
});

def('stat', function* (argv, sh, io) {
  const o = opts(argv, 'c');
  const fmt = o.v.get('c');
  let status = 0;
  for (const f of o.args) {
    const n = sh.fs.stat(f, sh.cwd, o.f.has('L'));
    if (!n) {
      err(io, `stat: can't stat '${f}': No such file or directory`);
      status = 1;
      continue;
    }
    const type = n.type === 'dir' ? 'directory' : n.type === 'symlink' ? 'symbolic link' : n.type === 'dev' ? 'character special file' : n.type === 'file' && n.data.length === 0 ? 'regular empty file' : 'regular file';
    if (fmt !== undefined) {
      const s = fmt.replace(/%([a-zA-Z%])/g, (_m, c: string) => {
        switch (c) {
          case 's': return String(nodeSize(n));
          case 'a': return (n.mode & 0o7777).toString(8);
          case 'A': return modeString(n);
          case 'n': return f;
          case 'N': return n.type === 'symlink' ? `'${f}' -> '${n.target}'` : `'${f}'`;
          case 'F': return type;
          case 'U': case 'G': return 'root';
          case 'u': case 'g': return '0';
          case 'Y': case 'Z': case 'X': return String(Math.floor(n.mtime / 1000));
          case 'y': return formatDate(n.mtime, '%Y-%m-%d %H:%M:%S.%N +0000');
          case 'h': return String(n.type === 'dir' ? 2 : 1);
          case '%': return '%';
          default: return '?';
        }
      });
      io.stdout.write(s + '\n');
    } else {
      io.stdout.write(`  File: ${n.type === 'symlink' ? `'${f}' -> '${n.target}'` : `'${f}'`}\n  Size: ${nodeSize(n)}\t\tBlocks: ${Math.ceil(nodeSize(n) / 512)}\tIO Block: 4096\t${type}\nAccess: (${(n.mode & 0o7777).toString(8).padStart(4, '0')}/${modeString(n)})  Uid: (    0/    root)   Gid: (    0/    root)\nModify: ${formatDate(n.mtime, '%Y-%m-%d %H:%M:%S.%N +0000')}\n`);
    }
  }
  return status;
});

def('basename', function* (argv, _sh, io) {
  const [p, suffix] = argv.slice(1);
  if (p === undefined) {
    err(io, 'basename: missing operand');
    return 1;
  }
  let b = basename(p);
  if (suffix && b.endsWith(suffix) && b !== suffix) b = b.slice(0, -suffix.length);
  io.stdout.write(b + '\n');
  return 0;
});
def('dirname', function* (argv, _sh, io) {
  const p = argv[1];
  if (p === undefined) {
    err(io, 'dirname: missing operand');
    return 1;
  }
  io.stdout.write(dirname(p) + '\n');
  return 0;
});

def('tee', function* (argv, sh, io) {
  const o = opts(argv);
  const data = readAll(io.stdin);
  let status = 0;
  for (const f of o.args) {
    try {
      sh.fs.writeFile(f, data, { append: o.f.has('a'), cwd: sh.cwd });
    } catch (e) {
      err(io, `tee: ${f}: ${errorText(e)}`);
      status = 1;
    }
  }
  io.stdout.write(data);
  return status;
});

// --- text -----------------------------------------------------------------------

def(['head', 'tail'], function* (argv, sh, io) {
  const name = argv[0]!;
  // -5 style
  const norm = argv.map((a, i) => (i > 0 && /^-\d+$/.test(a) ? `-n${a.slice(1)}` : a));
  const o = opts(norm, 'nc');
  const nSpec = o.v.get('n') ?? '10';
  const cSpec = o.v.get('c');
  const r = readInputs(name, o.args, sh, io);
  const multi = r.texts.length > 1;
  r.texts.forEach((t, k) => {
    if (multi) io.stdout.write(`${k > 0 ? '\n' : ''}==> ${t.name === '-' ? 'standard input' : t.name} <==\n`);
    if (cSpec !== undefined) {
      const c = Number(cSpec.replace(/^\+/, ''));
      io.stdout.write(name === 'head' ? t.text.slice(0, c) : cSpec.startsWith('+') ? t.text.slice(c - 1) : t.text.slice(Math.max(0, t.text.length - c)));
      return;
    }
    const ls = lines(t.text);
    const trailingNl = t.text.endsWith('\n');
    let sel: string[];
    if (name === 'head') {
      const n = Number(nSpec);
      sel = n < 0 ? ls.slice(0, Math.max(0, ls.length + n)) : ls.slice(0, n);
    } else if (nSpec.startsWith('+')) sel = ls.slice(Math.max(0, Number(nSpec.slice(1)) - 1));
    else {
      const n = Math.abs(Number(nSpec));
      sel = n === 0 ? [] : ls.slice(-n);
    }
    if (sel.length === 0) return;
    const last = sel.length === ls.length - (name === 'head' ? 0 : 0) && !trailingNl && sel[sel.length - 1] === ls[ls.length - 1];
    io.stdout.write(sel.join('\n') + (last ? '' : '\n'));
  });
  if (name === 'tail' && (o.f.has('f') || o.f.has('F') || o.f.has('--follow'))) return yield* forever();
  return r.failed ? 1 : 0;
});

def('wc', function* (argv, sh, io) {
  const o = opts(argv);
  const r = readInputs('wc', o.args, sh, io);
  let cols: string[] = [];
  for (const c of ['l', 'w', 'c', 'm']) if (o.f.has(c)) cols.push(c);
  if (cols.length === 0) cols = ['l', 'w', 'c'];
  const count = (t: string): Record<string, number> => ({
    l: (t.match(/\n/g) ?? []).length,
    w: t.split(/\s+/).filter((x) => x !== '').length,
    c: Buffer.byteLength(t),
    m: [...t].length,
  });
  const rows = r.texts.map((t) => ({ name: t.name, c: count(t.text) }));
  if (rows.length > 1) {
    const tot: Record<string, number> = { l: 0, w: 0, c: 0, m: 0 };
    for (const row of rows) for (const k of Object.keys(tot)) tot[k]! += row.c[k]!;
    rows.push({ name: 'total', c: tot });
  }
  for (const row of rows) {
    const nums = cols.map((k) => String(row.c[k]));
    const body = cols.length === 1 && row.name === '-' ? nums[0]! : nums.map((n) => (cols.length === 1 ? n : n.padStart(7))).join(' ');
    io.stdout.write(body + (row.name === '-' ? '' : ` ${row.name}`) + '\n');
  }
  return r.failed ? 1 : 0;
});

/** BRE (grep, sed) to JS regex source. */
export function breToJs(re: string): string {
  let out = '';
  for (let i = 0; i < re.length; i++) {
    const c = re[i]!;
    if (c === '\\') {
      const n = re[i + 1] ?? '';
      i++;
      if ('(){}|+?'.includes(n)) out += n;
      else if (/[1-9]/.test(n)) out += '\\' + n;
      else if (n === '<' || n === '>') out += '\\b';
      else if (n === 'w' || n === 'W' || n === 's' || n === 'S' || n === 'b' || n === 'B') out += '\\' + n;
      else if (n === 'n') out += '\\n';
      else if (n === 't') out += '\\t';
      else out += '\\' + n;
    } else if ('(){}|+?'.includes(c)) out += '\\' + c;
    else if (c === '[') {
      const end = findBracketEnd(re, i);
      out += bracketToJs(re.slice(i, end + 1));
      i = end;
    } else if (c === '*' && (out === '' || out === '^')) out += '\\*';
    else out += c;
  }
  return out;
}

/** ERE to JS regex source (bracket expressions and POSIX classes). */
export function ereToJs(re: string): string {
  let out = '';
  for (let i = 0; i < re.length; i++) {
    const c = re[i]!;
    if (c === '\\') {
      const n = re[i + 1] ?? '';
      out += n === '<' || n === '>' ? '\\b' : '\\' + n;
      i++;
    } else if (c === '[') {
      const end = findBracketEnd(re, i);
      out += bracketToJs(re.slice(i, end + 1));
      i = end;
    } else if (c === '{' && !/^\{\d*(,\d*)?\}/.test(re.slice(i))) out += '\\{';
    else out += c;
  }
  return out;
}

function findBracketEnd(re: string, i: number): number {
  let j = i + 1;
  if (re[j] === '^') j++;
  if (re[j] === ']') j++;
  for (; j < re.length; j++) {
    if (re[j] === '[' && re[j + 1] === ':') {
      const e = re.indexOf(':]', j + 2);
      if (e > 0) {
        j = e + 1;
        continue;
      }
    }
    if (re[j] === ']') return j;
  }
  return re.length - 1;
}

function bracketToJs(b: string): string {
  if (!b.endsWith(']') || b.length < 2) return b.replace(/[[\]]/g, '\\$&');
  let body = b.slice(1, -1);
  let neg = '';
  if (body.startsWith('^')) {
    neg = '^';
    body = body.slice(1);
  }
  const classes: Record<string, string> = { alpha: 'a-zA-Z', digit: '0-9', alnum: 'a-zA-Z0-9', upper: 'A-Z', lower: 'a-z', space: '\\s', xdigit: '0-9a-fA-F', punct: '!-\\/:-@\\[-`{-~', blank: ' \\t', print: ' -~', graph: '!-~', cntrl: '\\x00-\\x1f' };
  let out = '';
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '[' && body[i + 1] === ':') {
      const e = body.indexOf(':]', i + 2);
      if (e > 0) {
        out += classes[body.slice(i + 2, e)] ?? '';
        i = e + 1;
        continue;
      }
    }
    const c = body[i]!;
    out += c === '\\' || c === ']' || c === '[' ? '\\' + c : c;
  }
  return `[${neg}${out}]`;
}

def(['grep', 'egrep', 'fgrep'], function* (argv, sh, io) {
  const o = opts(argv, 'emABC');
  const patterns: string[] = [];
  const eArgs: string[] = [];
  for (let i = 1; i < argv.length; i++) if (argv[i] === '-e' && argv[i + 1] !== undefined) eArgs.push(argv[++i]!);
  if (o.v.has('e')) patterns.push(...(eArgs.length ? eArgs : [o.v.get('e')!]));
  let files = o.args;
  if (patterns.length === 0) {
    if (files.length === 0) {
      err(io, 'Usage: grep [-HhnlLoqvsrRiwFE] [-m N] [-A|B|C N] { PATTERN | -e PATTERN... | -f FILE... } [FILE]...');
      return 2;
    }
    patterns.push(files[0]!);
    files = files.slice(1);
  }
  const fixed = o.f.has('F') || argv[0] === 'fgrep';
  const ere = o.f.has('E') || argv[0] === 'egrep';
  const flags = o.f.has('i') ? 'i' : '';
  let rx: RegExp;
  try {
    const src = patterns
      .flatMap((p) => p.split('\n'))
      .map((p) => (fixed ? p.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&') : ere ? ereToJs(p) : breToJs(p)))
      .map((p) => (o.f.has('x') ? `^(?:${p})$` : o.f.has('w') ? `(?<![A-Za-z0-9_])(?:${p})(?![A-Za-z0-9_])` : p))
      .join('|');
    rx = new RegExp(src, flags);
  } catch {
    err(io, `grep: bad regex '${patterns[0]}'`);
    return 2;
  }
  // -s: no messages about missing files
  const r = readInputs('grep', files, sh, o.f.has('s') ? { ...io, stderr: { write: () => {} } } : io, 'plain');
  const multi = r.texts.length > 1 && !o.f.has('h');
  const max = o.v.has('m') ? Number(o.v.get('m')) : Infinity;
  let any = false;
  for (const t of r.texts) {
    let count = 0;
    const name = t.name === '-' ? '(standard input)' : t.name;
    const ls = lines(t.text);
    for (let k = 0; k < ls.length && count < max; k++) {
      const l = ls[k]!;
      const hit = rx.test(l) !== o.f.has('v');
      if (!hit) continue;
      count++;
      any = true;
      if (o.f.has('q')) return 0;
      if (o.f.has('c') || o.f.has('l') || o.f.has('L')) continue;
      const prefix = (multi ? `${name}:` : '') + (o.f.has('n') ? `${k + 1}:` : '');
      if (o.f.has('o') && !o.f.has('v')) {
        const g = new RegExp(rx.source, flags + 'g');
        for (const m of l.matchAll(g)) if (m[0] !== '') io.stdout.write(prefix + m[0] + '\n');
      } else io.stdout.write(prefix + l + '\n');
    }
    if (o.f.has('c')) io.stdout.write((multi ? `${name}:` : '') + count + '\n');
    if (o.f.has('l') && count > 0) io.stdout.write(name + '\n');
    if (o.f.has('L') && count === 0) io.stdout.write(name + '\n');
  }
  if (r.failed) return 2;
  return any ? 0 : 1;
});

interface SedCmd {
  addr?: { kind: 'line'; n: number } | { kind: 'last' } | { kind: 're'; re: RegExp };
  cmd: string;
  re?: RegExp;
  rep?: string;
  global?: boolean;
  print?: boolean;
  text?: string;
}

function parseSed(script: string, ere: boolean): SedCmd[] | string {
  const cmds: SedCmd[] = [];
  let i = 0;
  const toRe = (s: string, f = ''): RegExp => new RegExp(ere ? ereToJs(s) : breToJs(s), f);
  const readDelim = (d: string): string => {
    let s = '';
    while (i < script.length && script[i] !== d) {
      if (script[i] === '\\' && script[i + 1] === d) {
        s += d;
        i += 2;
        continue;
      }
      if (script[i] === '\\') {
        s += script[i]! + (script[i + 1] ?? '');
        i += 2;
        continue;
      }
      s += script[i++];
    }
    i++;
    return s;
  };
  while (i < script.length) {
    while (i < script.length && /[\s;]/.test(script[i]!)) i++;
    if (i >= script.length) break;
    const c: SedCmd = { cmd: '' };
    if (/\d/.test(script[i]!)) {
      let n = '';
      while (/\d/.test(script[i] ?? '')) n += script[i++];
      c.addr = { kind: 'line', n: Number(n) };
    } else if (script[i] === '$') {
      i++;
      c.addr = { kind: 'last' };
    } else if (script[i] === '/') {
      i++;
      c.addr = { kind: 're', re: toRe(readDelim('/')) };
    }
    const k = script[i++];
    if (k === 's') {
      const d = script[i++]!;
      const re = readDelim(d);
      const rep = readDelim(d);
      let fl = '';
      while (/[gpiI0-9]/.test(script[i] ?? '')) fl += script[i++];
      c.cmd = 's';
      c.re = toRe(re, (fl.includes('g') ? 'g' : '') + (/[iI]/.test(fl) ? 'i' : ''));
      c.rep = rep;
      c.global = fl.includes('g');
      c.print = fl.includes('p');
    } else if (k === 'd' || k === 'p' || k === 'q' || k === '=') c.cmd = k;
    else if (k === 'a' || k === 'i' || k === 'c') {
      c.cmd = k;
      let t = '';
      while (i < script.length && script[i] !== '\n') t += script[i++];
      c.text = t.replace(/^\\?\s*/, '');
    } else return `sed: unsupported command ${k ?? ''}`;
    cmds.push(c);
  }
  return cmds;
}

function sedReplace(line: string, c: SedCmd): string {
  return line.replace(c.re!, (...m: unknown[]) => {
    const groups = m.slice(0, -2).filter((x) => typeof x === 'string' || x === undefined) as Array<string | undefined>;
    let out = '';
    const rep = c.rep!;
    for (let i = 0; i < rep.length; i++) {
      const ch = rep[i]!;
      if (ch === '\\' && i + 1 < rep.length) {
        const n = rep[++i]!;
        if (/\d/.test(n)) out += groups[Number(n)] ?? '';
        else if (n === 'n') out += '\n';
        else if (n === 't') out += '\t';
        else out += n;
      } else if (ch === '&') out += groups[0] ?? '';
      else out += ch;
    }
    return out;
  });
}

def('sed', function* (argv, sh, io) {
  const o = opts(argv, 'ef');
  const scripts: string[] = [];
  for (let i = 1; i < argv.length; i++) if (argv[i] === '-e') scripts.push(argv[++i] ?? '');
  let files = o.args;
  if (o.v.has('e')) {
    if (scripts.length === 0) scripts.push(o.v.get('e')!);
  } else {
    if (files.length === 0) {
      err(io, 'Usage: sed [-inrE] [-f FILE]... [-e CMD]... [FILE]...');
      return 1;
    }
    scripts.push(files[0]!);
    files = files.slice(1);
  }
  const cmds = parseSed(scripts.join('\n'), o.f.has('E') || o.f.has('r'));
  if (typeof cmds === 'string') {
    err(io, cmds);
    return 1;
  }
  const quiet = o.f.has('n');
  const run = (text: string): string => {
    const ls = lines(text);
    let out = '';
    for (let n = 0; n < ls.length; n++) {
      let line = ls[n]!;
      let deleted = false;
      let quit = false;
      let after = '';
      for (const c of cmds) {
        const a = c.addr;
        if (a && !(a.kind === 'line' ? a.n === n + 1 : a.kind === 'last' ? n === ls.length - 1 : a.re.test(line))) continue;
        if (c.cmd === 's') {
          c.re!.lastIndex = 0;
          const before = line;
          line = sedReplace(line, c);
          if (c.print && line !== before) out += line + '\n';
        } else if (c.cmd === 'd') {
          deleted = true;
          break;
        } else if (c.cmd === 'p') out += line + '\n';
        else if (c.cmd === '=') out += `${n + 1}\n`;
        else if (c.cmd === 'q') {
          quit = true;
          break;
        } else if (c.cmd === 'a') after += c.text + '\n';
        else if (c.cmd === 'i') out += c.text + '\n';
        else if (c.cmd === 'c') {
          out += c.text + '\n';
          deleted = true;
          break;
        }
      }
      if (!deleted && !quiet) out += line + '\n';
      out += after;
      if (quit) break;
    }
    return out;
  };
  if (o.f.has('i')) {
    let st = 0;
    for (const f of files) {
      try {
        sh.fs.writeFile(f, run(sh.fs.readText(f, sh.cwd)), { cwd: sh.cwd });
      } catch (e) {
        err(io, `sed: ${f}: ${errorText(e)}`);
        st = 1;
      }
    }
    return st;
  }
  const r = readInputs('sed', files, sh, io);
  io.stdout.write(run(r.texts.map((t) => t.text).join('')));
  return r.failed ? 1 : 0;
});

function trSet(s: string): string[] {
  const classes: Record<string, string> = { upper: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', lower: 'abcdefghijklmnopqrstuvwxyz', digit: '0123456789', space: ' \t\n\r\f\v', blank: ' \t' };
  classes['alpha'] = classes['upper']! + classes['lower']!;
  classes['alnum'] = classes['alpha'] + classes['digit']!;
  const out: string[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '[' && s[i + 1] === ':') {
      const e = s.indexOf(':]', i);
      if (e > 0) {
        out.push(...(classes[s.slice(i + 2, e)] ?? ''));
        i = e + 1;
        continue;
      }
    }
    let c = s[i]!;
    if (c === '\\') {
      const [t, n] = ansiEscape(s, i);
      c = t;
      i += n - 1;
    }
    if (s[i + 1] === '-' && i + 2 < s.length) {
      const end = s[i + 2]!;
      for (let k = c.charCodeAt(0); k <= end.charCodeAt(0); k++) out.push(String.fromCharCode(k));
      i += 2;
      continue;
    }
    out.push(c);
  }
  return out;
}

def('tr', function* (argv, _sh, io) {
  const o = opts(argv);
  const input = readAll(io.stdin);
  const a = trSet(o.args[0] ?? '');
  let inSet = (ch: string): boolean => a.includes(ch);
  if (o.f.has('c') || o.f.has('C')) inSet = (ch: string): boolean => !a.includes(ch);
  let out = '';
  if (o.f.has('d')) {
    for (const ch of input) if (!inSet(ch)) out += ch;
  } else if (o.args.length >= 2) {
    const b = trSet(o.args[1]!);
    for (const ch of input) {
      const k = a.indexOf(ch);
      out += k >= 0 ? (b[Math.min(k, b.length - 1)] ?? ch) : ch;
    }
  } else out = input;
  if (o.f.has('s')) {
    const sq = o.args.length >= 2 && !o.f.has('d') ? trSet(o.args[1]!) : a;
    let r = '';
    for (const ch of out) if (!(r.endsWith(ch) && sq.includes(ch))) r += ch;
    out = r;
  }
  io.stdout.write(out);
  return 0;
});

def('cut', function* (argv, sh, io) {
  const o = opts(argv, 'dfc');
  const r = readInputs('cut', o.args, sh, io);
  const spec = o.v.get('f') ?? o.v.get('c') ?? '';
  const ranges = spec.split(',').map((x) => {
    const m = /^(\d*)(-?)(\d*)$/.exec(x) ?? ['', '1', '', ''];
    const from = m[1] ? Number(m[1]) : 1;
    const to = m[2] ? (m[3] ? Number(m[3]) : Infinity) : from;
    return [from, to] as const;
  });
  const sel = (n: number): boolean => ranges.some(([a, b]) => n >= a && n <= b);
  const d = o.v.get('d') ?? '\t';
  for (const t of r.texts) {
    for (const l of lines(t.text)) {
      if (o.v.has('c')) io.stdout.write([...l].filter((_c, i) => sel(i + 1)).join('') + '\n');
      else {
        if (!l.includes(d)) {
          if (!o.f.has('s')) io.stdout.write(l + '\n');
          continue;
        }
        io.stdout.write(l.split(d).filter((_c, i) => sel(i + 1)).join(d) + '\n');
      }
    }
  }
  return r.failed ? 1 : 0;
});

def('sort', function* (argv, sh, io) {
  const o = opts(argv, 'kt');
  const r = readInputs('sort', o.args, sh, io);
  let ls = r.texts.flatMap((t) => lines(t.text));
  const num = o.f.has('n') || o.f.has('g');
  const key = (l: string): string => {
    if (!o.v.has('k')) return l;
    const k = Number(o.v.get('k')!.split(/[,.]/)[0]);
    const f = o.v.has('t') ? l.split(o.v.get('t')!) : l.trim().split(/\s+/);
    return f.slice(k - 1).join(' ');
  };
  ls.sort((x, y) => {
    const a = key(x);
    const b = key(y);
    if (num) {
      const d = (parseFloat(a) || 0) - (parseFloat(b) || 0);
      if (d !== 0) return d;
    }
    return a < b ? -1 : a > b ? 1 : 0;
  });
  if (o.f.has('r')) ls.reverse();
  if (o.f.has('u')) ls = ls.filter((l, i) => i === 0 || l !== ls[i - 1]);
  io.stdout.write(ls.map((l) => l + '\n').join(''));
  return r.failed ? 1 : 0;
});

def('uniq', function* (argv, sh, io) {
  const o = opts(argv);
  const r = readInputs('uniq', o.args.slice(0, 1), sh, io);
  const ls = r.texts.flatMap((t) => lines(t.text));
  const groups: Array<[string, number]> = [];
  for (const l of ls) {
    const last = groups[groups.length - 1];
    if (last && last[0] === l) last[1]++;
    else groups.push([l, 1]);
  }
  for (const [l, n] of groups) {
    if (o.f.has('d') && n < 2) continue;
    if (o.f.has('u') && n > 1) continue;
    io.stdout.write(o.f.has('c') ? `${String(n).padStart(7)} ${l}\n` : l + '\n');
  }
  return r.failed ? 1 : 0;
});

def('seq', function* (argv, _sh, io) {
  const o = opts(argv.map((a, i) => (i > 0 && /^-\d/.test(a) ? `\u0000${a}` : a)), 's');
  const nums = o.args.map((a) => Number(a.replace('\u0000', '')));
  if (nums.length === 0 || nums.some((n) => Number.isNaN(n))) {
    err(io, `seq: invalid number '${o.args.find((a) => Number.isNaN(Number(a.replace('\u0000', '')))) ?? ''}'`);
    return 1;
  }
  const [first, inc, last] = nums.length === 1 ? [1, 1, nums[0]!] : nums.length === 2 ? [nums[0]!, 1, nums[1]!] : [nums[0]!, nums[1]!, nums[2]!];
  const out: string[] = [];
  if (inc === 0) return 1;
  for (let x = first; inc > 0 ? x <= last : x >= last; x += inc) {
    out.push(String(x));
    if (out.length > 1_000_000) break;
  }
  const sep = o.v.get('s') ?? '\n';
  if (out.length) io.stdout.write(out.join(sep) + '\n');
  return 0;
});

def('expr', function* (argv, sh, io) {
  const a = argv.slice(1);
  let i = 0;
  const isNum = (s: string): boolean => /^-?\d+$/.test(s);
  const orE = (): string => {
    let l = andE();
    while (a[i] === '|') {
      i++;
      const r = andE();
      l = l !== '' && l !== '0' ? l : r !== '' && r !== '0' ? r : '0';
    }
    return l;
  };
  const andE = (): string => {
    let l = cmpE();
    while (a[i] === '&') {
      i++;
      const r = cmpE();
      l = l !== '' && l !== '0' && r !== '' && r !== '0' ? l : '0';
    }
    return l;
  };
  const cmpE = (): string => {
    let l = addE();
    while (['=', '!=', '<', '<=', '>', '>='].includes(a[i] ?? '')) {
      const op = a[i++]!;
      const r = addE();
      const c = isNum(l) && isNum(r) ? Number(l) - Number(r) : l < r ? -1 : l > r ? 1 : 0;
      const res = op === '=' ? c === 0 : op === '!=' ? c !== 0 : op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c >= 0;
      l = res ? '1' : '0';
    }
    return l;
  };
  const addE = (): string => {
    let l = mulE();
    while (a[i] === '+' || a[i] === '-') {
      const op = a[i++]!;
      const r = mulE();
      if (!isNum(l) || !isNum(r)) throw new ShellError('expr: non-numeric argument', 2);
      l = String(op === '+' ? Number(l) + Number(r) : Number(l) - Number(r));
    }
    return l;
  };
  const mulE = (): string => {
    let l = primE();
    while (a[i] === '*' || a[i] === '/' || a[i] === '%') {
      const op = a[i++]!;
      const r = primE();
      if (!isNum(l) || !isNum(r)) throw new ShellError('expr: non-numeric argument', 2);
      if ((op === '/' || op === '%') && Number(r) === 0) throw new ShellError('expr: division by zero', 2);
      l = String(op === '*' ? Number(l) * Number(r) : op === '/' ? Math.trunc(Number(l) / Number(r)) : Number(l) % Number(r));
    }
    return l;
  };
  const primE = (): string => {
    const t = a[i++];
    if (t === undefined) throw new ShellError('expr: syntax error', 2);
    if (t === '(') {
      const v = orE();
      i++;
      return v;
    }
    if (t === 'length') return String((a[i++] ?? '').length);
    if (a[i] === ':') {
      i++;
      const re = new RegExp('^(?:' + breToJs(a[i++] ?? '') + ')');
      const m = re.exec(t);
      if (!m) return m === null && /\\\(/.test(a[i - 1]!) ? '' : '0';
      return m[1] !== undefined ? m[1] : String(m[0].length);
    }
    return t;
  };
  try {
    const v = orE();
    io.stdout.write(v + '\n');
    return v === '' || v === '0' ? 1 : 0;
  } catch (e) {
    if (e instanceof ShellError) {
      err(io, e.message);
      return 2;
    }
    throw e;
  }
});

def(['md5sum', 'sha1sum', 'sha256sum', 'sha512sum'], function* (argv, sh, io) {
  const algo = argv[0]!.replace('sum', '');
  const o = opts(argv);
  if (o.f.has('c')) {
    err(io, `${argv[0]}: -c is not supported`);
    return 1;
  }
  const files = o.args.length ? o.args : ['-'];
  let st = 0;
  for (const f of files) {
    try {
      const data = f === '-' ? Buffer.from(readAll(io.stdin)) : sh.fs.readFile(f, sh.cwd);
      io.stdout.write(`${createHash(algo).update(data).digest('hex')}  ${f}\n`);
    } catch (e) {
      err(io, `${argv[0]}: can't open '${f}': ${errorText(e)}`);
      st = 1;
    }
  }
  return st;
});

def('base64', function* (argv, sh, io) {
  const o = opts(argv, 'w');
  const r = readInputs('base64', o.args, sh, io);
  const text = r.texts.map((t) => t.text).join('');
  if (o.f.has('d')) io.stdout.write(Buffer.from(text.replace(/\s+/g, ''), 'base64').toString('utf8'));
  else {
    const enc = Buffer.from(text).toString('base64');
    const w = o.v.has('w') ? Number(o.v.get('w')) : 76;
    const parts = w > 0 ? enc.match(new RegExp(`.{1,${w}}`, 'g')) ?? [] : [enc];
    io.stdout.write(parts.join('\n') + (enc ? '\n' : ''));
  }
  return r.failed ? 1 : 0;
});

/** `hexdump -C` / `xxd`: canonical hex+ASCII of files (bytes as stored) or stdin. */
def(['hexdump', 'xxd'], function* (argv, sh, io) {
  const files = argv.slice(1).filter((a) => !a.startsWith('-'));
  const chunks: Buffer[] = [];
  let failed = false;
  if (files.length === 0) chunks.push(Buffer.from(readAll(io.stdin), 'utf8'));
  for (const f of files) {
    try {
      chunks.push(sh.fs.readFile(f, sh.cwd));
    } catch {
      err(io, `${argv[0]}: ${f}: No such file or directory`);
      failed = true;
    }
  }
  const data = Buffer.concat(chunks);
  const printable = (b: number) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.');
  let out = '';
  for (let off = 0; off < data.length; off += 16) {
    const row = data.subarray(off, off + 16);
    const hex = [...row].map((b) => b.toString(16).padStart(2, '0'));
    if (argv[0] === 'xxd') {
      const groups: string[] = [];
      for (let i = 0; i < 16; i += 2) groups.push((hex[i] ?? '  ') + (hex[i + 1] ?? '  '));
      out += `${off.toString(16).padStart(8, '0')}: ${groups.join(' ')}  ${[...row].map(printable).join('')}\n`;
    } else {
      const left = hex.slice(0, 8).join(' ').padEnd(23, ' ');
      const right = hex.slice(8).join(' ').padEnd(23, ' ');
      out += `${off.toString(16).padStart(8, '0')}  ${left}  ${right}  |${[...row].map(printable).join('')}|\n`;
    }
  }
  if (argv[0] !== 'xxd' && (data.length > 0 || files.length > 0)) out += `${data.length.toString(16).padStart(8, '0')}\n`;
  io.stdout.write(out);
  return failed ? 1 : 0;
});

// --- test / [ ---------------------------------------------------------------

def(['test', '['], function* (argv, sh, io) {
  let args = argv.slice(1);
  if (argv[0] === '[') {
    if (args[args.length - 1] !== ']') {
      err(io, `${sh.arg0}: [: missing ]`);
      return 2;
    }
    args = args.slice(0, -1);
  }
  try {
    return evalTest(args, sh) ? 0 : 1;
  } catch (e) {
    if (e instanceof ShellError) {
      err(io, `${sh.arg0}: ${argv[0] === '[' ? '[' : 'test'}: ${e.message}`);
      return 2;
    }
    throw e;
  }
});

const UNARY = new Set(['-e', '-f', '-d', '-r', '-w', '-x', '-s', '-z', '-n', '-h', '-L', '-c', '-p', '-S', '-b', '-u', '-g', '-k', '-t', '-a']);
const BINARY = new Set(['=', '==', '!=', '<', '>', '-eq', '-ne', '-lt', '-le', '-gt', '-ge', '-nt', '-ot', '-ef']);

export function evalTest(args: string[], sh: Shell): boolean {
  if (args.length === 0) return false;
  let i = 0;
  const orE = (): boolean => {
    let v = andE();
    while (args[i] === '-o') {
      i++;
      const r = andE();
      v = v || r;
    }
    return v;
  };
  const andE = (): boolean => {
    let v = notE();
    while (args[i] === '-a') {
      i++;
      const r = notE();
      v = v && r;
    }
    return v;
  };
  const notE = (): boolean => {
    if (args[i] === '!' && i + 1 < args.length) {
      i++;
      return !notE();
    }
    return prim();
  };
  const prim = (): boolean => {
    const a = args[i];
    if (a === undefined) throw new ShellError('argument expected');
    if (a === '(' && i + 2 < args.length + 1) {
      const save = i;
      i++;
      const v = orE();
      if (args[i] === ')') {
        i++;
        return v;
      }
      i = save;
    }
    if (BINARY.has(args[i + 1] ?? '') && i + 2 < args.length) {
      const op = args[i + 1]!;
      const b = args[i + 2]!;
      i += 3;
      return binaryTest(op, a, b, sh, false);
    }
    if (UNARY.has(a) && i + 1 < args.length) {
      i += 2;
      return unaryTest(a === '-a' ? '-e' : a, args[i - 1]!, sh);
    }
    i++;
    return a !== '';
  };
  const v = orE();
  if (i < args.length) throw new ShellError(`${args[i]}: unknown operand`);
  return v;
}

// --- network -------------------------------------------------------------------

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 204: 'No Content', 301: 'Moved Permanently', 302: 'Found', 304: 'Not Modified', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 408: 'Request Timeout', 409: 'Conflict', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout' };

function hostOf(url: string): { host: string; port: string } {
  const m = /^(?:[a-z]+:\/\/)?(\[[^\]]+\]|[^/:?#]+)(?::(\d+))?/i.exec(url);
  const https = /^https:/i.test(url);
  return { host: m?.[1] ?? url, port: m?.[2] ?? (https ? '443' : '80') };
}

function* doHttp(sh: Shell, req: HttpRequest): G<HttpResult | 'interrupted'> {
  const h = sh.proc.ctx.http;
  const res: HttpResult = h ? h(req, { cwd: sh.cwd, env: sh.env(), fs: sh.fs, now: sh.proc.now, stdin: '', hostname: sh.proc.ctx.hostname }) : { error: 'dns' };
  let dur = res.durationMs ?? 0;
  let out: HttpResult = res;
  if ('error' in res && res.error === 'timeout') dur = req.timeoutMs;
  else if (dur > req.timeoutMs) {
    dur = req.timeoutMs;
    out = { error: 'timeout' };
  }
  if (dur > 0) {
    const ok = yield* sleepUntil(sh, sh.proc.now + dur);
    if (!ok) return 'interrupted';
  }
  return out;
}

def('wget', function* (argv, sh, io) {
  let quiet = false;
  let outFile: string | undefined;
  let timeoutMs = 900_000;
  let spider = false;
  const headers: Record<string, string> = {};
  let url: string | undefined;
  let method = 'GET';
  let body: string | undefined;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-O') outFile = argv[++i];
    else if (a.startsWith('-O') && a.length > 2) outFile = a.slice(2);
    else if (a === '-T') timeoutMs = Number(argv[++i]) * 1000;
    else if (a.startsWith('--timeout=')) timeoutMs = Number(a.slice(10)) * 1000;
    else if (a === '-q' || a === '--quiet') quiet = true;
    else if (/^-q[O]/.test(a)) {
      quiet = true;
      outFile = a.length > 3 ? a.slice(3) : argv[++i];
    } else if (a === '--spider') spider = true;
    else if (a === '--header') {
      const hv = argv[++i] ?? '';
      const c = hv.indexOf(':');
      if (c > 0) headers[hv.slice(0, c).trim()] = hv.slice(c + 1).trim();
    } else if (a.startsWith('--post-data=')) {
      method = 'POST';
      body = a.slice(12);
    } else if (a === '-U' || a === '--user-agent') headers['User-Agent'] = argv[++i] ?? '';
    else if (a === '-S' || a === '-s' || a === '-c' || a === '--no-check-certificate' || a === '-nv') continue;
    else if (!a.startsWith('-')) url = a;
  }
  if (!url) {
    err(io, 'BusyBox v1.36.1 (2023-06-02 00:42:02 UTC) multi-call binary.\n\nUsage: wget [-cqS] [--spider] [-O FILE] [-o LOGFILE] [--header STR]\n\t[--post-data STR | --post-file FILE] [-Y on/off]\n\t[-P DIR] [-U AGENT] [-T SEC] URL...');
    return 1;
  }
  const full = /^[a-z]+:\/\//i.test(url) ? url : `http://${url}`;
  const { host, port } = hostOf(full);
  if (!quiet) err(io, `Connecting to ${host}${port === '80' || port === '443' ? '' : `:${port}`} (${host}:${port})`);
  const req: HttpRequest = { method: spider ? 'HEAD' : method, url: full, headers, timeoutMs };
  if (body !== undefined) req.body = body;
  const res = yield* doHttp(sh, req);
  if (res === 'interrupted') return 128 + 15;
  if ('error' in res) {
    if (res.error === 'dns') err(io, `wget: bad address '${host}'`);
    else if (res.error === 'timeout') err(io, 'wget: download timed out');
    else if (res.error === 'refused') err(io, `wget: can't connect to remote host (${host}): Connection refused`);
    else if (res.error === 'unreachable') err(io, `wget: can't connect to remote host (${host}): Host is unreachable`);
    else err(io, 'wget: error getting response: Connection reset by peer');
    return 1;
  }
  if (res.status >= 400) {
    err(io, `wget: server returned error: HTTP/1.1 ${res.status} ${STATUS_TEXT[res.status] ?? ''}`.trimEnd());
    return 1;
  }
  if (spider) {
    if (!quiet) err(io, 'remote file exists');
    return 0;
  }
  const target = outFile ?? (basename(full.replace(/^[a-z]+:\/\/[^/]*/i, '').replace(/[?#].*$/, '')) || 'index.html');
  if (target === '-') {
    if (!quiet) err(io, 'writing to stdout');
    io.stdout.write(res.body);
    if (!quiet) err(io, 'written to stdout');
    return 0;
  }
  try {
    sh.fs.writeFile(target, res.body, { cwd: sh.cwd });
  } catch (e) {
    err(io, `wget: can't open '${target}': ${errorText(e)}`);
    return 1;
  }
  if (!quiet) err(io, `saving to '${target}'\n'${target}' saved`);
  return 0;
});

def('curl', function* (argv, sh, io) {
  let silent = false;
  let showErr = false;
  let fail = false;
  let outFile: string | undefined;
  let writeOut: string | undefined;
  let method: string | undefined;
  let include = false;
  let head = false;
  let timeoutMs = 300_000;
  let body: string | undefined;
  const headers: Record<string, string> = {};
  let url: string | undefined;
  const withArg = new Set(['-o', '-w', '-X', '-H', '-d', '-m', '--max-time', '--connect-timeout', '--data', '--data-raw', '--data-binary', '-A', '--user-agent', '--request', '--header', '--output', '--write-out', '-u', '--retry', '--resolve', '-e', '--cacert', '--cert', '--key', '-b', '-c', '--interface']);
  for (let i = 1; i < argv.length; i++) {
    let a = argv[i]!;
    if (/^-[a-zA-Z]{2,}$/.test(a)) {
      // combined short flags: -sSf, -sfo file
      const letters = a.slice(1).split('');
      const last = letters.pop()!;
      for (const l of letters) {
        if (l === 's') silent = true;
        else if (l === 'S') showErr = true;
        else if (l === 'f') fail = true;
        else if (l === 'i') include = true;
        else if (l === 'I') head = true;
        else if (l === 'L' || l === 'k' || l === 'v') continue;
      }
      a = '-' + last;
    }
    const val = (): string => argv[++i] ?? '';
    if (withArg.has(a)) {
      const v = val();
      switch (a) {
        case '-o': case '--output': outFile = v; break;
        case '-w': case '--write-out': writeOut = v; break;
        case '-X': case '--request': method = v; break;
        case '-H': case '--header': {
          const c = v.indexOf(':');
          if (c > 0) headers[v.slice(0, c).trim()] = v.slice(c + 1).trim();
          break;
        }
        case '-d': case '--data': case '--data-raw': case '--data-binary': body = v; break;
        case '-m': case '--max-time': case '--connect-timeout': timeoutMs = Number(v) * 1000; break;
        case '-A': case '--user-agent': headers['User-Agent'] = v; break;
      }
      continue;
    }
    if (a === '-s' || a === '--silent') silent = true;
    else if (a === '-S' || a === '--show-error') showErr = true;
    else if (a === '-f' || a === '--fail') fail = true;
    else if (a === '-i' || a === '--include') include = true;
    else if (a === '-I' || a === '--head') head = true;
    else if (a === '-O' || a === '--remote-name') outFile = '\u0000remote';
    else if (!a.startsWith('-')) url = a;
  }
  if (!url) {
    err(io, "curl: try 'curl --help' or 'curl --manual' for more information");
    return 2;
  }
  const full = /^[a-z]+:\/\//i.test(url) ? url : `http://${url}`;
  const { host, port } = hostOf(full);
  const req: HttpRequest = { method: method ?? (head ? 'HEAD' : body !== undefined ? 'POST' : 'GET'), url: full, headers, timeoutMs };
  if (body !== undefined) req.body = body;
  const res = yield* doHttp(sh, req);
  if (res === 'interrupted') return 128 + 15;
  const report = (code: number, msg: string): number => {
    if (!silent || showErr) err(io, `curl: (${code}) ${msg}`);
    if (writeOut !== undefined) io.stdout.write(curlWriteOut(writeOut, 0, full));
    return code;
  };
  if ('error' in res) {
    if (res.error === 'dns') return report(6, `Could not resolve host: ${host}`);
    if (res.error === 'timeout') return report(28, `Connection timed out after ${timeoutMs} milliseconds`);
    if (res.error === 'reset') return report(56, 'Recv failure: Connection reset by peer');
    return report(7, `Failed to connect to ${host} port ${port} after 0 ms: ${res.error === 'refused' ? "Couldn't connect to server" : 'No route to host'}`);
  }
  if (fail && res.status >= 400) return report(22, `The requested URL returned error: ${res.status}`);
  let out = '';
  if (include || head) {
    out += `HTTP/1.1 ${res.status} ${STATUS_TEXT[res.status] ?? ''}\r\n`;
    for (const [k, v] of Object.entries(res.headers ?? {})) out += `${k}: ${v}\r\n`;
    out += '\r\n';
  }
  if (!head) out += res.body;
  if (outFile !== undefined) {
    const target = outFile === '\u0000remote' ? basename(full.replace(/[?#].*$/, '')) || 'index.html' : outFile;
    if (target === '-') io.stdout.write(out);
    else {
      try {
        sh.fs.writeFile(target, out, { cwd: sh.cwd });
      } catch (e) {
        return report(23, `Failure writing output to destination: ${errorText(e)}`);
      }
    }
  } else io.stdout.write(out);
  if (writeOut !== undefined) io.stdout.write(curlWriteOut(writeOut, res.status, full));
  return 0;
});

function curlWriteOut(fmt: string, code: number, url: string): string {
  return echoEscapes(fmt.replace(/%\{(\w+)\}/g, (_m, k: string) => (k === 'http_code' || k === 'response_code' ? String(code).padStart(3, '0') : k === 'url_effective' ? url : k === 'exitcode' ? '0' : ''))).text;
}

def('nslookup', function* (argv, sh, io) {
  const name = argv.slice(1).find((a) => !a.startsWith('-'));
  if (!name) {
    err(io, 'Usage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]');
    return 1;
  }
  let server = '10.96.0.10';
  try {
    const m = /^nameserver\s+(\S+)/m.exec(sh.fs.readText('/etc/resolv.conf'));
    if (m) server = m[1]!;
  } catch {
    /* default */
  }
  io.stdout.write(`Server:\t\t${server}\nAddress:\t${server}:53\n\n`);
  const addrs = sh.proc.ctx.dns?.(name);
  if (!addrs || addrs.length === 0) {
    io.stdout.write(`** server can't find ${name}: NXDOMAIN\n\n`);
    return 1;
  }
  for (const a of addrs) io.stdout.write(`Name:\t${name}\nAddress: ${a}\n\n`);
  return 0;
});

// make `arith` reachable for `let`
def('let', function* (argv, sh) {
  let v = 0;
  for (const a of argv.slice(1)) v = arith(a, sh);
  return v !== 0 ? 0 : 1;
});



def('timeout', function* (argv, sh, io) {
  // timeout [-s SIG] [-k DUR] DURATION COMMAND [ARG]...
  let i = 1;
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-s' || a === '-k') i++;
    else if (a.startsWith('-') && a !== '-') continue;
    else break;
  }
  const d = argv[i] === undefined ? undefined : parseDuration(argv[i]!);
  const cmd = argv.slice(i + 1);
  if (d === undefined || cmd.length === 0) {
    err(io, 'Usage: timeout [-s SIG] [-k KILL_SECS] SECS PROG ARGS');
    return 1;
  }
  const deadline = sh.proc.now + d;
  const child = sh.subshell();
  const gen = runSubshell(child, () => runCommand(cmd, child, io));
  let resume: import('./interpreter.js').Wake;
  for (;;) {
    const r = gen.next(resume);
    resume = undefined;
    if (r.done) return r.value;
    const y = r.value;
    if (y.k === 'step') {
      yield y;
      continue;
    }
    if (y.k === 'sleep' && y.until <= deadline) {
      resume = yield y;
      continue;
    }
    // blocked past the deadline (sleep, forever, wait): the command is killed then
    const ok = yield* sleepUntil(sh, deadline);
    gen.return(0);
    return ok ? 124 : 128 + 15;
  }
});
