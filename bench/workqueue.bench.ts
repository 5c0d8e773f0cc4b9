/**
 * Work queue throughput: one op is add + get + done of a key, on the real
 * clock, with workers pulling keys the way controller workers do.
 */

import { Registry } from 'prom-client';
import { newQueue } from '../src/util/workqueue/queue.js';
import { newPrometheusWorkqueueMetrics, type WorkqueueMetricsProvider } from '../src/util/workqueue/metrics.js';

const OPS = 1_000_000;
const KEYS = 1000;
const WORKERS = 4;

async function measure(metrics?: WorkqueueMetricsProvider): Promise<number> {
  const q = newQueue<string>(metrics ? { name: 'bench', metrics } : {});
  const keys = Array.from({ length: KEYS }, (_, i) => `ns/obj-${i}`);
  let processed = 0;
  const worker = async () => {
    for (;;) {
      const key = await q.get();
      if (key === undefined) return;
      processed++;
      q.done(key);
    }
  };
  const start = process.hrtime.bigint();
  const workers = Array.from({ length: WORKERS }, () => worker());
  // Add in batches of KEYS distinct keys, yielding so the workers drain each batch.
  for (let added = 0; added < OPS; added += KEYS) {
    for (const k of keys) q.add(k);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  await q.shutDownWithDrain();
  q.shutDown();
  await Promise.all(workers);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (processed !== OPS) throw new Error(`workqueue bench: processed ${processed} of ${OPS} items`);
  return Math.round(OPS / seconds);
}

/** Runs the benchmark and returns its result lines. */
export async function run(): Promise<string[]> {
  await measure(); // warm-up
  const plain = await measure();
  const withMetrics = await measure(newPrometheusWorkqueueMetrics(new Registry()));
  return [`workqueue add/get/done: ${plain} ops/s`, `workqueue add/get/done (prometheus metrics): ${withMetrics} ops/s`];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await run()) console.log(line);
}
