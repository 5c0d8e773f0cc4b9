/**
 * Step 4: a controller, with kcm/runtime doing the plumbing of step 3
 * (informers, queue, workers, retries, leader election, metrics). It keeps
 * a ConfigMap `pod-count` in every namespace with the number of pods there:
 * namespaces are reconciled, any pod change enqueues its namespace, and the
 * ConfigMaps are owned by their namespace, so one changed or deleted by hand
 * is put back.
 *
 *   node dist/src/4-controller.js [seconds]
 */
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { controller, createOrUpdate, getConfig, kinds, newManager, setControllerReference } from 'kcm/runtime';

const mgr = newManager({ name: 'pod-counter', restConfig: await getConfig(), leaderElection: false });

controller(mgr)
  .for(kinds.Namespace)
  .owns(kinds.ConfigMap)
  .watches(kinds.Pod, (pod) => [{ name: pod.metadata?.namespace ?? '' }])
  .complete(async (ctx, req) => {
    const ns = await ctx.get();
    if (!ns || ns.status?.phase === 'Terminating') return;
    const pods = await ctx.client.list(kinds.Pod, { namespace: req.name });
    const cm: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pod-count', namespace: req.name } };
    const op = await createOrUpdate(ctx.client, cm, (c) => {
      setControllerReference(ns, c);
      c.data = { pods: String(pods.length) };
    });
    if (op.result !== 'unchanged') console.log(`${req.name}: ${pods.length} pods (${op.result})`);
  });

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());
const seconds = Number(process.argv[2] ?? 0);
if (seconds > 0) setTimeout(() => stop.abort(), seconds * 1000);
await mgr.start(stop.signal);
