/**
 * The core of `kcm proxy`: shared informers for Services, EndpointSlices
 * and this node's Node (with kube-proxy's label and field selectors), the
 * Proxier fed by their events, and the batched sync loop.
 */
import type { Node, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { Client } from '../client/interfaces.js';
import { newSharedInformerFactory } from '../tools/cache/factory.js';
import { DeletedFinalStateUnknown } from '../tools/cache/interfaces.js';
import { realClock, type Clock } from '../util/clock/clock.js';
import type { Logger } from '../util/log/logger.js';
import { BoundedFrequencyRunner, Proxier, renderSections, type ProxierOptions, type SyncResult } from './proxier.js';
import { diffSections, type Section } from './render.js';

/** kube-proxy's informers skip Services (and their slices) owned by another proxy, and headless ones. */
export const PROXY_LABEL_SELECTOR = '!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless';

export interface RunProxyOptions extends ProxierOptions {
  client: Client;
  /** Print once and return (false: print, then diffs after every sync until the signal aborts). */
  once: boolean;
  minSyncPeriodMs: number;
  syncPeriodMs: number;
  signal: AbortSignal;
  write: (s: string) => void;
  clock?: Clock;
  logger?: Logger;
  /** Called with each sync's result (after printing). */
  onSync?: (r: SyncResult) => void | Promise<void>;
}

export class NodeNotFoundError extends Error {
  constructor(readonly nodeName: string) {
    super(`node "${nodeName}" not found`);
    this.name = 'NodeNotFoundError';
  }
}

function unwrap<T>(obj: T | DeletedFinalStateUnknown<T>): T {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}

/**
 * Runs the proxy. Resolves with the last sync's sections once done (once:
 * after the first sync; otherwise when the signal aborts). Throws
 * NodeNotFoundError when the node does not exist after the caches synced.
 */
export async function runProxy(opts: RunProxyOptions): Promise<Section[]> {
  const clock = opts.clock ?? realClock;
  const proxier = new Proxier(opts);
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  opts.signal.addEventListener('abort', onAbort, { once: true });
  const factory = newSharedInformerFactory(opts.client, {
    clock,
    tweakListOptions: (o) => {
      o.labelSelector = PROXY_LABEL_SELECTOR;
    },
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  const nodeFactory = newSharedInformerFactory(opts.client, {
    clock,
    tweakListOptions: (o) => {
      o.fieldSelector = `metadata.name=${opts.nodeName}`;
    },
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  const services = factory.services();
  const slices = factory.endpointSlices();
  const nodes = nodeFactory.nodes();
  services.addEventHandler({
    onAdd: (s) => proxier.onServiceAdd(s as Service),
    onUpdate: (o, n) => proxier.onServiceUpdate(o as Service, n as Service),
    onDelete: (s) => proxier.onServiceDelete(unwrap(s) as Service),
  });
  slices.addEventHandler({
    onAdd: (s) => proxier.onEndpointSliceAdd(s as EndpointSlice),
    onUpdate: (o, n) => proxier.onEndpointSliceUpdate(o as EndpointSlice, n as EndpointSlice),
    onDelete: (s) => proxier.onEndpointSliceDelete(unwrap(s) as EndpointSlice),
  });
  nodes.addEventHandler({
    onAdd: (n) => proxier.onNodeUpdate(n as Node),
    onUpdate: (_o, n) => proxier.onNodeUpdate(n as Node),
    onDelete: (n) => proxier.onNodeDelete(unwrap(n) as Node),
  });
  factory.start(stop.signal);
  nodeFactory.start(stop.signal);
  let runner: BoundedFrequencyRunner | undefined;
  try {
    const synced = [...(await factory.waitForCacheSync(stop.signal)).values(), ...(await nodeFactory.waitForCacheSync(stop.signal)).values()];
    if (opts.signal.aborted || synced.some((ok) => !ok)) return [];
    if (!proxier.hasNode) throw new NodeNotFoundError(opts.nodeName);
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    let last = proxier.syncProxyRules();
    opts.write(renderSections(last.sections));
    await opts.onSync?.(last);
    if (opts.once) return last.sections;

    runner = new BoundedFrequencyRunner(
      () => {
        const next = proxier.syncProxyRules();
        const diff = diffSections(last.sections, next.sections);
        if (diff.length > 0) opts.write(diff.join('\n') + '\n');
        last = next;
        void opts.onSync?.(next);
      },
      opts.minSyncPeriodMs,
      opts.syncPeriodMs,
      2,
      clock,
    );
    proxier.onChange = () => runner!.run();
    runner.loop();
    await new Promise<void>((resolve) => {
      if (opts.signal.aborted) resolve();
      else opts.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    return last.sections;
  } finally {
    runner?.stop();
    opts.signal.removeEventListener('abort', onAbort);
    stop.abort();
    await Promise.all([factory.shutdown(), nodeFactory.shutdown()]);
  }
}
