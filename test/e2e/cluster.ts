/**
 * The cluster a controller scenario runs against: `kcm up` by default, or,
 * with KCM_REAL_BIN set (`npm run test:real`), the real kube-apiserver and
 * kube-scheduler v1.20 with `kcm controller-manager` and `kcm nodes`
 * (real-cluster.ts). Scenario files call startCluster() and use only kubectl
 * and the API, so they prove the same behaviour on both.
 */
import { startKcm, type KcmProcess, type StartKcmOptions } from './harness.js';
import { realClusterConfigured, startRealCluster } from './real-cluster.js';

/** `kcm up` flags that only concern kcm up itself (dropped on a real cluster). */
const upOnly = new Set(['--controller-manager-secure-port', '--controller-manager-bind-address', '--nodes', '--data-dir']);

/** Starts the cluster; `upArgs` are `kcm up` flags, the controller-manager ones are passed on to the controller manager on a real cluster. */
export function startCluster(upArgs: string[] = [], opts: StartKcmOptions = {}): Promise<KcmProcess> {
  if (!realClusterConfigured()) return startKcm('up', upArgs, { readyTimeoutMs: 60_000, ...opts });
  const cmArgs: string[] = [];
  for (let i = 0; i < upArgs.length; i++) {
    const a = upArgs[i]!;
    const name = a.split('=')[0]!;
    if (upOnly.has(name)) {
      if (!a.includes('=')) i++;
      continue;
    }
    cmArgs.push(a);
  }
  return startRealCluster({ controllerManagerArgs: cmArgs, readyTimeoutMs: 120_000 });
}

/** True when scenarios run on the real API server (some assertions about kcm up itself do not apply). */
export const onRealCluster = realClusterConfigured();
