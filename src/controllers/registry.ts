/**
 * The table of kube-controller-manager's controllers, one row per canonical
 * name from cmd/kube-controller-manager/names/controller_names.go, with the
 * old names `--controllers` still accepts as aliases.
 *
 * A row with `module` names its folder under src/controllers/, and `load`
 * imports the `*-controller.ts` file there that exports its
 * ControllerDescriptor (`descriptor`, or several); a row with a module but no
 * `load` is "not written yet". The imports are written out (not computed from
 * the folder) so that a bundler sees them; registry.test.ts checks that every
 * controller file is loaded by its row. A module is loaded only when its
 * controller is enabled, so start-up pays for what runs.
 * A row without `module` is known but not implemented: `--controllers`
 * accepts its names and start-up logs "controller not implemented in kcm,
 * skipping".
 *
 * Start-up, `--controllers` and health checks all read this table.
 */
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
  /** Folder under src/controllers/ for the controller; absent when kcm does not implement it. */
  module?: string;
  /** Imports the module exporting the descriptor; absent while the controller is not written. */
  load?: () => Promise<Record<string, unknown>>;
}

/** Every controller kube-controller-manager knows, in upstream's declaration order. */
export const controllerTable: readonly ControllerEntry[] = Object.freeze([
  { name: 'serviceaccount-token-controller', aliases: ['serviceaccount-token'], module: 'serviceaccounttoken', load: () => import('./serviceaccounttoken/serviceaccounttoken-controller.js') },
  { name: 'endpoints-controller', aliases: ['endpoint'], module: 'endpoints', load: () => import('./endpoints/endpoints-controller.js') },
  { name: 'endpointslice-controller', aliases: ['endpointslice'], module: 'endpointslice', load: () => import('./endpointslice/endpointslice-controller.js') },
  { name: 'endpointslice-mirroring-controller', aliases: ['endpointslicemirroring'], module: 'endpointslicemirroring', load: () => import('./endpointslicemirroring/endpointslicemirroring-controller.js') },
  { name: 'replicationcontroller-controller', aliases: ['replicationcontroller'], module: 'replicaset', load: () => import('./replicaset/replicationcontroller-controller.js') },
  { name: 'pod-garbage-collector-controller', aliases: ['podgc'], module: 'podgc', load: () => import('./podgc/podgc-controller.js') },
  { name: 'resourcequota-controller', aliases: ['resourcequota'], module: 'resourcequota', load: () => import('./resourcequota/resourcequota-controller.js') },
  { name: 'namespace-controller', aliases: ['namespace'], module: 'namespace', load: () => import('./namespace/namespace-controller.js') },
  { name: 'serviceaccount-controller', aliases: ['serviceaccount'], module: 'serviceaccount', load: () => import('./serviceaccount/serviceaccount-controller.js') },
  { name: 'garbage-collector-controller', aliases: ['garbagecollector'], module: 'garbagecollector', load: () => import('./garbagecollector/garbagecollector-controller.js') },
  { name: 'daemonset-controller', aliases: ['daemonset'], module: 'daemonset', load: () => import('./daemonset/daemonset-controller.js') },
  { name: 'job-controller', aliases: ['job'], module: 'job', load: () => import('./job/job-controller.js') },
  { name: 'deployment-controller', aliases: ['deployment'], module: 'deployment', load: () => import('./deployment/deployment-controller.js') },
  { name: 'replicaset-controller', aliases: ['replicaset'], module: 'replicaset', load: () => import('./replicaset/replicaset-controller.js') },
  { name: 'horizontal-pod-autoscaler-controller', aliases: ['horizontalpodautoscaling'], module: 'horizontalpodautoscaler', load: () => import('./horizontalpodautoscaler/horizontalpodautoscaler-controller.js') },
  { name: 'disruption-controller', aliases: ['disruption'], module: 'disruption', load: () => import('./disruption/disruption-controller.js') },
  { name: 'statefulset-controller', aliases: ['statefulset'], module: 'statefulset', load: () => import('./statefulset/statefulset-controller.js') },
  { name: 'cronjob-controller', aliases: ['cronjob'], module: 'cronjob', load: () => import('./cronjob/cronjob-controller.js') },
  { name: 'certificatesigningrequest-signing-controller', aliases: ['csrsigning'], module: 'csrsigning', load: () => import('./csrsigning/csrsigning-controller.js') },
  { name: 'certificatesigningrequest-approving-controller', aliases: ['csrapproving'], module: 'csrapproving', load: () => import('./csrapproving/csrapproving-controller.js') },
  { name: 'certificatesigningrequest-cleaner-controller', aliases: ['csrcleaner'], module: 'csrcleaner', load: () => import('./csrcleaner/csrcleaner-controller.js') },
  { name: 'ttl-controller', aliases: ['ttl'], module: 'ttl', load: () => import('./ttl/ttl-controller.js') },
  { name: 'bootstrap-signer-controller', aliases: ['bootstrapsigner'], disabledByDefault: true, note: 'disabled by default upstream', module: 'bootstrapsigner', load: () => import('./bootstrapsigner/bootstrapsigner-controller.js') },
  { name: 'token-cleaner-controller', aliases: ['tokencleaner'], disabledByDefault: true, note: 'disabled by default upstream', module: 'tokencleaner', load: () => import('./tokencleaner/tokencleaner-controller.js') },
  { name: 'node-ipam-controller', aliases: ['nodeipam'], module: 'nodeipam', load: () => import('./nodeipam/nodeipam-controller.js') },
  { name: 'node-lifecycle-controller', aliases: ['nodelifecycle'], module: 'nodelifecycle', load: () => import('./nodelifecycle/nodelifecycle-controller.js') },
  { name: 'taint-eviction-controller', aliases: [], module: 'tainteviction', load: () => import('./tainteviction/tainteviction-controller.js') },
  { name: 'service-lb-controller', aliases: ['service'], cloudProvider: true, note: 'needs a cloud provider', module: 'servicelb', load: () => import('./servicelb/service-lb-controller.js') },
  { name: 'node-route-controller', aliases: ['route'], cloudProvider: true, note: 'needs a cloud provider, --allocate-node-cidrs and --configure-cloud-routes', module: 'noderoute', load: () => import('./noderoute/node-route-controller.js') },
  { name: 'cloud-node-lifecycle-controller', aliases: ['cloud-node-lifecycle'], cloudProvider: true, note: 'needs a cloud provider', module: 'cloudnodelifecycle', load: () => import('./cloudnodelifecycle/cloud-node-lifecycle-controller.js') },
  // cloud-controller-manager's node initialiser; kcm runs it with the other cloud controllers.
  { name: 'cloud-node-controller', aliases: ['cloud-node'], cloudProvider: true, note: 'needs a cloud provider (upstream: cloud-controller-manager)', module: 'cloudnode', load: () => import('./cloudnode/cloud-node-controller.js') },
  { name: 'persistentvolume-binder-controller', aliases: ['persistentvolume-binder'], module: 'persistentvolumebinder', load: () => import('./persistentvolumebinder/persistentvolumebinder-controller.js') },
  { name: 'persistentvolume-attach-detach-controller', aliases: ['attachdetach'], module: 'attachdetach', load: () => import('./attachdetach/attachdetach-controller.js') },
  { name: 'persistentvolume-expander-controller', aliases: ['persistentvolume-expander'], module: 'persistentvolumeexpander', load: () => import('./persistentvolumeexpander/persistentvolumeexpander-controller.js') },
  { name: 'clusterrole-aggregation-controller', aliases: ['clusterrole-aggregation'], module: 'clusterroleaggregation', load: () => import('./clusterroleaggregation/clusterroleaggregation-controller.js') },
  { name: 'persistentvolumeclaim-protection-controller', aliases: ['pvc-protection'], module: 'pvcprotection', load: () => import('./pvcprotection/pvcprotection-controller.js') },
  { name: 'persistentvolume-protection-controller', aliases: ['pv-protection'], module: 'pvprotection', load: () => import('./pvprotection/pvprotection-controller.js') },
  { name: 'volumeattributesclass-protection-controller', aliases: [], module: 'vacprotection' },
  { name: 'ttl-after-finished-controller', aliases: ['ttl-after-finished'], module: 'ttlafterfinished', load: () => import('./ttlafterfinished/ttlafterfinished-controller.js') },
  { name: 'root-ca-certificate-publisher-controller', aliases: ['root-ca-cert-publisher'], module: 'rootcacertpublisher', load: () => import('./rootcacertpublisher/root-ca-cert-publisher-controller.js') },
  { name: 'kube-apiserver-serving-clustertrustbundle-publisher-controller', aliases: [], disabledByDefault: true, note: 'behind an alpha feature gate upstream' },
  { name: 'ephemeral-volume-controller', aliases: ['ephemeral-volume'], module: 'ephemeralvolume', load: () => import('./ephemeralvolume/ephemeralvolume-controller.js') },
  { name: 'storageversion-garbage-collector-controller', aliases: ['storage-version-gc'], disabledByDefault: true, note: 'behind an alpha feature gate upstream' },
  { name: 'resourceclaim-controller', aliases: ['resource-claim-controller'], module: 'resourceclaim' },
  { name: 'device-taint-eviction-controller', aliases: [], disabledByDefault: true, note: 'behind an alpha feature gate upstream' },
  { name: 'legacy-serviceaccount-token-cleaner-controller', aliases: ['legacy-service-account-token-cleaner'], module: 'legacyserviceaccounttokencleaner' },
  { name: 'validatingadmissionpolicy-status-controller', aliases: ['validatingadmissionpolicy-status'], module: 'validatingadmissionpolicystatus', load: () => import('./validatingadmissionpolicystatus/validatingadmissionpolicystatus-controller.js') },
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
/** True when kcm has the controller's code (without loading it): for --help and docs. */
export function isImplemented(entry: ControllerEntry): boolean {
  return !!entry.load;
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
  if (!entry.load) return { kind: 'not-implemented', reason: entry.note ?? 'not implemented' };
  let mod: Record<string, unknown>;
  try {
    mod = await entry.load();
  } catch (err) {
    throw new Error(`cannot load controller ${entry.name} from ${entry.module}`, { cause: err });
  }
  const candidates: unknown[] = [mod.descriptor, ...(Array.isArray(mod.descriptors) ? mod.descriptors : []), ...Object.values(mod)];
  const found = candidates.find((c): c is ControllerDescriptor => isDescriptor(c) && c.name === entry.name);
  if (found) return { kind: 'implemented', descriptor: found };
  throw new Error(`controller ${entry.name}: its module ${entry.module} exports no descriptor of that name`);
}
