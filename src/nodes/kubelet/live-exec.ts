/**
 * `kubectl exec` in a simulated container: the command runs in the
 * container's shell and file system on the node's clock in real time (a
 * `sleep 2` takes two seconds), its output streamed as it is written.
 *
 * - stdin (`-i`) is read to its end, or until it has been quiet for 250 ms,
 *   before the command starts (the shell takes stdin as a whole);
 * - with a TTY (`-t`), output gets the terminal's `\r\n`, and a shell run
 *   without `-c` (`kubectl exec -it pod -- sh`) is an interactive prompt:
 *   each line runs as it is entered, `cd` persists, variables do not
 *   (each line is its own `sh -c`), Ctrl-C drops the line, Ctrl-D or `exit`
 *   ends the session;
 * - a command still running when the client goes away is killed.
 */
import type { Clock } from '../../util/clock/clock.js';
import { isInteractiveShell, type ContainerRun } from '../container-process.js';
import type { ShellProcess } from '../shell/index.js';
import type { ExecOutcome, ExecStreams } from './streaming/index.js';

const QUIET_STDIN_MS = 250;

function base(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** Reads stdin to its end, or until nothing came for QUIET_STDIN_MS. */
async function readStdin(s: ExecStreams): Promise<string> {
  if (!s.stdin) return '';
  const it = s.stdin[Symbol.asyncIterator]();
  const parts: Buffer[] = [];
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const quiet = new Promise<'quiet'>((r) => (timer = setTimeout(() => r('quiet'), QUIET_STDIN_MS)));
    const next = await Promise.race([it.next(), quiet]);
    clearTimeout(timer);
    if (next === 'quiet' || next.done) break;
    parts.push(next.value);
  }
  return Buffer.concat(parts).toString();
}

/** Drives `p` on the clock until it exits or the client goes away; output goes to the streams. */
async function drive(p: ShellProcess, clock: Clock, s: ExecStreams, tty: boolean): Promise<number> {
  const out = (stream: 'stdout' | 'stderr', data: string) => {
    const d = tty ? data.replace(/\r?\n/g, '\r\n') : data;
    if (stream === 'stderr' && s.stderr) s.stderr(d);
    else s.stdout?.(d);
  };
  let closed = s.closed;
  let wake: (() => void) | undefined;
  s.onClose(() => {
    closed = true;
    wake?.();
  });
  for (;;) {
    const st = p.advance(clock.now());
    for (const c of st.output) out(c.stream, c.data);
    if (st.state === 'exited') return st.exitCode ?? 0;
    if (closed) {
      p.kill(clock.now());
      return 137;
    }
    const waitMs = st.state === 'sleeping' && st.wakeAt !== undefined ? Math.max(0, st.wakeAt - clock.now()) : st.state === 'busy' ? 10 : 1000;
    await new Promise<void>((r) => {
      const t = clock.setTimer(() => r(), Math.min(waitMs, 1000));
      wake = () => {
        t.stop();
        r();
      };
    });
    wake = undefined;
  }
}

/** Runs `kubectl exec`'s command in the container. */
export async function runLiveExec(run: ContainerRun, command: string[], s: ExecStreams, clock: Clock): Promise<ExecOutcome> {
  if (command.length === 0) return { error: 'command is required' };
  const interactive = s.tty && !!s.stdin && isInteractiveShell(command);
  if (interactive) return repl(run, command, s, clock);
  const stdin = await readStdin(s);
  const p = run.startExec(command, clock.now(), stdin || undefined);
  return { exitCode: await drive(p, clock, s, s.tty) };
}

const MARK = '\u0000KCMCWD:';

/** An interactive shell session over a TTY (see the header). */
async function repl(run: ContainerRun, command: string[], s: ExecStreams, clock: Clock): Promise<ExecOutcome> {
  const shell = base(command[0]!);
  let cwd = '/';
  let host = 'localhost';
  try {
    host = run.fs.readText('/etc/hostname').trim() || host;
  } catch {
    /* no /etc/hostname */
  }
  const prompt = () => (shell === 'bash' ? `root@${host}:${cwd}# ` : `${cwd} # `);
  s.stdout?.(prompt());
  let line = '';
  let last = 0;
  for await (const chunk of s.stdin!) {
    for (const ch of chunk.toString()) {
      if (ch === '\u0004' && line === '') {
        s.stdout?.('\r\n');
        return { exitCode: last };
      }
      if (ch === '\u0003') {
        s.stdout?.('^C\r\n' + prompt());
        line = '';
        continue;
      }
      if (ch === '\u007f' || ch === '\b') {
        if (line.length > 0) {
          line = line.slice(0, -1);
          s.stdout?.('\b \b');
        }
        continue;
      }
      if (ch !== '\r' && ch !== '\n') {
        line += ch;
        s.stdout?.(ch);
        continue;
      }
      s.stdout?.('\r\n');
      const cmd = line.trim();
      line = '';
      const exit = /^exit(?:\s+(\d+))?$/.exec(cmd);
      if (exit) return { exitCode: exit[1] !== undefined ? Number(exit[1]) % 256 : last };
      if (cmd !== '') {
        const script = `cd ${JSON.stringify(cwd)} 2>/dev/null\n${cmd}\n__kcm_rc=$?\nprintf '${MARK.replace('\u0000', '\\000')}%s\\000' "$PWD"\nexit $__kcm_rc`;
        const p = run.startExec([shell, '-c', script], clock.now());
        let pending = '';
        const filtered: ExecStreams = {
          ...s,
          stdout: (d) => {
            pending += d.toString();
            const i = pending.indexOf(MARK.replace('\u0000', '\0'));
            if (i >= 0) {
              const endI = pending.indexOf('\0', i + 1);
              if (endI > i) {
                cwd = pending.slice(i + MARK.length, endI) || cwd;
                s.stdout?.(pending.slice(0, i) + pending.slice(endI + 1));
                pending = '';
              }
              return;
            }
            s.stdout?.(pending);
            pending = '';
          },
          onClose: (cb) => s.onClose(cb),
          onResize: (cb) => s.onResize(cb),
          closed: s.closed,
        };
        last = await drive(p, clock, filtered, true);
        if (pending) s.stdout?.(pending);
      }
      if (s.closed) return { exitCode: last };
      s.stdout?.(prompt());
    }
  }
  return { exitCode: last };
}
