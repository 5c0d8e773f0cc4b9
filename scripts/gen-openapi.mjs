#!/usr/bin/env node
/**
 * Generates the committed OpenAPI data under data/openapi/ from the Kubernetes
 * 1.20 OpenAPI v2 reference (../shared/reference/kubernetes-1.20-openapi-v2.json,
 * or the path given as the first argument):
 *
 *   data/openapi/swagger.json.gz     the v2 document brought up to Kubernetes 1.32 (its paths in swagger-paths.json.gz):
 *                                    GA versions of kinds that were beta in 1.20; every field
 *                                    and type of data/proto/schema.json.gz (openapi/from-proto.mjs)
 *                                    with kubernetes-types' descriptions; list/patch metadata of
 *                                    newer lists (openapi/list-metadata.mjs); paths of newer
 *                                    served resources (openapi/paths.mjs); `fieldValidation` params.
 *   data/openapi/patch-meta.json.gz  the compact strategic-merge / field-ownership table:
 *                                    { kinds: { "group/version/Kind": definition },
 *                                      defs: { definition: { field: FieldMeta } } }
 *
 * Re-runnable: the output depends only on the inputs and these scripts. VERBOSE=1 lists every
 * added field and definition, the fields removed and the refs moved to renamed types.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { gzipSync, gunzipSync } from 'node:zlib';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mergeProtoSchema, mergeKubernetesTypes } from './openapi/from-proto.mjs';
import { readKubernetesTypes } from './openapi/kubernetes-types-docs.mjs';
import { applyListMetadata } from './openapi/list-metadata.mjs';
import { addMissingPaths } from './openapi/paths.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const input = process.argv[2] ?? resolve(root, '../shared/reference/kubernetes-1.20-openapi-v2.json');
const outDir = join(root, 'data/openapi');
const doc = JSON.parse(readFileSync(input, 'utf8'));
const D = doc.definitions;

const ref = (name) => ({ $ref: `#/definitions/${name}` });
const str = (description) => ({ description, type: 'string' });
const int32 = (description) => ({ description, type: 'integer', format: 'int32' });
const int64 = (description) => ({ description, type: 'integer', format: 'int64' });
const bool = (description) => ({ description, type: 'boolean' });
const arr = (items, description, extra = {}) => ({ description, type: 'array', items, ...extra });
const strs = (description, extra = {}) => arr({ type: 'string' }, description, extra);
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

function addProps(def, props, required) {
  const d = D[def];
  if (!d) throw new Error(`no definition ${def}`);
  d.properties = { ...(d.properties ?? {}), ...props };
  if (required) d.required = [...new Set([...(d.required ?? []), ...required])];
}
function defineObject(name, description, properties, required, extra = {}) {
  D[name] = { description, type: 'object', properties, ...(required ? { required } : {}), ...extra };
}

/** Rewrites every `#/definitions/<from>X` ref inside `v` to `#/definitions/<to>X` when `<to>X` is defined. */
function rewriteRefs(v, from, to, names) {
  if (Array.isArray(v)) return v.map((x) => rewriteRefs(x, from, to, names));
  if (!v || typeof v !== 'object') return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === '$ref' && typeof x === 'string' && x.startsWith(`#/definitions/${from}`)) {
      const target = to + x.slice(`#/definitions/${from}`.length);
      out[k] = names.has(target) ? `#/definitions/${target}` : x;
    } else out[k] = rewriteRefs(x, from, to, names);
  }
  return out;
}

/**
 * Copies the definitions of `kinds`' package (`io.k8s.api.<pkg>.<from>.*`, only the names
 * in `defs`) to version `to`, and the paths of `resources` under /apis/<group>/<from>/.
 */
function promote({ pkg, group, from, to, defs, resources }) {
  const fromPrefix = `io.k8s.api.${pkg}.${from}.`;
  const toPrefix = `io.k8s.api.${pkg}.${to}.`;
  const names = new Set([...Object.keys(D), ...defs.map((n) => toPrefix + n)]);
  for (const n of defs) {
    const src = D[fromPrefix + n];
    if (!src) throw new Error(`no definition ${fromPrefix + n}`);
    const copy = rewriteRefs(structuredClone(src), fromPrefix, toPrefix, names);
    if (copy['x-kubernetes-group-version-kind']) copy['x-kubernetes-group-version-kind'] = copy['x-kubernetes-group-version-kind'].map((g) => ({ ...g, version: to }));
    D[toPrefix + n] = copy;
  }
  const Vfrom = from[0].toUpperCase() + from.slice(1);
  const Vto = to[0].toUpperCase() + to.slice(1);
  const tagFrom = `${group.split('.')[0]}_${from}`;
  const tagTo = `${group.split('.')[0]}_${to}`;
  for (const [p, item] of Object.entries(doc.paths)) {
    if (!p.startsWith(`/apis/${group}/${from}/`)) continue;
    const segs = p.split('/');
    if (!resources.some((r) => segs.includes(r))) continue;
    const np = p.replace(`/apis/${group}/${from}/`, `/apis/${group}/${to}/`);
    const copy = rewriteRefs(structuredClone(item), fromPrefix, toPrefix, names);
    for (const op of Object.values(copy)) {
      if (!op || typeof op !== 'object' || Array.isArray(op)) continue;
      if (typeof op.operationId === 'string') op.operationId = op.operationId.replace(Vfrom, Vto);
      if (Array.isArray(op.tags)) op.tags = op.tags.map((t) => (t === tagFrom ? tagTo : t));
      if (op['x-kubernetes-group-version-kind']) op['x-kubernetes-group-version-kind'] = { ...op['x-kubernetes-group-version-kind'], version: to };
    }
    doc.paths[np] = copy;
  }
  // The group's discovery path.
  const gvPath = `/apis/${group}/${from}/`;
  if (doc.paths[gvPath] && !doc.paths[`/apis/${group}/${to}/`]) {
    const copy = structuredClone(doc.paths[gvPath]);
    for (const op of Object.values(copy)) {
      if (op && typeof op === 'object' && typeof op.operationId === 'string') {
        op.operationId = op.operationId.replace(Vfrom, Vto);
        if (Array.isArray(op.tags)) op.tags = op.tags.map((t) => (t === tagFrom ? tagTo : t));
      }
    }
    doc.paths[`/apis/${group}/${to}/`] = copy;
  }
}

// --- GA versions of kinds that were beta in 1.20 -------------------------------------------
promote({ pkg: 'batch', group: 'batch', from: 'v1beta1', to: 'v1', defs: ['CronJob', 'CronJobList', 'CronJobSpec', 'CronJobStatus', 'JobTemplateSpec'], resources: ['cronjobs'] });
promote({ pkg: 'discovery', group: 'discovery.k8s.io', from: 'v1beta1', to: 'v1', defs: ['Endpoint', 'EndpointConditions', 'EndpointPort', 'EndpointSlice', 'EndpointSliceList'], resources: ['endpointslices'] });
promote({ pkg: 'policy', group: 'policy', from: 'v1beta1', to: 'v1', defs: ['PodDisruptionBudget', 'PodDisruptionBudgetList', 'PodDisruptionBudgetSpec', 'PodDisruptionBudgetStatus'], resources: ['poddisruptionbudgets'] });
promote({
  pkg: 'autoscaling', group: 'autoscaling', from: 'v2beta2', to: 'v2',
  defs: Object.keys(D).filter((n) => n.startsWith('io.k8s.api.autoscaling.v2beta2.')).map((n) => n.slice('io.k8s.api.autoscaling.v2beta2.'.length)),
  resources: ['horizontalpodautoscalers'],
});

// --- Newer fields --------------------------------------------------------------------------
addProps('io.k8s.api.batch.v1.CronJobSpec', {
  timeZone: str('The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process.'),
});
addProps('io.k8s.api.batch.v1.CronJobStatus', { lastSuccessfulTime: { ...ref('io.k8s.apimachinery.pkg.apis.meta.v1.Time'), description: 'Information when was the last time the job successfully completed.' } });

defineObject('io.k8s.api.discovery.v1.ForZone', 'ForZone provides information about which zones should consume this endpoint.', { name: str('name represents the name of the zone.') }, ['name']);
defineObject('io.k8s.api.discovery.v1.EndpointHints', 'EndpointHints provides hints describing how an endpoint should be consumed.', {
  forZones: arr(ref('io.k8s.api.discovery.v1.ForZone'), 'forZones indicates the zone(s) this endpoint should be consumed by to enable topology aware routing.', { 'x-kubernetes-list-type': 'atomic' }),
});
addProps('io.k8s.api.discovery.v1.Endpoint', {
  hints: { ...ref('io.k8s.api.discovery.v1.EndpointHints'), description: 'hints contains information associated with how an endpoint should be consumed.' },
  nodeName: str('nodeName represents the name of the Node hosting this endpoint.'),
  zone: str('zone is the name of the Zone this endpoint exists in.'),
  deprecatedTopology: { description: 'deprecatedTopology contains topology information part of the v1beta1 API.', type: 'object', additionalProperties: { type: 'string' } },
});
delete D['io.k8s.api.discovery.v1.Endpoint'].properties.topology;
addProps('io.k8s.api.discovery.v1.EndpointConditions', {
  serving: bool('serving is identical to ready except that it is set regardless of the terminating state of endpoints.'),
  terminating: bool('terminating indicates that this endpoint is terminating.'),
});

addProps('io.k8s.api.policy.v1.PodDisruptionBudgetSpec', {
  unhealthyPodEvictionPolicy: str('UnhealthyPodEvictionPolicy defines the criteria for when unhealthy pods should be considered for eviction. Valid policies are IfHealthyBudget and AlwaysAllow.'),
});

// Job
defineObject('io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement', 'PodFailurePolicyOnExitCodesRequirement describes the requirement for handling a failed pod based on its container exit codes.', {
  containerName: str('Restricts the check for exit codes to the container with the specified name.'),
  operator: str('Represents the relationship between the container exit code(s) and the specified values: In, NotIn.'),
  values: arr({ type: 'integer', format: 'int32' }, 'Specifies the set of values.', { 'x-kubernetes-list-type': 'set' }),
}, ['operator', 'values']);
defineObject('io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern', 'PodFailurePolicyOnPodConditionsPattern describes a pattern for matching an actual pod condition type.', {
  status: str('Specifies the required Pod condition status.'),
  type: str('Specifies the required Pod condition type.'),
}, ['type', 'status']);
defineObject('io.k8s.api.batch.v1.PodFailurePolicyRule', 'PodFailurePolicyRule describes how a pod failure is handled when the requirements are met.', {
  action: str('Specifies the action taken on a pod failure when the requirements are satisfied: FailJob, FailIndex, Ignore, Count.'),
  onExitCodes: ref('io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement'),
  onPodConditions: arr(ref('io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern'), 'Represents the requirement on the pod conditions.', { 'x-kubernetes-list-type': 'atomic' }),
}, ['action']);
defineObject('io.k8s.api.batch.v1.PodFailurePolicy', 'PodFailurePolicy describes how failed pods influence the backoffLimit.', {
  rules: arr(ref('io.k8s.api.batch.v1.PodFailurePolicyRule'), 'A list of pod failure policy rules. The rules are evaluated in order.', { 'x-kubernetes-list-type': 'atomic' }),
}, ['rules']);
defineObject('io.k8s.api.batch.v1.SuccessPolicyRule', 'SuccessPolicyRule describes rule for declaring a Job as succeeded.', {
  succeededCount: int32('succeededCount specifies the minimal required size of the actual set of the succeeded indexes for the Job.'),
  succeededIndexes: str('succeededIndexes specifies the set of indexes which need to be contained in the actual set of the succeeded indexes for the Job.'),
});
defineObject('io.k8s.api.batch.v1.SuccessPolicy', 'SuccessPolicy describes when a Job can be declared as succeeded based on the success of some indexes.', {
  rules: arr(ref('io.k8s.api.batch.v1.SuccessPolicyRule'), 'rules represents the list of alternative rules for the declaring the Jobs as successful before `.status.succeeded >= .spec.completions`.', { 'x-kubernetes-list-type': 'atomic' }),
}, ['rules']);
defineObject('io.k8s.api.batch.v1.UncountedTerminatedPods', 'UncountedTerminatedPods holds UIDs of Pods that have terminated but haven\'t been accounted in Job status counters.', {
  failed: strs('failed holds UIDs of failed Pods.', { 'x-kubernetes-list-type': 'set' }),
  succeeded: strs('succeeded holds UIDs of succeeded Pods.', { 'x-kubernetes-list-type': 'set' }),
});
addProps('io.k8s.api.batch.v1.JobSpec', {
  completionMode: str('completionMode specifies how Pod completions are tracked. It can be `NonIndexed` (default) or `Indexed`.'),
  suspend: bool('suspend specifies whether the Job controller should create Pods or not.'),
  podFailurePolicy: { ...ref('io.k8s.api.batch.v1.PodFailurePolicy'), description: 'Specifies the policy of handling failed pods.' },
  backoffLimitPerIndex: int32('Specifies the limit for the number of retries within an index before marking this index as failed.'),
  maxFailedIndexes: int32('Specifies the maximal number of failed indexes before marking the Job as failed, when backoffLimitPerIndex is set.'),
  podReplacementPolicy: str('podReplacementPolicy specifies when to create replacement Pods: TerminatingOrFailed or Failed.'),
  successPolicy: { ...ref('io.k8s.api.batch.v1.SuccessPolicy'), description: 'successPolicy specifies the policy when the Job can be declared as succeeded.' },
  managedBy: str('ManagedBy field indicates the controller that manages a Job.'),
});
addProps('io.k8s.api.batch.v1.JobStatus', {
  ready: int32('The number of active pods which have a Ready condition and are not terminating (without a deletionTimestamp).'),
  terminating: int32('The number of pods which are terminating (in phase Pending or Running and have a deletionTimestamp).'),
  uncountedTerminatedPods: { ...ref('io.k8s.api.batch.v1.UncountedTerminatedPods'), description: 'uncountedTerminatedPods holds the UIDs of Pods that have terminated but the job controller hasn\'t yet accounted for in the status counters.' },
  completedIndexes: str('completedIndexes holds the completed indexes when .spec.completionMode = "Indexed" in a text format.'),
  failedIndexes: str('FailedIndexes holds the failed indexes when spec.backoffLimitPerIndex is set.'),
});
D['io.k8s.api.batch.v1.JobStatus'].properties.conditions['x-kubernetes-list-type'] = 'atomic';

// StatefulSet, DaemonSet, Deployment
defineObject('io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy', 'StatefulSetPersistentVolumeClaimRetentionPolicy describes the policy used for PVCs created from the StatefulSet VolumeClaimTemplates.', {
  whenDeleted: str('WhenDeleted specifies what happens to PVCs created from StatefulSet VolumeClaimTemplates when the StatefulSet is deleted: Retain or Delete.'),
  whenScaled: str('WhenScaled specifies what happens to PVCs created from StatefulSet VolumeClaimTemplates when the StatefulSet is scaled down: Retain or Delete.'),
});
defineObject('io.k8s.api.apps.v1.StatefulSetOrdinals', 'StatefulSetOrdinals describes the policy used for replica ordinal assignment in this StatefulSet.', {
  start: int32('start is the number representing the first replica\'s index.'),
});
addProps('io.k8s.api.apps.v1.StatefulSetSpec', {
  minReadySeconds: int32('Minimum number of seconds for which a newly created pod should be ready without any of its container crashing for it to be considered available.'),
  persistentVolumeClaimRetentionPolicy: { ...ref('io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy'), description: 'persistentVolumeClaimRetentionPolicy describes the lifecycle of persistent volume claims created from volumeClaimTemplates.' },
  ordinals: { ...ref('io.k8s.api.apps.v1.StatefulSetOrdinals'), description: 'ordinals controls the numbering of replica indices in a StatefulSet.' },
});
addProps('io.k8s.api.apps.v1.StatefulSetStatus', { availableReplicas: int32('Total number of available pods (ready for at least minReadySeconds) targeted by this statefulset.') });
addProps('io.k8s.api.apps.v1.RollingUpdateStatefulSetStrategy', { maxUnavailable: { ...ref(INT_OR_STRING), description: 'The maximum number of pods that can be unavailable during the update.' } });
addProps('io.k8s.api.apps.v1.RollingUpdateDaemonSet', { maxSurge: { ...ref(INT_OR_STRING), description: 'The maximum number of nodes with an existing available DaemonSet pod that can have an updated DaemonSet pod during an update.' } });

// Pod
defineObject('io.k8s.api.core.v1.PodSchedulingGate', 'PodSchedulingGate is associated to a Pod to guard its scheduling.', { name: str('Name of the scheduling gate.') }, ['name']);
defineObject('io.k8s.api.core.v1.HostIP', 'HostIP represents a single IP address allocated to the host.', { ip: str('IP is the IP address assigned to the host') }, ['ip']);
defineObject('io.k8s.api.core.v1.PodOS', 'PodOS defines the OS parameters of a pod.', { name: str('Name is the name of the operating system: linux or windows.') }, ['name']);
defineObject('io.k8s.api.core.v1.ContainerResizePolicy', 'ContainerResizePolicy represents resource resize policy for the container.', {
  resourceName: str('Name of the resource to which this resource resize policy applies: cpu, memory.'),
  restartPolicy: str('Restart policy to apply when specified resource is resized: NotRequired or RestartContainer.'),
}, ['resourceName', 'restartPolicy']);
addProps('io.k8s.api.core.v1.PodSpec', {
  schedulingGates: arr(ref('io.k8s.api.core.v1.PodSchedulingGate'), 'SchedulingGates is an opaque list of values that if specified will block scheduling the pod.', { 'x-kubernetes-list-map-keys': ['name'], 'x-kubernetes-list-type': 'map', 'x-kubernetes-patch-merge-key': 'name', 'x-kubernetes-patch-strategy': 'merge' }),
  os: { ...ref('io.k8s.api.core.v1.PodOS'), description: 'Specifies the OS of the containers in the pod.' },
  hostUsers: bool('Use the host\'s user namespace.'),
});
addProps('io.k8s.api.core.v1.PodStatus', {
  hostIPs: arr(ref('io.k8s.api.core.v1.HostIP'), 'hostIPs holds the IP addresses allocated to the host.', { 'x-kubernetes-list-type': 'atomic', 'x-kubernetes-patch-merge-key': 'ip', 'x-kubernetes-patch-strategy': 'merge' }),
  resize: str('Status of resources resize desired for pod\'s containers.'),
});
for (const c of ['io.k8s.api.core.v1.Container', 'io.k8s.api.core.v1.EphemeralContainer']) {
  addProps(c, {
    resizePolicy: arr(ref('io.k8s.api.core.v1.ContainerResizePolicy'), 'Resources resize policy for the container.', { 'x-kubernetes-list-type': 'atomic' }),
    restartPolicy: str('RestartPolicy defines the restart behavior of individual containers in a pod. This field may only be set for init containers, and the only allowed value is "Always".'),
  });
}
addProps('io.k8s.api.core.v1.ContainerStatus', {
  allocatedResources: { description: 'AllocatedResources represents the compute resources allocated for this container by the node.', type: 'object', additionalProperties: ref('io.k8s.apimachinery.pkg.api.resource.Quantity') },
  resources: { ...ref('io.k8s.api.core.v1.ResourceRequirements'), description: 'Resources represents the compute resource requests and limits that have been successfully enacted on the running container after it has been started or has been successfully resized.' },
});

// Service
addProps('io.k8s.api.core.v1.ServiceSpec', {
  internalTrafficPolicy: str('InternalTrafficPolicy describes how nodes distribute service traffic they receive on the ClusterIP: Cluster or Local.'),
  loadBalancerClass: str('loadBalancerClass is the class of the load balancer implementation this Service belongs to.'),
  trafficDistribution: str('TrafficDistribution offers a way to express preferences for how traffic is distributed to Service endpoints.'),
});
delete D['io.k8s.api.core.v1.ServiceSpec'].properties.topologyKeys;

// Events: the Event series and the `reportingController` fields are already in events.k8s.io/v1.

// --- Every field of the Kubernetes 1.32 types ----------------------------------------------
// data/proto/schema.json.gz (scripts/gen-proto-schema.mjs) is complete for the built-in types;
// kubernetes-types supplies descriptions and the apiextensions.k8s.io types (no protobuf there).
const proto = JSON.parse(gunzipSync(readFileSync(join(root, 'data/proto/schema.json.gz'))).toString('utf8'));
const tsDocs = readKubernetesTypes(join(root, 'node_modules/kubernetes-types'));
const groups = new Map();
for (const [n, def] of Object.entries(D)) {
  const m = /^io\.k8s\.api\.([a-z0-9]+)\./.exec(n);
  for (const g of def['x-kubernetes-group-version-kind'] ?? []) if (m && !groups.has(m[1])) groups.set(m[1], g.group);
}
const newGroups = { resource: 'resource.k8s.io', storagemigration: 'storagemigration.k8s.io' };
const merged = mergeProtoSchema({ doc, proto, docs: tsDocs, groupOf: (pkg) => groups.get(pkg) ?? newGroups[pkg] });
const crdFields = mergeKubernetesTypes({ doc, docs: tsDocs, prefix: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.' });
// kubernetes-types leaves out the `x-kubernetes-*` schema fields; CEL rules (GA in 1.29) by hand.
{
  const CRD = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.';
  const rule = tsDocs.get(`${CRD}ValidationRule`);
  const d = (f) => rule?.fields.get(f)?.description ?? '';
  defineObject(`${CRD}ValidationRule`, rule?.description ?? 'ValidationRule describes a validation rule written in the CEL expression language.', {
    fieldPath: str(d('fieldPath')), message: str(d('message')), messageExpression: str(d('messageExpression')),
    optionalOldSelf: bool(d('optionalOldSelf')), reason: str(d('reason')), rule: str(d('rule')),
  }, ['rule']);
  addProps(`${CRD}JSONSchemaProps`, {
    'x-kubernetes-validations': arr(ref(`${CRD}ValidationRule`), 'x-kubernetes-validations describes a list of validation rules written in the CEL expression language.', {
      'x-kubernetes-list-map-keys': ['rule'], 'x-kubernetes-list-type': 'map', 'x-kubernetes-patch-merge-key': 'rule', 'x-kubernetes-patch-strategy': 'merge',
    }),
  });
}
console.log(`from ${proto.source}: ${merged.addedFields.length} fields, ${merged.addedDefinitions.length} definitions; apiextensions: ${crdFields.length}`);
if (process.env.VERBOSE) console.log([...merged.addedFields, ...merged.addedDefinitions, ...crdFields, '-- removed (in the 1.20 document only):', ...merged.unknownInProto, '-- retargeted:', ...merged.retargeted, '-- missing messages:', ...merged.missingMessages].join('\n'));
applyListMetadata(D);
addMissingPaths(doc);

// --- fieldValidation on writes (kubectl checks it to decide on server-side validation) -----
const fieldValidation = {
  description: 'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict',
  in: 'query', name: 'fieldValidation', type: 'string', uniqueItems: true,
};
for (const item of Object.values(doc.paths)) {
  // Create-only resources (tokenreviews, selfsubjectreviews) carry their query parameters on the path.
  if (Array.isArray(item.parameters) && item.parameters.some((p) => p.name === 'fieldManager') && !item.parameters.some((p) => p.name === 'fieldValidation')) {
    item.parameters.push(fieldValidation);
  }
  for (const m of ['post', 'put', 'patch']) {
    const op = item[m];
    if (op && Array.isArray(op.parameters) && !op.parameters.some((p) => p.name === 'fieldValidation') && op.parameters.some((p) => p.name === 'fieldManager')) {
      op.parameters.push(fieldValidation);
    }
  }
}
doc.info = { title: 'Kubernetes', version: 'v1.32.0' };

// --- Patch metadata ------------------------------------------------------------------------
const defName = (r) => (typeof r === 'string' && r.startsWith('#/definitions/') ? r.slice('#/definitions/'.length) : undefined);
/** Only object definitions matter for merging; Quantity, IntOrString, Time are scalars. */
const isObjectDef = (n) => !!n && !!D[n] && (D[n].type === 'object' || !!D[n].properties) && !!D[n].properties;
const defs = {};
for (const [n, def] of Object.entries(D)) {
  if (!def.properties) continue;
  const fields = {};
  for (const [f, p] of Object.entries(def.properties)) {
    const m = {};
    const r = defName(p.$ref);
    if (isObjectDef(r)) m.ref = r;
    if (p.type === 'array') {
      const ir = defName(p.items?.$ref);
      if (isObjectDef(ir)) m.items = ir;
      else if (!ir && p.items?.type) m.items = p.items.type; // primitive list
      else if (ir) m.items = 'scalar';
    }
    if (p.type === 'object' && p.additionalProperties) {
      const vr = defName(p.additionalProperties.$ref);
      m.map = isObjectDef(vr) ? vr : 'scalar';
    }
    if (p['x-kubernetes-patch-merge-key']) m.mergeKey = p['x-kubernetes-patch-merge-key'];
    if (p['x-kubernetes-patch-strategy']) m.strategy = p['x-kubernetes-patch-strategy'];
    if (p['x-kubernetes-list-type']) m.listType = p['x-kubernetes-list-type'];
    if (p['x-kubernetes-list-map-keys']) m.mapKeys = p['x-kubernetes-list-map-keys'];
    if (Object.keys(m).length) fields[f] = m;
  }
  defs[n] = fields;
}
const kinds = {};
for (const [n, def] of Object.entries(D)) {
  for (const g of def['x-kubernetes-group-version-kind'] ?? []) {
    const key = `${g.group}/${g.version}/${g.kind}`;
    // Prefer io.k8s.api definitions over the meta ones registered for many GVs (DeleteOptions, WatchEvent).
    if (!kinds[key] || n.startsWith('io.k8s.api.')) kinds[key] = n;
  }
}

mkdirSync(outDir, { recursive: true });
const write = (name, value) => {
  const buf = gzipSync(Buffer.from(JSON.stringify(value)), { level: 9 });
  writeFileSync(join(outDir, name), buf);
  console.log(`wrote data/openapi/${name} (${buf.length} bytes)`);
};
// The paths in a file of their own, read only to serve /openapi (openapi-data.ts builtinSwagger); `paths: null` keeps their place.
write('swagger.json.gz', { ...doc, paths: null });
write('swagger-paths.json.gz', doc.paths);
write('patch-meta.json.gz', { kinds, defs });
