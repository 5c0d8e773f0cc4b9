/**
 * `kcm nodes`: simulated nodes (kubelets without containers) against any API
 * server. Runs until SIGTERM or SIGINT.
 *
 *   kcm nodes [--kubeconfig PATH] [--nodes 3] [--node-cpu 4] ...
 *   kcm nodes pause NAME     stop NAME's heartbeats (annotation kcm.dev/heartbeat=paused)
 *   kcm nodes resume NAME    resume them
 *   kcm nodes delete-instance NAME     the local cloud's instance of NAME is gone (annotation kcm.dev/instance=deleted)
 *   kcm nodes shutdown-instance NAME   it is shut down (kcm.dev/instance=shutdown)
 *   kcm nodes start-instance NAME      it runs again (annotation removed)
 */
import { isNotFound } from '../client/errors.js';
import { newKubeClient } from '../client/client.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { componentUserAgent } from '../client/rest-config.js';
import { DEFAULT_KUBELET_VERSION, newNodeSimulator, parseTaint, setHeartbeatPaused } from '../nodes/index.js';
import { setInstanceState, type InstanceState } from '../nodes/instance.js';
import { onTerminationSignal, parseCommandLine, setUpLogging } from './common.js';
import { FlagError, loggingFlags, type FlagSpec } from './flags.js';

export const nodesFlags = {
  kubeconfig: { type: 'string', default: '', usage: 'Path to a kubeconfig file (default: $KUBECONFIG or ~/.kube/config).', section: 'Generic' },
  nodes: { type: 'int', default: 3, usage: 'Number of simulated nodes.', section: 'Nodes' },
  'node-name-prefix': { type: 'string', default: 'kcm-node-', usage: 'Node names are <prefix><index>.', section: 'Nodes' },
  'node-cpu': { type: 'string', default: '4', usage: 'CPU capacity of each node.', section: 'Nodes' },
  'node-memory': { type: 'string', default: '8Gi', usage: 'Memory capacity of each node.', section: 'Nodes' },
  'node-pods': { type: 'string', default: '110', usage: 'Pod capacity of each node.', section: 'Nodes' },
  'node-ephemeral-storage': { type: 'string', default: '100Gi', usage: 'Ephemeral storage capacity of each node.', section: 'Nodes' },
  'node-labels': { type: 'stringList', default: [], usage: 'Extra labels of every node, key=value pairs.', section: 'Nodes', typeName: 'mapStringString' },
  'node-taints': { type: 'stringList', default: [], usage: 'Taints of every node at registration, key=value:Effect.', section: 'Nodes' },
  'node-zones': { type: 'stringList', default: [], usage: 'Zones assigned round-robin as topology.kubernetes.io/zone (default: none).', section: 'Nodes' },
  'graceful-shutdown': {
    type: 'bool',
    default: true,
    usage: 'Stop a deleted pod as a kubelet does: preStop hooks, SIGTERM, SIGKILL after the grace period. --graceful-shutdown=false stops pods at once.',
    section: 'Nodes',
  },
  'cloud-provider': {
    type: 'string',
    default: '',
    oneOf: ['', 'external'],
    usage: "As the kubelet's flag: 'external' registers nodes with the taint node.cloudprovider.kubernetes.io/uninitialized for a cloud controller (kcm controller-manager --cloud-provider=local) to initialise.",
    section: 'Nodes',
  },
  'unpullable-images': {
    type: 'stringList',
    default: [],
    usage: 'Images the simulated nodes fail to pull (ErrImagePull, ImagePullBackOff), as globs matched against the image as written and as containerd names it (docker.io/library/nginx:latest), e.g. "*:broken,registry.example.com/*". Images that cannot exist (.invalid registries, tags such as :404 or :non-existent) always fail.',
    section: 'Nodes',
  },
  'pullable-images': {
    type: 'stringList',
    default: [],
    usage: 'When set, the only images the simulated nodes can pull (globs as --unpullable-images); every other image fails as not found, as on an air-gapped node.',
    section: 'Nodes',
  },
  'kubelet-port': {
    type: 'int',
    default: 0,
    usage: "Port of the simulated kubelets' endpoint on 127.0.0.1 (logs, exec, attach, port-forward, pod proxy), advertised on each Node (annotation kcm.dev/kubelet-endpoint, daemonEndpoints). 0: any free port; -1: no endpoint.",
    section: 'Nodes',
  },
  'kubelet-token': {
    type: 'string',
    default: '',
    usage: "Bearer token the kubelets' endpoint requires (give the same to kcm apiserver --kubelet-token). Empty: none (the endpoint listens on loopback only).",
    section: 'Nodes',
  },
  ...loggingFlags,
} as const satisfies FlagSpec;

const description =
  'Run simulated nodes: register Node objects, renew their leases, and play the kubelet for the pods bound to them (no containers run).\n\n' +
  'Subcommands:\n  pause NAME    stop the heartbeats of node NAME (it turns NotReady)\n  resume NAME   resume them\n' +
  '  delete-instance NAME     delete NAME\'s instance in the local cloud: its kubelet stops and cloud-node-lifecycle-controller deletes the Node once it is NotReady\n' +
  '  shutdown-instance NAME   shut the instance down: its kubelet stops and the NotReady Node gets the node.cloudprovider.kubernetes.io/shutdown taint\n' +
  '  start-instance NAME      start a shut-down instance again';

function parseLabels(items: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const i = item.indexOf('=');
    if (i <= 0) throw new FlagError(`invalid argument "${item}" for "--node-labels" flag: want key=value`);
    out[item.slice(0, i)] = item.slice(i + 1);
  }
  return out;
}

export async function run(args: string[]): Promise<number> {
  let labels: Record<string, string> = {};
  let taints: ReturnType<typeof parseTaint>[] = [];
  const flags = parseCommandLine(nodesFlags, args, {
    command: 'kcm nodes',
    usageLine: 'kcm nodes [pause|resume|delete-instance|shutdown-instance|start-instance NAME] [flags]',
    description,
    allowPositional: true,
    validate: (f) => {
      labels = parseLabels(f.values['node-labels']);
      taints = f.values['node-taints'].map((t) => {
        try {
          return parseTaint(t);
        } catch (err) {
          throw new FlagError(`invalid argument "${t}" for "--node-taints" flag: ${(err as Error).message}`, { cause: err });
        }
      });
    },
  });
  if (typeof flags === 'number') return flags;
  const v = flags.values;
  const log = setUpLogging(v, 'nodes');
  const [sub, name, ...extra] = flags.positional;
  const instanceCommands: Record<string, InstanceState> = { 'delete-instance': 'deleted', 'shutdown-instance': 'shutdown', 'start-instance': 'running' };
  if (sub !== undefined && sub !== 'pause' && sub !== 'resume' && !(sub in instanceCommands)) {
    process.stderr.write(`Error: unknown command "${sub}" for "kcm nodes"\n`);
    return 1;
  }
  if (sub !== undefined && (name === undefined || extra.length > 0)) {
    process.stderr.write(`Error: "kcm nodes ${sub}" takes exactly one node name\n`);
    return 1;
  }

  const config = await loadKubeconfig(v.kubeconfig ? { kubeconfig: v.kubeconfig } : {});
  const client = newKubeClient(config, { logger: log.child({}, 'client') });
  const closers = [client];
  try {
    if (sub !== undefined && sub in instanceCommands) {
      try {
        await setInstanceState(client, name!, instanceCommands[sub]!);
      } catch (err) {
        if (isNotFound(err)) {
          process.stderr.write(`Error: node "${name}" not found\n`);
          return 1;
        }
        throw err;
      }
      process.stdout.write(`node/${name} instance ${instanceCommands[sub] === 'running' ? 'started' : instanceCommands[sub]}\n`);
      return 0;
    }
    if (sub !== undefined) {
      try {
        await setHeartbeatPaused(client, name!, sub === 'pause');
      } catch (err) {
        if (isNotFound(err)) {
          process.stderr.write(`Error: node "${name}" not found\n`);
          return 1;
        }
        throw err;
      }
      process.stdout.write(`node/${name} ${sub === 'pause' ? 'paused' : 'resumed'}\n`);
      return 0;
    }

    let kubeletVersion = DEFAULT_KUBELET_VERSION;
    try {
      const ver = await client.request<{ gitVersion?: string }>('GET', '/version');
      if (ver?.gitVersion) kubeletVersion = ver.gitVersion;
    } catch (err) {
      log.warn({ err: String(err) }, `could not read the server version; nodes report ${DEFAULT_KUBELET_VERSION}`);
    }
    // Each kubelet has three clients: its API client and its event client at 5 QPS (burst 10) each, and a heartbeat
    // client without a limit (kubelet's --kube-api-qps, --event-qps and its HeartbeatClient). The simulated kubelets of
    // this process share them, with the limits of all of them together.
    const kubelets = (qps: number, burst: number, agent: string, extra: Partial<typeof config> = {}) =>
      newKubeClient({ ...config, qps: qps * v.nodes, burst: burst * v.nodes, userAgent: `${componentUserAgent('kubelet')}${agent}`, ...extra }, { logger: log.child({}, 'client') });
    const podClient = kubelets(5, 10, '');
    const eventClient = kubelets(5, 10, '/events');
    const heartbeatClient = kubelets(0, 0, '/heartbeat', { timeoutMs: 10_000, ownConnections: true });
    closers.push(podClient, eventClient, heartbeatClient);
    const sim = newNodeSimulator({
      client: podClient,
      eventClient,
      heartbeatClient,
      logger: log,
      count: v.nodes,
      namePrefix: v['node-name-prefix'],
      capacity: { cpu: v['node-cpu'], memory: v['node-memory'], pods: v['node-pods'], 'ephemeral-storage': v['node-ephemeral-storage'] },
      labels,
      taints: v['cloud-provider'] === 'external' ? [...taints, { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' }] : taints,
      zones: v['node-zones'],
      gracefulShutdown: v['graceful-shutdown'],
      imagePullRule: { unpullable: [...v['unpullable-images']], pullable: [...v['pullable-images']] },
      kubeletVersion,
      ...(v['kubelet-port'] >= 0 ? { kubeletServer: { port: v['kubelet-port'], ...(v['kubelet-token'] ? { token: v['kubelet-token'] } : {}) } } : {}),
    });
    const ac = new AbortController();
    onTerminationSignal(() => ac.abort(), { log, quietSecond: true });
    process.stdout.write(`kcm nodes running ${sim.nodeNames.join(', ')} against ${config.host ?? 'the cluster'}\n`);
    await sim.run(ac.signal);
    return 0;
  } finally {
    await Promise.all(closers.map((c) => c.close()));
  }
}
