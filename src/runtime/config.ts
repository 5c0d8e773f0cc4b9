/**
 * Where the API server is, found as controller-runtime's GetConfig finds it:
 * an explicit kubeconfig, else $KUBECONFIG, else the in-cluster service
 * account (in a pod), else ~/.kube/config.
 */
import { inClusterConfig } from '../client/in-cluster.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import type { RestConfig } from '../client/rest-config.js';

export interface GetConfigOptions {
  kubeconfig?: string;
  /** A kubeconfig context other than the current one. */
  context?: string;
  env?: NodeJS.ProcessEnv;
}

export async function getConfig(opts: GetConfigOptions = {}): Promise<RestConfig> {
  const env = opts.env ?? process.env;
  const context = opts.context ? { context: opts.context } : {};
  if (opts.kubeconfig) return loadKubeconfig({ kubeconfig: opts.kubeconfig, env, ...context });
  if (!env.KUBECONFIG && env.KUBERNETES_SERVICE_HOST) return inClusterConfig(env);
  return loadKubeconfig({ env, ...context });
}
