/**
 * Step 1: a client. Lists the pods of every namespace, once.
 *
 *   node dist/src/1-list-pods.js          (uses $KUBECONFIG or ~/.kube/config)
 */
import { loadKubeconfig, newKubeClient, typed } from 'kcm/client';

const client = newKubeClient(await loadKubeconfig());
try {
  const pods = await typed(client).pods().list();
  console.log('NAMESPACE\tNAME\tPHASE\tNODE');
  for (const pod of pods.items) {
    console.log(`${pod.metadata?.namespace}\t${pod.metadata?.name}\t${pod.status?.phase ?? ''}\t${pod.spec?.nodeName ?? ''}`);
  }
} finally {
  await client.close();
}
