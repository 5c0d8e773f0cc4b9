import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { builtinResources } from '../../api/registry.js';
import { protoSchema, FieldFlag } from '../protobuf/schema.js';
import { builtinSwagger, patchMetaTable } from './openapi-data.js';
import { convertGroupVersion, groupVersionsOf } from './openapi-v3.js';

type Schema = Record<string, any>;
const defs = () => builtinSwagger().definitions as Record<string, Schema>;
const prop = (def: string, field: string): Schema | undefined => defs()[def]?.properties?.[field];
const refOf = (s: Schema | undefined): string | undefined => (s?.$ref ?? s?.items?.$ref ?? s?.additionalProperties?.$ref)?.replace('#/definitions/', '');

describe('the OpenAPI document against the Kubernetes 1.32 types', () => {
  it('knows the fields added to the built-in kinds after 1.20, with their types', () => {
    const cases: [string, string, string][] = [
      ['io.k8s.api.policy.v1.PodDisruptionBudgetStatus', 'conditions', 'io.k8s.apimachinery.pkg.apis.meta.v1.Condition'],
      ['io.k8s.api.core.v1.PodSpec', 'os', 'io.k8s.api.core.v1.PodOS'],
      ['io.k8s.api.core.v1.PodSpec', 'hostUsers', 'boolean'],
      ['io.k8s.api.core.v1.PodSpec', 'schedulingGates', 'io.k8s.api.core.v1.PodSchedulingGate'],
      ['io.k8s.api.core.v1.PodSpec', 'resourceClaims', 'io.k8s.api.core.v1.PodResourceClaim'],
      ['io.k8s.api.core.v1.PodSpec', 'resources', 'io.k8s.api.core.v1.ResourceRequirements'],
      ['io.k8s.api.core.v1.Container', 'resizePolicy', 'io.k8s.api.core.v1.ContainerResizePolicy'],
      ['io.k8s.api.core.v1.Container', 'restartPolicy', 'string'],
      ['io.k8s.api.core.v1.EphemeralContainer', 'resizePolicy', 'io.k8s.api.core.v1.ContainerResizePolicy'],
      ['io.k8s.api.core.v1.Probe', 'grpc', 'io.k8s.api.core.v1.GRPCAction'],
      ['io.k8s.api.core.v1.LifecycleHandler', 'sleep', 'io.k8s.api.core.v1.SleepAction'],
      ['io.k8s.api.core.v1.PodSecurityContext', 'appArmorProfile', 'io.k8s.api.core.v1.AppArmorProfile'],
      ['io.k8s.api.core.v1.TopologySpreadConstraint', 'minDomains', 'integer'],
      ['io.k8s.api.core.v1.VolumeMount', 'recursiveReadOnly', 'string'],
      ['io.k8s.api.core.v1.Volume', 'image', 'io.k8s.api.core.v1.ImageVolumeSource'],
      ['io.k8s.api.core.v1.PodStatus', 'resourceClaimStatuses', 'io.k8s.api.core.v1.PodResourceClaimStatus'],
      ['io.k8s.api.core.v1.ContainerStatus', 'allocatedResourcesStatus', 'io.k8s.api.core.v1.ResourceStatus'],
      ['io.k8s.api.batch.v1.JobSpec', 'podFailurePolicy', 'io.k8s.api.batch.v1.PodFailurePolicy'],
      ['io.k8s.api.batch.v1.JobSpec', 'successPolicy', 'io.k8s.api.batch.v1.SuccessPolicy'],
      ['io.k8s.api.batch.v1.JobSpec', 'managedBy', 'string'],
      ['io.k8s.api.apps.v1.StatefulSetSpec', 'ordinals', 'io.k8s.api.apps.v1.StatefulSetOrdinals'],
      ['io.k8s.api.core.v1.ServiceSpec', 'trafficDistribution', 'string'],
      ['io.k8s.api.core.v1.LoadBalancerIngress', 'ipMode', 'string'],
      ['io.k8s.api.discovery.v1.Endpoint', 'hints', 'io.k8s.api.discovery.v1.EndpointHints'],
      ['io.k8s.api.core.v1.NodeStatus', 'features', 'io.k8s.api.core.v1.NodeFeatures'],
      ['io.k8s.api.core.v1.NodeStatus', 'runtimeHandlers', 'io.k8s.api.core.v1.NodeRuntimeHandler'],
      ['io.k8s.api.core.v1.PersistentVolumeClaimSpec', 'volumeAttributesClassName', 'string'],
      ['io.k8s.api.networking.v1.NetworkPolicyPort', 'endPort', 'integer'],
      ['io.k8s.api.coordination.v1.LeaseSpec', 'strategy', 'string'],
      ['io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry', 'subresource', 'string'],
    ];
    for (const [def, field, type] of cases) {
      const p = prop(def, field);
      assert.ok(p, `${def}.${field} is declared`);
      if (type.includes('.')) assert.equal(refOf(p), type, `${def}.${field} refers to ${type}`);
      else assert.equal(p.type === 'array' ? p.items.type : p.type, type, `${def}.${field} is ${type}`);
      assert.ok(typeof p.description === 'string' && p.description.length > 0, `${def}.${field} has a description`);
    }
  });

  it('declares every JSON field of every protobuf message that has a definition', () => {
    const { messages } = protoSchema();
    const missing: string[] = [];
    let checked = 0;
    const jsonFields = (m: string, out: string[] = []): string[] => {
      for (const [, name, type, flags] of messages[m] ?? []) {
        if (flags & FieldFlag.inline) jsonFields(type as string, out);
        else if (name !== '-') out.push(name);
      }
      return out;
    };
    for (const [name, def] of Object.entries(defs())) {
      const m = name.startsWith('io.k8s.') ? `k8s.io.${name.slice('io.k8s.'.length)}` : name;
      if (!messages[m] || !def.properties) continue;
      for (const f of jsonFields(m)) {
        checked++;
        if (!def.properties[f]) missing.push(`${name}.${f}`);
      }
    }
    assert.ok(checked > 2500, `checked ${checked} fields`);
    assert.deepEqual(missing, []);
  });

  it('drops the fields the current types no longer have and follows renamed types', () => {
    assert.equal(prop('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'clusterName'), undefined);
    assert.equal(refOf(prop('io.k8s.api.core.v1.Lifecycle', 'preStop')), 'io.k8s.api.core.v1.LifecycleHandler');
    assert.equal(refOf(prop('io.k8s.api.core.v1.PersistentVolumeClaimSpec', 'resources')), 'io.k8s.api.core.v1.VolumeResourceRequirements');
    assert.equal(prop('io.k8s.api.core.v1.VolumeResourceRequirements', 'claims'), undefined, 'volume requirements have no claims');
  });

  it('defines the kinds added since 1.20 with their group-version-kind and type meta', () => {
    const kinds: [string, { group: string; version: string; kind: string }][] = [
      ['io.k8s.api.resource.v1beta1.ResourceClaim', { group: 'resource.k8s.io', kind: 'ResourceClaim', version: 'v1beta1' }],
      ['io.k8s.api.resource.v1beta1.DeviceClassList', { group: 'resource.k8s.io', kind: 'DeviceClassList', version: 'v1beta1' }],
      ['io.k8s.api.networking.v1beta1.IPAddress', { group: 'networking.k8s.io', kind: 'IPAddress', version: 'v1beta1' }],
      ['io.k8s.api.authentication.v1.SelfSubjectReview', { group: 'authentication.k8s.io', kind: 'SelfSubjectReview', version: 'v1' }],
      ['io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy', { group: 'admissionregistration.k8s.io', kind: 'ValidatingAdmissionPolicy', version: 'v1' }],
      ['io.k8s.api.flowcontrol.v1.FlowSchema', { group: 'flowcontrol.apiserver.k8s.io', kind: 'FlowSchema', version: 'v1' }],
      ['io.k8s.api.policy.v1.Eviction', { group: 'policy', kind: 'Eviction', version: 'v1' }],
    ];
    for (const [name, gvk] of kinds) {
      const d = defs()[name];
      assert.ok(d, name);
      assert.deepEqual(d['x-kubernetes-group-version-kind'], [gvk]);
      assert.equal(d.properties.apiVersion.type, 'string');
      assert.equal(d.properties.kind.type, 'string');
    }
    assert.equal(refOf(prop('io.k8s.api.resource.v1beta1.ResourceClaim', 'spec')), 'io.k8s.api.resource.v1beta1.ResourceClaimSpec');
    // Embedded types are not kinds.
    assert.equal(defs()['io.k8s.api.core.v1.PodResourceClaim']!['x-kubernetes-group-version-kind'], undefined);
    assert.equal(defs()['io.k8s.api.core.v1.VolumeSource'], undefined, 'inline-only types have no definition');
  });

  it('maps the protobuf types to OpenAPI types (time, quantity, bytes, maps, int64)', () => {
    assert.equal(refOf(prop('io.k8s.api.core.v1.PersistentVolumeStatus', 'lastPhaseTransitionTime')), 'io.k8s.apimachinery.pkg.apis.meta.v1.Time');
    const alloc = prop('io.k8s.api.core.v1.PersistentVolumeClaimStatus', 'allocatedResources')!;
    assert.equal(alloc.type, 'object');
    assert.equal(alloc.additionalProperties.$ref, '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity');
    assert.deepEqual([prop('io.k8s.api.core.v1.LinuxContainerUser', 'uid')!.type, prop('io.k8s.api.core.v1.LinuxContainerUser', 'uid')!.format], ['integer', 'int64']);
    const pem = prop('io.k8s.api.certificates.v1alpha1.ClusterTrustBundleSpec', 'trustBundle')!;
    assert.equal(pem.type, 'string');
    const raw = prop('io.k8s.api.resource.v1beta1.OpaqueDeviceConfiguration', 'parameters')!;
    assert.equal(raw.$ref, '#/definitions/io.k8s.apimachinery.pkg.runtime.RawExtension');
    const duration = prop('io.k8s.api.coordination.v1alpha2.LeaseCandidateSpec', 'renewTime');
    assert.equal(refOf(duration), 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime');
    const extra = prop('io.k8s.api.authentication.v1.UserInfo', 'extra')!;
    assert.deepEqual(extra.additionalProperties, { type: 'array', items: { type: 'string' } });
  });

  it('carries upstream patch metadata for the newer list fields into the patch-meta table', () => {
    const meta = patchMetaTable();
    assert.deepEqual(meta.defs['io.k8s.api.policy.v1.PodDisruptionBudgetStatus']!.conditions, {
      items: 'io.k8s.apimachinery.pkg.apis.meta.v1.Condition', mergeKey: 'type', strategy: 'merge', listType: 'map', mapKeys: ['type'],
    });
    assert.deepEqual(meta.defs['io.k8s.api.core.v1.PodSpec']!.resourceClaims, {
      items: 'io.k8s.api.core.v1.PodResourceClaim', mergeKey: 'name', strategy: 'merge,retainKeys', listType: 'map', mapKeys: ['name'],
    });
    assert.equal(meta.defs['io.k8s.api.core.v1.PodSpec']!.schedulingGates!.mergeKey, 'name');
    assert.equal(meta.defs['io.k8s.api.core.v1.ContainerStatus']!.allocatedResourcesStatus!.mergeKey, 'name');
    // Existing upstream metadata is kept.
    assert.equal(meta.defs['io.k8s.api.core.v1.PodSpec']!.containers!.mergeKey, 'name');
    assert.equal(meta.kinds['resource.k8s.io/v1beta1/ResourceClaim'], 'io.k8s.api.resource.v1beta1.ResourceClaim');
  });

  it('has every $ref resolve and a path and a definition for every served resource', () => {
    const doc = builtinSwagger();
    const dangling = new Set<string>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref' && typeof x === 'string' && !doc.definitions[x.replace('#/definitions/', '')]) dangling.add(x);
          else walk(x);
        }
      }
    };
    walk(doc);
    assert.deepEqual([...dangling], []);
    const problems: string[] = [];
    for (const r of builtinResources) {
      const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
      const coll = r.namespaced ? `${base}/namespaces/{namespace}/${r.resource}` : `${base}/${r.resource}`;
      if (!doc.paths[coll] && !doc.paths[`${coll}/{name}`]) problems.push(`${coll}`);
      for (const s of Object.keys(r.subresources)) if (!doc.paths[`${coll}/{name}/${s}`]) problems.push(`${coll}/{name}/${s}`);
      const hasKind = Object.values(doc.definitions).some((d) =>
        ((d['x-kubernetes-group-version-kind'] ?? []) as { group: string; version: string; kind: string }[]).some((g) => g.group === r.group && g.version === r.version && g.kind === r.kind));
      if (!hasKind) problems.push(`definition of ${r.group}/${r.version} ${r.kind}`);
    }
    assert.deepEqual(problems, []);
  });

  it('converts every group-version to an OpenAPI v3 document whose refs all resolve', () => {
    const doc = builtinSwagger();
    const gvs = groupVersionsOf(doc);
    assert.ok(gvs.includes('apis/authentication.k8s.io/v1'));
    for (const gv of gvs) {
      const v3 = convertGroupVersion(doc, gv) as any;
      const schemas = v3.components?.schemas ?? {};
      const walk = (v: unknown): void => {
        if (Array.isArray(v)) v.forEach(walk);
        else if (v && typeof v === 'object') {
          for (const [k, x] of Object.entries(v)) {
            // JSONSchemaProps has a property named `$ref`: only string values are references.
            if (k === '$ref' && typeof x === 'string') assert.ok(schemas[x.replace('#/components/schemas/', '')], `${gv}: ${x}`);
            else walk(x);
          }
        }
      };
      walk(v3);
    }
    const policy = convertGroupVersion(doc, 'apis/policy/v1') as any;
    assert.ok(policy.components.schemas['io.k8s.api.policy.v1.PodDisruptionBudgetStatus'].properties.conditions);
    const core = convertGroupVersion(doc, 'api/v1') as any;
    assert.ok(core.paths['/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers'].patch);
  });
});
