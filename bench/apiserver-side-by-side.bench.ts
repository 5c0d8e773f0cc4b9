/**
 * The real kube-apiserver v1.20 on etcd and `kcm apiserver` on SQLite side by
 * side, under the same load from a separate process (bench/lib/api-load.ts):
 * 5,000 ConfigMap creates, then 5,000 gets, from 50 concurrent HTTPS
 * connections and from one, each after as many uncounted warm-up requests
 * (steady state: kcm's JIT-compiled code warm, as Go's is from the start),
 * three rounds of each, the median round reported. Both servers run at once
 * and take turns round by round, so the machine's drift during the run (its
 * speed varied by a fifth between runs) touches both alike. Per server: requests/s,
 * p50/p99 latency, the server side's CPU (kube-apiserver + etcd, or kcm
 * apiserver, warm-up included) and peak RSS.
 *
 * The load generator frames HTTP/1.1 itself (about 50 to 70 us of CPU per
 * request, a quarter of undici's, so the client takes less of the two cores
 * from the servers); KCM_BENCH_API_CLIENT=undici measures with undici, as
 * sessions before 24 did. Each line gives the client's CPU per request.
 *
 * Needs the real kube-apiserver in $KCM_REAL_BIN (default /tmp/k8sbin) and
 * etcd on PATH; prints a line saying it skipped without them.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startRealCluster, type RealCluster } from '../test/e2e/real-cluster.js';
import type { LoadJob, LoadResult } from './lib/api-load.js';
import { cpuSeconds, peakRssMB, ratio, realBinaries } from './lib/proc.js';

const COUNT = Number(process.env.KCM_BENCH_API_COUNT ?? 5000);
const LEVELS = [50, 1];
const ROUNDS = 3;
const loader = fileURLToPath(new URL('./lib/api-load.js', import.meta.url));
const CLIENT = process.env.KCM_BENCH_API_CLIENT === 'undici' ? 'undici' : 'raw';

function load(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [loader], { env: { ...process.env, KCM_LOAD: JSON.stringify(job) }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`api-load exited ${code}: ${out}`))));
  });
}

interface Measure extends LoadResult {
  cpu: number;
}

interface Server {
  kind: 'real' | 'kcm';
  cluster: RealCluster;
  /** kube-apiserver and etcd, or kcm apiserver. */
  pids: number[];
  cpu(): number;
  rounds: Map<string, Measure[]>;
}

async function startServer(kind: 'real' | 'kcm'): Promise<Server> {
  const cluster = await startRealCluster({ apiServer: kind, apiServerOnly: true, readyTimeoutMs: 120_000 });
  const pids = Object.values(cluster.pids()).filter((p) => p > 0);
  return { kind, cluster, pids, cpu: () => pids.reduce((s, p) => s + cpuSeconds(p), 0), rounds: new Map() };
}

async function measureRound(s: Server, op: 'create' | 'get', concurrency: number, round: number): Promise<void> {
  const c0 = s.cpu();
  // Each round creates its own objects; gets read the first round's.
  const prefix = op === 'create' ? `cm${round}-` : 'cm0-';
  const c = s.cluster;
  const res = await load({ url: c.url, caPem: c.caPem, token: c.adminToken, namespace: `bench-${concurrency}`, op, count: COUNT, concurrency, prefix, client: CLIENT });
  if (res.failures) throw new Error(`${s.kind} ${op} x${concurrency}: ${res.failures} failures, first: ${res.firstFailure}`);
  const key = `${op}/${concurrency}`;
  s.rounds.set(key, [...(s.rounds.get(key) ?? []), { ...res, cpu: s.cpu() - c0 }]);
}

/** The median round by throughput. */
function median(s: Server, key: string): Measure {
  const rounds = [...s.rounds.get(key)!].sort((a, b) => a.rate - b.rate);
  return rounds[Math.floor(rounds.length / 2)]!;
}

const fmt = (m: Measure) => `${m.rate.toFixed(0)}/s, p50 ${m.p50.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms, CPU ${m.cpu.toFixed(1)} s (client ${m.clientCpuUs.toFixed(0)} us/request)`;

export async function run(): Promise<string[]> {
  const { missing } = realBinaries(['kube-apiserver']);
  if (missing) return [missing];
  // Both run at once and take turns, round by round (which goes first alternates), so a change in the
  // machine's speed during the run touches both alike; the one waiting is idle.
  const real = await startServer('real');
  let kcm: Server | undefined;
  try {
    kcm = await startServer('kcm');
    for (const concurrency of LEVELS) {
      for (const s of [real, kcm]) {
        const r = await s.cluster.api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `bench-${concurrency}` } });
        if (r.status !== 201) throw new Error(`${s.kind}: create namespace: ${r.status}`);
      }
      for (const op of ['create', 'get'] as const) {
        for (let round = 0; round < ROUNDS; round++) {
          for (const s of round % 2 === 0 ? [real, kcm] : [kcm, real]) await measureRound(s, op, concurrency, round);
        }
      }
    }
    const rss = (s: Server) => s.pids.reduce((sum, p) => sum + peakRssMB(p), 0);
    const [realRss, kcmRss] = [rss(real), rss(kcm)];
    const out: string[] = [`load generator: ${CLIENT === 'raw' ? 'its own HTTP/1.1 framing on TLS' : 'undici'}; the servers take turns round by round`];
    for (const concurrency of LEVELS) {
      for (const op of ['create', 'get'] as const) {
        const [r, k] = [median(real, `${op}/${concurrency}`), median(kcm, `${op}/${concurrency}`)];
        out.push(`${COUNT} ConfigMap ${op}s, ${concurrency} client${concurrency > 1 ? 's' : ''}: real ${fmt(r)}; kcm ${fmt(k)}; kcm/real throughput ${ratio(k.rate, r.rate)}, p99 ${ratio(k.p99, r.p99)}, CPU ${ratio(k.cpu, r.cpu)}`);
      }
    }
    out.push(`server peak RSS: real (kube-apiserver + etcd) ${realRss.toFixed(0)} MB, kcm ${kcmRss.toFixed(0)} MB; kcm/real ${ratio(kcmRss, realRss)}`);
    return out;
  } finally {
    await kcm?.cluster.stop();
    await real.cluster.stop();
  }
}
