/**
 * The built-in resource registry: what `kubectl api-resources -o wide` lists
 * for the resources kcm serves, with names, kinds, scope, short names,
 * categories, verbs and subresources as a current kube-apiserver reports them
 * in discovery (checked against real discovery output: /api/v1 of a v1.31
 * server, /apis/* of a v1.34 server).
 *
 * Only these resources, and only these subresources, are listed; anything
 * else is not served by the embedded API server.
 */

export interface SubresourceInfo {
  /** `status`, `scale`, ... (without the parent's name). */
  readonly name: string;
  /** Kind of the subresource's body (`Scale`, `Eviction`, the parent kind for status). */
  readonly kind: string;
  /** Group and version of that kind (autoscaling/v1 for scale). */
  readonly group: string;
  readonly version: string;
  /** Discovery verbs, sorted. */
  readonly verbs: readonly string[];
}

export interface ResourceInfo {
  readonly group: string; // '' for core
  readonly version: string;
  readonly resource: string; // plural
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** Discovery verbs, sorted as the API server lists them. */
  readonly verbs: readonly string[];
  readonly subresources: Readonly<Record<string, SubresourceInfo>>;
}

/** Every verb of a fully served resource. */
export const ALL_VERBS: readonly string[] = Object.freeze(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
const NO_DELETECOLLECTION = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const CREATE_ONLY = ['create'];
const STATUS_VERBS = ['get', 'patch', 'update'];
const PROXY_VERBS = ['create', 'delete', 'get', 'patch', 'update'];
const CONNECT_VERBS = ['create', 'get'];

interface Sub {
  kind?: string; // default: parent kind
  group?: string; // default: parent group
  version?: string; // default: parent version
  verbs: string[];
}

interface Def {
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs?: string[]; // default ALL_VERBS
  singular?: string; // default kind.toLowerCase()
  sub?: Record<string, Sub>;
}

const status: Sub = { verbs: STATUS_VERBS };
const scale: Sub = { kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: STATUS_VERBS };
const all = ['all'];

/** group -> version -> resource -> definition, in discovery order (group priority, versions preferred first). */
const table: Record<string, Record<string, Record<string, Def>>> = {
  '': {
    v1: {
      bindings: { kind: 'Binding', namespaced: true, verbs: CREATE_ONLY },
      componentstatuses: { kind: 'ComponentStatus', namespaced: false, shortNames: ['cs'], verbs: ['get', 'list'] },
      configmaps: { kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
      endpoints: { kind: 'Endpoints', namespaced: true, shortNames: ['ep'], singular: 'endpoints' },
      events: { kind: 'Event', namespaced: true, shortNames: ['ev'] },
      limitranges: { kind: 'LimitRange', namespaced: true, shortNames: ['limits'] },
      namespaces: {
        kind: 'Namespace',
        namespaced: false,
        shortNames: ['ns'],
        verbs: NO_DELETECOLLECTION,
        sub: { finalize: { verbs: ['update'] }, status },
      },
      nodes: {
        kind: 'Node',
        namespaced: false,
        shortNames: ['no'],
        sub: { proxy: { kind: 'NodeProxyOptions', verbs: PROXY_VERBS }, status },
      },
      persistentvolumeclaims: { kind: 'PersistentVolumeClaim', namespaced: true, shortNames: ['pvc'], sub: { status } },
      persistentvolumes: { kind: 'PersistentVolume', namespaced: false, shortNames: ['pv'], sub: { status } },
      pods: {
        kind: 'Pod',
        namespaced: true,
        shortNames: ['po'],
        categories: all,
        sub: {
          binding: { kind: 'Binding', verbs: CREATE_ONLY },
          ephemeralcontainers: { verbs: STATUS_VERBS },
          eviction: { kind: 'Eviction', group: 'policy', version: 'v1', verbs: CREATE_ONLY },
          exec: { kind: 'PodExecOptions', verbs: CONNECT_VERBS },
          log: { verbs: ['get'] },
          portforward: { kind: 'PodPortForwardOptions', verbs: CONNECT_VERBS },
          status,
        },
      },
      podtemplates: { kind: 'PodTemplate', namespaced: true },
      replicationcontrollers: { kind: 'ReplicationController', namespaced: true, shortNames: ['rc'], categories: all, sub: { scale, status } },
      resourcequotas: { kind: 'ResourceQuota', namespaced: true, shortNames: ['quota'], sub: { status } },
      secrets: { kind: 'Secret', namespaced: true },
      serviceaccounts: {
        kind: 'ServiceAccount',
        namespaced: true,
        shortNames: ['sa'],
        sub: { token: { kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: CREATE_ONLY } },
      },
      services: {
        kind: 'Service',
        namespaced: true,
        shortNames: ['svc'],
        categories: all,
        sub: { proxy: { kind: 'ServiceProxyOptions', verbs: PROXY_VERBS }, status },
      },
    },
  },
  apps: {
    v1: {
      controllerrevisions: { kind: 'ControllerRevision', namespaced: true },
      daemonsets: { kind: 'DaemonSet', namespaced: true, shortNames: ['ds'], categories: all, sub: { status } },
      deployments: { kind: 'Deployment', namespaced: true, shortNames: ['deploy'], categories: all, sub: { scale, status } },
      replicasets: { kind: 'ReplicaSet', namespaced: true, shortNames: ['rs'], categories: all, sub: { scale, status } },
      statefulsets: { kind: 'StatefulSet', namespaced: true, shortNames: ['sts'], categories: all, sub: { scale, status } },
    },
  },
  'events.k8s.io': {
    v1: { events: { kind: 'Event', namespaced: true, shortNames: ['ev'] } },
  },
  'authentication.k8s.io': {
    v1: {
      selfsubjectreviews: { kind: 'SelfSubjectReview', namespaced: false, verbs: CREATE_ONLY },
      tokenreviews: { kind: 'TokenReview', namespaced: false, verbs: CREATE_ONLY },
    },
  },
  'authorization.k8s.io': {
    v1: {
      localsubjectaccessreviews: { kind: 'LocalSubjectAccessReview', namespaced: true, verbs: CREATE_ONLY },
      selfsubjectaccessreviews: { kind: 'SelfSubjectAccessReview', namespaced: false, verbs: CREATE_ONLY },
      selfsubjectrulesreviews: { kind: 'SelfSubjectRulesReview', namespaced: false, verbs: CREATE_ONLY },
      subjectaccessreviews: { kind: 'SubjectAccessReview', namespaced: false, verbs: CREATE_ONLY },
    },
  },
  autoscaling: {
    v2: { horizontalpodautoscalers: { kind: 'HorizontalPodAutoscaler', namespaced: true, shortNames: ['hpa'], categories: all, sub: { status } } },
    v1: { horizontalpodautoscalers: { kind: 'HorizontalPodAutoscaler', namespaced: true, shortNames: ['hpa'], categories: all, sub: { status } } },
  },
  batch: {
    v1: {
      cronjobs: { kind: 'CronJob', namespaced: true, shortNames: ['cj'], categories: all, sub: { status } },
      jobs: { kind: 'Job', namespaced: true, categories: all, sub: { status } },
    },
  },
  'certificates.k8s.io': {
    v1: {
      certificatesigningrequests: {
        kind: 'CertificateSigningRequest',
        namespaced: false,
        shortNames: ['csr'],
        sub: { approval: { verbs: STATUS_VERBS }, status },
      },
    },
  },
  'networking.k8s.io': {
    v1: {
      ingressclasses: { kind: 'IngressClass', namespaced: false },
      ingresses: { kind: 'Ingress', namespaced: true, shortNames: ['ing'], sub: { status } },
      networkpolicies: { kind: 'NetworkPolicy', namespaced: true, shortNames: ['netpol'] },
    },
  },
  policy: {
    v1: { poddisruptionbudgets: { kind: 'PodDisruptionBudget', namespaced: true, shortNames: ['pdb'], sub: { status } } },
  },
  'rbac.authorization.k8s.io': {
    v1: {
      clusterrolebindings: { kind: 'ClusterRoleBinding', namespaced: false },
      clusterroles: { kind: 'ClusterRole', namespaced: false },
      rolebindings: { kind: 'RoleBinding', namespaced: true },
      roles: { kind: 'Role', namespaced: true },
    },
  },
  'storage.k8s.io': {
    v1: {
      csidrivers: { kind: 'CSIDriver', namespaced: false },
      csinodes: { kind: 'CSINode', namespaced: false },
      storageclasses: { kind: 'StorageClass', namespaced: false, shortNames: ['sc'] },
      volumeattachments: { kind: 'VolumeAttachment', namespaced: false, sub: { status } },
    },
  },
  'admissionregistration.k8s.io': {
    v1: {
      mutatingwebhookconfigurations: { kind: 'MutatingWebhookConfiguration', namespaced: false, categories: ['api-extensions'] },
      validatingadmissionpolicies: { kind: 'ValidatingAdmissionPolicy', namespaced: false, categories: ['api-extensions'], sub: { status } },
      validatingadmissionpolicybindings: { kind: 'ValidatingAdmissionPolicyBinding', namespaced: false, categories: ['api-extensions'] },
      validatingwebhookconfigurations: { kind: 'ValidatingWebhookConfiguration', namespaced: false, categories: ['api-extensions'] },
    },
  },
  'apiextensions.k8s.io': {
    v1: {
      customresourcedefinitions: {
        kind: 'CustomResourceDefinition',
        namespaced: false,
        shortNames: ['crd', 'crds'],
        categories: ['api-extensions'],
        sub: { status },
      },
    },
  },
  'scheduling.k8s.io': {
    v1: { priorityclasses: { kind: 'PriorityClass', namespaced: false, shortNames: ['pc'] } },
  },
  'coordination.k8s.io': {
    v1: { leases: { kind: 'Lease', namespaced: true } },
  },
  'node.k8s.io': {
    v1: { runtimeclasses: { kind: 'RuntimeClass', namespaced: false } },
  },
  'discovery.k8s.io': {
    v1: { endpointslices: { kind: 'EndpointSlice', namespaced: true } },
  },
};

function freezeInfo(group: string, version: string, resource: string, d: Def): ResourceInfo {
  const subresources: Record<string, SubresourceInfo> = {};
  for (const name of Object.keys(d.sub ?? {}).sort()) {
    const s = d.sub![name]!;
    subresources[name] = Object.freeze({
      name,
      kind: s.kind ?? d.kind,
      group: s.group ?? group,
      version: s.version ?? version,
      verbs: Object.freeze([...s.verbs]),
    });
  }
  return Object.freeze({
    group,
    version,
    resource,
    singular: d.singular ?? d.kind.toLowerCase(),
    kind: d.kind,
    listKind: `${d.kind}List`,
    namespaced: d.namespaced,
    shortNames: Object.freeze([...(d.shortNames ?? [])]),
    categories: Object.freeze([...(d.categories ?? [])]),
    verbs: Object.freeze([...(d.verbs ?? ALL_VERBS)]),
    subresources: Object.freeze(subresources),
  });
}

/** Every built-in resource, in discovery order (group priority, preferred version first, resources by name). */
export const builtinResources: readonly ResourceInfo[] = Object.freeze(
  Object.entries(table).flatMap(([group, versions]) =>
    Object.entries(versions).flatMap(([version, resources]) =>
      Object.keys(resources)
        .sort()
        .map((r) => freezeInfo(group, version, r, resources[r]!)),
    ),
  ),
);

export interface GroupVersions {
  readonly group: string;
  /** Served versions, preferred first. */
  readonly versions: readonly string[];
}

const groupVersionList: readonly GroupVersions[] = Object.freeze(
  Object.entries(table).map(([group, versions]) => Object.freeze({ group, versions: Object.freeze(Object.keys(versions)) })),
);

/** Each group with its served versions, preferred first (autoscaling: v2, v1); core ('') first. */
export function groupVersions(): readonly GroupVersions[] {
  return groupVersionList;
}

/** The preferred version of a group, if served. */
export function preferredVersion(group: string): string | undefined {
  return groupVersionList.find((g) => g.group === group)?.versions[0];
}

const byGVR = new Map(builtinResources.map((r) => [`${r.group}/${r.version}/${r.resource}`, r]));
const byGVK = new Map(builtinResources.map((r) => [`${r.group}/${r.version}/${r.kind}`, r]));

/** A resource by group and plural name; without a version, the preferred version's entry. */
export function findResource(group: string, resource: string, version?: string): ResourceInfo | undefined {
  if (version !== undefined) return byGVR.get(`${group}/${version}/${resource}`);
  for (const v of groupVersionList.find((g) => g.group === group)?.versions ?? []) {
    const r = byGVR.get(`${group}/${v}/${resource}`);
    if (r) return r;
  }
  return undefined;
}

/** The top-level resource serving a kind in a group version. */
export function findKind(group: string, version: string, kind: string): ResourceInfo | undefined {
  return byGVK.get(`${group}/${version}/${kind}`);
}

/**
 * The resource with this short name, preferring the core group then group
 * priority order and each group's preferred version (`ev` is core events).
 */
export function findByShortName(name: string): ResourceInfo | undefined {
  return builtinResources.find((r) => r.shortNames.includes(name));
}

/** The resources of one group version, sorted by name. */
export function resourcesFor(group: string, version: string): readonly ResourceInfo[] {
  return builtinResources.filter((r) => r.group === group && r.version === version);
}

/** Resources in a category (`kubectl get all`), preferred versions only. */
export function resourcesInCategory(category: string): readonly ResourceInfo[] {
  return builtinResources.filter((r) => r.categories.includes(category) && preferredVersion(r.group) === r.version);
}

/**
 * Resolves what a kubectl user types: plural, singular, short name or kind
 * (case-insensitive), optionally qualified `name.group` or `name.version.group`.
 * Returns the preferred-version match.
 */
export function resolveResource(arg: string): ResourceInfo | undefined {
  const lower = arg.toLowerCase();
  const matches = (r: ResourceInfo, name: string): boolean =>
    r.resource === name || r.singular === name || r.shortNames.includes(name) || r.kind.toLowerCase() === name;
  const preferred = builtinResources.filter((r) => preferredVersion(r.group) === r.version);
  const direct = preferred.find((r) => matches(r, lower));
  if (direct) return direct;
  const dot = lower.indexOf('.');
  if (dot < 0) return undefined;
  const name = lower.slice(0, dot);
  const rest = lower.slice(dot + 1);
  // name.version.group
  const dot2 = rest.indexOf('.');
  if (dot2 > 0) {
    const version = rest.slice(0, dot2);
    const group = rest.slice(dot2 + 1);
    const r = builtinResources.find((x) => x.group === group && x.version === version && matches(x, name));
    if (r) return r;
  }
  return preferred.find((r) => r.group === rest && matches(r, name));
}
