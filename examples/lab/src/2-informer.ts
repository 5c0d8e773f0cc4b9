/**
 * Step 2: an informer. Lists the pods once, then watches: every add, update
 * and delete is printed as it happens, from a local cache kept in step with
 * the server (relisting by itself when the watch breaks).
 *
 *   node dist/src/2-informer.js [seconds]     (runs until Ctrl-C, or for that many seconds)
 */
import { DeletedFinalStateUnknown, newSharedInformerFactory } from 'kcm/cache';
import { loadKubeconfig, newKubeClient } from 'kcm/client';

const client = newKubeClient(await loadKubeconfig());
const factory = newSharedInformerFactory(client);
const pods = factory.pods();
pods.addEventHandler({
  onAdd: (pod) => console.log(`ADDED ${pod.metadata?.namespace}/${pod.metadata?.name} ${pod.status?.phase ?? ''}`),
  onUpdate: (old, pod) => {
    if (old.metadata?.resourceVersion === pod.metadata?.resourceVersion) return; // a periodic resync, not a change
    console.log(`UPDATED ${pod.metadata?.namespace}/${pod.metadata?.name} ${old.status?.phase ?? ''} -> ${pod.status?.phase ?? ''}`);
  },
  onDelete: (obj) => {
    const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    console.log(`DELETED ${pod.metadata?.namespace}/${pod.metadata?.name}`);
  },
});

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());
const seconds = Number(process.argv[2] ?? 0);
if (seconds > 0) setTimeout(() => stop.abort(), seconds * 1000);

factory.start(stop.signal);
await factory.waitForCacheSync(stop.signal);
console.log(`synced: ${pods.getStore().listKeys().length} pods in the cache`);
await new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
await factory.shutdown();
await client.close();
