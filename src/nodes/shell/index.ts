/**
 * A small deterministic shell for simulated containers: a POSIX sh / bash
 * subset interpreter with an in-memory file system, running on virtual time.
 * It is meant for container commands, exec probes, lifecycle hooks and
 * `kubectl exec`. Nothing here reads the real clock, uses randomness or
 * starts a real process.
 *
 * ```ts
 * const fs = createStandardFs({ hostname: 'web-0', podIP: '10.244.0.5' });
 * fs.mount('/etc/config', buildAtomicVolume({ 'a.conf': { content: 'x=1\n' } }, now), { readOnly: true });
 * const p = startProcess({ argv: ['sh', '-c', 'while true; do date; sleep 1; done'], fs, clock: now, hostname: 'web-0' });
 * p.advance(now + 5000);     // { state: 'sleeping', wakeAt, output: [{ stream, data, atMs }, ...] }
 * p.signal('TERM', now + 6000); // runs a `trap ... TERM`; a PID 1 shell without one ignores it
 * p.kill(now + 36000);         // exit code 137
 * runToCompletion({ argv: ['cat', '/tmp/healthy'], fs, clock: now }, 1000); // exec probe
 * ```
 *
 * | Area | Supported |
 * |------|-----------|
 * | Words | `'...'`, `"..."`, `\` escapes, `$'...'`, line continuations, `#` comments, `~` |
 * | Lists | `;`, newline, `&&`, `\|\|`, `!`, pipelines `a \| b` (stages run one after another), `&` (a concurrent background job on the same virtual clock) |
 * | Compound | `( ... )`, `{ ...; }`, `if/elif/else/fi`, `while`/`until ... do ... done`, `for x [in ...]; do ... done`, `case ... in a\|b) ;; *) ;; esac` (also `;&`), functions `f() { }` / `function f { }` with `local`, `return`, `(( expr ))`, `[[ ... ]]` |
 * | Expansions | `$X`, `${X}`, `${X:-d}` `${X-d}` `${X:=d}` `${X:+a}` `${X:?msg}`, `${#X}`, `${X#p}` `${X##p}` `${X%p}` `${X%%p}`, `${X/p/r}` `${X//p/r}`, `${X:off:len}`, `$?` `$$` `$!` `$#` `$@` `"$@"` `$*` `$0`..`$9` `$-` `$RANDOM` (deterministic), `$(...)`, backticks, `$((...))` (integers: `+ - * / % **`, comparisons, `&& \|\| !`, bit ops, `?:`, `= += -= ...`, `++ --`, hex/octal), field splitting on `IFS`, globbing `* ? [...]` against the file system |
 * | Redirections | `>`, `>>`, `<`, `<>`, `>\|`, `2>&1`, `>&2`, `N>&-`, `&>`, `&>>`, `>& file`, `2>/dev/null`, here-docs `<<EOF` / `<<'EOF'` / `<<-EOF`, here-strings `<<<`, `exec >file 2>&1` for the rest of the script |
 * | Options | `set -e` (with POSIX exemptions: conditions, `&&`/`\|\|` operands, `!`), `set -u`, `set -x` (prints `+ cmd`), `set -o pipefail`, `set -- args`, `sh -c script arg0 args`, `sh -ec`, `sh file` |
 * | Signals | `trap 'cmd' TERM INT HUP ... EXIT`, `trap '' SIG` (ignore), `trap - SIG`, `trap` (list); a trapped signal interrupts `sleep`/`wait`/blocked programs (option `trapInterruptsSleep`, default true); without a trap a PID 1 shell ignores TERM; `exec CMD` replaces the shell (its traps are dropped, CMD becomes PID 1) |
 * | Shell builtins | `:` `true` `false` `exit` `return` `break [n]` `continue [n]` `export` `readonly` `local` `unset [-f]` `set` `shift` `trap` `exec` `wait [pid]` `eval` `.` `source` `read [-r]` `command [-v]` `type` `which` `cd [-]` `pwd` `let` `kill` (checks only) `sh`/`bash`/`ash`/`dash` (nested, share virtual time) |
 * | Commands | `hexdump -C`, `xxd`, `echo [-neE]`, `printf` (`%s %d %i %u %x %X %o %c %f %e %q %b %%`, widths, flags, format reuse), `env [-i] [-u N] [N=V] [cmd]`, `printenv`, `cat [-n]`, `ls [-laA1dFpr]` (busybox long format, `name -> target`, `total N`), `test`/`[`/`[[ ]]` (`-e -f -d -r -w -x -s -z -n -h -L -c`, `= == != < >`, `-eq -ne -lt -le -gt -ge -nt -ot`, `!`, `-a -o`, `( )`; `[[ ]]` adds `&& \|\|`, glob `==`, regex `=~`), `touch`, `rm [-rfv]`, `mv [-v]`, `cp [-rRav]`, `mkdir [-pm]`, `rmdir`, `ln [-sfn]`, `chmod` (octal and `u+x,go-w` forms), `chown`/`chgrp` (no-ops), `readlink [-f]`, `realpath`, `stat [-c FMT]`, `sleep` (`N`, `1.5`, `1s`, `1m`, `1h`, `1d`, several summed, `infinity`), `timeout DUR cmd`, `hostname [-i]`, `date [-u] [-R] [-I] [-d @N] [+FMT]` (busybox `Thu Nov 26 18:02:07 UTC 2026`), `id`, `whoami`, `uname [-asnrvmo]`, `nproc`, `head`/`tail` (`-n N`, `-N`, `-n +N`, `-c N`, `tail -f` runs forever), `wc [-lwcm]`, `grep [-qvciEFxwnolLh] [-e P] [-m N]` (BRE/ERE/fixed), `sed [-n] [-i] [-E] [-e]` (`s///gip`, `d`, `p`, `q`, `=`, `a`/`i`/`c`, addresses `N`, `$`, `/re/`), `tr [-dsc]`, `cut -d -f / -c`, `sort [-nrug] [-k N] [-t C]`, `uniq [-cdu]`, `tee [-a]`, `seq [-s]`, `expr`, `base64 [-d]`, `md5sum`, `sha1sum`, `sha256sum`, `sha512sum`, `basename`, `dirname`, `yes` (then forever) |
 * | Network | `wget [-q] [-O FILE\|-] [-T SEC] [--spider] [--header] [--post-data]`, `curl [-sSfiIL] [-o FILE] [-O] [-w '%{http_code}'] [-X M] [-H H] [-d D] [-m SEC]` through the `http` callback (busybox/curl messages and exit codes: 6, 7, 22, 28, 56), `nslookup` through the `dns` callback |
 * | Other programs | Anything else goes to the `external(argv, ctx)` hook: it may return `{ exitCode, stdout, stderr, durationMs }`, `{ forever, sigterm }` or `{ notFound }` (`sh: X: not found`, 127); without an answer the program runs until stopped (state `forever`). A path to a file with a `#!/bin/sh` (or no) shebang runs as a script (126 when not executable). |
 * | Time | `advance(untilMs)` runs until everything is blocked past `untilMs`; output chunks carry their virtual time and stream; states `sleeping` (with `wakeAt`), `forever`, `busy` (a loop that used its step budget, `maxSteps` per job per advance, default 10000; it goes on at the next advance), `exited` (with `exitCode`, `exitedAt`) |
 * | File system | Directories, files (Buffer, mode, mtime from virtual time), symlinks (followed, loops detected), `/dev/null`, mounts of shared directory objects (`mount(path, dir, { readOnly })`, emptyDir between containers), read-only mounts (`Read-only file system`), kubelet AtomicWriter volumes (`buildAtomicVolume`, `updateAtomicVolume`: `..<timestamp>/key`, `..data`, `key -> ..data/key`), standard files (`/etc/hostname`, `/etc/hosts`, `/etc/resolv.conf`, `/etc/passwd`, `/etc/group`, `/tmp` 1777, `/bin`, `/root`, `/proc`, ...) |
 *
 * Not supported: arrays, `${!X}`, brace expansion `{a,b}`, `PIPESTATUS`,
 * `BASH_REMATCH` groups (only the whole match), job control (`jobs`, `fg`,
 * `%1`), `select`, `getopts`, `ulimit`/`umask` (accepted, no effect),
 * process substitution `<(...)`, coprocesses, fds above 2 (accepted, mapped
 * to nothing), `awk`, `find`, `xargs`, `ps`, `nc`, `ping` (these go to the
 * `external` hook), users other than root (every permission check passes,
 * except the executable bit of scripts and read-only mounts), `kill` of other
 * processes (use `signal`), `timeout` does not see a `wait` that would finish
 * before its deadline, signals to a PID 1 program other than through `signal`.
 */
export { startProcess, runToCompletion, ShellProcess } from './process.js';
export type { StartOptions, ProcessStatus, ProcessState, OutputChunk, SignalResult } from './process.js';
export {
  FileSystem,
  FsError,
  createStandardFs,
  buildAtomicVolume,
  updateAtomicVolume,
  atomicDirName,
  newDir,
  newFile,
  newSymlink,
  errorText,
} from './fs.js';
export type { FsNode, DirNode, FileNode, SymlinkNode, DevNode, FsErrorCode, MountOptions, StandardFsOptions, VolumeFile } from './fs.js';
export { parse, ShellSyntaxError } from './parser.js';
export type { HttpHandler, HttpRequest, HttpResult, ExternalHandler, ExternalResult, ExternalContext } from './interpreter.js';
export { formatDate, parseDuration, signalName } from './builtins.js';
