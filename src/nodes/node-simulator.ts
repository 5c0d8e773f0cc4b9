/**
 * Simulated nodes: kubelets without containers (like kwok). Registers N
 * nodes, keeps their leases and status fresh, and plays the kubelet for every
 * pod bound to them: Pending -> Running -> Ready with an IP from the node's
 * pod range, simulated commands (`sleep N`, `exit N`), probes and lifecycle
 * hooks, restarts with the kubelet's backoff, image pull failures for
 * `.invalid` registries, and graceful deletion (preStop, SIGTERM, SIGKILL at
 * the grace period; option gracefulShutdown, on in `kcm up` and `kcm nodes`).
 * Everything goes through the client; every timer through the Clock.
 *
 *   const sim = newNodeSimulator({ client, clock, count: 3 });
 *   await sim.run(signal);   // resolves after the signal aborts and all work stopped
 *
 * Volumes (volume-manager.ts, csi.ts): a pod's sandbox waits until its
 * claims are bound and its attachable CSI volumes are in the node's
 * volumesAttached (FailedMount events meanwhile); the node reports
 * volumesInUse; the simulated CSI driver `local-path.kcm.io` gets its
 * CSIDriver, a CSINode per node and an external attacher for its
 * VolumeAttachments.
 *
 * Pods on a node that is paused (`kcm.dev/heartbeat: paused`) are not
 * updated until the node resumes. A pod bound to a node name that is not one
 * of ours, or to one of ours whose Node object does not exist, is not run.
 */
import type { ConfigMap, Endpoints, Node, PersistentVolume, PersistentVolumeClaim, Pod, Secret, Service, Taint } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import type { ObjectReference } from 'kubernetes-types/core/v1.js';
import { isNotFound, isConflict } from '../client/errors.js';
import type { Client } from '../client/interfaces.js';
import { typed, type TypedClient } from '../client/typed.js';
import { DeletedFinalStateUnknown, newSharedInformerFactory, type Kube, type SharedIndexInformer, type SharedInformerFactory } from '../tools/cache/index.js';
import { newEventBroadcaster } from '../tools/record/index.js';
import type { EventBroadcaster, EventRecorder } from '../tools/record/index.js';
import { realClock, type Clock, type Timer } from '../util/clock/clock.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import { jsonEqual } from '../util/json/equal.js';
import { DEFAULT_CSI_VOLUME_LIMIT, SIMULATED_CSI_DRIVER, ensureCSIDriver, ensureCSINode, syncVolumeAttachment, type ExternalAttacherOptions } from './csi.js';
import { newIpAllocator, type IpAllocator } from './ip-allocator.js';
import { NODE_STATUS_UPDATE_INTERVAL_MS, NodeAgent } from './node-agent.js';
import { defaultPodCIDR, INSTANCE_ANNOTATION, nodeInternalIP, type NodeTemplate, type PressureKind } from './node-object.js';
import { PodRuntime } from './pod-runtime.js';
import { activePodInfo, kubeletAdmit, type ActivePodInfo } from './admission.js';
import {
  NODEFS_AVAILABLE_THRESHOLD_FRACTION,
  RESOURCE_OF,
  admitUnderPressure,
  evictionMessage,
  observeMemory,
  rankForEviction,
  thresholdMet,
  type PressureCondition,
  type SignalObservation,
} from './eviction.js';
import { nodeUsage, podTotalUsage, podUsage } from './usage.js';
import { parseQuantity, value } from '../api/quantity.js';
import { buildPodStatus } from './pod-status.js';
import { newRestartBackoff, type RestartBackoff } from './restart-backoff.js';
import { POD_ATTACH_AND_MOUNT_TIMEOUT_MS, failedMountMessage, podVolumeState, type VolumeLookup } from './volume-manager.js';
import { PodSandbox, SimNetwork, type ClusterView } from './sandbox.js';
import type { ImagePullRule } from './image.js';
import { createStandardFs, type FileSystem } from './shell/index.js';
import { KUBELET_ENDPOINT_ANNOTATION, startKubeletServer, type KubeletServer } from './kubelet/server.js';
import { PodTable } from './pod-table.js';

/**
 * Pod syncs running at once (each awaits API writes and sandboxes), and started per turn of the event loop.
 * A kubelet runs a worker per pod; 1,024 for all the simulated kubelets keeps a sync's API round trips from
 * holding the others back (at 1,000 nodes and 30,000 pods, 256 left the kubelets 10,000 pods behind the scheduler).
 */
const maxPodWorkers = 1024;
const startsPerTurn = 32;

/** The version the simulated kubelets report (the embedded API server's). */
export const DEFAULT_KUBELET_VERSION = 'v1.33.0-kcm';

export const DEFAULT_CAPACITY: Readonly<Record<string, string>> = Object.freeze({
  cpu: '4',
  memory: '8Gi',
  pods: '110',
  'ephemeral-storage': '100Gi',
});

export interface NodeSimulatorOptions {
  client: Client;
  /**
   * The client for node registration, status and Lease renewals (default
   * `client`). The kubelet's heartbeat client has no rate limit and a timeout
   * of the status update period, so a backlog of pod status writes never
   * holds a renewal past the node monitor's grace period.
   */
  heartbeatClient?: Client;
  /** The client the default event broadcasters post through (default `client`; the kubelet's has its own limits, 5/10). */
  eventClient?: Client;
  /** A shared factory to take the nodes and pods informers from; one is made otherwise. */
  informers?: SharedInformerFactory;
  clock?: Clock;
  logger?: Logger;
  /** Number of nodes (default 3). */
  count?: number;
  /** Node names are `<prefix><i>` (default `kcm-node-`). */
  namePrefix?: string;
  capacity?: Record<string, string>;
  /** Extra node labels (override the defaults). */
  labels?: Record<string, string>;
  taints?: Taint[];
  /** Node i gets `topology.kubernetes.io/zone: zones[i % zones.length]` (default: no zone label). */
  zones?: string[];
  /**
   * Stop a deleted pod as the kubelet does: preStop hooks, SIGTERM, SIGKILL at
   * the grace period's end, on the clock (default false here: at once, for
   * tests; `kcm up` and `kcm nodes` turn it on).
   */
  gracefulShutdown?: boolean;
  /** Time between a pod's admission and its sandbox being ready (default 0). */
  podStartDelayMs?: number;
  kubeletVersion?: string;
  /** `kubernetes.io/arch` and nodeInfo.architecture (default amd64). */
  architecture?: string;
  /** Where pod events go (default: an event broadcaster on `client`, component kubelet, host = node). */
  recorderFor?: (nodeName: string) => EventRecorder;
  /**
   * CSI drivers the nodes simulate (default [`local-path.kcm.io`]): their
   * CSIDriver (created when missing), a CSINode entry per node, and the
   * external attacher for their VolumeAttachments. [] turns all of it off.
   */
  csiDrivers?: string[];
  /** allocatable.count of each node's CSINode driver entries (default 64). */
  csiVolumeLimit?: number;
  /**
   * Serve the kubelet endpoint (logs, exec, attach, port-forward, pod proxy)
   * on a loopback port, advertised on each Node (annotation
   * `kcm.dev/kubelet-endpoint`, daemonEndpoints); `token` is the bearer
   * token the API server must present. Off by default (tests); `kcm up` and
   * `kcm nodes` turn it on.
   */
  kubeletServer?: { token?: string; address?: string; port?: number };
  /** Images that fail to pull beyond those that cannot exist (image.ts). */
  imagePullRule?: ImagePullRule;
  /**
   * Where each probe's ticks fall in its period, drawn per container and probe kind when a pod is admitted
   * (PodRuntimeOptions.probeJitter). Default Math.random, as the kubelet; false: a probe first runs exactly
   * initialDelaySeconds after its container started.
   */
  probeJitter?: (() => number) | false;
}

export interface NodeSimulator {
  readonly nodeNames: readonly string[];
  /** Registers the nodes and runs until the signal aborts; resolves once everything started has stopped. */
  run(signal: AbortSignal): Promise<void>;
  /** Resolves when no pod sync or status write is in flight (tests). */
  whenIdle(): Promise<void>;
}

interface SimNode {
  agent: NodeAgent;
  index: number;
  ips: IpAllocator;
  recorder: EventRecorder;
  /** The IPs of pods already running here (from before a restart) are reserved, with a synced pod cache. */
  reserved?: boolean;
  /** The CSINode lists our drivers. */
  csiRegistered?: boolean;
  /** Pressure the eviction manager observed from simulated usage at its last run. */
  observed: PressureKind[];
  /** The memory signal at that run. */
  memory?: SignalObservation;
  /** The node's own file system (hostPath volumes), made on first use. */
  hostFs?: FileSystem;
}

interface PodEntry {
  uid: string;
  readonly node: string;
  runtime: PodRuntime;
  /** Volumes, processes and network of the pod's containers. */
  sandbox: PodSandbox;
  podIP: string;
  timer?: Timer;
  /** Deletion under way (graceful stop scheduled or done). */
  stopping: boolean;
  /** The deletion stops containers gracefully (gracefulShutdown, and something was still running). */
  graceful?: boolean;
  /** Unique names of the pod's attachable volumes (for volumesInUse). */
  attachable: string[];
  /** The pod informer still has this pod (podSeen): false once it was deleted or replaced by another of its name. */
  known: boolean;
  /** What the admission of the node's next pods needs of this one, made on first use. */
  admitInfo?: ActivePodInfo;
  /** Since when the pod waits for a volume to be attached or mounted. */
  volumesWaitSince?: number;
  /** The last FailedMount message recorded for a volume the populator could not process. */
  volumesError?: string;
}

function podKey(pod: Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

class Simulator implements NodeSimulator {
  readonly nodeNames: string[];
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly api: TypedClient;
  private readonly nodes = new Map<string, SimNode>();
  private readonly pods = new PodTable<PodEntry>();
  private readonly backoff: RestartBackoff;
  /** Pods (key -> uid) this simulator has asked to delete; not asked again while they linger (finalizers). */
  private readonly deleted = new Map<string, string>();
  /** One per node, as each kubelet has its own (its own queue of 1000 events: a burst on one node drops no other node's). */
  private readonly broadcasters: EventBroadcaster[] = [];
  private ownFactory: SharedInformerFactory | undefined;
  private nodeInformer!: SharedIndexInformer<Kube<Node>>;
  private podInformer!: SharedIndexInformer<Kube<Pod>>;
  private pvcInformer!: SharedIndexInformer<Kube<PersistentVolumeClaim>>;
  private pvInformer!: SharedIndexInformer<Kube<PersistentVolume>>;
  private csiDriverInformer!: SharedIndexInformer<Kube<CSIDriver>>;
  private vaInformer: SharedIndexInformer<Kube<VolumeAttachment>> | undefined;
  private readonly csiDrivers: string[];
  private csiDriversEnsured = false;
  /** Pods whose sandbox waits for volumes: re-synced when claims, volumes or drivers change. */
  private readonly volumeWaiters = new Set<string>();
  // Per-key serial syncs: a key is synced by at most one task at a time;
  // a request during a sync runs it again afterwards.
  private readonly inflight = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /** Keys waiting for a worker, in the order asked; see enqueue. */
  private readonly pending = new Set<string>();
  private pumpScheduled = false;
  private startedThisTurn = 0;
  private stopped = false;
  private readonly templates: NodeTemplate[] = [];
  private cmInformer!: SharedIndexInformer<Kube<ConfigMap>>;
  private secretInformer!: SharedIndexInformer<Kube<Secret>>;
  private svcInformer!: SharedIndexInformer<Kube<Service>>;
  private endpointsInformer!: SharedIndexInformer<Kube<Endpoints>>;
  private readonly view: ClusterView;
  readonly network: SimNetwork;
  /** Issued service account tokens (TokenRequest): pod uid -> namespace/sa/audience/expiration -> token. */
  private readonly tokens = new Map<string, Map<string, Buffer>>();
  private kubelet: KubeletServer | undefined;
  /** The API server answered that it does not serve serviceaccounts/token. */
  private tokenRequestUnserved = false;

  constructor(private readonly opts: NodeSimulatorOptions) {
    this.clock = opts.clock ?? realClock;
    this.log = opts.logger ?? newLogger('nodes');
    this.api = typed(opts.client);
    this.backoff = newRestartBackoff({ clock: this.clock });
    this.view = this.clusterView();
    this.network = new SimNetwork(this.view, () => this.clock.now());
    this.csiDrivers = [...(opts.csiDrivers ?? [SIMULATED_CSI_DRIVER])];
    const count = opts.count ?? 3;
    const prefix = opts.namePrefix ?? 'kcm-node-';
    this.nodeNames = Array.from({ length: count }, (_, i) => `${prefix}${i}`);
    const arch = opts.architecture ?? 'amd64';
    this.nodeNames.forEach((name, i) => {
      const labels: Record<string, string> = {};
      if (opts.zones && opts.zones.length > 0) labels['topology.kubernetes.io/zone'] = opts.zones[i % opts.zones.length]!;
      Object.assign(labels, opts.labels ?? {});
      const template: NodeTemplate = {
        capacity: { ...(opts.capacity ?? DEFAULT_CAPACITY) },
        labels,
        taints: opts.taints ?? [],
        kubeletVersion: opts.kubeletVersion ?? DEFAULT_KUBELET_VERSION,
        architecture: arch,
      };
      this.templates.push(template);
      const identity = { name, index: i, internalIP: nodeInternalIP(i), defaultPodCIDR: defaultPodCIDR(i) };
      let recorder = opts.recorderFor?.(name);
      if (!recorder) {
        const broadcaster = newEventBroadcaster({ client: opts.eventClient ?? opts.client, clock: this.clock, logger: this.log.child({}, 'events') });
        this.broadcasters.push(broadcaster);
        recorder = broadcaster.newRecorder({ component: 'kubelet', host: name });
      }
      const agent = new NodeAgent({
        client: opts.heartbeatClient ?? opts.client,
        clock: this.clock,
        logger: this.log,
        identity,
        template,
        cached: () => this.nodeInformer?.getStore().getByKey(name) as Node | undefined,
        recorder,
        volumesInUse: () => this.volumesInUse(name),
        observedPressure: () => this.nodes.get(name)?.observed ?? [],
      });
      this.nodes.set(name, { agent, index: i, ips: newIpAllocator(identity.defaultPodCIDR), recorder, observed: [] });
    });
  }

  async run(signal: AbortSignal): Promise<void> {
    const factory = this.opts.informers ?? (this.ownFactory = newSharedInformerFactory(this.opts.client, { clock: this.clock, logger: this.log.child({}, 'informers') }));
    this.nodeInformer = factory.nodes();
    this.podInformer = factory.pods();
    this.pvcInformer = factory.persistentVolumeClaims();
    this.pvInformer = factory.persistentVolumes();
    this.csiDriverInformer = factory.csiDrivers();
    this.cmInformer = factory.configMaps();
    this.secretInformer = factory.secrets();
    this.svcInformer = factory.services();
    this.endpointsInformer = factory.endpoints();
    // ConfigMap and Secret changes reach the volumes of the pods that use them (kubelet's periodic sync, without its delay).
    const refreshNs = (o: unknown) => {
      const obj = (o instanceof DeletedFinalStateUnknown ? o.obj : o) as { metadata?: { namespace?: string } };
      const ns = obj?.metadata?.namespace;
      for (const [key, e] of this.pods) {
        if (!key.startsWith(`${ns}/`) || e.runtime.terminal) continue;
        if (e.sandbox.refresh(e.sandbox.pod, e.podIP)) this.log.v(4).info({ pod: key }, 'volume contents updated');
        if (e.runtime.volumesPending) this.enqueue(key);
      }
    };
    const contentRegs = [this.cmInformer, this.secretInformer].map((inf) =>
      ({ inf: inf as SharedIndexInformer<Kube<{ metadata?: object }>>, reg: (inf as SharedIndexInformer<Kube<{ metadata?: object }>>).addEventHandler({ onAdd: refreshNs, onUpdate: (_o, n) => refreshNs(n), onDelete: refreshNs }) }),
    );
    if (this.opts.kubeletServer) {
      this.kubelet = await startKubeletServer({
        host: {
          pod: (ns, name) => {
            const e = this.pods.get(`${ns}/${name}`);
            const pod = this.podInformer.getStore().getByKey(`${ns}/${name}`) as Pod | undefined;
            return e && pod && pod.metadata?.uid === e.uid ? { pod, runtime: e.runtime } : undefined;
          },
          pods: () => [...this.pods.keys()].map((k) => this.podInformer.getStore().getByKey(k) as Pod | undefined).filter((p): p is Pod => !!p),
          kick: (ns, name) => this.enqueue(`${ns}/${name}`),
          http: (ns, name, port, req) => {
            const e = this.pods.get(`${ns}/${name}`);
            if (!e) return `pod "${name}" does not exist`;
            const a = e.sandbox.http(port, req);
            return a === 'refused' ? `dial tcp ${e.podIP}:${port}: connect: connection refused` : a;
          },
        },
        clock: this.clock,
        logger: this.log.child({}, 'kubelet-server'),
        ...(this.opts.kubeletServer.token ? { token: this.opts.kubeletServer.token } : {}),
        ...(this.opts.kubeletServer.address ? { address: this.opts.kubeletServer.address } : {}),
        ...(this.opts.kubeletServer.port !== undefined ? { port: this.opts.kubeletServer.port } : {}),
      });
      for (const t of this.templates) {
        t.annotations = { ...(t.annotations ?? {}), [KUBELET_ENDPOINT_ANNOTATION]: this.kubelet.url };
        t.kubeletPort = this.kubelet.port;
      }
    }
    const waiters = () => {
      for (const k of this.volumeWaiters) this.enqueue(k);
    };
    const volumeRegs = [this.pvcInformer, this.pvInformer, this.csiDriverInformer].map((inf) =>
      ({ inf: inf as SharedIndexInformer<Kube<{ metadata?: object }>>, reg: (inf as SharedIndexInformer<Kube<{ metadata?: object }>>).addEventHandler({ onAdd: waiters, onUpdate: waiters, onDelete: waiters }) }),
    );
    let vaReg: ReturnType<SharedIndexInformer<Kube<VolumeAttachment>>['addEventHandler']> | undefined;
    if (this.csiDrivers.length > 0) {
      this.vaInformer = factory.volumeAttachments();
      const onVA = (o: unknown) => {
        const va = o instanceof DeletedFinalStateUnknown ? undefined : (o as VolumeAttachment);
        if (va?.metadata?.name) this.enqueue(`va:${va.metadata.name}`);
      };
      vaReg = this.vaInformer.addEventHandler({ onAdd: onVA, onUpdate: (_o, n) => onVA(n) });
    }
    const nodeReg = this.nodeInformer.addEventHandler({
      onAdd: (n) => this.onNode(n as Node),
      onUpdate: (_o, n) => this.onNode(n as Node),
      onDelete: (n) => this.onNodeDeleted(n instanceof DeletedFinalStateUnknown ? (n.obj as Node) : (n as Node), signal),
    });
    const podReg = this.podInformer.addEventHandler({
      onAdd: (p) => this.podSeen(p as Pod, true),
      onUpdate: (_o, p) => this.podSeen(p as Pod, true),
      onDelete: (p) => this.podSeen(p instanceof DeletedFinalStateUnknown ? (p.obj as Pod) : (p as Pod), false),
    });

    const loops: Promise<void>[] = [];
    for (const sn of this.nodes.values()) loops.push(this.nodeLoop(sn, signal));
    factory.start(signal);

    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    this.stopped = true;
    for (const e of this.pods.values()) e.timer?.stop();
    await Promise.all(loops);
    await this.whenIdle();
    this.nodeInformer.removeEventHandler(nodeReg);
    this.podInformer.removeEventHandler(podReg);
    for (const { inf, reg } of [...volumeRegs, ...contentRegs]) inf.removeEventHandler(reg);
    await this.kubelet?.close();
    if (vaReg) this.vaInformer?.removeEventHandler(vaReg);
    if (this.ownFactory) await this.ownFactory.shutdown();
    await Promise.all(this.broadcasters.map((b) => b.shutdown()));
  }

  async whenIdle(): Promise<void> {
    while (this.inflight.size > 0 || (this.pending.size > 0 && !this.stopped)) {
      if (this.inflight.size > 0) await Promise.all([...this.inflight.values()]);
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  // --- nodes ---

  /** Registers the node, then heartbeats every 10 s until the signal aborts; errors are logged and retried. */
  private async nodeLoop(sn: SimNode, signal: AbortSignal): Promise<void> {
    let registered = false;
    while (!signal.aborted) {
      try {
        if (!registered) {
          await sn.agent.register();
          registered = true;
          this.enqueueNodePods(sn.agent.name);
        } else {
          // The eviction manager's synchronize (every 10 s, as the heartbeat): observe, report, evict one pod.
          this.observeUsage(sn);
          await sn.agent.heartbeat();
          await this.evictOne(sn);
        }
      } catch (err) {
        this.log.error(err, { node: sn.agent.name }, registered ? 'heartbeat failed' : 'node registration failed');
      }
      if (registered && !sn.csiRegistered && !sn.agent.paused) {
        try {
          await this.registerCSI(sn);
        } catch (err) {
          this.log.error(err, { node: sn.agent.name }, 'CSI node registration failed; retrying with the next heartbeat');
        }
      }
      try {
        await this.clock.sleep(NODE_STATUS_UPDATE_INTERVAL_MS, signal);
      } catch {
        break;
      }
    }
  }

  /**
   * An informer event for a pod: marks whether the pod's entry is still the informer's pod (kubelet's
   * pod manager forgets a deleted pod at once; the entry goes with the sync this queues), then queues it.
   */
  private podSeen(pod: Pod, present: boolean): void {
    const key = podKey(pod);
    const e = this.pods.get(key);
    if (e) e.known = present && e.uid === pod.metadata?.uid;
    this.enqueue(key);
  }

  /** The pods running on the node that are neither finished nor being deleted, with their entries. */
  private activePods(nodeName: string): { key: string; pod: Pod; e: PodEntry }[] {
    const out: { key: string; pod: Pod; e: PodEntry }[] = [];
    for (const [key, e] of this.pods.onNode(nodeName)) {
      if (e.stopping || e.runtime.terminal) continue;
      const pod = this.podInformer.getStore().getByKey(key) as Pod | undefined;
      if (pod && pod.metadata?.uid === e.uid) out.push({ key, pod, e });
    }
    return out;
  }

  /** Every node's capacity (the template the kubelets register with). */
  private get capacity(): Readonly<Record<string, string>> {
    return this.opts.capacity ?? DEFAULT_CAPACITY;
  }

  /** The pods admitted on the node that have not finished (terminating ones count), but `except`. */
  private admittedPods(nodeName: string, except: string): ActivePodInfo[] {
    const out: ActivePodInfo[] = [];
    for (const [key, e] of this.pods.onNode(nodeName)) {
      if (key === except || !e.known || e.runtime.settled || e.runtime.rejected) continue;
      out.push((e.admitInfo ??= activePodInfo(e.runtime.pod)));
    }
    return out;
  }

  /**
   * The memory signal of the node from the simulated usage of its pods (the
   * pods' own `kcm.dev/usage` annotations: a kubelet knows its pods, not their
   * workloads) against kubelet's `memory.available<100Mi`.
   */
  private observeUsage(sn: SimNode): void {
    const node = this.nodeInformer.getStore().getByKey(sn.agent.name) as Node | undefined;
    const capacity = node?.status?.capacity?.memory ?? this.capacity.memory;
    if (!capacity) return;
    const pods = this.activePods(sn.agent.name).map(({ pod }) => podTotalUsage(pod) ?? { cpuNanocores: 0, memoryBytes: 0 });
    sn.memory = observeMemory(value(parseQuantity(String(capacity))), nodeUsage(sn.agent.name, pods).memoryBytes);
    const observed: PressureKind[] = thresholdMet(sn.memory) ? ['memory'] : [];
    if (observed.join() !== sn.observed.join()) this.log.info({ node: sn.agent.name, memoryAvailable: sn.memory.available }, observed.length > 0 ? 'memory pressure observed' : 'memory pressure relieved');
    sn.observed = observed;
  }

  /** The node's pressure conditions now (forced and observed). */
  private pressureConditions(sn: SimNode): PressureCondition[] {
    const node = this.nodeInformer.getStore().getByKey(sn.agent.name) as Node | undefined;
    const names: Record<PressureKind, PressureCondition> = { memory: 'MemoryPressure', disk: 'DiskPressure', pid: 'PIDPressure' };
    return sn.agent.pressureNow(node).map((k) => names[k]);
  }

  /**
   * Evicts at most one pod when the node is under pressure (kubelet's eviction
   * manager with hard thresholds: grace period 0): ranked by
   * rankForEviction, phase Failed with reason Evicted, a DisruptionTarget
   * condition and a `Warning Evicted` event. A forced signal (the node
   * annotation) reports `available: 0`.
   */
  private async evictOne(sn: SimNode): Promise<void> {
    if (sn.agent.paused) return;
    const conditions = this.pressureConditions(sn);
    if (conditions.length === 0) return;
    const condition = conditions[0]!;
    const resource = RESOURCE_OF[condition];
    let obs: SignalObservation;
    if (resource === 'memory' && sn.memory && thresholdMet(sn.memory)) obs = sn.memory;
    else if (resource === 'memory') obs = { resource, threshold: sn.memory?.threshold ?? 100 * 1024 * 1024, available: 0 };
    else {
      const node = this.nodeInformer.getStore().getByKey(sn.agent.name) as Node | undefined;
      const cap = node?.status?.capacity?.['ephemeral-storage'] ?? this.capacity['ephemeral-storage'] ?? '0';
      obs = { resource, threshold: Math.round(value(parseQuantity(String(cap))) * NODEFS_AVAILABLE_THRESHOLD_FRACTION), available: 0 };
    }
    const active = this.activePods(sn.agent.name);
    const usage = (p: Pod) => podUsage(p).map((u) => ({ name: u.name, memoryBytes: u.memoryBytes }));
    const [victim] = rankForEviction(active.map((a) => a.pod), resource, usage);
    if (!victim) return;
    const entry = active.find((a) => a.pod === victim)!;
    const { message } = evictionMessage(victim, obs, usage(victim));
    if (!entry.e.runtime.evict(this.clock.now(), message)) return;
    sn.recorder.event(this.podRef(victim), 'Warning', 'Evicted', message);
    this.log.info({ pod: entry.key, node: sn.agent.name, condition }, 'evicted pod');
    this.enqueue(entry.key);
  }

  /** The CSIDriver objects (once) and this node's CSINode entries (the node plugins' registration). */
  private async registerCSI(sn: SimNode): Promise<void> {
    if (this.csiDrivers.length === 0) {
      sn.csiRegistered = true;
      return;
    }
    if (!this.csiDriversEnsured) {
      for (const d of this.csiDrivers) await ensureCSIDriver(this.opts.client, d, this.log);
      this.csiDriversEnsured = true;
    }
    const ref = sn.agent.uid ? { name: sn.agent.name, uid: sn.agent.uid } : { name: sn.agent.name };
    await ensureCSINode(this.opts.client, ref, this.csiDrivers, this.opts.csiVolumeLimit ?? DEFAULT_CSI_VOLUME_LIMIT);
    sn.csiRegistered = true;
  }

  /** The attachable volumes in use on the node: those of its pods that have not finished, sorted. */
  private volumesInUse(nodeName: string): string[] {
    const out = new Set<string>();
    for (const [, e] of this.pods.onNode(nodeName)) if (!e.runtime.terminal) for (const v of e.attachable) out.add(v);
    return [...out].sort();
  }

  private volumeLookup(): VolumeLookup {
    return {
      pvc: (ns, name) => this.pvcInformer.getStore().getByKey(`${ns}/${name}`) as PersistentVolumeClaim | undefined,
      pv: (name) => this.pvInformer.getStore().getByKey(name) as PersistentVolume | undefined,
      csiDriver: (name) => this.csiDriverInformer.getStore().getByKey(name) as CSIDriver | undefined,
    };
  }

  /**
   * The volume manager's part of a pod sync: records the pod's attachable
   * volumes (posting volumesInUse when the node's set changes), and holds the
   * sandbox while a volume is not attached or mounted, with the kubelet's
   * FailedMount events.
   */
  private async checkVolumes(key: string, pod: Pod, e: PodEntry, sn: SimNode, node: Node, now: number): Promise<void> {
    const st = podVolumeState(pod, node, this.volumeLookup());
    // ConfigMap, Secret, downward API and projected volumes that cannot be set up (kubelet's volume plugins' SetUp errors).
    if (e.runtime.sandboxReadyAt === undefined && st.ready) {
      const setup = e.sandbox.errors();
      if (setup.length > 0) {
        e.runtime.volumesPending = true;
        const msg = setup.join('\n');
        if (msg !== e.volumesError) for (const m of setup) sn.recorder.event(this.podRef(pod), 'Warning', 'FailedMount', m);
        e.volumesError = msg;
        return;
      }
    }
    const changed = st.attachable.join('\n') !== e.attachable.join('\n');
    e.attachable = st.attachable;
    // The agent posts only when the node's set differs from what the server shows.
    if (changed || (st.attachable.length > 0 && !st.ready)) await sn.agent.postVolumesInUse(node);
    if (e.runtime.sandboxReadyAt !== undefined || st.ready) {
      e.runtime.volumesPending = false;
      e.volumesWaitSince = undefined;
      e.volumesError = undefined;
      this.volumeWaiters.delete(key);
      return;
    }
    e.runtime.volumesPending = true;
    this.volumeWaiters.add(key);
    const emit = (msg: string) => sn.recorder.event(this.podRef(pod), 'Warning', 'FailedMount', msg);
    if (st.errors.length > 0) {
      const msg = failedMountMessage(st);
      if (msg !== e.volumesError) emit(msg);
      e.volumesError = msg;
      e.volumesWaitSince = undefined;
      return;
    }
    e.volumesError = undefined;
    e.volumesWaitSince ??= now;
    if (now - e.volumesWaitSince >= POD_ATTACH_AND_MOUNT_TIMEOUT_MS) {
      emit(failedMountMessage(st));
      e.volumesWaitSince = now;
    }
    this.schedule(key, e.volumesWaitSince + POD_ATTACH_AND_MOUNT_TIMEOUT_MS);
  }

  /** The external attacher's sync of one VolumeAttachment (key `va:<name>`). */
  private async syncAttachment(name: string): Promise<void> {
    const va = this.vaInformer?.getStore().getByKey(name) as VolumeAttachment | undefined;
    if (!va) return;
    const opts: ExternalAttacherOptions = {
      client: this.opts.client,
      logger: this.log,
      drivers: this.csiDrivers,
      isOurNode: (n) => this.nodes.has(n) && !this.nodes.get(n)!.agent.paused,
    };
    await syncVolumeAttachment(opts, va);
  }

  private onNode(node: Node): void {
    const sn = this.nodes.get(node.metadata?.name ?? '');
    if (!sn) return;
    const change = sn.agent.observe(node);
    if (change === 'resumed') {
      // Attachments that waited while the node was paused.
      for (const va of (this.vaInformer?.getStore().list() ?? []) as VolumeAttachment[]) if (va.spec?.nodeName === sn.agent.name && va.metadata?.name) this.enqueue(`va:${va.metadata.name}`);
      void sn.agent.heartbeat().catch((err: unknown) => this.log.error(err, { node: sn.agent.name }, 'heartbeat after resume failed'));
    }
    // The node appearing, a new podCIDR, or a resume: pods there may need a sync.
    this.enqueueNodePods(sn.agent.name);
  }

  private onNodeDeleted(node: Node, signal: AbortSignal): void {
    const sn = this.nodes.get(node.metadata?.name ?? '');
    if (!sn || signal.aborted || this.stopped) return;
    if (node.metadata?.annotations?.[INSTANCE_ANNOTATION] === 'deleted') {
      // Its instance is gone (kcm nodes delete-instance): no kubelet is left to register it again.
      this.log.info({ node: sn.agent.name }, 'node object deleted after its instance: not registering it again');
      return;
    }
    sn.csiRegistered = false; // its CSINode, owned by the old Node, goes with it
    this.log.info({ node: sn.agent.name }, 'node object deleted while running: registering it again');
    void sn.agent.register().catch((err: unknown) => this.log.error(err, { node: sn.agent.name }, 're-registration failed; retrying on the next heartbeat'));
  }

  private enqueueNodePods(nodeName: string): void {
    if (!this.podInformer) return;
    for (const p of this.podInformer.getStore().list() as Pod[]) if (p.spec?.nodeName === nodeName) this.enqueue(podKey(p));
    for (const [key] of this.pods.onNode(nodeName)) this.enqueue(key);
  }

  // --- pods ---

  /**
   * Asks for a sync of key. A sync starts at once, unless startsPerTurn have started in this turn of the
   * event loop or maxPodWorkers are running: then it waits in a queue, started a few per turn. After a
   * re-list of thousands of pods, starting every sync inside the informer's delivery would run their
   * synchronous parts back to back and starve timers (Lease renewals) and I/O.
   */
  private enqueue(key: string): void {
    if (this.stopped) return;
    if (this.inflight.has(key)) {
      this.again.add(key);
      return;
    }
    if (this.pending.size === 0 && this.inflight.size < maxPodWorkers && this.startedThisTurn < startsPerTurn) {
      this.startedThisTurn++;
      if (this.startedThisTurn === 1) setImmediate(() => (this.startedThisTurn = 0));
      this.start(key);
      return;
    }
    this.pending.add(key);
    this.schedulePump();
  }

  private schedulePump(): void {
    if (this.pumpScheduled || this.pending.size === 0 || this.stopped) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    let started = 0;
    for (const key of this.pending) {
      if (this.stopped || this.inflight.size >= maxPodWorkers || started >= startsPerTurn) break;
      this.pending.delete(key);
      if (this.inflight.has(key)) {
        this.again.add(key);
        continue;
      }
      this.start(key);
      started++;
    }
    if (this.inflight.size < maxPodWorkers) this.schedulePump();
  }

  private start(key: string): void {
    const task = (async () => {
      do {
        this.again.delete(key);
        try {
          if (key.startsWith('va:')) await this.syncAttachment(key.slice(3));
          else if (key.startsWith('volumes:')) await this.nodes.get(key.slice(8))?.agent.postVolumesInUse(this.nodeInformer.getStore().getByKey(key.slice(8)) as Node | undefined);
          else await this.syncPod(key);
        } catch (err) {
          this.log.error(err, { pod: key }, 'pod sync failed');
          this.schedule(key, this.clock.now() + 1000);
        }
      } while (this.again.has(key) && !this.stopped);
    })().finally(() => {
      this.inflight.delete(key);
      this.schedulePump();
    });
    this.inflight.set(key, task);
  }

  private schedule(key: string, at: number): void {
    const e = this.pods.get(key);
    if (this.stopped) return;
    if (e) {
      e.timer?.stop();
      e.timer = this.clock.setTimer(() => this.enqueue(key), at - this.clock.now());
    } else {
      this.clock.setTimer(() => this.enqueue(key), at - this.clock.now());
    }
  }

  private forget(key: string): void {
    const e = this.pods.get(key);
    if (!e) return;
    e.timer?.stop();
    this.nodes.get(e.node)?.ips.release(key);
    this.backoff.resetPrefix(`${e.uid}`);
    this.pods.delete(key);
    this.tokens.delete(e.uid);
    this.network.remove(key, e.podIP);
    this.volumeWaiters.delete(key);
    if (e.attachable.length > 0) this.enqueue(`volumes:${e.node}`);
  }

  private async syncPod(key: string): Promise<void> {
    const pod = this.podInformer.getStore().getByKey(key) as Pod | undefined;
    const entry = this.pods.get(key);
    if (!pod) {
      if (!entry) for (const sn of this.nodes.values()) sn.ips.release(key);
      this.forget(key);
      this.deleted.delete(key);
      return;
    }
    if (this.deleted.get(key) === pod.metadata?.uid) return;
    this.deleted.delete(key);
    if (entry && entry.uid !== pod.metadata?.uid) this.forget(key);
    const nodeName = pod.spec?.nodeName ?? '';
    const sn = this.nodes.get(nodeName);
    if (!sn) return;
    const node = this.nodeInformer.getStore().getByKey(nodeName) as Node | undefined;
    if (!node) {
      this.log.v(4).info({ pod: key, node: nodeName }, 'pod bound to a node that does not exist: not running it');
      return;
    }
    if (sn.agent.paused) return;
    let e = this.pods.get(key);
    const now = this.clock.now();
    const phase = pod.status?.phase;
    if (!e && (phase === 'Succeeded' || phase === 'Failed')) {
      // Finished before we met it (e.g. before a restart of the simulator).
      sn.ips.release(key);
      if (pod.metadata?.deletionTimestamp) await this.deleteNow(pod);
      return;
    }
    if (!e) {
      if (pod.metadata?.deletionTimestamp) {
        await this.deleteNow(pod);
        return;
      }
      const ips = this.ipsFor(sn, node);
      // Met for the first time but already started here: kcm restarted, and a kubelet restart keeps containers and IPs.
      const adopting = !!pod.status?.hostIP && pod.status.hostIP === sn.agent.internalIP;
      const prior = adopting ? pod.status?.podIP : undefined;
      if (!prior && !pod.spec?.hostNetwork) {
        // Until the pod cache holds every pod, one started before a restart may still hold an address unseen.
        if (!this.podInformer.hasSynced()) {
          this.schedule(key, now + 100);
          return;
        }
        this.reserveRunningIPs(sn, ips);
      }
      const podIP = pod.spec?.hostNetwork ? '' : (ips.allocate(key, prior) ?? '');
      if (!pod.spec?.hostNetwork && !podIP) this.log.warn({ pod: key, node: nodeName, cidr: ips.cidr }, 'pod CIDR exhausted: pod gets no IP');
      const ref = this.podRef(pod);
      const recorder = sn.recorder;
      await this.issueTokens(pod);
      let sandbox: PodSandbox | undefined;
      const runtime = new PodRuntime(pod, now, {
        backoff: this.backoff,
        startDelayMs: this.opts.podStartDelayMs ?? 0,
        emit: (type, reason, message, fieldPath) => recorder.event(fieldPath ? { ...ref, fieldPath } : ref, type, reason, message),
        spawn: (c, _pod, at) => sandbox!.spawn(c, at),
        http: (host, port, path) => sandbox!.httpGet(host, port, path),
        ...(this.opts.imagePullRule ? { imagePullRule: this.opts.imagePullRule } : {}),
        ...(this.opts.probeJitter !== false ? { probeJitter: this.opts.probeJitter ?? Math.random } : {}),
      });
      const allocatable = (node.status?.allocatable as Record<string, string> | undefined) ?? { ...this.capacity };
      sn.hostFs ??= createStandardFs({
        hostname: nodeName,
        now,
        hosts: `127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n${sn.agent.internalIP}\t${nodeName}\n`,
      });
      sandbox = new PodSandbox(pod, runtime, { nodeName, hostIP: sn.agent.internalIP, podIP: pod.spec?.hostNetwork ? sn.agent.internalIP : podIP, allocatable, hostFs: sn.hostFs }, this.view, this.network, this.clock, () => this.enqueue(key));
      if (adopting && runtime.adopt(pod.status)) this.log.v(2).info({ pod: key, node: nodeName, podIP }, 'adopted a pod started before a restart');
      else {
        // The kubelet's admit handlers in order: the eviction manager's, then the predicates (admission.ts).
        let verdict = admitUnderPressure(pod, this.pressureConditions(sn));
        if (verdict.admit) {
          // The kubelet knows its own capacity before the node object shows it (getNodeAnyWay).
          const capacity = { ...this.capacity };
          const known = node.status?.allocatable ? node : { ...node, status: { ...node.status, capacity, allocatable: capacity } };
          verdict = kubeletAdmit(pod, known, this.admittedPods(sn.agent.name, key));
        }
        if (!verdict.admit) {
          runtime.reject(verdict.reason!, verdict.message!);
          recorder.event(ref, 'Warning', verdict.reason!, verdict.message!);
        }
      }
      e = { uid: pod.metadata?.uid ?? '', node: nodeName, runtime, sandbox, podIP, stopping: false, attachable: [], known: true };
      this.pods.set(key, e);
      this.network.add(sandbox, pod.spec?.hostNetwork ? '' : podIP);
      // With a start delay, the status manager's first write: Pending, before the sandbox exists.
      if ((this.opts.podStartDelayMs ?? 0) > 0) await this.writeStatus(pod, e, now);
    }
    e.runtime.updatePod(pod);
    e.runtime.podIP = pod.spec?.hostNetwork ? sn.agent.internalIP : e.podIP;
    if (e.sandbox.pod !== pod && !e.runtime.terminal) e.sandbox.refresh(pod, e.runtime.podIP);
    if (pod.metadata?.deletionTimestamp) {
      this.volumeWaiters.delete(key);
      await this.terminate(key, pod, e);
      return;
    }
    if (!e.runtime.terminal) await this.checkVolumes(key, pod, e, sn, node, now);
    let r = e.runtime.step(now);
    let changed = r.changed;
    for (let i = 0; i < 32 && r.nextAt !== undefined && r.nextAt <= now; i++) {
      r = e.runtime.step(now);
      changed ||= r.changed;
    }
    await this.writeStatus(pod, e, now, !changed);
    if (e.runtime.terminal && !e.runtime.settled && r.nextAt !== undefined) {
      // Failed (activeDeadlineSeconds) while containers are still being stopped.
      this.schedule(key, Math.max(r.nextAt, now));
    } else if (e.runtime.terminal) {
      e.timer?.stop();
      sn.ips.release(key);
      if (e.attachable.length > 0) await sn.agent.postVolumesInUse(node);
    } else if (r.nextAt !== undefined) this.schedule(key, Math.max(r.nextAt, now));
  }

  /**
   * Reserves the addresses of the pods on this node that already have one and
   * that we have not met yet (started before a restart), so a new pod does not
   * take them. Call with a synced pod cache; done once per node.
   */
  private reserveRunningIPs(sn: SimNode, ips: IpAllocator): void {
    if (sn.reserved) return;
    for (const p of this.podInformer.getStore().list() as Pod[]) {
      const k = podKey(p);
      if (p.spec?.nodeName !== sn.agent.name || p.spec?.hostNetwork || this.pods.has(k)) continue;
      const phase = p.status?.phase;
      if (!p.status?.podIP || p.status.hostIP !== sn.agent.internalIP || phase === 'Succeeded' || phase === 'Failed') continue;
      ips.allocate(k, p.status.podIP);
    }
    sn.reserved = true;
  }

  /** The node's allocator, rebuilt when the node's spec.podCIDR differs from the current range. */
  private ipsFor(sn: SimNode, node: Node): IpAllocator {
    const cidr = node.spec?.podCIDR;
    if (cidr && cidr !== sn.ips.cidr && sn.ips.size() === 0) {
      try {
        sn.ips = newIpAllocator(cidr);
      } catch (err) {
        this.log.error(err, { node: sn.agent.name, cidr }, 'unusable podCIDR: keeping the built-in range');
      }
    }
    return sn.ips;
  }

  /** The API objects containers read (env, volumes, service links, DNS), from the informer caches. */
  private clusterView(): ClusterView {
    const get = <T,>(inf: () => SharedIndexInformer<Kube<T>> | undefined, ns: string, name: string) => inf()?.getStore().getByKey(`${ns}/${name}`) as T | undefined;
    return {
      // The service-account volume never holds a pod back where a real cluster always has what it needs:
      // without the root CA publisher ca.crt is empty, and without TokenRequest the token is (see issueTokens).
      configMap: (ns, name) => get(() => this.cmInformer, ns, name) ?? (name === ROOT_CA_CONFIGMAP ? { metadata: { name, namespace: ns }, data: { 'ca.crt': '' } } : undefined),
      secret: (ns, name) => get(() => this.secretInformer, ns, name),
      service: (ns, name) => get(() => this.svcInformer, ns, name),
      services: (ns) => ((this.svcInformer?.getStore().list() ?? []) as Service[]).filter((x) => x.metadata?.namespace === ns),
      allServices: () => (this.svcInformer?.getStore().list() ?? []) as Service[],
      endpoints: (ns, svc) => get(() => this.endpointsInformer, ns, svc),
      nodeIPs: () => [...this.nodes.values()].map((sn) => sn.agent.internalIP),
      serviceAccountToken: (ns, sa, audience, exp, pod) => this.tokens.get(pod.metadata?.uid ?? '')?.get(tokenKey(ns, sa, audience, exp)) ?? (this.tokenRequestUnserved ? '' : undefined),
    };
  }

  /** TokenRequests for the pod's projected service account tokens (kubelet's token manager), before its volumes are built. */
  private async issueTokens(pod: Pod): Promise<void> {
    const ns = pod.metadata?.namespace ?? '';
    const sa = pod.spec?.serviceAccountName || 'default';
    const uid = pod.metadata?.uid ?? '';
    for (const v of pod.spec?.volumes ?? []) {
      for (const src of v.projected?.sources ?? []) {
        const t = src.serviceAccountToken;
        if (!t) continue;
        const exp = t.expirationSeconds ?? 3600;
        const key = tokenKey(ns, sa, t.audience, exp);
        if (this.tokens.get(uid)?.has(key)) continue;
        try {
          const res = await this.opts.client
            .resource({ group: '', version: 'v1', resource: 'serviceaccounts' })
            .namespace(ns)
            .createSubresource<{ status?: { token?: string } }>(sa, 'token', {
              apiVersion: 'authentication.k8s.io/v1',
              kind: 'TokenRequest',
              spec: { audiences: t.audience ? [t.audience] : [], expirationSeconds: exp, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name, uid } },
            });
          if (res.status?.token) {
            let m = this.tokens.get(uid);
            if (!m) this.tokens.set(uid, (m = new Map()));
            // Kept as the token file's bytes: the volume writes these (no copy of the text per write).
            m.set(key, Buffer.from(res.status.token));
          }
        } catch (err) {
          // An API server without a signing key (kcm/testing) serves no TokenRequest: token files are then empty.
          if (/serviceaccounts\/token is not served/.test((err as Error).message)) this.tokenRequestUnserved = true;
          this.log.v(2).info({ pod: podKey(pod), error: (err as Error).message }, 'token request failed');
        }
      }
    }
  }

  private podRef(pod: Pod): ObjectReference {
    return { apiVersion: 'v1', kind: 'Pod', namespace: pod.metadata?.namespace, name: pod.metadata?.name, uid: pod.metadata?.uid };
  }

  /** Writes the status unless the server already has it (`onlyIfDiffers` skips the comparison's cost otherwise). */
  private async writeStatus(pod: Pod, e: PodEntry, now: number, onlyIfDiffers = true): Promise<void> {
    const sn = this.nodes.get(e.node)!;
    const status = buildPodStatus(e.runtime, pod, { hostIP: sn.agent.internalIP, podIP: e.podIP }, now);
    if (onlyIfDiffers) {
      const current = pod.status as Record<string, unknown> | undefined;
      const same = current !== undefined && Object.entries(status).every(([k, v]) => jsonEqual(current[k], v));
      if (same) return;
    }
    const name = pod.metadata?.name ?? '';
    try {
      await this.api.pods(pod.metadata?.namespace).patch(name, 'merge', { metadata: { uid: pod.metadata?.uid }, status }, { subresource: 'status', discardResult: true });
    } catch (err) {
      if (isNotFound(err)) {
        this.log.v(4).info({ pod: podKey(pod) }, 'pod gone before its status was written');
        return;
      }
      throw err;
    }
  }

  /**
   * Stops the pod's containers and deletes it with grace 0 once they have
   * stopped. With gracefulShutdown, as the kubelet: preStop hooks, SIGTERM
   * (which some processes ignore), SIGKILL at the grace period's end
   * (deletionGracePeriodSeconds), sidecars after the other containers;
   * status is written as containers stop. Otherwise at once.
   */
  private async terminate(key: string, pod: Pod, e: PodEntry): Promise<void> {
    const now = this.clock.now();
    const rt = e.runtime;
    if (!e.stopping) {
      e.stopping = true;
      e.timer?.stop();
      e.graceful = !!this.opts.gracefulShutdown && !rt.settled;
      if (e.graceful) {
        const grace = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
        rt.beginTermination(now, grace);
      } else rt.terminating = true;
    }
    if (e.graceful) {
      const r = rt.step(now);
      if (!rt.stopped) {
        await this.writeStatus(pod, e, now, !r.changed);
        if (r.nextAt !== undefined) this.schedule(key, Math.max(r.nextAt, now));
        return;
      }
    }
    if (!rt.settled) {
      rt.stop(now);
      rt.finishTermination();
      await this.writeStatus(pod, e, now);
    }
    await this.deleteNow(pod);
    this.forget(key);
  }

  private async deleteNow(pod: Pod): Promise<void> {
    this.deleted.set(podKey(pod), pod.metadata?.uid ?? '');
    try {
      await this.api.pods(pod.metadata?.namespace).delete(pod.metadata?.name ?? '', {
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata?.uid },
      });
      this.log.v(2).info({ pod: podKey(pod) }, 'deleted pod');
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) {
        this.log.v(4).info({ pod: podKey(pod), err: String(err) }, 'pod already gone or replaced');
        return;
      }
      throw err;
    }
  }
}

/** Simulated nodes over `client`; see the module comment. */
export function newNodeSimulator(opts: NodeSimulatorOptions): NodeSimulator {
  return new Simulator(opts);
}

function tokenKey(ns: string, sa: string, audience: string | undefined, exp: number): string {
  return `${ns}/${sa}/${audience ?? ''}/${exp}`;
}

/** The ConfigMap the root CA publisher makes in every namespace (the service-account volume's ca.crt). */
const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
