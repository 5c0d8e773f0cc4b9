/**
 * A load generator for the API server benchmarks, run as its own process so
 * the client's CPU is not the server's: `node dist/bench/lib/api-load.js`
 * with a JSON job in the KCM_LOAD env variable. Runs `count` ConfigMap
 * creates or gets in `namespace` from `concurrency` HTTPS connections (one
 * request in flight on each, HTTP/1.1 keep-alive), and prints one JSON line:
 * requests/s, p50 and p99 latency in ms, and failures.
 */
import { Agent, request } from 'undici';

export interface LoadJob {
  url: string;
  caPem: string;
  token: string;
  namespace: string;
  op: 'create' | 'get';
  count: number;
  concurrency: number;
  /** Names are `${prefix}${i}`. */
  prefix: string;
  /**
   * Operations run first and not counted, so both the client's and a
   * JIT-compiled server's code is warm (steady-state throughput): creates of
   * `${prefix}warm-${i}`, or gets of the first names (default: count).
   */
  warmup?: number;
}

export interface LoadResult {
  rate: number;
  p50: number;
  p99: number;
  failures: number;
  firstFailure?: string;
}

export function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
}

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const agent = new Agent({ connect: { ca: job.caPem }, connections: job.concurrency, pipelining: 1 });
  const base = `${job.url}/api/v1/namespaces/${job.namespace}/configmaps`;
  const auth = `Bearer ${job.token}`;
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const one = async (i: number, name = `${job.prefix}${i}`): Promise<void> => {
    const r =
      job.op === 'create'
        ? await request(base, {
            method: 'POST',
            dispatcher: agent,
            headers: { authorization: auth, 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { bench: 'yes' } }, data: { key: 'v'.repeat(200) } }),
          })
        : await request(`${base}/${name}`, { method: 'GET', dispatcher: agent, headers: { authorization: auth, accept: 'application/json' } });
    const text = await r.body.text();
    if (r.statusCode >= 300) {
      failures++;
      firstFailure ??= `${job.op} ${name}: HTTP ${r.statusCode} ${text.slice(0, 200)}`;
    }
  };
  // Warm the connections first so TLS handshakes are not in the numbers.
  await Promise.all(Array.from({ length: job.concurrency }, () => request(`${job.url}/version`, { dispatcher: agent, headers: { authorization: auth } }).then((r) => r.body.dump())));
  const warmup = job.warmup ?? job.count;
  let w = 0;
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      for (let i = w++; i < warmup; i = w++) await one(i, job.op === 'create' ? `${job.prefix}warm-${i}` : `${job.prefix}${i % job.count}`);
    }),
  );
  latencies.length = 0;
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      for (let i = next++; i < job.count; i = next++) {
        const t = performance.now();
        await one(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  await agent.close();
  latencies.sort((a, b) => a - b);
  return { rate: job.count / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), failures, ...(firstFailure ? { firstFailure } : {}) };
}

if (process.env.KCM_LOAD && import.meta.url === `file://${process.argv[1]}`) {
  runLoad(JSON.parse(process.env.KCM_LOAD) as LoadJob).then(
    (r) => console.log(JSON.stringify(r)),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
