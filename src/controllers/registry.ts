/**
 * The table of kube-controller-manager's controllers, one row per canonical
 * name from cmd/kube-controller-manager/names/controller_names.go, with the
 * old names `--controllers` still accepts as aliases.
 *
 * A row with `module` names its folder: a `src/controllers/<module>/*-controller.ts`
 * file (`<module>-controller.ts` first) exports its ControllerDescriptor
 * (`descriptor`, or several); a folder without one means "not written yet".
 * The module is
 * loaded only when the controller is enabled, so start-up pays for what runs.
 * A row without `module` is known but not implemented: `--controllers`
 * accepts its names and start-up logs "controller not implemented in kcm,
 * skipping".
 *
 * Start-up, `--controllers` and health checks all read this table.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import type { ControllerDescriptor } from './types.js';

export interface ControllerEntry {
  /** Canonical name (`replicaset-controller`). */
  name: string;
  /** Old names accepted by `--controllers` (`replicaset`). */
  aliases: readonly string[];
  /** Off unless named explicitly in `--controllers` (bootstrapsigner, tokencleaner, alpha feature gates). */
  disabledByDefault?: boolean;
  /** Why it is off by default or skipped, for logs and `--help`. */
  note?: string;
  /** Cloud-provider controllers: started only with a cloud provider (`--cloud-provider=NAME`, not `external`), as kube-controller-manager does. */
  cloudProvider?: boolean;
  /** Folder under src/controllers/ exporting the descriptor; absent when kcm does not implement it. */
  module?: string;
}

/** Every controller kube-controller-manager knows, in upstream's declaration order. */
export const controllerTable: readonly ControllerEntry[] = Object.freeze([
  { name: 'serviceaccount-token-controller', aliases: ['serviceaccount-token'], module: 'serviceaccounttoken' },
  { name: 'endpoints-controller', aliases: ['endpoint'], module: 'endpoints' },
  { name: 'endpointslice-controller', aliases: ['endpointslice'], module: 'endpointslice' },
  { name: 'endpointslice-mirroring-controller', aliases: ['endpointslicemirroring'], module: 'endpointslicemirroring' },
  { name: 'replicationcontroller-controller', aliases: ['replicationcontroller'], module: 'replicaset' },
  { name: 'pod-garbage-collector-controller', aliases: ['podgc'], module: 'podgc' },
  { name: 'resourcequota-controller', aliases: ['resourcequota'], module: 'resourcequota' },
  { name: 'namespace-controller', aliases: ['namespace'], module: 'namespace' },
  { name: 'serviceaccount-controller', aliases: ['serviceaccount'], module: 'serviceaccount' },
  { name: 'garbage-collector-controller', aliases: ['garbagecollector'], module: 'garbagecollector' },
  { name: 'daemonset-controller', aliases: ['daemonset'], module: 'daemonset' },
  { name: 'job-controller', aliases: ['job'], module: 'job' },
  { name: 'deployment-controller', aliases: ['deployment'], module: 'deployment' },
  { name: 'replicaset-controller', aliases: ['replicaset'], module: 'replicaset' },
  { name: 'horizontal-pod-autoscaler-controller', aliases: ['horizontalpodautoscaling'], module: 'horizontalpodautoscaler' },
  { name: 'disruption-controller', aliases: ['disruption'], module: 'disruption' },
  { name: 'statefulset-controller', aliases: ['statefulset'], module: 'statefulset' },
  { name: 'cronjob-controller', aliases: ['cronjob'], module: 'cronjob' },
  { name: 'certificatesigningrequest-signing-controller', aliases: ['csrsigning'], module: 'csrsigning' },
  { name: 'certificatesigningrequest-approving-controller', aliases: ['csrapproving'], module: 'csrapproving' },
  { name: 'certificatesigningrequest-cleaner-controller', aliases: ['csrcleaner'], module: 'csrcleaner' },
  { name: 'ttl-controller', aliases: ['ttl'], module: 'ttl' },
  { name: 'bootstrap-signer-controller', aliases: ['bootstrapsigner'], disabledByDefault: true, note: 'disabled by default upstream', module: 'bootstrapsigner' },
  { name: 'token-cleaner-controller', aliases: ['tokencleaner'], disabledByDefault: true, note: 'disabled by default upstream', module: 'tokencleaner' },
  { name: 'node-ipam-controller', aliases: ['nodeipam'], module: 'nodeipam' },
  { name: 'node-lifecycle-controller', aliases: ['nodelifecycle'], module: 'nodelifecycle' },
  { name: 'taint-eviction-controller', aliases: [], module: 'tainteviction' },
  { name: 'service-lb-controller', aliases: ['service'], cloudProvider: true, note: 'needs a cloud provider', module: 'servicelb' },
  { name: 'node-route-controller', aliases: ['route'], cloudProvider: true, note: 'needs a cloud provider, --allocate-node-cidrs and --configure-cloud-routes', module: 'noderoute' },
  { name: 'cloud-node-lifecycle-controller', aliases: ['cloud-node-lifecycle'], cloudProvider: true, note: 'needs a cloud provider', module: 'cloudnodelifecycle' },
  // cloud-controller-manager's node initialiser; kcm runs it with the other cloud controllers.
  { name: 'cloud-node-controller', aliases: ['cloud-node'], cloudProvider: true, note: 'needs a cloud provider (upstream: cloud-controller-manager)', module: 'cloudnode' },
  { name: 'persistentvolume-binder-controller', aliases: ['persistentvolume-binder'], module: 'persistentvolumebinder' },
  { name: 'persistentvolume-attach-detach-controller', aliases: ['attachdetach'], module: 'attachdetach' },
  { name: 'persistentvolume-expander-controller', aliases: ['persistentvolume-expander'], module: 'persistentvolumeexpander' },
  { name: 'clusterrole-aggregation-controller', aliases: ['clusterrole-aggregation'], module: 'clusterroleaggregation' },
  { name: 'persistentvolumeclaim-protection-controller', aliases: ['pvc-protection'], module: 'pvcprotection' },
  { name: 'persistentvolume-protection-controller', aliases: ['pv-protection'], module: 'pvprotection' },
  { name: 'volumeattributesclass-protection-controller', aliases: [], module: 'vacprotection' },
  { name: 'ttl-after-finished-controller', aliases: ['ttl-after-finished'], module: 'ttlafterfinished' },
  { name: 'root-ca-certificate-publisher-controller', aliases: ['root-ca-cert-publisher'], module: 'rootcacertpublisher' },
  { name: 'kube-apiserver-serving-clustertrustbundle-publisher-controller', aliases: [], disabledByDefault: true, note: 'behind an alpha feature gate upstream' },
  { name: 'ephemeral-volume-controller', aliases: ['ephemeral-volume'], module: 'ephemeralvolume' },
  { name: 'storageversion-garbage-collector-controller', aliases: ['storage-version-gc'], disabledByDefault: true, note: 'behind an alpha feature gate upstream' },
  { name: 'resourceclaim-controller', aliases: ['resource-claim-controller'], module: 'resourceclaim' },
  { name: 'device-taint-eviction-controller', aliases: [], disabledByDefault: true, note: 'behind an alpha feature gate upstream' },
  { name: 'legacy-serviceaccount-token-cleaner-controller', aliases: ['legacy-service-account-token-cleaner'], module: 'legacyserviceaccounttokencleaner' },
  { name: 'validatingadmissionpolicy-status-controller', aliases: ['validatingadmissionpolicy-status'], module: 'validatingadmissionpolicystatus' },
  { name: 'service-cidr-controller', aliases: [], module: 'servicecidr' },
  { name: 'storage-version-migrator-controller', aliases: [], disabledByDefault: true, note: 'behind an alpha feature gate upstream' },
  { name: 'selinux-warning-controller', aliases: [], disabledByDefault: true, note: 'disabled by default upstream' },
  { name: 'podcertificaterequest-cleaner-controller', aliases: [], disabledByDefault: true, note: 'behind an alpha feature gate upstream' },
] satisfies ControllerEntry[]);

/** Canonical name of `nameOrAlias`, or undefined when no controller is known by it. */
export function canonicalControllerName(nameOrAlias: string): string | undefined {
  for (const e of controllerTable) if (e.name === nameOrAlias || e.aliases.includes(nameOrAlias)) return e.name;
  return undefined;
}

export function controllerEntry(name: string): ControllerEntry | undefined {
  const canonical = canonicalControllerName(name);
  return controllerTable.find((e) => e.name === canonical);
}

/** Raised by resolveEnabledControllers for an unknown name; the message is the one-line error to print. */
export class UnknownControllerError extends Error {
  constructor(readonly controllerName: string) {
    super(`"${controllerName}" is not in the list of known controllers`);
    this.name = 'UnknownControllerError';
  }
}

/**
 * `--controllers` semantics (kube-controller-manager's IsControllerEnabled):
 * `*` enables every controller not disabled by default, `foo` enables foo,
 * `-foo` disables foo; the first item naming a controller decides for it.
 * Names and aliases both work. Returns canonical names in table order.
 * Throws UnknownControllerError for a name not in the table.
 */
export function resolveEnabledControllers(spec: readonly string[]): string[] {
  const decided = new Map<string, boolean>();
  let star = false;
  for (const raw of spec) {
    const item = raw.trim();
    if (item === '') continue;
    if (item === '*') {
      star = true;
      continue;
    }
    const neg = item.startsWith('-');
    const name = neg ? item.slice(1) : item;
    const canonical = canonicalControllerName(name);
    if (!canonical) throw new UnknownControllerError(name);
    if (!decided.has(canonical)) decided.set(canonical, !neg);
  }
  return controllerTable.filter((e) => decided.get(e.name) ?? (star && !e.disabledByDefault)).map((e) => e.name);
}

function isDescriptor(v: unknown): v is ControllerDescriptor {
  const d = v as Partial<ControllerDescriptor> | null;
  return typeof d === 'object' && d !== null && typeof d.name === 'string' && typeof d.create === 'function' && Array.isArray(d.requiredResources);
}

/** Outcome of loading a controller's implementation. */
export type LoadedController =
  | { kind: 'implemented'; descriptor: ControllerDescriptor }
  | { kind: 'not-implemented'; reason: string };

const loaders = new Map<string, Promise<LoadedController>>();

/**
 * Loads the descriptor of canonical controller `name`. A missing module (the
 * controller is not written yet) is "not-implemented"; any other import
 * failure rejects, keeping its cause.
 */
/** True when kcm has the controller's folder (checked on disk, without loading it): for --help and docs. */
export function isImplemented(entry: ControllerEntry): boolean {
  return !!entry.module && existsSync(new URL(`./${entry.module}/`, import.meta.url));
}

export function loadController(name: string): Promise<LoadedController> {
  const entry = controllerTable.find((e) => e.name === name);
  if (!entry) return Promise.reject(new UnknownControllerError(name));
  let p = loaders.get(name);
  if (!p) {
    p = importDescriptor(entry);
    loaders.set(name, p);
  }
  return p;
}

async function importDescriptor(entry: ControllerEntry): Promise<LoadedController> {
  if (!entry.module) return { kind: 'not-implemented', reason: entry.note ?? 'not implemented' };
  const dir = new URL(`./${entry.module}/`, import.meta.url);
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => f.endsWith('-controller.js') && !f.endsWith('.test.js'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'not-implemented', reason: 'not implemented' };
    throw new Error(`cannot list controller folder ${entry.module}`, { cause: err });
  }
  // The conventional file first: <module>/<module>-controller.js.
  files.sort((a, b) => Number(b === `${entry.module}-controller.js`) - Number(a === `${entry.module}-controller.js`));
  for (const file of files) {
    let mod: Record<string, unknown>;
    try {
      mod = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`cannot load controller ${entry.name} from ${entry.module}/${file}`, { cause: err });
    }
    const candidates: unknown[] = [mod.descriptor, ...(Array.isArray(mod.descriptors) ? mod.descriptors : []), ...Object.values(mod)];
    const found = candidates.find((c): c is ControllerDescriptor => isDescriptor(c) && c.name === entry.name);
    if (found) return { kind: 'implemented', descriptor: found };
  }
  return { kind: 'not-implemented', reason: 'not implemented' };
}
