/**
 * Informer benchmarks.
 *
 * 1. Watch events ingested per second through reflector -> DeltaFIFO ->
 *    indexer -> one handler (target >= 50,000/s).
 * 2. Heap bytes per cached object for 100,000 realistic pods, against the
 *    size of their JSON (target < 2x), measured after forced GCs: needs
 *    `node --expose-gc`.
 *
 * Run: node --expose-gc dist/bench/informer.bench.js
 */
import type { KubeList, KubeObject, WatchEvent } from '../src/api/types.js';
import type { ListOptions, Watch } from '../src/client/interfaces.js';
import type { ListerWatcher, TransformFunc } from '../src/tools/cache/interfaces.js';
import { newSharedIndexInformer } from '../src/tools/cache/shared-informer.js';
import { stripManagedFields } from '../src/tools/cache/factory.js';
import { namespaceIndexers } from '../src/tools/cache/store.js';

const NODES = 500;
const NAMESPACES = 50;

/** Deterministic pseudo-random hex of `len` digits derived from `n`. */
function hex(n: number, len: number): string {
  let s = '';
  let x = (n + 0x9e3779b9) >>> 0;
  while (s.length < len) {
    x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) >>> 0;
    x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) >>> 0;
    x = (x ^ (x >>> 16)) >>> 0;
    s += x.toString(16).padStart(8, '0');
    x = (x + 0x6d2b79f5) >>> 0;
  }
  return s.slice(0, len);
}

/** A pod as the API server returns it for a Deployment's replica (about 3.5 KiB of JSON). */
export function realisticPod(i: number, rv = 1000 + i): KubeObject {
  const app = `app-${i % 200}`;
  const ns = `team-${i % NAMESPACES}`;
  const hash = hex(i % 200, 10);
  const name = `${app}-${hash}-${i.toString(36).padStart(5, 'x')}`;
  const node = `node-${String(i % NODES).padStart(4, '0')}.cluster.internal`;
  const ts = '2024-03-01T10:00:00Z';
  const image = `registry.example.com/${app}/server:v1.${i % 7}.3`;
  const env = (c: string) =>
    c === 'server'
      ? [
          { name: 'APP_NAME', value: app },
          { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
          { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: `${app}-db`, key: 'url' } } },
        ]
      : [{ name: 'PROXY_PORT', value: '15001' }];
  const container = (c: string, img: string, port: number, probe: boolean) => ({
    name: c,
    image: img,
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
    env: env(c),
    resources: { limits: { cpu: '500m', memory: '512Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
    volumeMounts: probe
      ? [
          { name: 'config', mountPath: '/etc/app', readOnly: true },
          { name: 'kube-api-access-' + hex(i, 5), mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
        ]
      : [],
    ...(probe ? { readinessProbe: { httpGet: { path: '/healthz', port, scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 } } : {}),
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  });
  const status = (c: string, img: string, n: number) => ({
    name: c,
    state: { running: { startedAt: ts } },
    lastState: {},
    ready: true,
    restartCount: 0,
    image: img,
    imageID: `${img.split(':')[0]}@sha256:${hex(i % 200 + n, 64)}`,
    containerID: `containerd://${hex(i * 2 + n, 64)}`,
    started: true,
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `${app}-${hash}-`,
      namespace: ns,
      uid: `${hex(i, 8)}-${hex(i + 1, 4)}-${hex(i + 2, 4)}-${hex(i + 3, 4)}-${hex(i + 4, 12)}`,
      resourceVersion: String(rv),
      creationTimestamp: ts,
      labels: { app, 'pod-template-hash': hash, tier: i % 3 === 0 ? 'frontend' : 'backend', version: `v1.${i % 7}` },
      annotations: {
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '9090',
      },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app}-${hash}`, uid: `${hex(i % 200, 8)}-aaaa-bbbb-cccc-${hex(i % 200, 12)}`, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      volumes: [
        { name: 'config', configMap: { name: `${app}-config`, defaultMode: 420 } },
        {
          name: 'kube-api-access-' + hex(i, 5),
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            ],
            defaultMode: 420,
          },
        },
      ],
      containers: [container('server', image, 8080, true), container('sidecar', 'registry.example.com/mesh/proxy:1.21.0', 15001, false)],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      nodeName: node,
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type,
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: ts,
      })),
      hostIP: `10.0.${(i % NODES) >> 8}.${(i % NODES) & 255}`,
      hostIPs: [{ ip: `10.0.${(i % NODES) >> 8}.${(i % NODES) & 255}` }],
      podIP: `10.${64 + ((i >> 16) & 63)}.${(i >> 8) & 255}.${i & 255}`,
      podIPs: [{ ip: `10.${64 + ((i >> 16) & 63)}.${(i >> 8) & 255}.${i & 255}` }],
      startTime: ts,
      containerStatuses: [status('server', image, 0), status('sidecar', 'registry.example.com/mesh/proxy:1.21.0', 1)],
      qosClass: 'Burstable',
    },
  };
}

/** A ListerWatcher serving `count` pods (pages built on demand, as JSON and parsed) and a scripted watch. */
function benchLW(
  count: number,
  events: number,
  onListedBytes: (n: number) => void = () => {},
): ListerWatcher<KubeObject> & { watchDone: Promise<void>; go(): void } {
  let endWatch!: () => void;
  const watchDone = new Promise<void>((r) => (endWatch = r));
  let go!: () => void;
  const started = new Promise<void>((r) => (go = r));
  const baseRV = 1000 + count;
  return {
    watchDone,
    go,
    async list(opts: ListOptions): Promise<KubeList<KubeObject>> {
      const start = opts.continue ? Number(opts.continue) : 0;
      const limit = opts.limit && opts.limit > 0 ? opts.limit : count;
      const end = Math.min(count, start + limit);
      const items: KubeObject[] = [];
      for (let i = start; i < end; i++) {
        const json = JSON.stringify(realisticPod(i));
        onListedBytes(json.length);
        items.push(JSON.parse(json) as KubeObject);
      }
      return { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: String(baseRV), ...(end < count ? { continue: String(end) } : {}) }, items };
    },
    async watch(_opts, signal): Promise<Watch<KubeObject>> {
      // Events are built lazily: MODIFIED of the listed pods, each a fresh object.
      const templates = events > 0 ? Array.from({ length: Math.min(count, 1000) }, (_, i) => realisticPod(i)) : [];
      let n = 0;
      let stopped = false;
      let wake: (() => void) | undefined;
      const stop = () => {
        stopped = true;
        wake?.();
      };
      signal.addEventListener('abort', stop, { once: true });
      return {
        stop,
        [Symbol.asyncIterator]() {
          return {
            next: async (): Promise<IteratorResult<WatchEvent<KubeObject>>> => {
              if (n === 0) await started;
              if (!stopped && n >= events) {
                endWatch();
                await new Promise<void>((r) => (wake = r));
              }
              if (stopped) return { done: true, value: undefined };
              const t = templates[n % templates.length]!;
              n++;
              const obj = { ...t, metadata: { ...t.metadata, resourceVersion: String(baseRV + n) } };
              return { done: false, value: { type: 'MODIFIED', object: obj } };
            },
            return: async () => {
              stop();
              return { done: true, value: undefined };
            },
          };
        },
      };
    },
  };
}

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('bench: timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Events per second through reflector -> DeltaFIFO -> indexer -> one handler. */
async function benchThroughput(events: number): Promise<string[]> {
  const lw = benchLW(1000, events);
  const inf = newSharedIndexInformer(lw, { indexers: namespaceIndexers(), name: 'bench-pods' });
  inf.setTransform(stripManagedFields);
  let updates = 0;
  inf.addEventHandler({ onUpdate: () => void updates++ });
  const ac = new AbortController();
  const done = inf.run(ac.signal);
  await waitFor(() => inf.hasSynced(), 30_000);
  const t0 = performance.now();
  lw.go();
  await waitFor(() => updates >= events, 120_000);
  const secs = (performance.now() - t0) / 1000;
  ac.abort();
  await done;
  const rate = events / secs;
  return [
    `watch ingest: ${events} MODIFIED events in ${secs.toFixed(2)} s = ${Math.round(rate).toLocaleString('en-US')} events/s (target >= 50,000) ${rate >= 50_000 ? 'OK' : 'MISSED'}`,
  ];
}

/** Replaces repeated strings by one shared copy (label keys and values, images, node names...). */
function newInterningTransform(): TransformFunc {
  const table = new Map<string, string>();
  const intern = (s: string): string => {
    if (s.length > 128) return s;
    const hit = table.get(s);
    if (hit !== undefined) return hit;
    table.set(s, s);
    return s;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return intern(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = walk(v[i]);
      return v;
    }
    if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      for (const k in o) o[k] = walk(o[k]);
      return o;
    }
    return v;
  };
  return (obj) => walk(stripManagedFields(obj));
}

async function benchHeap(count: number, intern: boolean): Promise<string[]> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return ['heap per object: skipped, run node with --expose-gc'];
  const settle = () => {
    for (let i = 0; i < 3; i++) gc();
  };
  let jsonBytes = 0;
  const lw = benchLW(count, 0, (n) => (jsonBytes += n));
  const inf = newSharedIndexInformer(lw, { indexers: namespaceIndexers(), name: 'bench-heap' });
  inf.setTransform(intern ? newInterningTransform() : stripManagedFields);
  settle();
  const before = process.memoryUsage().heapUsed;
  const ac = new AbortController();
  const done = inf.run(ac.signal);
  lw.go();
  await waitFor(() => inf.hasSynced(), 300_000);
  await lw.watchDone;
  settle();
  const after = process.memoryUsage().heapUsed;
  const size = inf.getStore().listKeys().length;
  ac.abort();
  await done;
  const perObj = (after - before) / size;
  const perJson = jsonBytes / size;
  const ratio = perObj / perJson;
  return [
    `heap per cached pod${intern ? ' (interning transform)' : ''}: ${Math.round(perObj)} B vs ${Math.round(perJson)} B of JSON = ${ratio.toFixed(2)}x for ${size.toLocaleString('en-US')} pods (target < 2x) ${ratio < 2 ? 'OK' : 'MISSED'}`,
  ];
}

export async function run(): Promise<string[]> {
  const lines: string[] = [];
  lines.push(...(await benchThroughput(200_000)));
  if (!(globalThis as { gc?: unknown }).gc) {
    lines.push('heap per cached pod: skipped, run node with --expose-gc');
    return lines;
  }
  lines.push(...(await benchHeap(100_000, false)));
  lines.push(...(await benchHeap(100_000, true)));
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await run()) console.log(line);
}
