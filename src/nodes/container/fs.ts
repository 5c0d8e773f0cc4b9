/**
 * What a container's file system looks like: the pod's volumes built once
 * (shared directory objects: an emptyDir written by one container is seen by
 * the others), and for each container `createStandardFs` + the image's files
 * + the kubelet-managed `/etc/hosts` and `/etc/resolv.conf` + its volumeMounts (kubelet's makeMounts:
 * readOnly, subPath, subPathExpr with `$(VAR)` from the container's
 * environment; mountPropagation ignored).
 *
 * Volumes of configMap, secret, downwardAPI and projected sources use
 * kubelet's AtomicWriter layout and are mounted read-only; `refresh` rewrites
 * them as kubelet's periodic sync does (only when their content changed).
 * A subPath mount binds what the subPath names when the container starts, so
 * like in Kubernetes it does not see later updates of an atomic volume.
 *
 * Limits: a subPath naming a file is placed as a file node (shared with the
 * volume, so writes are seen across containers) but its readOnly flag is not
 * enforced; `/etc/hosts` is a copy per container (kubelet shares one file per
 * pod); a hostNetwork pod's hosts file is synthesized from the node's name and IP.
 */
import type { Container, Pod, Volume } from 'kubernetes-types/core/v1.js';
import { FileSystem, createStandardFs, fsTemplate, newDir, setEntry, updateAtomicVolume, type DirNode, type FsNode } from '../shell/fs.js';
import { expand } from './env.js';
import { cleanPath, failedMountMessage, volumeFiles, type ServiceAccountToken, type TokenFetcher } from './volumes.js';
import { podIPsOf, type NodeFacts, type ObjectSource } from './types.js';

export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';
const MANAGED_HOSTS_HEADER = '# Kubernetes-managed hosts file.\n';
const MANAGED_HOSTS_HEADER_HOST_NETWORK = '# Kubernetes-managed hosts file (host network).\n';

// ---------------------------------------------------------------------------
// Host names and /etc/hosts

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export interface PodHostnames {
  /** The short host name: spec.hostname, else the pod name, cut to 63 characters (no trailing `-`/`.`). */
  hostname: string;
  /** `<subdomain>.<namespace>.svc.<clusterDomain>` when spec.subdomain is set, else ''. */
  domain: string;
  /** The kernel host name (`hostname`, /etc/hostname, $HOSTNAME): the FQDN with setHostnameAsFQDN and a domain. */
  kernelHostname: string;
  /** kubelet's error (a CreateContainerConfigError) for an invalid hostname/subdomain or a too long FQDN. */
  error?: string;
}

/** kubelet's GeneratePodHostNameAndDomain + GetNodenameForKernel. */
export function podHostnames(pod: Pod, clusterDomain = DEFAULT_CLUSTER_DOMAIN): PodHostnames {
  const podName = pod.metadata?.name ?? '';
  let hostname = podName;
  const fail = (error: string): PodHostnames => ({ hostname, domain: '', kernelHostname: hostname, error });
  const h = pod.spec?.hostname ?? '';
  if (h) {
    if (h.length > 63 || !DNS1123_LABEL.test(h)) return fail(`pod Hostname "${h}" is not a valid DNS label: a DNS-1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`);
    hostname = h;
  }
  if (hostname.length > 63) {
    hostname = hostname.slice(0, 63).replace(/[-.]+$/, '');
    if (hostname === '') return fail(`hostname for pod "${podName}" was invalid: "${podName}"`);
  }
  let domain = '';
  const sub = pod.spec?.subdomain ?? '';
  if (sub) {
    if (sub.length > 63 || !DNS1123_LABEL.test(sub)) return fail(`pod Subdomain "${sub}" is not a valid DNS label: a DNS-1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`);
    domain = `${sub}.${pod.metadata?.namespace ?? ''}.svc.${clusterDomain}`;
  }
  let kernelHostname = hostname;
  if (domain && pod.spec?.setHostnameAsFQDN) {
    const fqdn = `${hostname}.${domain}`;
    if (fqdn.length > 64) {
      return { hostname, domain, kernelHostname, error: `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (64 characters is the max, ${fqdn.length} characters requested)` };
    }
    kernelHostname = fqdn;
  }
  return { hostname, domain, kernelHostname };
}

/** The pod's short host name (spec.hostname, else its name, at most 63 characters). */
export function podHostname(pod: Pod): string {
  return podHostnames(pod).hostname;
}

function hostAliasesSection(pod: Pod): string {
  const aliases = pod.spec?.hostAliases ?? [];
  if (aliases.length === 0) return '';
  let s = '\n# Entries added by HostAliases.\n';
  for (const a of aliases) s += `${a.ip ?? ''}\t${(a.hostnames ?? []).join('\t')}\n`;
  return s;
}

/** kubelet's managedHostsFileContent (or, for hostNetwork pods, a node hosts file with the host-network header). */
export function managedHostsFile(pod: Pod, podIPs: readonly string[], clusterDomain = DEFAULT_CLUSTER_DOMAIN, node?: { nodeName: string; hostIP: string }): string {
  if (pod.spec?.hostNetwork) {
    let s = MANAGED_HOSTS_HEADER_HOST_NETWORK + '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n';
    if (node) s += `${node.hostIP}\t${node.nodeName}\n`;
    return s + hostAliasesSection(pod);
  }
  const { hostname, domain } = podHostnames(pod, clusterDomain);
  let s = MANAGED_HOSTS_HEADER;
  s += '127.0.0.1\tlocalhost\n';
  s += '::1\tlocalhost ip6-localhost ip6-loopback\n';
  s += 'fe00::0\tip6-localnet\n';
  s += 'fe00::0\tip6-mcastprefix\n';
  s += 'fe00::1\tip6-allnodes\n';
  s += 'fe00::2\tip6-allrouters\n';
  for (const ip of podIPs) s += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return s + hostAliasesSection(pod);
}

// ---------------------------------------------------------------------------
// /etc/resolv.conf (pkg/kubelet/network/dns GetPodDNS, dockershim's rewriteResolvFile)

function omitDuplicates(xs: string[]): string[] {
  return [...new Set(xs)];
}

/** The pod's /etc/resolv.conf: dnsPolicy ClusterFirst (host network: Default unless ClusterFirstWithHostNet), Default, None, plus spec.dnsConfig. */
export function podResolvConf(pod: Pod, node: Pick<NodeFacts, 'clusterDomain' | 'clusterDNS' | 'hostDNS'>): string {
  const clusterDomain = node.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
  const host = node.hostDNS ?? { nameservers: ['8.8.8.8'], searches: [], options: [] };
  const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  let servers: string[] = [...host.nameservers];
  let searches: string[] = [...host.searches];
  let options: string[] = [...host.options];
  const cluster = policy === 'ClusterFirstWithHostNet' || (policy !== 'None' && policy !== 'Default' && !pod.spec?.hostNetwork);
  if (policy === 'None') {
    servers = [];
    searches = [];
    options = [];
  } else if (cluster) {
    servers = [...(node.clusterDNS ?? ['10.96.0.10'])];
    const ns = pod.metadata?.namespace ?? '';
    searches = omitDuplicates([`${ns}.svc.${clusterDomain}`, `svc.${clusterDomain}`, clusterDomain, ...host.searches]);
    options = ['ndots:5'];
  }
  const dc = pod.spec?.dnsConfig;
  if (dc) {
    servers = omitDuplicates([...servers, ...(dc.nameservers ?? [])]);
    searches = omitDuplicates([...searches, ...(dc.searches ?? [])]);
    const opts = new Map<string, string>();
    for (const o of options) {
      const i = o.indexOf(':');
      if (i >= 0) opts.set(o.slice(0, i), o.slice(i + 1));
      else opts.set(o, '');
    }
    for (const o of dc.options ?? []) opts.set(o.name ?? '', o.value ?? '');
    options = [...opts].map(([k, v]) => (v !== '' ? `${k}:${v}` : k));
  }
  const lines = servers.map((s) => `nameserver ${s}`);
  if (searches.length > 0) lines.push(`search ${searches.join(' ')}`);
  if (options.length > 0) lines.push(`options ${options.join(' ')}`);
  return lines.length > 0 ? lines.join('\n') + '\n' : '';
}

// ---------------------------------------------------------------------------
// Pod volumes

type VolumeKind = 'atomic' | 'dir' | 'unsupported';

interface BuiltVolume {
  volume: Volume;
  kind: VolumeKind;
  dir: DirNode;
  /** A hostPath that is a file of the node: mounted instead of `dir`. */
  file?: FsNode;
  /** The last SetUp error (the volume keeps its previous content). */
  error?: string;
}

interface CachedToken {
  token: ServiceAccountToken;
  issuedAt: number;
  expirationSeconds: number;
}

export interface ContainerFsOptions {
  /** Kernel host name (/etc/hostname); default the pod's (podHostnames().kernelHostname). */
  hostname?: string;
  /** Default the node facts' podIP. */
  podIP?: string;
  now: number;
  /** Puts the image's files in place (before the mounts): only files and directories, in a template (fsTemplate). */
  seed?: (fs: FileSystem) => void;
  /**
   * Names what `seed` puts in place (the image): the containers whose seeds
   * have the same key share one template, seeded once. Without it the seed
   * runs for each container.
   */
  seedKey?: string;
  /** /etc/hosts content; default kubelet's managed hosts file. */
  hosts?: string;
  /** /etc/resolv.conf content; default podResolvConf(pod, node). */
  resolvConf?: string;
}

export type ContainerFsResult = { fs: FileSystem; error?: undefined } | { fs?: undefined; error: string };

/** kubelet's token manager: a token is reused until 80% of its lifetime (or 24h) has passed. */
function tokenFresh(t: CachedToken, now: number): boolean {
  const ttl = t.expirationSeconds * 1000;
  return now < t.issuedAt + ttl * 0.8 && now < t.issuedAt + 24 * 3600_000;
}

/** A pod's volumes as shared directory objects, and its containers' file systems. */
export class PodVolumes {
  private pod: Pod;
  private src: ObjectSource;
  private readonly node: NodeFacts;
  private readonly volumes = new Map<string, BuiltVolume>();
  private readonly tokens = new Map<string, CachedToken>();

  constructor(pod: Pod, src: ObjectSource, node: NodeFacts, now: number) {
    this.pod = pod;
    this.src = src;
    this.node = node;
    const fsGroup = pod.spec?.securityContext?.fsGroup !== undefined;
    for (const v of pod.spec?.volumes ?? []) {
      const r = volumeFiles(pod, v, src, node, this.tokenFetcher(v, now));
      if ('error' in r) {
        this.volumes.set(v.name, { volume: v, kind: 'atomic', dir: newDir(fsGroup ? 0o2777 : 0o777, now), error: r.error });
        continue;
      }
      let dir: DirNode;
      if (r.kind === 'atomic') {
        dir = newDir(fsGroup ? 0o2777 : 0o777, now);
        updateAtomicVolume(dir, r.files, now);
      } else if (v.hostPath) {
        const hp = hostPathNode(this.node.hostFs, v.hostPath.path, v.hostPath.type ?? '', now);
        if ('error' in hp) {
          this.volumes.set(v.name, { volume: v, kind: r.kind, dir: newDir(0o755, now), error: hp.error });
          continue;
        }
        if (hp.node.type !== 'dir') {
          this.volumes.set(v.name, { volume: v, kind: r.kind, dir: newDir(0o755, now), file: hp.node });
          continue;
        }
        dir = hp.node;
      }
      else if (v.emptyDir) dir = newDir(fsGroup ? 0o2777 : 0o777, now);
      else dir = newDir(fsGroup ? 0o2775 : 0o755, now);
      this.volumes.set(v.name, { volume: v, kind: r.kind, dir });
    }
  }

  private tokenFetcher(v: Volume, now: number): TokenFetcher {
    return (audience, expirationSeconds) => {
      const key = `${v.name}\0${audience ?? ''}\0${expirationSeconds}`;
      const cached = this.tokens.get(key);
      if (cached && tokenFresh(cached, now)) return cached.token;
      const ns = this.pod.metadata?.namespace ?? '';
      const sa = this.pod.spec?.serviceAccountName || 'default';
      const token = this.src.serviceAccountToken?.(ns, sa, audience, expirationSeconds, this.pod);
      if (token === undefined) return cached && now < cached.issuedAt + cached.expirationSeconds * 1000 ? cached.token : undefined;
      this.tokens.set(key, { token, issuedAt: now, expirationSeconds });
      return token;
    };
  }

  /** FailedMount event messages (`MountVolume.SetUp failed for volume "x" : ...`) of the volumes whose last SetUp failed. */
  errors(): string[] {
    const out: string[] = [];
    for (const [name, b] of this.volumes) if (b.error !== undefined) out.push(failedMountMessage(name, b.error));
    return out;
  }

  /** Whether every volume was set up at least once and the last SetUp succeeded (the sandbox may start). */
  ready(): boolean {
    return [...this.volumes.values()].every((b) => b.error === undefined);
  }

  /** Whether the pod's volume `name` is set up (a mount of it cannot fail for want of it). */
  has(name: string): boolean {
    const b = this.volumes.get(name);
    return b !== undefined && b.error === undefined;
  }

  /** The shared directory object of a volume. */
  volumeDir(name: string): DirNode | undefined {
    return this.volumes.get(name)?.dir;
  }

  /**
   * Rewrites configMap, secret, downwardAPI and projected volumes from the
   * current objects (and `pod`, for downward API fields) as kubelet's periodic
   * sync does: an update only when the content changed; a failing SetUp keeps
   * the old content and reports its error. Returns whether any volume changed.
   */
  refresh(src: ObjectSource, now: number, pod?: Pod): boolean {
    this.src = src;
    if (pod) this.pod = pod;
    let changed = false;
    for (const b of this.volumes.values()) {
      if (b.kind !== 'atomic') continue;
      const r = volumeFiles(this.pod, b.volume, src, this.node, this.tokenFetcher(b.volume, now));
      if ('error' in r) {
        b.error = r.error;
        continue;
      }
      if (r.kind !== 'atomic') continue;
      delete b.error;
      if (updateAtomicVolume(b.dir, r.files, now)) changed = true;
    }
    return changed;
  }

  /**
   * A container's file system: createStandardFs (hostname, managed /etc/hosts),
   * the image's files, then its volumeMounts (parents first). The error is
   * kubelet's makeMounts error (a CreateContainerConfigError). `env` is the
   * container's kubelet environment (containerEnv().env), for subPathExpr.
   */
  containerFs(container: Container, env: Record<string, string>, opts: ContainerFsOptions): ContainerFsResult {
    const clusterDomain = this.node.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
    const names = podHostnames(this.pod, clusterDomain);
    if (names.error && opts.hostname === undefined) return { error: names.error };
    const podIP = opts.podIP ?? this.node.podIP;
    const podIPs = opts.podIP !== undefined ? [opts.podIP] : podIPsOf(this.node);

    interface Planned {
      path: string;
      node: FsNode;
      readOnly: boolean;
    }
    const planned: Planned[] = [];
    for (const m of container.volumeMounts ?? []) {
      const b = this.volumes.get(m.name);
      if (!b) return { error: `cannot find volume "${m.name}" to mount into container "${container.name}"` };
      let subPath = m.subPath ?? '';
      if (m.subPathExpr) {
        const missing = new Set<string>();
        subPath = expand(m.subPathExpr, (k) => {
          const v = env[k];
          if (v === undefined || v === '') missing.add(k);
          return v ?? '';
        });
        if (missing.size > 0) return { error: `missing value for ${[...missing].sort().join(', ')}` };
      }
      let node: FsNode = b.file ?? b.dir;
      if (subPath !== '' && !b.file) {
        if (subPath.startsWith('/')) return { error: `error SubPath \`${subPath}\` must not be an absolute path` };
        if (subPath.split('/').includes('..')) return { error: `unable to provision SubPath \`${subPath}\`: must not contain '..'` };
        const vfs = new FileSystem(b.dir);
        vfs.now = opts.now;
        const rel = cleanPath(subPath);
        let n = vfs.stat(rel);
        if (!n) {
          try {
            vfs.mkdirp(rel, b.dir.mode & 0o7777, true);
          } catch {
            return { error: `failed to create subPath directory for volumeMount "${m.name}" of container "${container.name}"` };
          }
          n = vfs.stat(rel);
        }
        if (!n) return { error: `failed to prepare subPath for volumeMount "${m.name}" of container "${container.name}"` };
        node = n;
      }
      const path = cleanPath(m.mountPath.startsWith('/') ? m.mountPath : '/' + m.mountPath);
      planned.push({ path, node, readOnly: (m.readOnly ?? false) || b.kind === 'atomic' });
    }

    const mountsHosts = planned.some((p) => p.path === '/etc/hosts');
    const hosts = opts.hosts ?? (podIPs.length > 0 || this.pod.spec?.hostNetwork ? managedHostsFile(this.pod, podIPs, clusterDomain, this.node) : undefined);
    // The image's files are part of the template (the runtime bind-mounts /etc/hostname, /etc/hosts and /etc/resolv.conf over the image's).
    const fs = createStandardFs({
      hostname: opts.hostname ?? names.kernelHostname,
      podIP: podIP || undefined,
      now: opts.now,
      ...(hosts !== undefined && !mountsHosts ? { hosts } : {}),
      resolvConf: opts.resolvConf ?? podResolvConf(this.pod, this.node),
      ...(opts.seed ? { template: fsTemplate(opts.seed, opts.seedKey) } : {}),
    });
    fs.now = opts.now;
    const depth = (p: string): number => p.split('/').filter((x) => x !== '').length;
    const order = planned.map((p, i) => ({ p, i })).sort((a, b) => depth(a.p.path) - depth(b.p.path) || a.i - b.i);
    try {
      for (const { p } of order) {
        if (p.node.type === 'dir') {
          fs.mount(p.path, p.node, { readOnly: p.readOnly });
          continue;
        }
        const parts = p.path.split('/').filter((x) => x !== '');
        const parent = '/' + parts.slice(0, -1).join('/');
        fs.mkdirp(parent, 0o755, true);
        const r = fs.resolve(parent);
        if (!r.node || r.node.type !== 'dir') throw new Error(`not a directory: ${parent}`);
        setEntry(r.node, parts[parts.length - 1]!, p.node);
      }
    } catch (e) {
      return { error: `error mounting into container "${container.name}": ${e instanceof Error ? e.message : String(e)}` };
    }
    return { fs };
  }
}

/**
 * A hostPath volume on the node's file system (kubelet's hostPath plugin with
 * its type checks): the directory or file at `path`, created for
 * DirectoryOrCreate/FileOrCreate and, as the container runtime does, as a
 * directory when no type is given.
 */
function hostPathNode(hostFs: FileSystem | undefined, path: string, type: string, now: number): { node: FsNode } | { error: string } {
  if (!hostFs) return { node: newDir(0o755, now) };
  hostFs.now = now;
  let n = hostFs.stat(path);
  const fail = (what: string) => ({ error: `hostPath type check failed: ${path} is not a ${what}` });
  try {
    if (!n && (type === '' || type === 'DirectoryOrCreate')) {
      hostFs.mkdirp(path, 0o755, true);
      n = hostFs.stat(path);
    } else if (!n && type === 'FileOrCreate') {
      hostFs.mkdirp(path.slice(0, path.lastIndexOf('/')) || '/', 0o755, true);
      hostFs.writeFile(path, '', { mode: 0o644 });
      n = hostFs.stat(path);
    }
  } catch (e) {
    return { error: `hostPath ${path}: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (!n) return type === 'File' ? fail('file') : type === 'Directory' ? fail('directory') : { error: `hostPath type check failed: ${path} does not exist` };
  if ((type === 'Directory' || type === 'DirectoryOrCreate') && n.type !== 'dir') return fail('directory');
  if ((type === 'File' || type === 'FileOrCreate') && n.type !== 'file') return fail('file');
  return { node: n };
}
