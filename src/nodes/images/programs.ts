/**
 * The programs of known images, as an `ExternalHandler` for the simulated
 * shell: agnhost (its subcommands), nginx, httpd, the pause container,
 * docker-entrypoint.sh, redis-server. Output formats follow the real programs
 * (agnhost v2.21 as used by Kubernetes v1.20 conformance tests).
 */
import { FsError, type ExternalContext, type ExternalHandler, type ExternalResult, type FsNode } from '../shell/index.js';
import { parseImage } from './entrypoint.js';
import { goErrno, goFileMode, goLog, goQuote, parseGoDuration } from './go.js';

export interface KnownProgramsOptions {
  podName?: string;
  podIP?: string;
  /** Default for programs that print the host name; the shell's hostname wins when set. */
  hostname?: string;
  /** The container image (for versions: `nginx -v`). */
  image?: string;
  /**
   * What `mounttest --fs_type` reports for a path: `'tmpfs'` (emptyDir with
   * medium Memory, Secret/ConfigMap/downwardAPI/projected volumes) or the
   * statfs magic number. Default: 61267 (ext4, 0xEF53).
   */
  fsType?: (path: string) => 'tmpfs' | number | undefined;
}

/** Go programs without a SIGTERM handler, as PID 1: Go's handler re-raises SIGTERM, the kernel ignores it for a namespace's init, so the runtime calls exit(2). */
const GO_SIGTERM = { sigterm: 'exit' as const, sigtermExitCode: 2 };

/** agnhost's subcommands (v2.21); those not simulated run until stopped. */
export const AGNHOST_SUBCOMMANDS = [
  'audit-proxy',
  'connect',
  'crd-conversion-webhook',
  'dns-suffix',
  'dns-server-list',
  'etc-hosts',
  'entrypoint-tester',
  'fake-gitserver',
  'guestbook',
  'inclusterclient',
  'liveness',
  'logs-generator',
  'mounttest',
  'net',
  'netexec',
  'nettest',
  'no-snat-test',
  'no-snat-test-proxy',
  'pause',
  'porter',
  'port-forward-tester',
  'resource-consumer-controller',
  'serve-hostname',
  'test-webserver',
  'webhook',
  'test-service-account-issuer-discovery',
];

type FlagKind = 'string' | 'int' | 'bool';

export interface ParsedFlags {
  flags: Map<string, string>;
  positional: string[];
  error?: string;
}

/** pflag-style parsing: `--name=value`, `--name value`, bool `--name` / `--name=false`, `--` ends flags. */
export function parseFlags(args: string[], spec: Record<string, FlagKind>): ParsedFlags {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      positional.push(...args.slice(i + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      positional.push(a);
      continue;
    }
    const body = a.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq >= 0 ? body.slice(0, eq) : body;
    const kind = spec[name];
    if (!kind || !a.startsWith('--')) return { flags, positional, error: a.startsWith('--') ? `unknown flag: --${name}` : `unknown shorthand flag: '${name[0]}' in ${a}` };
    let value: string;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (kind === 'bool') value = 'true';
    else if (i + 1 < args.length) value = args[++i]!;
    else return { flags, positional, error: `flag needs an argument: --${name}` };
    if (kind === 'int' && !/^[+-]?\d+$/.test(value)) return { flags, positional, error: `invalid argument ${goQuote(value)} for "--${name}" flag: strconv.ParseInt: parsing ${goQuote(value)}: invalid syntax` };
    if (kind === 'bool' && !/^(1|0|t|f|T|F|true|false|TRUE|FALSE|True|False)$/.test(value)) return { flags, positional, error: `invalid argument ${goQuote(value)} for "--${name}" flag: strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax` };
    flags.set(name, kind === 'bool' ? String(/^(1|t|T|true|TRUE|True)$/.test(value)) : value);
  }
  return { flags, positional };
}

function base(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? p : p.slice(i + 1);
}

/** The argv of the program a container argv ends up running (skips `docker-entrypoint.sh`, `exec`). */
export function programOf(argv: string[]): string[] {
  let a = argv;
  while (a.length > 0 && (base(a[0]!) === 'docker-entrypoint.sh' || a[0] === 'exec')) a = a.slice(1);
  return a;
}

export const MOUNTTEST_FLAGS: Record<string, FlagKind> = {
  fs_type: 'string',
  file_mode: 'string',
  file_perm: 'string',
  file_owner: 'string',
  new_file_0644: 'string',
  new_file_0666: 'string',
  new_file_0660: 'string',
  new_file_0777: 'string',
  file_content: 'string',
  file_content_in_loop: 'string',
  retry_time: 'int',
  break_on_expected_content: 'bool',
};

const INITIAL_CONTENT = 'mount-tester new file\n';

function errCode(e: unknown): string {
  return e instanceof FsError ? e.code : 'EINVAL';
}

/** The node os.Stat sees (symlinks followed), or the errno. */
function statNode(ctx: ExternalContext, path: string): FsNode | string {
  try {
    const r = ctx.fs.resolve(path, ctx.cwd, true);
    return r.node ?? 'ENOENT';
  } catch (e) {
    return errCode(e);
  }
}

/** ioutil.ReadFile: content, or Go's error text. */
function goReadFile(ctx: ExternalContext, path: string): { data: string } | { err: string } {
  const n = statNode(ctx, path);
  if (typeof n === 'string') return { err: `open ${path}: ${goErrno(n)}` };
  if (n.type === 'dir') return { err: `read ${path}: is a directory` };
  if (n.type === 'dev') return { data: '' };
  if (n.type !== 'file') return { err: `open ${path}: ${goErrno('ELOOP')}` };
  return { data: n.data.toString('utf8') };
}

function mounttest(args: string[], ctx: ExternalContext, opts: KnownProgramsOptions, arg0: string): ExternalResult {
  const p = parseFlags(args, MOUNTTEST_FLAGS);
  if (p.error) return { exitCode: 1, stderr: `Error: ${p.error}\n` };
  if (p.positional.length > 0) return { exitCode: 1, stderr: `Error: accepts at most 0 arg(s), received ${p.positional.length}\n` };
  const f = (n: string): string => p.flags.get(n) ?? '';
  ctx.fs.now = ctx.now;
  let out = '';
  let failed = false;
  const fsTypePath = f('fs_type');
  if (fsTypePath) {
    const n = statNode(ctx, fsTypePath);
    if (typeof n === 'string') {
      out += `error from statfs(${goQuote(fsTypePath)}): ${goErrno(n)}\n`;
      failed = true;
    } else {
      const t = opts.fsType?.(fsTypePath) ?? 61267;
      out += `mount type of ${goQuote(fsTypePath)}: ${t === 'tmpfs' || t === 0x01021994 ? 'tmpfs' : t}\n`;
    }
  }
  const readContent = (path: string): boolean => {
    const r = goReadFile(ctx, path);
    if ('err' in r) {
      out += `error reading file content for ${goQuote(path)}: ${r.err}\n`;
      return false;
    }
    out += `content of file ${goQuote(path)}: ${r.data}\n`;
    return true;
  };
  for (const [flag, perm] of [
    ['new_file_0644', 0o644],
    ['new_file_0666', 0o666],
    ['new_file_0660', 0o660],
    ['new_file_0777', 0o777],
  ] as const) {
    const path = f(flag);
    if (!path) continue;
    try {
      ctx.fs.writeFile(path, INITIAL_CONTENT, { mode: perm, cwd: ctx.cwd });
    } catch (e) {
      out += `error writing new file ${goQuote(path)}: open ${path}: ${goErrno(errCode(e))}\n`;
      failed = true;
      continue;
    }
    if (!readContent(path)) failed = true;
  }
  const statLine = (path: string, line: (n: FsNode) => string, errFmt: (e: string) => string): void => {
    if (!path) return;
    const n = statNode(ctx, path);
    if (typeof n === 'string') {
      out += errFmt(goErrno(n));
      failed = true;
    } else out += line(n);
  };
  const modePath = f('file_mode');
  statLine(modePath, (n) => `mode of file ${goQuote(modePath)}: ${goFileMode(n)}\n`, (e) => `error from Stat(${goQuote(modePath)}): stat ${modePath}: ${e}\n`);
  const permPath = f('file_perm');
  statLine(permPath, (n) => `perms of file ${goQuote(permPath)}: ${goFileMode(n, true)}\n`, (e) => `error from Stat(${goQuote(permPath)}): stat ${permPath}: ${e}\n`);
  const ownerPath = f('file_owner');
  statLine(ownerPath, () => `owner UID of ${goQuote(ownerPath)}: 0\nowner GID of ${goQuote(ownerPath)}: 0\n`, (e) => `error from stat(${goQuote(ownerPath)}): ${e}\n`);
  const contentPath = f('file_content');
  if (contentPath && !readContent(contentPath)) failed = true;
  const loopPath = f('file_content_in_loop');
  if (!loopPath) return { exitCode: failed ? 1 : 0, stdout: out };
  const retry = Number(p.flags.get('retry_time') ?? '180');
  const brk = p.flags.get('break_on_expected_content') ?? 'true';
  // time.Since(start) < retry, sleeping 2 s after each iteration: ceil(retry/2) reads
  const n = retry > 0 ? Math.ceil(retry / 2) : 0;
  return {
    script: MOUNTTEST_LOOP,
    arg0,
    args: [out, failed ? '1' : '0', loopPath, brk, String(n), arg0],
  };
}

/** mounttest's testFileContent loop as a script on virtual time; each read is `agnhost __kcm_mounttest_read`. */
const MOUNTTEST_LOOP = `printf '%s' "$1"
fail=$2; path=$3; brk=$4; n=$5; bin=$6; err=0; i=0
while [ "$i" -lt "$n" ]; do
  i=$((i+1))
  "$bin" __kcm_mounttest_read "$path" "$brk"
  rc=$?
  if [ "$rc" -eq 1 ]; then err=1; else err=0; fi
  if [ "$rc" -eq 0 ] && [ "$brk" = true ]; then break; fi
  sleep 2
done
if [ "$fail" = 1 ] || [ "$err" = 1 ]; then exit 1; fi
exit 0
`;

/** One iteration of testFileContent: 0 = read (and expected when breaking), 1 = read error, 2 = unexpected content. */
function mounttestReadOnce(args: string[], ctx: ExternalContext): ExternalResult {
  const path = args[0] ?? '';
  const brk = args[1] === 'true';
  const r = goReadFile(ctx, path);
  if ('err' in r) return { exitCode: 1, stdout: `Error reading file ${path}: ${r.err}, retrying\n` };
  let out = `content of file ${goQuote(path)}: ${r.data}\n`;
  if (brk && r.data !== INITIAL_CONTENT) {
    out += `Unexpected content. Expected: ${INITIAL_CONTENT}. Retrying`;
    return { exitCode: 2, stdout: out };
  }
  return { exitCode: 0, stdout: out };
}

function resolvConfField(ctx: ExternalContext, field: string): string[] | undefined {
  let text: string;
  try {
    text = ctx.fs.readText('/etc/resolv.conf');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) if (line.startsWith(field)) return line.split(' ').slice(1);
  return undefined;
}

const GO_PANIC_DNS = 'panic: Could not find DNS search list!\n\ngoroutine 1 [running]:\n';

function agnhost(argv: string[], ctx: ExternalContext, opts: KnownProgramsOptions): ExternalResult | undefined {
  const sub = argv[1];
  const rest = argv.slice(2);
  const now = ctx.now;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    return { exitCode: 0, stdout: 'agnhost: a multi-purpose image for Kubernetes e2e tests (simulated).\n\nUsage:\n  agnhost [command]\n' };
  }
  const simple = (spec: Record<string, FlagKind>): ParsedFlags | ExternalResult => {
    const p = parseFlags(rest, spec);
    if (p.error) return { exitCode: 1, stderr: `Error: ${p.error}\n` };
    return p;
  };
  const isErr = (x: ParsedFlags | ExternalResult): x is ExternalResult => !('flags' in x);
  switch (sub) {
    case '__kcm_mounttest_read':
      return mounttestReadOnce(rest, ctx);
    case 'mounttest':
      return mounttest(rest, ctx, opts, argv[0]!);
    case 'entrypoint-tester':
      return { exitCode: 0, stdout: `[${argv.join(' ')}]\n` };
    case 'logs-generator': {
      const p = simple({ 'log-lines-total': 'int', t: 'int', 'run-duration': 'string', d: 'string' });
      if (isErr(p)) return p;
      return logsGenerator(Number(p.flags.get('log-lines-total') ?? p.flags.get('t') ?? 0), parseGoDuration(p.flags.get('run-duration') ?? p.flags.get('d') ?? '0') ?? 0, opts.podName ?? ctx.hostname);
    }
    case 'pause':
      // signal.Notify(SIGINT, SIGTERM): SIGTERM -> os.Exit(2)
      return { forever: true, stdout: 'Paused\n', sigterm: 'exit', sigtermExitCode: 2 };
    case 'dns-suffix':
    case 'dns-server-list': {
      const v = resolvConfField(ctx, sub === 'dns-suffix' ? 'search' : 'nameserver');
      if (!v) return { exitCode: 2, stderr: GO_PANIC_DNS };
      return { exitCode: 0, stdout: v.join(',') + '\n' };
    }
    case 'etc-hosts': {
      try {
        return { exitCode: 0, stdout: ctx.fs.readText('/etc/hosts') + '\n' };
      } catch {
        return { exitCode: 2, stderr: 'panic: open /etc/hosts: no such file or directory\n' };
      }
    }
    case 'netexec': {
      const p = simple({ 'http-port': 'int', 'udp-port': 'int', 'sctp-port': 'int', 'tls-cert-file': 'string', 'tls-private-key-file': 'string', 'http-override': 'string' });
      if (isErr(p)) return p;
      const http = p.flags.get('http-port') ?? '8080';
      const udp = p.flags.get('udp-port') ?? '8081';
      return { forever: true, stderr: goLog(now, `Started HTTP server on port ${http}`) + goLog(now, `Started UDP server on port ${udp}`), ...GO_SIGTERM };
    }
    case 'serve-hostname': {
      const p = simple({ tcp: 'bool', udp: 'bool', http: 'bool', close: 'bool', port: 'int' });
      if (isErr(p)) return p;
      const on = (n: string, d: boolean): boolean => (p.flags.has(n) ? p.flags.get(n) === 'true' : d);
      if (on('http', true) && (on('tcp', false) || on('udp', false))) {
        return { exitCode: 1, stderr: goLog(now, "Can't server TCP/UDP mode and HTTP mode at the same time") };
      }
      // it handles SIGTERM: logs, then sleeps 60 s before exiting 0 (the grace period usually ends first)
      return { forever: true, stderr: goLog(now, `Serving on port ${p.flags.get('port') ?? '9376'}.`), sigterm: 'ignore' };
    }
    case 'liveness': {
      const p = simple({});
      if (isErr(p)) return p;
      return { forever: true, ...GO_SIGTERM };
    }
    case 'test-webserver': {
      const p = simple({ port: 'int' });
      if (isErr(p)) return p;
      return { forever: true, ...GO_SIGTERM };
    }
    case 'porter': {
      const p = simple({ 'json-response': 'bool' });
      if (isErr(p)) return p;
      return { forever: true, ...GO_SIGTERM };
    }
    default:
      if (AGNHOST_SUBCOMMANDS.includes(sub)) return undefined;
      if (sub.startsWith('-')) return undefined;
      return { exitCode: 1, stderr: `Error: unknown command ${goQuote(sub)} for "agnhost"\nRun 'agnhost --help' for usage.\n` };
  }
}

/** nginx version from the image tag (`1.14-alpine` -> 1.14.2). */
export function nginxVersion(image: string | undefined): string {
  const tag = image ? parseImage(image).tag : undefined;
  const full = /^(\d+\.\d+\.\d+)/.exec(tag ?? '');
  if (full) return full[1]!;
  const mm = /^(\d+\.\d+)/.exec(tag ?? '');
  const known: Record<string, string> = {
    '1.14': '1.14.2',
    '1.15': '1.15.12',
    '1.16': '1.16.1',
    '1.17': '1.17.10',
    '1.18': '1.18.0',
    '1.19': '1.19.10',
    '1.20': '1.20.2',
    '1.21': '1.21.6',
    '1.22': '1.22.1',
    '1.23': '1.23.4',
    '1.24': '1.24.0',
    '1.25': '1.25.5',
    '1.26': '1.26.3',
    '1.27': '1.27.5',
  };
  if (mm) return known[mm[1]!] ?? `${mm[1]}.0`;
  return '1.27.5';
}

/** httpd version from the image tag (`2.4.38-alpine` -> 2.4.38). */
export function httpdVersion(image: string | undefined): string {
  const tag = image ? parseImage(image).tag : undefined;
  const full = /^(\d+\.\d+\.\d+)/.exec(tag ?? '');
  return full ? full[1]! : '2.4.62';
}

function nginx(args: string[], opts: KnownProgramsOptions): ExternalResult {
  const v = nginxVersion(opts.image);
  if (args.includes('-v')) return { exitCode: 0, stderr: `nginx version: nginx/${v}\n` };
  if (args.includes('-t')) {
    return {
      exitCode: 0,
      stderr: 'nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\nnginx: configuration file /etc/nginx/nginx.conf test is successful\n',
    };
  }
  const s = args.indexOf('-s');
  if (s >= 0) return { exitCode: 0 }; // signals the (already running) master
  const g = args.indexOf('-g');
  const foreground = g >= 0 && /daemon\s+off\s*;/.test(args[g + 1] ?? '');
  // without `daemon off;` the master daemonizes and the foreground process exits 0
  if (!foreground) return { exitCode: 0 };
  return { forever: true, sigterm: 'exit', sigtermExitCode: 0 };
}

/** Known servers that, run in the foreground, print nothing and block until signalled. */
const SILENT_SERVERS = new Set(['nginx', 'httpd-foreground', 'httpd', 'pause', 'redis-server']);

/**
 * Whether `argv` (an image's own command) starts a known server that blocks
 * at once, printing nothing, until signalled: what knownPrograms makes of it
 * (through the official images' docker-entrypoint.sh, which execs its
 * arguments) is a program that runs forever without output. Such a
 * container's process may be started when first used (ContainerRun).
 */
export function silentServer(argv: readonly string[], image: string): boolean {
  let rest = [...argv];
  while (rest.length > 1 && base(rest[0]!) === 'docker-entrypoint.sh') rest = rest.slice(1);
  if (rest.length === 0 || !SILENT_SERVERS.has(base(rest[0]!))) return false;
  // These programs read nothing from their context: a bare one is enough to ask what they do.
  const r = knownPrograms({ image })(rest, { cwd: '/', env: {}, fs: undefined as unknown as ExternalContext['fs'], now: 0, stdin: '', hostname: '' });
  return !!r && 'forever' in r && !r.stdout && !r.stderr;
}

/**
 * The programs of known images. argv[0] may be a bare name or a path.
 * Returns undefined for anything it does not know (the caller's rule:
 * runs until stopped).
 */
export function knownPrograms(opts: KnownProgramsOptions = {}): ExternalHandler {
  return (argv, ctx) => {
    if (argv.length === 0) return undefined;
    const name = base(argv[0]!);
    switch (name) {
      case 'agnhost':
      case 'agnhost-2':
        return agnhost(argv, { ...ctx, hostname: ctx.hostname || opts.hostname || 'localhost' }, opts);
      case 'docker-entrypoint.sh':
        // the official images' entrypoint: setup, then `exec "$@"`
        return argv.length > 1 ? { script: 'exec "$@"', arg0: argv[0]!, args: argv.slice(1) } : { exitCode: 0 };
      case 'nginx':
        return nginx(argv.slice(1), opts);
      case 'httpd-foreground':
        return { forever: true, sigterm: 'exit', sigtermExitCode: 0 };
      case 'httpd':
        if (argv.includes('-v')) return { exitCode: 0, stdout: `Server version: Apache/${httpdVersion(opts.image)} (Unix)\n` };
        if (argv.includes('-DFOREGROUND')) return { forever: true, sigterm: 'exit', sigtermExitCode: 0 };
        return { exitCode: 0 };
      case 'pause':
        // k8s.gcr.io/pause: sigdown() -> exit(0) on SIGINT/SIGTERM
        return { forever: true, sigterm: 'exit', sigtermExitCode: 0 };
      case 'redis-server':
        return { forever: true, sigterm: 'exit', sigtermExitCode: 0 };
      default:
        return undefined;
    }
  };
}

/**
 * agnhost logs-generator: `--log-lines-total` lines spread evenly over
 * `--run-duration`, each a klog Info line on stderr
 * (`I1126 18:02:07.000000       1 logs_generator.go:76] 7 GET /api/v1/namespaces/ns/pods/abcd 404`).
 * Its random choices come from a generator seeded by the pod's name, so a
 * run is reproducible; the first line is always in kube-system.
 */
function logsGenerator(lines: number, durationMs: number, seed: string): ExternalResult {
  if (lines <= 0) return { exitCode: 255, stderr: `F0000 00:00:00.000000       1 logs_generator.go:64] Invalid total number of lines: ${lines}\n` };
  if (durationMs <= 0) return { exitCode: 255, stderr: `F0000 00:00:00.000000       1 logs_generator.go:67] Invalid duration: 0s\n` };
  let state = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) state = Math.imul(state ^ seed.charCodeAt(i), 0x01000193) >>> 0;
  const rand = (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
  const methods = ['GET', 'POST', 'PUT'];
  const namespaces = ['kube-system', 'default', 'ns'];
  const letters = 'bcdfghjklmnpqrstvwxz2456789';
  const delay = (durationMs / lines / 1000).toFixed(3);
  let script = '';
  for (let id = 0; id < lines; id++) {
    const ns = id === 0 ? 'kube-system' : namespaces[rand(3)]!;
    const name = Array.from({ length: 3 + rand(2) }, () => letters[rand(letters.length)]).join('');
    const line = `${id} ${methods[rand(3)]} /api/v1/namespaces/${ns}/pods/${name} ${200 + rand(400)}`;
    script += `echo "I$(date -u '+%m%d %H:%M:%S').000000       1 logs_generator.go:76] ${line}" >&2\nsleep ${delay}\n`;
  }
  return { script, arg0: 'logs-generator', sigterm: 'exit', sigtermExitCode: 2 };
}
