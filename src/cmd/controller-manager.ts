/**
 * `kcm controller-manager`: kube-controller-manager's flags and start-up
 * against any cluster. Exit codes: 0 after SIGTERM/SIGINT (controllers
 * stopped, lease released), 1 on a bad flag, a failed start-up or lost
 * leadership. A second signal exits 1 at once.
 */
import { readFileSync } from 'node:fs';
import type { CloudProvider } from '../cloudprovider/cloud.js';
import { newCloudProvider } from '../controllermanager/cloud.js';
import { inClusterConfig } from '../client/in-cluster.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { componentUserAgent, type RestConfig } from '../client/rest-config.js';
import { delegatedAuthConfig } from '../controllermanager/auth-flags.js';
import type { DelegatedAuthConfig } from '../controllermanager/delegated-auth.js';
import { applyConfigFile, buildControllerOptions, controllerManagerFlags, effectiveConfiguration, validateFlags, type ControllerManagerFlagValues } from '../controllermanager/options.js';
import { newControllerManager, type ProgressEvent } from '../controllermanager/manager.js';
import { controllerTable, isImplemented, resolveEnabledControllers, UnknownControllerError } from '../controllers/registry.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import { applyLoggingFlags, onTerminationSignal, reportFlagError } from './common.js';
import { FlagError, flagUsage, formatDuration, parseFlags } from './flags.js';

const description = `The Kubernetes controller manager (kcm): runs the core control loops against any Kubernetes API server, with kube-controller-manager's flags.

Known controllers (canonical name, then aliases; * = implemented in kcm):
${controllerTable.map((e) => `  ${isImplemented(e) ? '*' : ' '} ${e.name}${e.aliases.length ? ` (${e.aliases.join(', ')})` : ''}${e.disabledByDefault ? ' [disabled by default]' : ''}${e.cloudProvider ? ' [cloud provider]' : ''}`).join('\n')}`;

async function restConfigFor(v: ControllerManagerFlagValues): Promise<RestConfig> {
  let config: RestConfig;
  if (!v.kubeconfig && !v.master && process.env.KUBERNETES_SERVICE_HOST) config = await inClusterConfig();
  else config = await loadKubeconfig(v.kubeconfig ? { kubeconfig: v.kubeconfig } : {});
  if (v.master) config = { ...config, host: v.master.replace(/\/+$/, '') };
  return { ...config, qps: v['kube-api-qps'], burst: v['kube-api-burst'], userAgent: componentUserAgent('kube-controller-manager') };
}

function readPem(path: string, flag: string): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new FlagError(`cannot read --${flag} ${path}: ${(err as Error).message}`, { cause: err });
  }
}

export interface ControllerManagerRunOptions {
  /** Progress reports (kcm up's live status). */
  onProgress?(e: ProgressEvent): void;
  /** Replaces signal handling (kcm up runs this in a child and stops it itself). */
  signal?: AbortSignal;
  logger?: Logger;
}

/** Parses flags and runs the controller manager; resolves with the exit code. */
export async function runControllerManager(args: string[], ro: ControllerManagerRunOptions = {}): Promise<number> {
  let flags;
  let enabled: string[];
  let pem: { rootCA?: string; serviceAccountPrivateKey?: string };
  let cloud: CloudProvider | undefined;
  try {
    flags = parseFlags(controllerManagerFlags, args);
    if (flags.help) {
      process.stdout.write(flagUsage(controllerManagerFlags, 'kcm controller-manager [flags]', description));
      return 0;
    }
    if (flags.positional.length > 0) throw new FlagError(`unknown command "${flags.positional[0]}" for "kcm controller-manager"`);
    applyConfigFile(flags);
    validateFlags(flags.values);
    enabled = resolveEnabledControllers(flags.values.controllers);
    const rootCA = readPem(flags.values['root-ca-file'], 'root-ca-file');
    const saKey = readPem(flags.values['service-account-private-key-file'], 'service-account-private-key-file');
    pem = { ...(rootCA !== undefined ? { rootCA } : {}), ...(saKey !== undefined ? { serviceAccountPrivateKey: saKey } : {}) };
    cloud = newCloudProvider(flags.values['cloud-provider'], flags.values['cloud-config']);
  } catch (err) {
    return reportFlagError(err, UnknownControllerError);
  }
  const v = flags.values;
  applyLoggingFlags(v);
  const log = ro.logger ?? newLogger('controller-manager');

  let restConfig: RestConfig;
  try {
    restConfig = await restConfigFor(v);
  } catch (err) {
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
  let auth: DelegatedAuthConfig | undefined;
  if (v['secure-port'] !== 0) {
    try {
      auth = await delegatedAuthConfig(v, restConfig, (kubeconfig) => loadKubeconfig({ kubeconfig }));
    } catch (err) {
      process.stderr.write(`Error: failed to get delegated authentication kubeconfig: ${(err as Error).message}\n`);
      return 1;
    }
  }
  log.info({ server: restConfig.host, controllers: enabled.length }, 'Starting kcm controller-manager');

  const cm = newControllerManager({
    restConfig,
    controllers: enabled,
    options: buildControllerOptions(v, pem),
    ...(cloud ? { cloud } : {}),
    cloudProviderName: v['cloud-provider'],
    leaderElection: {
      enabled: v['leader-elect'],
      leaseDurationMs: v['leader-elect-lease-duration'],
      renewDeadlineMs: v['leader-elect-renew-deadline'],
      retryPeriodMs: v['leader-elect-retry-period'],
      namespace: v['leader-elect-resource-namespace'],
      name: v['leader-elect-resource-name'],
    },
    ...(auth
      ? {
          serving: {
            auth,
            bindAddress: v['bind-address'],
            port: v['secure-port'],
            ...(v['tls-cert-file'] ? { certFile: v['tls-cert-file'] } : {}),
            ...(v['tls-private-key-file'] ? { keyFile: v['tls-private-key-file'] } : {}),
          },
        }
      : {}),
    configz: () => effectiveConfiguration(v, formatDuration),
    apiServerWaitMs: v['apiserver-wait-timeout'],
    shutdownTimeoutMs: v['shutdown-timeout'],
    controllerStartIntervalMs: v['controller-start-interval'],
    logger: log,
    onProgress: (e) => {
      if (e.type === 'serving') process.stdout.write(`kcm controller-manager serving on ${e.url}\n`);
      ro.onProgress?.(e);
    },
  });

  if (ro.signal) return cm.run(ro.signal);
  const ac = new AbortController();
  const release = onTerminationSignal(() => ac.abort(), { log });
  try {
    return await cm.run(ac.signal);
  } finally {
    release();
  }
}

export async function run(args: string[]): Promise<number> {
  const code = await runControllerManager(args);
  // Exit even if a stray handle (a socket closing slowly) would keep Node alive.
  setTimeout(() => process.exit(code), 2000).unref();
  return code;
}
