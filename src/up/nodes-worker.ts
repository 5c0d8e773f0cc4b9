/**
 * Entry of kcm up's simulated kubelets in a worker thread of their own
 * (`--nodes-thread`): on a large cluster the controller side's one thread
 * was full (scheduler, controllers, kubelets and their garbage collection)
 * while the machine's second core had room. Here the kubelets run with a
 * client and informers of their own, as real kubelets do.
 *
 * Protocol: workerData is the NodesWorkerConfig;
 *   parent -> { type: 'stop' }                       graceful stop
 *   worker -> { type: 'nodes-started', names }       once the nodes exist
 *   worker -> { type: 'stopped', error? }            last message
 */
import { parentPort, workerData } from 'node:worker_threads';
import { newKubeClient } from '../client/client.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { viaUnixSocket } from '../client/rest-config.js';
import { newNodeSimulator } from '../nodes/node-simulator.js';
import { newSharedInformerFactory } from '../tools/cache/factory.js';
import { realClock } from '../util/clock/clock.js';
import { newLogger, setLogFormat, setVerbosity } from '../util/log/logger.js';
import type { Taint } from 'kubernetes-types/core/v1.js';

export interface NodesWorkerConfig {
  kubeconfigPath: string;
  apiSocketPath?: string;
  nodes: number;
  taints: Taint[];
  gracefulShutdown: boolean;
  imagePullRule?: { unpullable: string[]; pullable: string[] };
  kubeletToken?: string;
  verbosity: number;
  loggingFormat: 'text' | 'json';
}

export type NodesWorkerMessage = { type: 'nodes-started'; names: string[] } | { type: 'stopped'; error?: string };

async function main(cfg: NodesWorkerConfig, signal: AbortSignal, post: (m: NodesWorkerMessage) => void): Promise<void> {
  setVerbosity(cfg.verbosity);
  setLogFormat(cfg.loggingFormat);
  const base = viaUnixSocket(await loadKubeconfig({ kubeconfig: cfg.kubeconfigPath }), cfg.apiSocketPath);
  const client = newKubeClient({ ...base, qps: 0, burst: 0, userAgent: 'kcm-nodes/v0.1.0' }, { logger: newLogger('nodes') });
  const informers = newSharedInformerFactory(client, { clock: realClock, logger: newLogger('informers') });
  try {
    const sim = newNodeSimulator({
      client,
      informers,
      count: cfg.nodes,
      clock: realClock,
      logger: newLogger('nodes'),
      taints: cfg.taints,
      gracefulShutdown: cfg.gracefulShutdown,
      ...(cfg.imagePullRule ? { imagePullRule: cfg.imagePullRule } : {}),
      kubeletServer: cfg.kubeletToken ? { token: cfg.kubeletToken } : {},
    });
    post({ type: 'nodes-started', names: [...sim.nodeNames] });
    await sim.run(signal);
  } finally {
    await informers.shutdown().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

if (parentPort) {
  const port = parentPort;
  const ac = new AbortController();
  port.on('message', (m: { type: string }) => {
    if (m.type === 'stop') ac.abort();
  });
  main(workerData as NodesWorkerConfig, ac.signal, (m) => port.postMessage(m)).then(
    () => {
      port.postMessage({ type: 'stopped' } satisfies NodesWorkerMessage);
      port.close();
    },
    (err: unknown) => {
      port.postMessage({ type: 'stopped', error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies NodesWorkerMessage);
      port.close();
    },
  );
}
