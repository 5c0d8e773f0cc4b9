/**
 * Retained heap per running nginx pod in the node simulation: N pods of a
 * Deployment-like spec (image `nginx`, the default service-account projected
 * volume) built as the node simulator builds them (PodRuntime + PodSandbox),
 * stepped to Running on a fake clock, then heapUsed after gc, per pod.
 *
 * Run: node scripts/run-bench.mjs pod-memory (after tsc), or alone:
 * node --expose-gc dist/bench/pod-memory.bench.js [N] (default 2000;
 * SNAP=file.heapsnapshot also writes a heap snapshot with the N pods alive).
 */
import { fileURLToPath } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { FakeClock } from '../src/util/clock/clock.js';
import { PodRuntime } from '../src/nodes/pod-runtime.js';
import { newRestartBackoff } from '../src/nodes/restart-backoff.js';
import { PodSandbox, SimNetwork, type ClusterView } from '../src/nodes/sandbox.js';

const clock = new FakeClock();
const view: ClusterView = {
  configMap: (_ns, name) => (name === 'kube-root-ca.crt' ? { metadata: { name }, data: { 'ca.crt': '-----BEGIN CERTIFICATE-----\n' + 'A'.repeat(1000) + '\n-----END CERTIFICATE-----\n' } } : undefined),
  secret: () => undefined,
  services: () => [],
  service: () => undefined,
  allServices: () => [],
  endpoints: () => undefined,
  nodeIPs: () => ['172.18.0.2'],
  serviceAccountToken: () => 'eyJhbGciOiJSUzI1NiJ9.' + 'x'.repeat(800),
};
const net = new SimNetwork(view, () => clock.now());

function nginxPod(i: number): Pod {
  return {
    metadata: { name: `web-7d4b9c-${i}`, namespace: 'default', uid: `uid-${i}` },
    spec: {
      containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 80 }], volumeMounts: [{ name: 'kube-api-access-abcde', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }] }],
      volumes: [
        {
          name: 'kube-api-access-abcde',
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
            ],
          },
        },
      ],
    },
  };
}

export async function run(n = 2000): Promise<string[]> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const build = (i: number) => {
    const pod = nginxPod(i);
    const ip = `10.244.${(i >> 8) & 255}.${i & 255}`;
    let sb: PodSandbox | undefined;
    const rt = new PodRuntime(pod, clock.now(), { backoff: newRestartBackoff({ clock }), emit: () => {}, spawn: (c, _p, at) => sb!.spawn(c, at), http: (h, port, path) => sb!.httpGet(h, port, path) });
    sb = new PodSandbox(pod, rt, { nodeName: 'n', hostIP: '172.18.0.2', podIP: ip, allocatable: { cpu: '4', memory: '8Gi' } }, view, net, clock);
    rt.podIP = ip;
    return { rt, sb };
  };
  const stepAll = async (xs: { rt: PodRuntime }[]) => {
    for (let k = 0; k < 5; k++) {
      for (const x of xs) x.rt.step(clock.now());
      await clock.advance(1000);
    }
  };
  // Enough pods that the JIT's code and the per-process caches are in place before the baseline.
  let warm: { rt: PodRuntime; sb: PodSandbox }[] = [];
  for (let i = 0; i < 300; i++) warm.push(build(-1 - i));
  await stepAll(warm);
  for (const w of warm) w.sb.httpGet('', 80, '/');
  warm = [];
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const pods: { rt: PodRuntime; sb: PodSandbox }[] = [];
  for (let i = 0; i < n; i++) {
    pods.push(build(i));
    await clock.advance(1); // distinct creation times, as the pods of a real rollout have
  }
  await stepAll(pods);
  const running = pods.filter((x) => x.rt.containers.every((c) => c.state.kind === 'running')).length;
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  if (process.env['SNAP']) writeHeapSnapshot(process.env['SNAP']);
  // A sanity check of the simulation: the pods serve nginx's page.
  const r = pods[0]!.sb.httpGet('', 80, '/');
  return [
    `${n} nginx pods (${running} running): heapUsed +${((after - before) / 2 ** 20).toFixed(2)} MiB, ${((after - before) / n / 1024).toFixed(2)} KiB per pod`,
    `GET / on the first pod: ${'status' in r ? r.status : r.error}`,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) for (const line of await run(Number(process.argv[2] ?? 2000))) console.log(line);
