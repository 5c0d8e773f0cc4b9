/**
 * Storage benchmarks: durable sqlite creates (throughput and latency at 1, 10
 * and 100 writers in flight), gets, a list of 10,000 objects, and the fan-out
 * of one write to 1,000 watchers through the watch cache. Objects are ~1.5 KiB
 * pods. Run directly (`node dist/bench/storage.bench.js`) or through `run()`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { KubeObject } from '../src/api/types.js';
import { newCachedStorage, openSqliteStorage, type Storage } from '../src/apiserver/storage/index.js';

function podObject(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `6b1f3c2e-0d4e-4c1a-9f3b-${name.padStart(12, '0').slice(-12)}`,
      creationTimestamp: '2024-01-01T00:00:00Z',
      labels: { app: 'web', 'pod-template-hash': '7d4b9c8f5d', tier: 'frontend' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4b9c8f5d', uid: '0c8e1f7a-2b3d-4e5f-8a9b-1c2d3e4f5a6b', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.k8s.io/nginx-slim:0.27',
          ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
          env: [{ name: 'MODE', value: 'production' }, { name: 'LOG_LEVEL', value: 'info' }],
          volumeMounts: [{ name: 'kube-api-access-abcde', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      volumes: [{ name: 'kube-api-access-abcde', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }] } }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: 'node-1',
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: '2024-01-01T00:00:01Z' },
        { type: 'Ready', status: 'True', lastTransitionTime: '2024-01-01T00:00:03Z' },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: '2024-01-01T00:00:03Z' },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' },
      ],
      hostIP: '10.0.0.1',
      podIP: '10.244.1.17',
      startTime: '2024-01-01T00:00:01Z',
      qosClass: 'Burstable',
    },
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** `writers` concurrent clients each creating pods back to back for `ms` milliseconds. */
async function createLoad(s: Storage, tag: string, writers: number, ms: number): Promise<{ rate: number; p50: number; p99: number; n: number }> {
  const latencies: number[] = [];
  const end = performance.now() + ms;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        const t0 = performance.now();
        await s.create(`/registry/pods/default/${tag}-${w}-${i}`, podObject(`${tag}-${w}-${i}`));
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = performance.now() - start;
  latencies.sort((a, b) => a - b);
  return { rate: (latencies.length / elapsed) * 1000, p50: percentile(latencies, 50), p99: percentile(latencies, 99), n: latencies.length };
}

export async function run(): Promise<string[]> {
  const lines: string[] = [];
  const out = (l: string) => {
    lines.push(l);
  };
  const dir = mkdtempSync(join(tmpdir(), 'kcm-bench-storage-'));
  try {
    out(`object size: ${JSON.stringify(podObject('web-7d4b9c8f5d-abcde')).length} bytes of JSON`);
    const sqlite = openSqliteStorage(dir);
    for (const writers of [1, 10, 100]) {
      const r = await createLoad(sqlite, `c${writers}`, writers, 2000);
      out(
        `sqlite durable creates, ${writers} in flight: ${r.rate.toFixed(0)}/s (n=${r.n}), latency p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`,
      );
    }
    // top up to at least 10,000 pods under one prefix for the list
    const have = (await sqlite.list('/registry/pods/', { limit: 1 })).remaining! + 1;
    const fill: Promise<unknown>[] = [];
    for (let i = have; i < 10_000; i++) fill.push(sqlite.create(`/registry/pods/default/fill-${i}`, podObject(`fill-${i}`)));
    await Promise.all(fill);

    const list = await sqlite.list('/registry/pods/', { limit: 10_000 });
    const keys = list.items.map((i) => i.key);
    const nGets = 20_000;
    let t0 = performance.now();
    for (let i = 0; i < nGets; i++) await sqlite.get(keys[i % keys.length]!);
    out(`sqlite gets: ${((nGets / (performance.now() - t0)) * 1000).toFixed(0)}/s`);
    t0 = performance.now();
    const l1 = await sqlite.list('/registry/pods/', { limit: 10_000 });
    out(`sqlite list of ${l1.items.length} objects: ${(performance.now() - t0).toFixed(1)} ms`);

    t0 = performance.now();
    const cached = await newCachedStorage(sqlite);
    out(`watch cache initial load of ${sqlite.currentRevision()} revisions' latest state: ${(performance.now() - t0).toFixed(1)} ms`);
    t0 = performance.now();
    for (let i = 0; i < nGets; i++) await cached.get(keys[i % keys.length]!);
    out(`watch cache gets: ${((nGets / (performance.now() - t0)) * 1000).toFixed(0)}/s`);
    t0 = performance.now();
    const l2 = await cached.list('/registry/pods/', { limit: 10_000 });
    out(`watch cache list of ${l2.items.length} objects: ${(performance.now() - t0).toFixed(1)} ms`);

    // fan-out: 1,000 watchers of the pods prefix, one write
    const watchers = 1000;
    let got = 0;
    let allGot!: () => void;
    const done = new Promise<void>((r) => (allGot = r));
    const handles = Array.from({ length: watchers }, (_, i) =>
      cached.watch(i % 2 === 0 ? '/registry/pods/' : '/registry/pods/default/', cached.currentRevision(), () => {
        if (++got === watchers) allGot();
      }),
    );
    await new Promise((r) => setImmediate(r));
    t0 = performance.now();
    await Promise.all([cached.create('/registry/pods/default/fanout', podObject('fanout')), done]);
    out(`watch fan-out of one durable write to ${watchers} watchers: ${(performance.now() - t0).toFixed(2)} ms from write to last delivery`);
    handles.forEach((h) => h.stop());
    await cached.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await run()) console.log(line);
}
