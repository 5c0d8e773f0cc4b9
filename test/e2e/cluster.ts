/**
 * The cluster a controller scenario runs against: `kcm up` by default, or,
 * with KCM_REAL_BIN set (`npm run test:real`), a cluster of real v1.20
 * binaries and kcm parts (real-cluster.ts), chosen by KCM_REAL_MODE:
 *
 * - `kcm-cm` (default): real kube-apiserver + kube-scheduler, `kcm controller-manager`;
 * - `real-cm`: real kube-apiserver + kube-scheduler + kube-controller-manager (the baseline);
 * - `real-cm-on-kcm`: `kcm apiserver` + `kcm scheduler` + real kube-controller-manager (kube-scheduler 1.20
 *   needs policy/v1beta1, which current Kubernetes no longer serves).
 *
 * Simulated kubelets are `kcm nodes` in every mode. Scenario files call
 * startCluster() and use only kubectl and the API, so they prove the same
 * behaviour on all.
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
  const mode = realMode();
  return startRealCluster({
    controllerManagerArgs: cmArgs,
    readyTimeoutMs: 120_000,
    controllerManager: mode === 'kcm-cm' ? 'kcm' : 'real',
    apiServer: mode === 'real-cm-on-kcm' ? 'kcm' : 'real',
  });
}

export type RealMode = 'kcm-cm' | 'real-cm' | 'real-cm-on-kcm';
function realMode(): RealMode {
  const m = process.env.KCM_REAL_MODE ?? 'kcm-cm';
  if (m !== 'kcm-cm' && m !== 'real-cm' && m !== 'real-cm-on-kcm') throw new Error(`KCM_REAL_MODE=${m}: expected kcm-cm, real-cm or real-cm-on-kcm`);
  return m;
}

/** True when scenarios run on real binaries (some assertions about kcm up itself do not apply). */
export const onRealCluster = realClusterConfigured();
/**
 * Why a scenario cannot run when the real kube-controller-manager v1.20 runs
 * on `kcm apiserver`: its controllers for these resources use versions that
 * current Kubernetes (and so kcm apiserver) no longer serves, and 1.20 skips
 * them. Undefined in every other mode.
 */
export function notServedFor120(resource: 'cronjobs' | 'endpointslices' | 'poddisruptionbudgets'): string | undefined {
  if (!onRealCluster || realMode() !== 'real-cm-on-kcm') return undefined;
  const v = { cronjobs: 'batch/v1beta1', endpointslices: 'discovery.k8s.io/v1beta1', poddisruptionbudgets: 'policy/v1beta1' }[resource];
  return `kube-controller-manager 1.20 uses ${v} ${resource}, which kcm apiserver (as current Kubernetes) does not serve`;
}

/** True when the controller manager is the real kube-controller-manager v1.20 (behaviour added since is not there). */
export const onRealControllerManager = onRealCluster && realMode() !== 'kcm-cm';

/** True when the API server is the real kube-apiserver v1.20 (manifests use the versions it serves). */
export const onRealApiServer = onRealCluster && realMode() !== 'real-cm-on-kcm';

/**
 * The apiVersion a manifest of `kind` uses on the cluster: the current one
 * on `kcm up`, the one Kubernetes 1.20 serves on the real cluster.
 */
export function manifestVersion(kind: 'CronJob' | 'PodDisruptionBudget' | 'EndpointSlice'): string {
  const current = { CronJob: 'batch/v1', PodDisruptionBudget: 'policy/v1', EndpointSlice: 'discovery.k8s.io/v1' }[kind];
  const v1_20 = { CronJob: 'batch/v1beta1', PodDisruptionBudget: 'policy/v1beta1', EndpointSlice: 'discovery.k8s.io/v1beta1' }[kind];
  return onRealApiServer ? v1_20 : current;
}
