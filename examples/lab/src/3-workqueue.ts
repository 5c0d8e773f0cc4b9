/**
 * Step 3: an informer feeding a work queue, and a worker. Handlers only
 * enqueue keys (`namespace/name`); the worker takes one key at a time,
 * reads the pod's current state from the cache (never from the event), and
 * "syncs" it. A key changed many times while queued is synced once; a
 * failed sync is retried with exponential backoff.
 *
 *   node dist/src/3-workqueue.js [seconds]
 */
import { DeletedFinalStateUnknown, newLister, newSharedInformerFactory } from 'kcm/cache';
import { loadKubeconfig, newKubeClient, namespacedKey, splitKey } from 'kcm/client';
import { defaultControllerRateLimiter, newRateLimitingQueue } from 'kcm/workqueue';

const client = newKubeClient(await loadKubeconfig());
const factory = newSharedInformerFactory(client);
const informer = factory.pods();
const lister = newLister(informer.getIndexer());
const queue = newRateLimitingQueue<string>(defaultControllerRateLimiter(), { name: 'pods' });

informer.addEventHandler({
  onAdd: (pod) => queue.add(namespacedKey(pod)),
  onUpdate: (_old, pod) => queue.add(namespacedKey(pod)),
  onDelete: (obj) => queue.add(namespacedKey(obj instanceof DeletedFinalStateUnknown ? obj.obj : obj)),
});

/** Level-based: look at the state now, whatever event brought us here. */
async function sync(key: string): Promise<void> {
  const { namespace, name } = splitKey(key);
  const pod = lister.namespace(namespace).get(name);
  if (!pod) {
    console.log(`sync ${key}: gone`);
    return;
  }
  console.log(`sync ${key}: ${pod.status?.phase ?? 'Unknown'} on ${pod.spec?.nodeName || '(unscheduled)'}`);
}

async function worker(): Promise<void> {
  for (;;) {
    const key = await queue.get();
    if (key === undefined) return; // shut down
    try {
      await sync(key);
      queue.forget(key);
    } catch (err) {
      console.error(`sync ${key} failed, retrying: ${(err as Error).message}`);
      queue.addRateLimited(key);
    } finally {
      queue.done(key);
    }
  }
}

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());
const seconds = Number(process.argv[2] ?? 0);
if (seconds > 0) setTimeout(() => stop.abort(), seconds * 1000);

factory.start(stop.signal);
await factory.waitForCacheSync(stop.signal);
const running = worker();
await new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
await queue.shutDownWithDrain();
await running;
await factory.shutdown();
await client.close();
