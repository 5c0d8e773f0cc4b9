/**
 * What a simulated container "does", read from its command and args. Nothing
 * is executed: the words are scanned for the few shapes tests and examples
 * use.
 *
 *   ["sleep", "30"]                         runs 30 s, then exits 0
 *   ["sh", "-c", "sleep 2; exit 1"]         runs 2 s, then exits 1
 *   ["sh", "-c", "exit 3"]                  exits 3 at once
 *   ["true"] / ["false"]                    exits 0 / 1 at once
 *   ["sleep", "infinity"], loops, anything else, no command at all
 *                                           runs until stopped
 *
 * Sleeps before the first `exit` add up; words after it never run. A shell
 * loop (`while`, `until`, `for`) runs until stopped unless an `exit` comes
 * before the loop.
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

/** The program of a container with this `command` and `args` (either may be missing). */
export function parseProgram(command: readonly string[] | undefined, args: readonly string[] | undefined): Program {
  const all = [...(command ?? []), ...(args ?? [])];
  if (all.length === 0) return FOREVER;
  const w = words(all.join(' '));
  let slept = 0;
  let sawSleep = false;
  // Only the word at the start of a simple command is a command name.
  let atCommandStart = true;
  for (let i = 0; i < w.length; i++) {
    const word = w[i]!;
    if (word === ';' || word === '-c') {
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
            sawSleep = true;
            i++;
          }
          break;
        }
        case 'exit': {
          const arg = w[i + 1];
          const code = arg !== undefined && /^\d+$/.test(arg) ? Number(arg) % 256 : 0;
          return { kind: 'exits', afterMs: slept, exitCode: code };
        }
        case 'true':
          if (w.length === i + 1 || w[i + 1] === ';') return { kind: 'exits', afterMs: slept, exitCode: 0 };
          break;
        case 'false':
          if (w.length === i + 1 || w[i + 1] === ';') return { kind: 'exits', afterMs: slept, exitCode: 1 };
          break;
        default:
          break;
      }
    }
    atCommandStart = false;
  }
  return sawSleep ? { kind: 'exits', afterMs: slept, exitCode: 0 } : FOREVER;
}
