/**
 * Simulated container probes, with the kubelet's prober worker semantics
 * (pkg/kubelet/prober/worker.go) and deterministic outcomes.
 *
 * Timing: a container's probe first runs initialDelaySeconds after the
 * container started, then every periodSeconds (default 10). Readiness and
 * liveness are skipped until the startup probe (if any) succeeded; the
 * startup probe stops once it did. A result is kept until the same outcome
 * was seen successThreshold (default 1) or failureThreshold (default 3)
 * times in a row. Before its first result a readiness probe counts as
 * failed, a liveness probe as passed. A liveness or startup failure puts the
 * worker on hold until the container is replaced.
 *
 * Outcomes: exec runs the command in the container's shell and file system
 * (container-process.ts), timing out after timeoutSeconds; httpGet, tcpSocket and grpc succeed when the container declares
 * the port (containerPort by number, or a named port) or runs a well-known
 * server on it (knownServedPorts), and fail with the kubelet's "connection
 * refused" texts otherwise; agnhost's `liveness` server answers /healthz
 * with 200 for 10 s, then 500, as the real one. The pod annotation
 * `probe.kcm.dev/fail` forces failures (see parseForcedFailures).
 */
import type { Container, Pod, Probe } from 'kubernetes-types/core/v1.js';
import type { ExecResult } from './container-process.js';
import type { HttpGet } from './pod-runtime.js';

export type ProbeKind = 'startup' | 'liveness' | 'readiness';
export type ProbeResult = 'success' | 'failure';

/** `container=kind[,kind...][;container=...]`: forces those probes to fail (`*` for every container or every kind). */
export const PROBE_FAIL_ANNOTATION = 'probe.kcm.dev/fail';

const KINDS: readonly ProbeKind[] = ['startup', 'liveness', 'readiness'];

/** The kubelet's name of a probe kind in events ("Liveness probe failed: ..."). */
export function probeKindTitle(kind: ProbeKind): string {
  return kind === 'startup' ? 'Startup' : kind === 'liveness' ? 'Liveness' : 'Readiness';
}

/** One prober worker: a probe kind of one container instance. */
export interface ProbeWorker {
  readonly kind: ProbeKind;
  readonly probe: Probe;
  /** When it runs next (epoch ms). */
  nextAt: number;
  /** The result the kubelet's results manager holds; undefined before the first. */
  result?: ProbeResult;
  lastResult?: ProbeResult;
  resultRun: number;
  /** A liveness or startup failure stops probing until the container restarts. */
  onHold: boolean;
}

export function probeOf(c: Container, kind: ProbeKind): Probe | undefined {
  return kind === 'startup' ? c.startupProbe : kind === 'liveness' ? c.livenessProbe : c.readinessProbe;
}

export function periodMs(p: Probe): number {
  return Math.max(1, p.periodSeconds ?? 10) * 1000;
}

/**
 * The workers of a container instance that started at `startedAt`. Without
 * `tickOrigin` a probe first runs exactly initialDelaySeconds after the start.
 * With it, as the kubelet's worker, whose ticker started with the pod (after a
 * random part of a period) and does not restart with the container: the
 * probe's ticks fall at `tickOrigin(kind, period) + k * period`, and the first
 * to run is the first tick at or after the initial delay.
 */
export function newProbeWorkers(c: Container, startedAt: number, tickOrigin?: (kind: ProbeKind, periodMs: number) => number): ProbeWorker[] {
  const out: ProbeWorker[] = [];
  for (const kind of KINDS) {
    const probe = probeOf(c, kind);
    if (!probe) continue;
    const earliest = startedAt + Math.max(0, probe.initialDelaySeconds ?? 0) * 1000;
    let nextAt = earliest;
    if (tickOrigin) {
      const period = periodMs(probe);
      const origin = tickOrigin(kind, period);
      nextAt = origin + Math.max(0, Math.ceil((earliest - origin) / period)) * period;
    }
    out.push({ kind, probe, nextAt, resultRun: 0, onHold: false });
  }
  return out;
}

/**
 * Records one probe outcome as worker.go's doProbe does; returns true when
 * the worker's held result changed.
 */
export function recordOutcome(w: ProbeWorker, outcome: ProbeResult): boolean {
  if (w.lastResult === outcome) w.resultRun++;
  else {
    w.lastResult = outcome;
    w.resultRun = 1;
  }
  const failureThreshold = Math.max(1, w.probe.failureThreshold ?? 3);
  const successThreshold = Math.max(1, w.probe.successThreshold ?? 1);
  if ((outcome === 'failure' && w.resultRun < failureThreshold) || (outcome === 'success' && w.resultRun < successThreshold)) return false;
  const changed = w.result !== outcome;
  w.result = outcome;
  if ((w.kind === 'liveness' || w.kind === 'startup') && outcome === 'failure') {
    w.onHold = true;
    w.resultRun = 0;
  }
  return changed;
}

/** Parses the `probe.kcm.dev/fail` annotation: container name (or `*`) -> the probe kinds forced to fail. */
export function parseForcedFailures(pod: Pod): Map<string, Set<ProbeKind>> {
  const out = new Map<string, Set<ProbeKind>>();
  const text = pod.metadata?.annotations?.[PROBE_FAIL_ANNOTATION];
  if (!text) return out;
  for (const part of text.split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const name = part.slice(0, i).trim();
    const kinds = out.get(name) ?? new Set<ProbeKind>();
    for (const k of part.slice(i + 1).split(',').map((x) => x.trim().toLowerCase())) {
      if (k === '*' || k === 'all') KINDS.forEach((x) => kinds.add(x));
      else if ((KINDS as readonly string[]).includes(k)) kinds.add(k as ProbeKind);
    }
    out.set(name, kinds);
  }
  return out;
}

export function isForced(forced: Map<string, Set<ProbeKind>>, container: string, kind: ProbeKind): boolean {
  return !!forced.get(container)?.has(kind) || !!forced.get('*')?.has(kind);
}

export interface ProbeContext {
  container: Container;
  podIP: string;
  /** Time since the container started. */
  elapsedMs: number;
  /** Runs a command in the container (exec probes), with a timeout of virtual time. */
  exec?: (argv: readonly string[], timeoutMs: number) => ExecResult;
  /** HTTP GET to host:port in the simulated network; without it, declared and well-known ports answer 200. */
  http?: HttpGet;
  forced: boolean;
}

/** The program's own name and arguments (`agnhost liveness` -> ['agnhost', 'liveness']). */
function argv(c: Container): string[] {
  const image = (c.image ?? '').replace(/[@:][^/]*$/, '');
  const base = image.slice(image.lastIndexOf('/') + 1);
  const words = [...(c.command ?? []), ...(c.args ?? [])];
  if (c.command && c.command.length > 0) return words.map((w, i) => (i === 0 ? w.slice(w.lastIndexOf('/') + 1) : w));
  return [base, ...words];
}

function flagValue(args: readonly string[], flag: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === `--${flag}` || a === `-${flag}`) return args[i + 1];
    const m = new RegExp(`^--?${flag}=(.*)$`).exec(a);
    if (m) return m[1];
  }
  return undefined;
}

/**
 * Ports a well-known program listens on whether or not the container declares
 * them: nginx and httpd on 80, agnhost's servers on their default or flagged
 * ports (liveness 8080, test-webserver 80, netexec 8080, serve-hostname 9376).
 */
export function knownServedPorts(c: Container): number[] {
  const [prog, ...args] = argv(c);
  const port = (flag: string, dflt: number) => Number(flagValue(args, flag) ?? dflt);
  switch (prog) {
    case 'nginx':
    case 'httpd':
      return [80];
    case 'agnhost':
      switch (args[0]) {
        case 'liveness':
          return [8080];
        case 'test-webserver':
          return [port('port', 80)];
        case 'netexec':
          return [port('http-port', 8080)];
        case 'serve-hostname':
          return [port('port', 9376)];
        default:
          return [];
      }
    default:
      return [];
  }
}

/** The port number a probe's port refers to in the container, or undefined when it names no declared port. */
function declaredPort(c: Container, port: number | string | undefined): { number: number; declared: boolean } | undefined {
  if (port === undefined) return undefined;
  const ports = c.ports ?? [];
  if (typeof port === 'number' || /^\d+$/.test(port)) {
    const n = Number(port);
    return { number: n, declared: ports.some((p) => p.containerPort === n) || knownServedPorts(c).includes(n) };
  }
  const named = ports.find((p) => p.name === port);
  return named ? { number: named.containerPort, declared: true } : undefined;
}

/**
 * What agnhost's `liveness` server answers on `path` after `elapsedMs`: /healthz
 * is 200 for the first 10 s, then 500; /redirect?loc=X redirects (a local
 * location is followed, a foreign one is not and counts as success, as the
 * kubelet's prober does). Undefined for any other program.
 */
function agnhostLivenessStatus(c: Container, path: string, elapsedMs: number): number | undefined {
  const [prog, sub] = argv(c);
  if (prog !== 'agnhost' || sub !== 'liveness') return undefined;
  const [p, query = ''] = path.split('?', 2);
  if (p === '/redirect') {
    const loc = new URLSearchParams(query).get('loc') ?? '';
    if (!loc.startsWith('/')) return 200;
    return agnhostLivenessStatus(c, loc, elapsedMs);
  }
  if (p === '/healthz') return elapsedMs > 10_000 ? 500 : 200;
  return 404;
}

/** Go's %q of a string (the characters kubelet's commands use). */
function goQuote(text: string): string {
  return JSON.stringify(text);
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Runs one probe: its outcome and the output the kubelet puts into the Unhealthy event. */
export function runProbe(probe: Probe, ctx: ProbeContext): { result: ProbeResult; output: string } {
  const c = ctx.container;
  if (probe.exec) {
    if (ctx.forced) return { result: 'failure', output: '' };
    const cmd = probe.exec.command ?? [];
    // ExecProbeTimeout: a command still running at timeoutSeconds (default 1) fails the probe.
    const timeoutMs = Math.max(1, probe.timeoutSeconds ?? 1) * 1000;
    if (!ctx.exec) return { result: 'success', output: '' };
    const r = ctx.exec(cmd, timeoutMs);
    if (r.timedOut) return { result: 'failure', output: `command ${goQuote(cmd.join(' '))} timed out` };
    return { result: r.exitCode === 0 ? 'success' : 'failure', output: r.output };
  }
  if (probe.httpGet) {
    const g = probe.httpGet;
    const host = g.host || ctx.podIP;
    const port = declaredPort(c, g.port as number | string);
    if (!port) return { result: 'failure', output: `unable to find port "${String(g.port)}" in container ${c.name}` };
    const scheme = (g.scheme ?? 'HTTP').toLowerCase();
    let path = g.path ?? '';
    if (path && !path.startsWith('/')) path = `/${path}`;
    const url = `${scheme}://${hostPort(host, port.number)}${path}`;
    if (ctx.forced) return { result: 'failure', output: 'HTTP probe failed with statuscode: 500' };
    if (ctx.http) {
      const r = ctx.http(host, port.number, path);
      if ('error' in r) {
        const why = r.error === 'refused' ? 'connect: connection refused' : r.error === 'timeout' ? 'i/o timeout' : 'connect: no route to host';
        return { result: 'failure', output: `Get "${url}": dial tcp ${hostPort(host, port.number)}: ${why}` };
      }
      if (r.status < 200 || r.status >= 400) return { result: 'failure', output: `HTTP probe failed with statuscode: ${r.status}` };
      return { result: 'success', output: '' };
    }
    if (!port.declared) return { result: 'failure', output: `Get "${url}": dial tcp ${hostPort(host, port.number)}: connect: connection refused` };
    const code = agnhostLivenessStatus(c, path, ctx.elapsedMs);
    if (code !== undefined && (code < 200 || code >= 400)) return { result: 'failure', output: `HTTP probe failed with statuscode: ${code}` };
    return { result: 'success', output: '' };
  }
  if (probe.tcpSocket) {
    const host = probe.tcpSocket.host || ctx.podIP;
    const port = declaredPort(c, probe.tcpSocket.port as number | string);
    if (!port) return { result: 'failure', output: `unable to find port "${String(probe.tcpSocket.port)}" in container ${c.name}` };
    if (!port.declared || ctx.forced) return { result: 'failure', output: `dial tcp ${hostPort(host, port.number)}: connect: connection refused` };
    return { result: 'success', output: '' };
  }
  if (probe.grpc) {
    const addr = hostPort(ctx.podIP, probe.grpc.port);
    const declared = (c.ports ?? []).some((p) => p.containerPort === probe.grpc!.port);
    const timeout = `${Math.max(1, probe.timeoutSeconds ?? 1)}s`;
    if (!declared) return { result: 'failure', output: `timeout: failed to connect service "${addr}" within ${timeout}: context deadline exceeded` };
    if (ctx.forced) return { result: 'failure', output: 'service unhealthy (responded with "NOT_SERVING")' };
    return { result: 'success', output: '' };
  }
  return { result: ctx.forced ? 'failure' : 'success', output: '' };
}
