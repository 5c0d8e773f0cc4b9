/**
 * LIST of 5,000 pods as JSON vs protobuf (`application/vnd.kubernetes.protobuf`,
 * as client-go asks): response bytes, wall time until the whole body is
 * received (server work plus transfer; the client does not parse), and the
 * encoding alone in-process (the part of the server's time that differs).
 * The embedded API server runs over HTTPS with SQLite, in this process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request, type Dispatcher } from 'undici';
import { startApiServer } from '../src/apiserver/serve/index.js';
import { stringifyAsGo } from '../src/apiserver/go-json.js';
import { decodeKubernetesProtobuf, encodeKubernetesProtobuf, protobufMediaType } from '../src/apiserver/protobuf/envelope.js';
import { setLogOutput } from '../src/util/log/logger.js';

const PODS = 5000;
const ROUNDS = 7;

function pod(i: number) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-7d4b9c8f6d-${String(i).padStart(5, '0')}`,
      labels: { app: 'web', 'pod-template-hash': '7d4b9c8f6d', tier: 'frontend' },
      annotations: { 'kubernetes.io/config.seen': '2024-03-01T10:20:30.000000000Z' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4b9c8f6d', uid: '11111111-2222-3333-4444-555555555555', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [
        {
          name: 'nginx',
          image: 'nginx:1.25',
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [{ name: 'MODE', value: 'production' }, { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 5 },
          volumeMounts: [{ name: 'config', mountPath: '/etc/web', readOnly: true }],
        },
      ],
      volumes: [{ name: 'config', configMap: { name: 'web-config' } }],
      nodeName: `node-${i % 50}`,
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    },
  };
}

function status(i: number) {
  const t = '2024-03-01T10:20:30Z';
  return {
    phase: 'Running',
    conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: t })),
    hostIP: `192.168.1.${i % 50}`,
    podIP: `10.244.${i % 50}.${i % 250}`,
    podIPs: [{ ip: `10.244.${i % 50}.${i % 250}` }],
    startTime: t,
    containerStatuses: [{ name: 'nginx', state: { running: { startedAt: t } }, lastState: {}, ready: true, restartCount: 0, image: 'nginx:1.25', imageID: 'docker.io/library/nginx@sha256:0123456789abcdef', containerID: `containerd://${i}`, started: true }],
    qosClass: 'Burstable',
  };
}

async function pool(n: number, concurrency: number, op: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = next++; i < n; i = next++) await op(i);
  }));
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number, d = 1) => n.toFixed(d);

function time<T>(fn: () => T, rounds: number): { ms: number; value: T } {
  let value!: T;
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    value = fn();
    times.push(performance.now() - t);
  }
  return { ms: median(times), value };
}

export async function run(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kcm-bench-protobuf-'));
  const restoreLog = setLogOutput(() => undefined);
  const s = await startApiServer({ dataDir, securePort: 0, storage: 'sqlite' });
  const agent = new Agent({ connect: { ca: s.caPem }, connections: 64 });
  const auth = { authorization: `Bearer ${s.adminToken}` };
  const call = async (method: Dispatcher.HttpMethod, path: string, body: unknown) => {
    const r = await request(`${s.url}${path}`, { method, dispatcher: agent, headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await r.body.text();
    if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${text}`);
    return JSON.parse(text);
  };
  const out: string[] = [];
  try {
    const base = '/api/v1/namespaces/default/pods';
    await call('POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }).catch(() => undefined);
    await pool(PODS, 32, async (i) => {
      const created = await call('POST', base, pod(i));
      created.status = status(i);
      await call('PUT', `${base}/${created.metadata.name}/status`, created);
    });

    const list = async (accept: string) => {
      const t = performance.now();
      const r = await request(`${s.url}${base}`, { dispatcher: agent, headers: { ...auth, accept } });
      const body = Buffer.from(await r.body.arrayBuffer());
      const ms = performance.now() - t;
      if (r.statusCode !== 200) throw new Error(`LIST: ${r.statusCode}`);
      return { ms, body, type: String(r.headers['content-type']) };
    };
    const results: Record<string, { ms: number[]; bytes: number; body: Buffer }> = {};
    for (const [name, accept] of [['JSON', 'application/json, */*'], ['protobuf', `${protobufMediaType}, */*`]] as const) {
      await list(accept); // warm up
      const ms: number[] = [];
      let last!: Awaited<ReturnType<typeof list>>;
      for (let i = 0; i < ROUNDS; i++) ms.push((last = await list(accept)).ms);
      if (name === 'protobuf' && last.type !== protobufMediaType) throw new Error(`protobuf LIST answered ${last.type}`);
      results[name] = { ms, bytes: last.body.length, body: last.body };
    }
    const j = results.JSON!;
    const p = results.protobuf!;
    out.push(`list ${PODS} pods, bytes: JSON ${fmt(j.bytes / 1e6, 2)} MB, protobuf ${fmt(p.bytes / 1e6, 2)} MB (${fmt((100 * p.bytes) / j.bytes, 0)}% of JSON)`);
    out.push(`list ${PODS} pods, request to last byte (median of ${ROUNDS}): JSON ${fmt(median(j.ms), 0)} ms, protobuf ${fmt(median(p.ms), 0)} ms`);

    // The encoding alone, on the object the handler encodes.
    const obj = JSON.parse(j.body.toString('utf8'));
    const je = time(() => Buffer.byteLength(stringifyAsGo(obj)), ROUNDS);
    const pe = time(() => encodeKubernetesProtobuf(obj)!.length, ROUNDS);
    out.push(`encode the ${PODS}-pod list in-process (median of ${ROUNDS}): JSON (stringifyAsGo) ${fmt(je.ms, 0)} ms, protobuf ${fmt(pe.ms, 0)} ms`);
    if (pe.value !== p.bytes) out.push(`note: in-process protobuf size ${pe.value} differs from the response's ${p.bytes}`);
    const jd = time(() => JSON.parse(j.body.toString('utf8')), ROUNDS);
    const pd = time(() => decodeKubernetesProtobuf(p.body), ROUNDS);
    out.push(`decode it (client side, for scale): JSON.parse ${fmt(jd.ms, 0)} ms, protobuf (to-json.ts) ${fmt(pd.ms, 0)} ms`);
  } finally {
    await agent.close().catch(() => undefined);
    await s.close();
    setLogOutput(restoreLog);
    rmSync(dataDir, { recursive: true, force: true });
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().then(
    (lines) => lines.forEach((l) => console.log(l)),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
