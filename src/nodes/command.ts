/**
 * What a simulated container "does", read from its command and args. Nothing
 * is executed: the words are scanned for the shapes tests, docs and examples
 * use.
 *
 *   ["sleep", "30"]                         runs 30 s, then exits 0
 *   ["sh", "-c", "sleep 2; exit 1"]         runs 2 s, then exits 1
 *   ["sh", "-c", "exit 3"]                  exits 3 at once
 *   ["true"] / ["false"]                    exits 0 / 1 at once
 *   ["echo", "hi"], ["date"], ["perl", ...] one-shot tools: exit 0 at once
 *   ["sh", "-c", "date; echo hello"]        a script ends after its sleeps with
 *                                           the status of its last command
 *   ["sleep", "infinity"], loops, `tail -f`, servers (nginx, nc -l, ...),
 *   an unknown program (directly or in a script), no command at all
 *                                           runs until stopped
 *
 * Sleeps before the first `exit` add up; words after it never run. A shell
 * loop (`while`, `until`, `for`) runs until stopped unless an `exit` comes
 * before the loop. An unknown program, run directly or from a shell script,
 * is taken for a server and runs until stopped (an image's own entrypoint,
 * `agnhost netexec`, `--flags` only, `sh -c "/app/server"`); known tools,
 * shell builtins and assignments end by themselves.
 */

/** The simulated behaviour of one container run. */
export type Program =
  | { kind: 'forever' }
  /** Ends `afterMs` after starting with `exitCode`. */
  | { kind: 'exits'; afterMs: number; exitCode: number };

const FOREVER: Program = { kind: 'forever' };

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `2`, `2.5`, `10s`, `1m`: GNU sleep's argument in milliseconds; undefined when not a duration (or infinite). */
export function parseSleepArg(word: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?|\.\d+)([smhd]?)$/.exec(word);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * UNIT_MS[m[2] || 's']!);
}

/** Splits shell text into words and separators (`;`, `&&`, `||`, `|`, newlines), dropping quotes. */
function words(text: string): string[] {
  return text
    .replace(/(&&|\|\||[;|\n])/g, ' ; ')
    .replace(/["']/g, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 0);
}

const SHELLS = new Set(['sh', 'bash', 'ash', 'dash', 'ksh', 'zsh']);

/** Programs that do their work and exit when run directly (not from a shell). */
const ONE_SHOT = new Set([
  'echo', 'printf', 'date', 'true', 'false', 'exit', 'sleep', 'perl', 'env', 'printenv', 'hostname', 'uname',
  'ls', 'cat', 'whoami', 'id', 'pwd', 'nslookup', 'wget', 'curl', 'touch', 'mkdir', 'rm', 'cp', 'mv', 'expr',
  'seq', 'test', '[', 'nproc', 'df', 'du', 'ps', 'head', 'wc', 'md5sum', 'sha256sum', 'base64', 'sync', 'find',
  'grep', 'sort', 'tr', 'cut', 'awk', 'sed', 'dig', 'host', 'getent',
]);

/** Programs that serve until stopped, even from a shell script. */
const SERVERS = new Set([
  'nginx', 'httpd', 'apache2', 'redis-server', 'postgres', 'mysqld', 'mongod', 'agnhost', 'pause', 'top', 'watch',
]);

/** Shell keywords and openers after which the next word starts a command. */
const COMMAND_OPENERS = new Set([';', '-c', 'then', 'else', 'do', 'if', 'elif', '{', '(', '!', 'exec', 'time', 'nohup']);

/** Shell builtins and closing keywords: they never keep a script running. */
const SHELL_WORDS = new Set([
  ':', 'set', 'cd', 'export', 'unset', 'source', '.', 'trap', 'wait', 'read', 'shift', 'return', 'local', 'umask', 'ulimit',
  'alias', 'type', 'command', 'let', 'declare', 'readonly', 'fi', 'done', 'esac', '}', ')',
]);

/** Whether the simple command starting at `i` is one kcm knows to end by itself (tools, builtins, assignments, `python -c`). */
function endsByItself(w: readonly string[], i: number, base: string): boolean {
  if (ONE_SHOT.has(base) || SHELL_WORDS.has(base) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(base)) return true;
  let end = i + 1;
  while (end < w.length && w[end] !== ';') end++;
  const rest = w.slice(i + 1, end);
  return (base.startsWith('python') && rest.includes('-c')) || (base === 'node' && rest.includes('-e'));
}

/** `-c`, or shell options ending in it (`-ec`, `-xc`). */
function isCFlag(word: string): boolean {
  return /^-[a-z]*c$/.test(word);
}

/** Whether the simple command starting at `i` (up to the next `;`) serves until stopped. */
function servesForever(w: readonly string[], i: number, base: string): boolean {
  if (SERVERS.has(base)) return true;
  let end = i + 1;
  while (end < w.length && w[end] !== ';') end++;
  const rest = w.slice(i + 1, end);
  if (base === 'tail') return rest.some((a) => /^-[a-zA-Z]*[fF]/.test(a) || a === '--follow');
  if (base === 'nc' || base === 'ncat' || base === 'netcat') return rest.some((a) => /^-[a-zA-Z]*l/.test(a));
  if (base.startsWith('python')) return rest.includes('http.server') || rest.includes('SimpleHTTPServer');
  if (base === 'ping') return !rest.some((a) => a.startsWith('-c'));
  return false;
}

/** The program of a container with this `command` and `args` (either may be missing). */
export function parseProgram(command: readonly string[] | undefined, args: readonly string[] | undefined): Program {
  const all = [...(command ?? []), ...(args ?? [])];
  if (all.length === 0) return FOREVER;
  const first = all[0]!.slice(all[0]!.lastIndexOf('/') + 1);
  const script = SHELLS.has(first) && all.slice(1).some(isCFlag);
  // Run directly, only a known one-shot tool (or `python -c`, `node -e`) ends by itself.
  const inline = (first.startsWith('python') && all.includes('-c')) || (first === 'node' && all.includes('-e'));
  if (!script && !ONE_SHOT.has(first) && !inline) return FOREVER;
  const w = words(all.join(' ')).map((x) => (script && isCFlag(x) ? '-c' : x));
  let slept = 0;
  let lastCode = 0;
  // Only the word at the start of a simple command is a command name.
  let atCommandStart = true;
  for (let i = 0; i < w.length; i++) {
    const word = w[i]!;
    if (COMMAND_OPENERS.has(word) && (atCommandStart || word === ';' || word === '-c')) {
      atCommandStart = true;
      continue;
    }
    const base = word.slice(word.lastIndexOf('/') + 1);
    if (atCommandStart || base === 'sleep' || base === 'exit') {
      switch (base) {
        case 'while':
        case 'until':
        case 'for':
          return FOREVER;
        case 'sleep': {
          const arg = w[i + 1];
          if (arg === 'infinity' || arg === 'inf') return FOREVER;
          const ms = arg === undefined ? undefined : parseSleepArg(arg);
          if (ms !== undefined) {
            slept += ms;
            i++;
          }
          lastCode = 0;
          break;
        }
        case 'exit': {
          const arg = w[i + 1];
          const code = arg !== undefined && /^\d+$/.test(arg) ? Number(arg) % 256 : lastCode;
          return { kind: 'exits', afterMs: slept, exitCode: code };
        }
        case 'false':
          lastCode = 1;
          break;
        default:
          if (atCommandStart) {
            if (script && base === first && i === 0) break; // the shell itself
            if (servesForever(w, i, base)) return FOREVER;
            // A command kcm does not know (an app the script starts) runs until stopped.
            if (!endsByItself(w, i, base)) return FOREVER;
            lastCode = 0;
            // Its arguments are not commands (`python -c ...`, `echo exit`).
            while (i + 1 < w.length && w[i + 1] !== ';') i++;
          }
          break;
      }
    }
    atCommandStart = false;
  }
  return { kind: 'exits', afterMs: slept, exitCode: lastCode };
}
