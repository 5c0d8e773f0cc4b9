/**
 * What a simulated container's script does to its files, and how it takes
 * SIGTERM; and the simulated run of a probe's or hook's exec command against
 * those files. Like command.ts, nothing is executed: words are scanned.
 *
 *   sh -c "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"
 *     files: /tmp/healthy exists from 0 s to 30 s
 *   sh -c "sleep 5; echo ok > /tmp/ready; sleep 3600"
 *     files: /tmp/ready exists from 5 s on
 *
 * File changes: `touch F`, `mkdir [-p] D`, `echo ... > F` (any `>`/`>>`
 * redirection), `tee F`, `cp A F` create; `rm [-rf] F` removes; `mv A B`
 * removes A and creates B. They happen at the sum of the `sleep`s before
 * them; the scan stops at a loop, `sleep infinity` or `exit`.
 *
 * SIGTERM (the kernel ignores signals a PID 1 has no handler for): `sleep`
 * and a shell script (`sh -c ...`) run as PID 1 ignore it, as do `tail`,
 * `ping`, `nc`, `python` and `node` run directly; a script with
 * `trap ... TERM` ends at once (with the trap's `exit N`, else 143);
 * `exec PROG` as a script's last command makes PROG PID 1; servers (nginx,
 * ...), unknown programs and images run without a command handle SIGTERM
 * and exit 0 at once.
 */
import { parseProgram, parseSleepArg, type Program } from './command.js';

export interface FileEvent {
  /** Milliseconds after the container started. */
  atMs: number;
  path: string;
  exists: boolean;
}

export type SigtermBehaviour = { kind: 'ignore' } | { kind: 'exit'; exitCode: number };

/** Everything kcm reads from a container's command and args. */
export interface Script {
  program: Program;
  files: FileEvent[];
  sigterm: SigtermBehaviour;
}

const SHELLS = new Set(['sh', 'bash', 'ash', 'dash', 'ksh', 'zsh']);
/** Run directly as PID 1, these have no SIGTERM handler. */
const NO_SIGTERM_HANDLER = new Set(['sleep', 'tail', 'ping', 'nc', 'ncat', 'netcat', 'cat', 'yes', 'watch', 'top']);

function base(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

/** Splits shell text into words and the separators `;`, `&&`, `||`, `|`, dropping quotes. */
export function shellTokens(text: string): string[] {
  return text
    .replace(/(&&|\|\||[;|\n])/g, ' $1 ')
    .replace(/(\d?>>?)(?=\S)/g, '$1 ')
    .replace(/["']/g, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 0);
}

const SEPARATORS = new Set([';', '&&', '||', '|', '\n']);
/** Words that open a command without being one. */
const OPENERS = new Set(['then', 'else', 'do', 'if', 'elif', '{', '(', 'exec', 'time', 'nohup', 'fi', 'done', '}', ')']);

interface SimpleCommand {
  /** The separator before it (`;` for the first). */
  op: string;
  words: string[];
  negated: boolean;
  exec: boolean;
}

/** Simple commands of a script (the words after `sh -c`, or the command itself). */
function simpleCommands(argv: readonly string[]): SimpleCommand[] {
  let text: string;
  const first = argv.length > 0 ? base(argv[0]!) : '';
  const ci = argv.findIndex((a, i) => i > 0 && /^-[a-z]*c$/.test(a));
  if (SHELLS.has(first) && ci > 0) text = argv.slice(ci + 1).join(' ');
  else text = argv.join(' ');
  const out: SimpleCommand[] = [];
  let cur: SimpleCommand = { op: ';', words: [], negated: false, exec: false };
  for (const t of shellTokens(text)) {
    if (SEPARATORS.has(t)) {
      if (cur.words.length > 0) out.push(cur);
      cur = { op: t, words: [], negated: false, exec: false };
      continue;
    }
    if (cur.words.length === 0 && OPENERS.has(t)) {
      if (t === 'exec') cur.exec = true;
      continue;
    }
    if (cur.words.length === 0 && t === '!') {
      cur.negated = !cur.negated;
      continue;
    }
    cur.words.push(t);
  }
  if (cur.words.length > 0) out.push(cur);
  return out;
}

function isScript(argv: readonly string[]): boolean {
  return argv.length > 0 && SHELLS.has(base(argv[0]!)) && argv.slice(1).some((a) => /^-[a-z]*c$/.test(a));
}

/** Redirection targets (`> F`, `>> F`, `2> F`) of a simple command, and its words without them. */
function redirections(words: readonly string[]): { targets: string[]; rest: string[] } {
  const targets: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (/^\d?>>?$/.test(w)) {
      const t = words[i + 1];
      if (t !== undefined && !t.startsWith('&') && t !== '/dev/null') targets.push(t);
      i++;
    } else rest.push(w);
  }
  return { targets, rest };
}

function operands(words: readonly string[]): string[] {
  return words.slice(1).filter((w) => !w.startsWith('-'));
}

/** The file changes of a container's script, in time order. */
export function fileTimeline(command: readonly string[] | undefined, args: readonly string[] | undefined): FileEvent[] {
  const argv = [...(command ?? []), ...(args ?? [])];
  if (!isScript(argv) && !(argv.length > 0 && ['touch', 'mkdir'].includes(base(argv[0]!)))) return [];
  const out: FileEvent[] = [];
  let t = 0;
  for (const sc of simpleCommands(argv)) {
    const { targets, rest } = redirections(sc.words);
    const name = base(rest[0] ?? '');
    if (['while', 'until', 'for'].includes(name) || name === 'exit') break;
    const add = (path: string, exists: boolean) => out.push({ atMs: t, path, exists });
    switch (name) {
      case 'sleep': {
        const arg = rest[1];
        if (arg === 'infinity' || arg === 'inf') return out;
        t += (arg !== undefined ? parseSleepArg(arg) : 0) ?? 0;
        break;
      }
      case 'touch':
      case 'mkdir':
      case 'tee':
        for (const p of operands(rest)) add(p, true);
        break;
      case 'rm':
      case 'rmdir':
        for (const p of operands(rest)) add(p, false);
        break;
      case 'mv':
      case 'cp': {
        const ops = operands(rest);
        if (ops.length >= 2) {
          if (name === 'mv') for (const p of ops.slice(0, -1)) add(p, false);
          add(ops[ops.length - 1]!, true);
        }
        break;
      }
      default:
        break;
    }
    for (const p of targets) add(p, true);
  }
  return out;
}

/** How the container's process takes SIGTERM (see the module comment). */
export function sigtermBehaviour(command: readonly string[] | undefined, args: readonly string[] | undefined): SigtermBehaviour {
  const argv = [...(command ?? []), ...(args ?? [])];
  if (argv.length === 0) return { kind: 'exit', exitCode: 0 };
  if (isScript(argv)) {
    const cmds = simpleCommands(argv);
    const trap = cmds.find((c) => base(c.words[0] ?? '') === 'trap' && c.words.some((w) => ['TERM', 'SIGTERM', '15'].includes(w)));
    if (trap) {
      const i = trap.words.indexOf('exit');
      const code = i >= 0 && /^\d+$/.test(trap.words[i + 1] ?? '') ? Number(trap.words[i + 1]) % 256 : 143;
      return { kind: 'exit', exitCode: code };
    }
    const last = cmds[cmds.length - 1];
    if (last?.exec && last.words.length > 0) return sigtermBehaviour(last.words, []);
    return { kind: 'ignore' };
  }
  const name = base(argv[0]!);
  if (NO_SIGTERM_HANDLER.has(name) || name.startsWith('python') || name === 'node') return { kind: 'ignore' };
  return { kind: 'exit', exitCode: 0 };
}

/** The container's script: its program (command.ts), file timeline and SIGTERM behaviour. */
export function parseScript(command: readonly string[] | undefined, args: readonly string[] | undefined): Script {
  return { program: parseProgram(command, args), files: fileTimeline(command, args), sigterm: sigtermBehaviour(command, args) };
}

/** Paths present in every container (kubelet-managed files, /proc, /dev). */
function alwaysPresent(path: string): boolean {
  return (
    ['/', '/tmp', '/etc/hosts', '/etc/hostname', '/etc/resolv.conf', '/dev/termination-log'].includes(path) ||
    /^\/(proc|dev|sys)\//.test(path) ||
    path.startsWith('/var/run/secrets/kubernetes.io/serviceaccount')
  );
}

/**
 * Whether `path` exists `elapsedMs` after the container started: the last
 * change at or before then decides; a path the script never creates does not
 * exist (except `extra` paths, e.g. volume mount points, and the files every
 * container has).
 */
export function fileExists(files: readonly FileEvent[], path: string, elapsedMs: number, extra: readonly string[] = []): boolean {
  const p = path.replace(/\/+$/, '') || '/';
  let state: boolean | undefined;
  for (const e of files) {
    if (e.atMs > elapsedMs) break;
    const ep = e.path.replace(/\/+$/, '') || '/';
    if (ep === p || (!e.exists && p.startsWith(`${ep}/`))) state = e.exists;
    else if (e.exists && ep.startsWith(`${p}/`)) state = true; // a directory made by creating a file in it
  }
  if (state !== undefined) return state;
  return alwaysPresent(p) || extra.some((m) => p === m.replace(/\/+$/, '') || p.startsWith(`${m.replace(/\/+$/, '')}/`));
}

export interface ExecResult {
  exitCode: number;
  /** Combined stdout and stderr (only the error texts are simulated). */
  output: string;
  /** The sum of the command's sleeps. */
  durationMs: number;
}

/**
 * Runs an exec probe's or hook's command against the container's files:
 * `true`, `exit 0`, `:` succeed; `false`, `exit N` fail; `cat F`, `ls F`,
 * `stat F`, `test -f F` / `[ -e F ]` (also -d, -s, -r) check that F exists,
 * with busybox's error texts; `sleep N` takes N s; `&&`, `||`, `;` and `!`
 * work; any other command succeeds.
 */
export function runExec(argv: readonly string[], exists: (path: string) => boolean): ExecResult {
  let status = 0;
  let output = '';
  let durationMs = 0;
  for (const sc of simpleCommands(argv)) {
    if (sc.op === '&&' && status !== 0) continue;
    if (sc.op === '||' && status === 0) continue;
    const { rest } = redirections(sc.words);
    const name = base(rest[0] ?? '');
    let code = 0;
    switch (name) {
      case 'true':
      case ':':
        break;
      case 'false':
        code = 1;
        break;
      case 'exit': {
        const arg = rest[1];
        const c = arg !== undefined && /^\d+$/.test(arg) ? Number(arg) % 256 : status;
        return { exitCode: c, output, durationMs };
      }
      case 'sleep': {
        const arg = rest[1];
        durationMs += (arg !== undefined ? parseSleepArg(arg) : 0) ?? 0;
        break;
      }
      case 'cat':
      case 'head':
      case 'stat':
      case 'ls':
        for (const f of operands(rest)) {
          if (exists(f)) continue;
          code = 1;
          output +=
            name === 'ls' ? `ls: ${f}: No such file or directory\n` : name === 'stat' ? `stat: can't stat '${f}': No such file or directory\n` : `${name}: can't open '${f}': No such file or directory\n`;
        }
        break;
      case 'test':
      case '[': {
        const w = rest.slice(1).filter((x) => x !== ']');
        let neg = false;
        if (w[0] === '!') {
          neg = true;
          w.shift();
        }
        let ok = true;
        if (w.length >= 2 && /^-[fedsrxw]$/.test(w[0]!)) ok = exists(w[1]!);
        else if (w.length === 1) ok = w[0] !== '';
        code = ok !== neg ? 0 : 1;
        break;
      }
      default:
        break;
    }
    status = sc.negated ? (code === 0 ? 1 : 0) : code;
  }
  return { exitCode: status, output, durationMs };
}
