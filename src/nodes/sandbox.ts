/**
 * What the simulated kubelets give each pod beyond its lifecycle: the
 * volumes (container/), each container's process with its environment, file
 * system and image (images/), and a network in which pods, Services and DNS
 * names answer HTTP as the simulated servers would.
 *
 * - `PodSandbox` (one per pod): its PodVolumes, refreshed when a ConfigMap,
 *   Secret or the pod itself changes (as kubelet's periodic sync would,
 *   without the delay); `spawn` starts a container instance in it.
 * - `SimNetwork` (one per simulator): pod IP -> sandbox, Service cluster IP
 *   and DNS name -> a ready address of its Endpoints, so `wget http://web/` from one pod,
 *   netexec's `/dial`, `kubectl port-forward` and the API server's proxy
 *   reach the server the target container simulates. A port nobody serves
 *   refuses the connection; a port a container declares but whose program
 *   kcm does not simulate answers 200 with an empty body.
 */
import type { Container, Endpoints, Pod, Service } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../util/clock/clock.js';
import { ContainerRun, fallbackPrograms, mainArgv, prepareTerminationLog, type SpawnContext } from './container-process.js';
import { PodVolumes, containerEnv, expand, mappingFuncFor, podHostnames, runtimeEnv, type ContainerFsResult, type NodeFacts, type ObjectSource } from './container/index.js';
import { containerArgv, httpServer, imageFilesKey, knownPrograms, seedImageFiles, servedPorts, silentServer, type ServerHandler } from './images/index.js';
import type { ContainerSim, PodRuntime } from './pod-runtime.js';
import type { ExternalHandler, FileSystem, HttpHandler, HttpRequest, HttpResult } from './shell/index.js';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Everything the sandboxes read from the API (informer caches). */
export interface ClusterView extends ObjectSource {
  service(namespace: string, name: string): Service | undefined;
  allServices(): Service[];
  /** The Service's Endpoints object (core/v1, served by every API server version). */
  endpoints(namespace: string, service: string): Endpoints | undefined;
  /** The simulated nodes' addresses (NodePorts answer there). */
  nodeIPs(): string[];
}

export class PodSandbox {
  volumes: PodVolumes;
  /** The HTTP handler of each container instance, made on first use (it keeps state such as a start time). */
  private readonly servers = new WeakMap<ContainerRun, Map<number, ServerHandler | null>>();

  constructor(
    public pod: Pod,
    readonly runtime: PodRuntime,
    private facts: NodeFacts,
    private readonly view: ClusterView,
    private readonly net: SimNetwork,
    private readonly clock: Clock,
    /** Asks for a sync of the pod (a process ended from outside its shell). */
    private readonly kick: () => void = () => {},
  ) {
    this.volumes = new PodVolumes(pod, view, facts, clock.now());
  }

  get key(): string {
    return `${this.pod.metadata?.namespace ?? ''}/${this.pod.metadata?.name ?? ''}`;
  }

  /** The address of the node the pod runs on. */
  get nodeAddress(): string {
    return this.facts.hostIP;
  }

  /** Volume set-up errors (FailedMount). */
  errors(): string[] {
    return this.volumes.errors();
  }

  /** Re-reads ConfigMaps, Secrets and the downward API into the volumes; true when a file changed. */
  refresh(pod: Pod, podIP: string): boolean {
    this.pod = pod;
    this.facts = { ...this.facts, podIP };
    return this.volumes.refresh(this.view, this.clock.now(), pod);
  }

  setPodIP(podIP: string): void {
    this.facts = { ...this.facts, podIP };
  }

  /**
   * Starts an instance of `c` at `now` (PodRuntime's spawn), or returns
   * kubelet's CreateContainerConfigError message (a missing ConfigMap or
   * Secret for the environment, a subPath that cannot be mounted).
   */
  spawn(c: ContainerSim, now: number): ContainerRun | { error: string } {
    const pod = this.pod;
    const names = podHostnames(pod);
    if (names.error) return { error: names.error };
    const hostname = names.kernelHostname;
    const envResult = containerEnv(pod, c.spec, this.view, this.facts);
    if (envResult.error) return { error: envResult.error };
    const spec = expandCommand(c.spec, envResult.env);
    const env = runtimeEnv(envResult.env, { hostname });
    const argv = mainArgv(spec, containerArgv(spec));
    const podIP = this.facts.podIP;
    const fsOf = (): ContainerFsResult => this.volumes.containerFs(spec, envResult.env, { now, hostname, podIP, seed: (fs) => void seedImageFiles(spec.image ?? '', fs), seedKey: imageFilesKey(spec.image ?? '') });
    const context = (fs: FileSystem): SpawnContext => {
      prepareTerminationLog(fs, spec);
      if (spec.securityContext?.readOnlyRootFilesystem) readOnlyRoot(fs, spec);
      const known = knownPrograms({ podName: pod.metadata?.name ?? '', podIP, hostname, image: spec.image ?? '', fsType: (p) => this.fsType(spec, p) });
      const privileges = privilegeFacts(pod, spec);
      const external: ExternalHandler = (a, ctx) => privileged(a, privileges) ?? known(a, ctx) ?? fallbackPrograms(a, ctx);
      const psc = pod.spec?.securityContext;
      const uid = spec.securityContext?.runAsUser ?? psc?.runAsUser ?? 0;
      // Without runAsGroup the primary group is the image's for that user (busybox: nobody -> nogroup), else 0.
      const gid = spec.securityContext?.runAsGroup ?? psc?.runAsGroup ?? (uid === 65534 ? 65534 : 0);
      const groups = [...(psc?.fsGroup !== undefined ? [psc.fsGroup] : []), ...(psc?.supplementalGroups ?? [])];
      return { fs, env, hostname, argv, external, user: { uid, gid, groups }, http: this.net.httpHandler(podIP), dns: (n) => this.net.resolve(n, pod.metadata?.namespace ?? 'default') };
    };
    if (this.deferrable(c.spec, argv)) {
      return new ContainerRun(() => {
        const r = fsOf();
        // deferrable ruled out every mount error (subPath, a volume not set up)
        if (!r.fs) throw new Error(`container ${c.name} of ${this.key}: ${r.error}`);
        return context(r.fs);
      }, now);
    }
    const fsResult = fsOf();
    if (!fsResult.fs) return { error: fsResult.error };
    return new ContainerRun(context(fsResult.fs), now);
  }

  /**
   * Whether a container's file system and process may be made at first use
   * (ContainerRun): its image's own command starts a silent server
   * (silentServer), and its mounts cannot fail when the file system is made
   * (kubelet's makeMounts errors must show at the start, as
   * CreateContainerConfigError) nor change what the command runs: only
   * whole volumes that are set up, each at its own path below
   * /var/run/secrets/ (the service account token's projected volume, and
   * credentials like it). Anything that uses the container (exec, probes and
   * hooks, HTTP, a signal) starts it.
   */
  private deferrable(spec: Container, argv: readonly string[]): boolean {
    if (spec.command || spec.args || !silentServer(argv, spec.image ?? '')) return false;
    const paths: string[] = [];
    for (const m of spec.volumeMounts ?? []) {
      if (m.subPath || m.subPathExpr || !this.volumes.has(m.name)) return false;
      const at = m.mountPath.replace(/\/+$/, '');
      if (!at.startsWith('/var/run/secrets/') || at.split('/').includes('..')) return false;
      if (paths.some((p) => p === at || p.startsWith(`${at}/`) || at.startsWith(`${p}/`))) return false;
      paths.push(at);
    }
    return true;
  }

  /** An HTTP GET from the node (probes, hooks): to this pod's own IP, or anywhere in the simulated network. */
  httpGet(host: string, port: number, path: string): { status: number; body: string } | { error: 'refused' | 'unreachable' } {
    const req = { method: 'GET', path: path || '/', headers: { 'user-agent': 'kube-probe/1.20' }, body: '', clientIP: this.facts.hostIP };
    const r = host === '' || host === this.facts.podIP ? this.http(port, req) : this.net.request(host, port, req);
    return typeof r === 'string' ? { error: r } : { status: r.status, body: r.body };
  }

  /** `mounttest --fs_type`: tmpfs for secret/configMap/downwardAPI/projected volumes and memory emptyDirs. */
  private fsType(c: Container, path: string): 'tmpfs' | number | undefined {
    const m = (c.volumeMounts ?? []).filter((x) => path === x.mountPath || path.startsWith(`${x.mountPath.replace(/\/$/, '')}/`)).sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
    if (!m) return undefined;
    const v = (this.pod.spec?.volumes ?? []).find((x) => x.name === m.name);
    if (!v) return undefined;
    if (v.secret || v.configMap || v.downwardAPI || v.projected || v.emptyDir?.medium === 'Memory') return 'tmpfs';
    return undefined;
  }

  /** What the pod answers on `port`: the container whose program serves it, else a declared port answers 200 empty, else refused. */
  http(port: number, req: { method: string; path: string; headers: Record<string, string>; body: string; clientIP?: string }): HttpAnswer | 'refused' {
    for (const c of [...this.runtime.containers, ...this.runtime.initContainers]) {
      if (c.state.kind !== 'running') continue;
      const run = c.state.run;
      const handler = this.server(c, run, port);
      if (handler) {
        const u = new URL(req.path, 'http://pod');
        const a = handler({ method: req.method, path: u.pathname, query: u.searchParams, headers: req.headers, body: req.body, ...(req.clientIP ? { clientIP: req.clientIP } : {}) });
        if (a.exit) {
          const exit = a.exit;
          const end = () => {
            run.exitNow(exit.code, this.clock.now());
            this.kick();
          };
          if (exit.afterMs > 0) this.clock.setTimer(end, exit.afterMs);
          else end();
          if (exit.reset) return 'refused';
        }
        return { status: a.status, headers: a.headers, body: a.body };
      }
    }
    for (const c of this.runtime.containers) {
      if (c.state.kind === 'running' && (c.spec.ports ?? []).some((p) => p.containerPort === port && (p.protocol ?? 'TCP') === 'TCP')) return { status: 200, headers: { 'Content-Type': 'text/plain' }, body: '' };
    }
    return 'refused';
  }

  private server(c: ContainerSim, run: ContainerRun, port: number): ServerHandler | undefined {
    let byPort = this.servers.get(run);
    if (!byPort) this.servers.set(run, (byPort = new Map()));
    if (byPort.has(port)) return byPort.get(port) ?? undefined;
    const argv = containerArgv(c.spec);
    let h: ServerHandler | undefined;
    if (servedPorts(argv, c.spec).includes(port)) {
      const names = podHostnames(this.pod);
      h = httpServer(argv, {
        fs: run.fs,
        podName: this.pod.metadata?.name ?? '',
        podIP: this.facts.podIP,
        hostname: names.kernelHostname,
        env: containerEnv(this.pod, c.spec, this.view, this.facts).env,
        now: () => this.clock.now(),
        startedAt: run.startedAt,
        port,
        image: c.spec.image ?? '',
        runShell: (cmd) => {
          const r = run.exec(['sh', '-c', cmd], this.clock.now(), 60_000);
          return { output: r.output, exitCode: r.exitCode };
        },
        log: (line) => run.logLine('stderr', line, this.clock.now()),
        fetch: (ip, p, path) => {
          const r = this.net.request(ip, p, { method: 'GET', path, headers: {}, body: '', clientIP: this.facts.podIP });
          return typeof r === 'string' ? { error: r } : { status: r.status, body: r.body };
        },
      });
    }
    byPort.set(port, h ?? null);
    return h;
  }
}

/**
 * kubelet expands $(VAR) in command and args with the container's environment.
 * (Apart from spawn, whose closures live as long as the container: they would keep the variables' Map.)
 */
function expandCommand(c: Container, env: Record<string, string>): Container {
  const vars = new Map(Object.entries(env));
  const x = (words: string[] | undefined) => words?.map((w) => expand(w, mappingFuncFor(vars)));
  return { ...c, ...(c.command ? { command: x(c.command) } : {}), ...(c.args ? { args: x(c.args) } : {}) };
}

/** Pod IPs, Service IPs and names of the simulated cluster. */
export class SimNetwork {
  private readonly byIP = new Map<string, PodSandbox>();
  private readonly byKey = new Map<string, PodSandbox>();

  /** ClientIP session affinity: service key + client IP -> the endpoint chosen and when it was last used. */
  private readonly affinity = new Map<string, { ip: string; port: number; at: number }>();

  constructor(
    private readonly view: ClusterView,
    private readonly now: () => number = Date.now,
  ) {}

  add(sb: PodSandbox, podIP: string): void {
    this.byKey.set(sb.key, sb);
    if (podIP) this.byIP.set(podIP, sb);
  }

  remove(key: string, podIP: string): void {
    const sb = this.byKey.get(key);
    this.byKey.delete(key);
    if (podIP && this.byIP.get(podIP) === sb) this.byIP.delete(podIP);
  }

  sandbox(key: string): PodSandbox | undefined {
    return this.byKey.get(key);
  }

  sandboxes(): IterableIterator<PodSandbox> {
    return this.byKey.values();
  }

  /** A DNS name as a pod in `namespace` resolves it (search path `ns.svc.cluster.local svc.cluster.local cluster.local`). */
  resolve(name: string, namespace: string): string[] | undefined {
    const n = name.replace(/\.$/, '').replace(/\.cluster\.local$/, '');
    const parts = n.split('.');
    let svc: Service | undefined;
    if (parts.length === 1) svc = this.view.service(namespace, parts[0]!);
    else if (parts.length === 2 || (parts.length === 3 && parts[2] === 'svc')) svc = this.view.service(parts[1]!, parts[0]!);
    if (svc) {
      const ip = svc.spec?.clusterIP;
      if (ip && ip !== 'None') return [ip];
      // Headless: the ready endpoints' addresses.
      const ips = this.endpointIPs(svc);
      return ips.length > 0 ? ips : undefined;
    }
    if (/^\d+\.\d+\.\d+\.\d+$/.test(n)) return [n];
    return undefined;
  }

  private endpointIPs(svc: Service): string[] {
    const ep = this.view.endpoints(svc.metadata?.namespace ?? '', svc.metadata?.name ?? '');
    return [...new Set((ep?.subsets ?? []).flatMap((ss) => (ss.addresses ?? []).map((a) => a.ip)))];
  }

  /** An HTTP request to ip:port from inside the cluster: a pod IP, or a Service's cluster IP (one ready endpoint, round robin). */
  request(ip: string, port: number, req: { method: string; path: string; headers: Record<string, string>; body: string; clientIP?: string }): HttpAnswer | 'refused' | 'unreachable' {
    const viaHostPort = this.hostPort(ip, port, req.clientIP);
    if (viaHostPort) return viaHostPort.sb.http(viaHostPort.containerPort, req);
    const sb = this.byIP.get(ip);
    if (sb) return sb.http(port, req);
    // A cluster IP and service port, or a node's address and a NodePort (kube-proxy programs both on every node).
    let svc = this.view.allServices().find((s) => s.spec?.clusterIP === ip || (s.spec?.clusterIPs ?? []).includes(ip));
    let sp = svc?.spec?.ports?.find((p) => p.port === port && (p.protocol ?? 'TCP') === 'TCP');
    if (!svc && this.view.nodeIPs().includes(ip)) {
      svc = this.view.allServices().find((s) => (s.spec?.ports ?? []).some((p) => p.nodePort === port && (p.protocol ?? 'TCP') === 'TCP'));
      sp = svc?.spec?.ports?.find((p) => p.nodePort === port);
      if (!svc) return 'refused';
    }
    if (!svc) return 'unreachable';
    if (!sp) return 'refused';
    const targets: { ip: string; port: number }[] = [];
    // Ready addresses of the Service's Endpoints, with the target port of the same port name (what kube-proxy programs).
    for (const ss of this.view.endpoints(svc.metadata?.namespace ?? '', svc.metadata?.name ?? '')?.subsets ?? []) {
      const p = (ss.ports ?? []).find((x) => (x.name ?? '') === (sp!.name ?? ''));
      if (!p?.port) continue;
      for (const a of ss.addresses ?? []) targets.push({ ip: a.ip, port: p.port });
    }
    if (targets.length === 0) return 'refused';
    const t = this.pick(svc, targets, req.clientIP);
    const target = this.byIP.get(t.ip);
    return target ? target.http(t.port, req) : 'unreachable';
  }

  /**
   * A container's TCP hostPort on a node's address (the CNI portmap rule):
   * `ip` is the node's address, or loopback from a pod on that node's
   * network (`clientIP` the node's address); the port's hostIP must be unset,
   * 0.0.0.0, or `ip` itself.
   */
  private hostPort(ip: string, port: number, clientIP: string | undefined): { sb: PodSandbox; containerPort: number } | undefined {
    const nodeIPs = this.view.nodeIPs();
    const loopback = ip.startsWith('127.');
    const node = loopback ? clientIP : ip;
    if (!node || !nodeIPs.includes(node)) return undefined;
    for (const sb of this.byKey.values()) {
      if (sb.nodeAddress !== node || sb.pod.spec?.hostNetwork) continue;
      for (const c of sb.pod.spec?.containers ?? []) {
        for (const p of c.ports ?? []) {
          if (p.hostPort !== port || (p.protocol ?? 'TCP') !== 'TCP') continue;
          const hostIP = p.hostIP ?? '';
          if (hostIP === '' || hostIP === '0.0.0.0' || hostIP === ip) return { sb, containerPort: p.containerPort };
        }
      }
    }
    return undefined;
  }

  /**
   * Round robin over the ready endpoints, or with `sessionAffinity: ClientIP`
   * the endpoint this client used last, while it is ready and was used within
   * `timeoutSeconds` (default 10800), as kube-proxy's affinity.
   */
  private pick(svc: Service, targets: { ip: string; port: number }[], clientIP: string | undefined): { ip: string; port: number } {
    const now = this.now();
    const sticky = svc.spec?.sessionAffinity === 'ClientIP' && clientIP !== undefined;
    const key = `${svc.metadata?.namespace}/${svc.metadata?.name}/${clientIP}`;
    if (sticky) {
      const prev = this.affinity.get(key);
      const timeoutMs = (svc.spec?.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800) * 1000;
      if (prev && now - prev.at <= timeoutMs && targets.some((t) => t.ip === prev.ip && t.port === prev.port)) {
        prev.at = now;
        return prev;
      }
    }
    const t = targets[this.rr++ % targets.length]!;
    if (sticky) this.affinity.set(key, { ...t, at: now });
    return t;
  }
  private rr = 0;

  /** The shell's `wget`/`curl` from a pod with address `fromIP`. */
  httpHandler(fromIP: string): HttpHandler {
    return (req: HttpRequest): HttpResult => {
      let u: URL;
      try {
        u = new URL(req.url);
      } catch {
        return { error: 'dns' };
      }
      const host = u.hostname.replace(/^\[|\]$/g, '');
      const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
      const ips = /^\d+\.\d+\.\d+\.\d+$/.test(host) ? [host] : undefined;
      const ip = ips?.[0] ?? this.resolveForRequest(host, fromIP)?.[0];
      if (!ip) return { error: 'dns' };
      const r = this.request(ip, port, { method: req.method, path: `${u.pathname}${u.search}`, headers: req.headers, body: req.body ?? '', clientIP: fromIP });
      if (r === 'refused' || r === 'unreachable') return { error: r };
      return { status: r.status, body: r.body, headers: r.headers };
    };
  }

  private resolveForRequest(host: string, fromIP: string): string[] | undefined {
    const ns = this.byIP.get(fromIP)?.pod.metadata?.namespace ?? 'default';
    return this.resolve(host, ns);
  }
}

/** securityContext.readOnlyRootFilesystem: the root is read-only; volumes, /dev and kubelet's bind-mounted files stay writable. */
function readOnlyRoot(fs: FileSystem, c: Container): void {
  fs.setRootReadOnly(true);
  const dev = fs.stat('/dev');
  if (dev?.type === 'dir') fs.mount('/dev', dev);
  for (const f of ['/etc/hosts', '/etc/hostname', '/etc/resolv.conf', c.terminationMessagePath || '/dev/termination-log']) {
    try {
      fs.bindFile(f);
    } catch {
      /* not there */
    }
  }
}

interface PrivilegeFacts {
  privileged: boolean;
  /** allowPrivilegeEscalation (unset: allowed, as the runtime's default no_new_privs off). */
  escalation: boolean;
  runAsUser: number;
}

function privilegeFacts(pod: Pod, c: Container): PrivilegeFacts {
  const sc = c.securityContext ?? {};
  return {
    privileged: sc.privileged === true,
    escalation: sc.allowPrivilegeEscalation !== false,
    runAsUser: sc.runAsUser ?? pod.spec?.securityContext?.runAsUser ?? 0,
  };
}

/**
 * Programs whose outcome depends on the container's privileges: `ip link
 * add` needs CAP_NET_ADMIN (privileged), and the e2e image nonewprivs' `nnp`
 * (setuid root) prints its effective uid: 0 unless allowPrivilegeEscalation
 * is false, then runAsUser.
 */
function privileged(argv: string[], p: PrivilegeFacts): ReturnType<ExternalHandler> {
  const name = argv[0]!.slice(argv[0]!.lastIndexOf('/') + 1);
  if (name === 'ip' && argv[1] === 'link' && argv[2] === 'add') {
    return p.privileged ? { exitCode: 0 } : { exitCode: 2, stderr: 'ip: RTNETLINK answers: Operation not permitted\n' };
  }
  if (name === 'nnp') return { exitCode: 0, stdout: `Effective uid: ${p.escalation ? 0 : p.runAsUser}\n` };
  return undefined;
}
