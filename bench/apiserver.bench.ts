/**
 * The embedded API server over HTTPS (undici, admin token) with SQLite
 * storage (synchronous=FULL): create and get throughput with p50/p99 latency
 * at 1, 10 and 100 concurrent clients, a list of 10,000 objects, and the time
 * for one write to reach 1,000 watchers. Client and server share one
 * process (one core), so the numbers are a lower bound for a separate client.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request, type Dispatcher } from 'undici';
import { startApiServer, type RunningApiServer } from '../src/apiserver/serve/index.js';
import { setLogOutput } from '../src/util/log/logger.js';

const CONCURRENCY = [1, 10, 100];
const OPS_PER_LEVEL = (c: number) => Math.max(1000, c * 30);
const LIST_SIZE = 10_000;
const WATCHERS = 1000;

interface Ctx {
  s: RunningApiServer;
  agent: Agent;
  headers: Record<string, string>;
}

async function call(ctx: Ctx, method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await request(`${ctx.s.url}${path}`, {
    method,
    dispatcher: ctx.agent,
    headers: body !== undefined ? { ...ctx.headers, 'content-type': 'application/json' } : ctx.headers,
    body: body !== undefined ? JSON.stringify(body) : null,
  });
  const json = await r.body.json();
  if (r.statusCode >= 300) throw new Error(`${method} ${path}: HTTP ${r.statusCode} ${JSON.stringify(json)}`);
  return { status: r.statusCode, json };
}

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { bench: 'yes' } }, data: { key: 'v'.repeat(200) } });

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `total` operations with `concurrency` clients; returns ops/s and latency percentiles (ms). */
async function load(concurrency: number, total: number, op: (i: number) => Promise<unknown>): Promise<{ rate: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        await op(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { rate: total / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

const fmt = (n: number, d = 1) => n.toFixed(d);

async function createNamespace(ctx: Ctx, name: string): Promise<void> {
  await call(ctx, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

export async function run(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kcm-bench-apiserver-'));
  const restoreLog = setLogOutput(() => undefined);
  const s = await startApiServer({ dataDir, securePort: 0, storage: 'sqlite' });
  const agent = new Agent({ connect: { ca: s.caPem }, connections: 256, pipelining: 1 });
  const ctx: Ctx = { s, agent, headers: { authorization: `Bearer ${s.adminToken}` } };
  const out: string[] = [];
  try {
    for (const c of CONCURRENCY) {
      const ns = `create-${c}`;
      await createNamespace(ctx, ns);
      const n = OPS_PER_LEVEL(c);
      await load(c, c * 5, () => call(ctx, 'GET', '/version')); // open and warm c connections (TLS handshakes)
      const r = await load(c, n, (i) => call(ctx, 'POST', `/api/v1/namespaces/${ns}/configmaps`, cm(`cm-${i}`)));
      out.push(`create configmap, ${c} client${c > 1 ? 's' : ''}: ${fmt(r.rate, 0)} creates/s, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms (${n} ops)`);
    }
    for (const c of CONCURRENCY) {
      const ns = `create-${c}`;
      const n = OPS_PER_LEVEL(c) * 2;
      const size = OPS_PER_LEVEL(c);
      const r = await load(c, n, (i) => call(ctx, 'GET', `/api/v1/namespaces/${ns}/configmaps/cm-${i % size}`));
      out.push(`get configmap, ${c} client${c > 1 ? 's' : ''}: ${fmt(r.rate, 0)} gets/s, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms (${n} ops)`);
    }

    await createNamespace(ctx, 'list');
    await load(50, LIST_SIZE, (i) => call(ctx, 'POST', '/api/v1/namespaces/list/configmaps', cm(`cm-${i}`)));
    const listTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const l = await call(ctx, 'GET', '/api/v1/namespaces/list/configmaps');
      listTimes.push(performance.now() - t);
      if (l.json.items.length !== LIST_SIZE) throw new Error(`list returned ${l.json.items.length} items`);
    }
    listTimes.sort((a, b) => a - b);
    out.push(`list ${LIST_SIZE} configmaps (JSON, client parse included): median ${fmt(percentile(listTimes, 50), 0)} ms, best ${fmt(listTimes[0]!, 0)} ms`);
    const tableT = performance.now();
    await request(`${s.url}/api/v1/namespaces/list/configmaps`, {
      dispatcher: agent,
      headers: { ...ctx.headers, accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    }).then((r) => r.body.text());
    out.push(`list ${LIST_SIZE} configmaps as a Table (kubectl get): ${fmt(performance.now() - tableT, 0)} ms`);

    out.push(await fanOut(ctx));
  } finally {
    await agent.close().catch(() => undefined);
    await s.close();
    setLogOutput(restoreLog);
    rmSync(dataDir, { recursive: true, force: true });
  }
  return out;
}

/** Opens WATCHERS watches, writes one object, and measures until every watcher has its ADDED event. */
async function fanOut(ctx: Ctx): Promise<string> {
  await createNamespace(ctx, 'fan');
  const rv = (await call(ctx, 'GET', '/api/v1/namespaces/fan/configmaps')).json.metadata.resourceVersion as string;
  const watchAgent = new Agent({ connect: { ca: ctx.s.caPem }, connections: WATCHERS + 10 });
  const controllers: AbortController[] = [];
  let received = 0;
  let allReceived!: () => void;
  const done = new Promise<void>((r) => (allReceived = r));
  let opened = 0;
  try {
    const openStart = performance.now();
    await Promise.all(
      Array.from({ length: WATCHERS }, async () => {
        const ac = new AbortController();
        controllers.push(ac);
        const r = await request(`${ctx.s.url}/api/v1/namespaces/fan/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=false`, {
          dispatcher: watchAgent,
          headers: ctx.headers,
          signal: ac.signal,
        });
        opened++;
        let buf = '';
        let seen = false;
        r.body.setEncoding('utf8');
        r.body.on('data', (chunk: string) => {
          buf += chunk;
          if (!seen && buf.includes('"ADDED"')) {
            seen = true;
            if (++received === WATCHERS) allReceived();
          }
        });
        r.body.on('error', () => undefined);
      }),
    );
    const openMs = performance.now() - openStart;
    const t = performance.now();
    await call(ctx, 'POST', '/api/v1/namespaces/fan/configmaps', cm('fan-1'));
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000).unref());
    const res = await Promise.race([done, timeout]);
    if (res === 'timeout') return `watch fan-out: only ${received}/${WATCHERS} watchers got the event within 30 s`;
    return `watch fan-out: one write reached ${WATCHERS} watchers in ${fmt(performance.now() - t, 0)} ms (opening ${opened} watches took ${fmt(openMs, 0)} ms)`;
  } finally {
    for (const ac of controllers) ac.abort();
    await watchAgent.destroy().catch(() => undefined);
  }
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
