/**
 * The remaining built-in groups: autoscaling, policy, coordination.k8s.io,
 * discovery.k8s.io, events.k8s.io, rbac, storage, networking, scheduling,
 * certificates, node and apiextensions. Each follows its upstream
 * defaults.go / strategy.go for what controllers and users rely on.
 */
import type { KubeObject } from '../../api/types.js';
import type { Strategy } from './strategy.js';
import { type FieldError, invalid, required, forbidden, isQualifiedName } from '../../api/validation.js';
import { newStrategy, child, dflt, dfltZero, items, objAt } from './generic.js';
import { defaultPVSpecTypes } from './core.js';
import { nonNegative, oneOf, immutable, deepEqual, validateLabelSelector } from './meta-validation.js';
import { deepCopy } from '../../util/json/deep-copy.js';

type Obj = Record<string, unknown>;

const specOf = (o: KubeObject) => (o.spec ?? {}) as Obj;

// ---------------------------------------------------------------------------
// autoscaling: HorizontalPodAutoscaler (v2 storage shape)
// ---------------------------------------------------------------------------

/**
 * GenerateHPAScaleUpRules / GenerateHPAScaleDownRules: the given fields over
 * the defaults. Scale-down keeps no stabilization window (the controller's
 * --horizontal-pod-autoscaler-downscale-stabilization applies).
 */
function defaultScalingRules(rules: Obj, up: boolean): void {
  if (up) dflt(rules, 'stabilizationWindowSeconds', 0);
  dflt(rules, 'selectPolicy', 'Max');
  if (rules.policies === undefined || rules.policies === null) {
    rules.policies = up
      ? [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ]
      : [{ type: 'Percent', value: 100, periodSeconds: 15 }];
  }
}

function hpaStrategy(): Strategy {
  return newStrategy({
    group: 'autoscaling',
    kind: 'HorizontalPodAutoscaler',
    resource: 'horizontalpodautoscalers',
    namespaced: true,
    hasStatus: true,
    defaults(obj) {
      const s = child(obj, 'spec');
      dflt(s, 'minReplicas', 1);
      // autoscaling/v1 defaults minReplicas only (its targetCPUUtilizationPercentage stays unset).
      if (String(obj.apiVersion ?? '') === 'autoscaling/v1') return;
      if (!Array.isArray(s.metrics) || s.metrics.length === 0) {
        s.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
      }
      if (s.behavior && typeof s.behavior === 'object') {
        defaultScalingRules(child(s.behavior, 'scaleUp'), true);
        defaultScalingRules(child(s.behavior, 'scaleDown'), false);
      }
    },
    validate(obj) {
      const s = specOf(obj);
      const ref = (s.scaleTargetRef ?? {}) as Obj;
      const errs: FieldError[] = [];
      if (!ref.kind) errs.push(required('spec.scaleTargetRef.kind', ''));
      if (!ref.name) errs.push(required('spec.scaleTargetRef.name', ''));
      const min = s.minReplicas as number | undefined;
      const max = s.maxReplicas as number | undefined;
      if (min !== undefined && min < 1) errs.push(invalid('spec.minReplicas', min, 'must be greater than or equal to 1'));
      if (max === undefined || max < 1) errs.push(invalid('spec.maxReplicas', max ?? 0, 'must be greater than 0'));
      else if (min !== undefined && max < min) errs.push(invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
      return errs;
    },
  });
}

// ---------------------------------------------------------------------------
// policy: PodDisruptionBudget
// ---------------------------------------------------------------------------

function validateIntOrPercent(v: unknown, path: string): FieldError[] {
  if (v === undefined) return [];
  if (typeof v === 'number') return nonNegative(v, path);
  const m = /^(\d+)%$/.exec(String(v));
  if (!m) return [invalid(path, v, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")];
  return Number(m[1]) > 100 ? [invalid(path, v, 'must not be greater than 100%')] : [];
}

function pdbStrategy(): Strategy {
  return newStrategy({
    group: 'policy',
    kind: 'PodDisruptionBudget',
    resource: 'poddisruptionbudgets',
    namespaced: true,
    hasStatus: true,
    tracksGeneration: true,
    validate(obj) {
      const s = specOf(obj);
      const errs: FieldError[] = [];
      if (s.minAvailable !== undefined && s.maxUnavailable !== undefined) {
        errs.push(invalid('spec', s, 'minAvailable and maxUnavailable cannot be both set'));
      }
      errs.push(...validateIntOrPercent(s.minAvailable, 'spec.minAvailable'));
      errs.push(...validateIntOrPercent(s.maxUnavailable, 'spec.maxUnavailable'));
      errs.push(...validateLabelSelector(s.selector as never, 'spec.selector'));
      errs.push(...oneOf(s.unhealthyPodEvictionPolicy as string | undefined, ['IfHealthyBudget', 'AlwaysAllow'], 'spec.unhealthyPodEvictionPolicy', false));
      return errs;
    },
  });
}

// ---------------------------------------------------------------------------
// coordination.k8s.io, discovery.k8s.io, events.k8s.io
// ---------------------------------------------------------------------------

function leaseStrategy(): Strategy {
  return newStrategy({
    group: 'coordination.k8s.io',
    kind: 'Lease',
    resource: 'leases',
    namespaced: true,
    validate(obj) {
      const s = specOf(obj);
      const errs: FieldError[] = [];
      const d = s.leaseDurationSeconds as number | undefined;
      if (d !== undefined && d <= 0) errs.push(invalid('spec.leaseDurationSeconds', d, 'must be greater than 0'));
      errs.push(...nonNegative(s.leaseTransitions as number | undefined, 'spec.leaseTransitions'));
      return errs;
    },
  });
}

function endpointSliceStrategy(): Strategy {
  return newStrategy({
    group: 'discovery.k8s.io',
    kind: 'EndpointSlice',
    resource: 'endpointslices',
    namespaced: true,
    tracksGeneration: true,
    generationSource: (o) => [o.addressType, o.endpoints, o.ports],
    defaults(obj) {
      for (const p of (obj.ports ?? []) as Obj[]) {
        dflt(p, 'name', '');
        dflt(p, 'protocol', 'TCP');
      }
    },
    validate(obj) {
      const errs = oneOf(obj.addressType as string | undefined, ['IPv4', 'IPv6', 'FQDN'], 'addressType');
      for (const [i, e] of ((obj.endpoints ?? []) as Obj[]).entries()) {
        if (!Array.isArray(e.addresses) || e.addresses.length === 0) errs.push(required(`endpoints[${i}].addresses`, 'must contain at least 1 address'));
      }
      return errs;
    },
    validateUpdate: (n, o) => immutable(n.addressType, o.addressType, 'addressType'),
  });
}

function eventsV1Strategy(): Strategy {
  const reg = (o: KubeObject) => (o.involvedObject ?? {}) as Record<string, string | undefined>;
  return newStrategy({
    group: 'events.k8s.io',
    kind: 'Event',
    resource: 'events',
    namespaced: true,
    allowCreateOnUpdate: true,
    validate(obj) {
      const errs: FieldError[] = [];
      if (!obj.eventTime) errs.push(required('eventTime', ''));
      if (!obj.reportingController) errs.push(required('reportingController', ''));
      else for (const m of isQualifiedName(String(obj.reportingController))) errs.push(invalid('reportingController', obj.reportingController, m));
      if (!obj.reportingInstance) errs.push(required('reportingInstance', ''));
      if (!obj.action) errs.push(required('action', ''));
      errs.push(...oneOf(obj.type as string | undefined, ['Normal', 'Warning'], 'type'));
      return errs;
    },
    // Selectors are matched against stored objects, which are core Events (registry/conversions.ts):
    // upstream maps these labels onto the core Event's field set (AddFieldLabelConversionsForEvent).
    fields: {
      'regarding.kind': (o) => reg(o).kind ?? '',
      'regarding.namespace': (o) => reg(o).namespace ?? '',
      'regarding.name': (o) => reg(o).name ?? '',
      'regarding.uid': (o) => reg(o).uid ?? '',
      'regarding.apiVersion': (o) => reg(o).apiVersion ?? '',
      'regarding.resourceVersion': (o) => reg(o).resourceVersion ?? '',
      'regarding.fieldPath': (o) => reg(o).fieldPath ?? '',
      reason: (o) => (o.reason as string | undefined) ?? '',
      reportingController: (o) => (o.reportingComponent as string | undefined) ?? '',
      type: (o) => (o.type as string | undefined) ?? '',
    },
  });
}

// ---------------------------------------------------------------------------
// rbac.authorization.k8s.io
// ---------------------------------------------------------------------------

const rbacGroup = 'rbac.authorization.k8s.io';

function validateRules(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  for (const [i, r] of ((obj.rules ?? []) as Obj[]).entries()) {
    if (!Array.isArray(r.verbs) || r.verbs.length === 0) errs.push(required(`rules[${i}].verbs`, 'verbs must contain at least one value'));
    const urls = Array.isArray(r.nonResourceURLs) && r.nonResourceURLs.length > 0;
    if (!urls && (!Array.isArray(r.apiGroups) || r.apiGroups.length === 0)) {
      errs.push(required(`rules[${i}].apiGroups`, 'resource rules must supply at least one api group'));
    }
  }
  return errs;
}

/** SetDefaults_RoleBinding / SetDefaults_ClusterRoleBinding and SetDefaults_Subject. */
function defaultBinding(obj: KubeObject): void {
  dfltZero(child(obj, 'roleRef'), 'apiGroup', rbacGroup);
  for (const s of items(obj, 'subjects')) {
    if (s.apiGroup !== undefined && s.apiGroup !== null && s.apiGroup !== '') continue;
    if (s.kind === 'ServiceAccount') s.apiGroup = '';
    else if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = rbacGroup;
  }
}

function validateBinding(obj: KubeObject, namespaced: boolean): FieldError[] {
  const ref = (obj.roleRef ?? {}) as Obj;
  const errs: FieldError[] = [];
  if (ref.apiGroup !== rbacGroup) errs.push(...oneOf(ref.apiGroup as string | undefined, [rbacGroup], 'roleRef.apiGroup'));
  errs.push(...oneOf(ref.kind as string | undefined, namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'], 'roleRef.kind'));
  if (!ref.name) errs.push(required('roleRef.name', ''));
  for (const [i, s] of ((obj.subjects ?? []) as Obj[]).entries()) {
    if (!s.name) errs.push(required(`subjects[${i}].name`, ''));
    errs.push(...oneOf(s.kind as string | undefined, ['ServiceAccount', 'User', 'Group'], `subjects[${i}].kind`));
    if (s.kind === 'ServiceAccount' && !namespaced && !s.namespace) errs.push(required(`subjects[${i}].namespace`, ''));
  }
  return errs;
}

function rbacStrategies(): Strategy[] {
  const roleRefImmutable = (n: KubeObject, o: KubeObject) =>
    deepEqual(n.roleRef, o.roleRef) ? [] : [invalid('roleRef', n.roleRef, 'cannot change roleRef')];
  return [
    newStrategy({ group: rbacGroup, kind: 'Role', resource: 'roles', namespaced: true, names: 'path', validate: validateRules }),
    newStrategy({ group: rbacGroup, kind: 'ClusterRole', resource: 'clusterroles', namespaced: false, names: 'path', validate: validateRules }),
    newStrategy({
      group: rbacGroup, kind: 'RoleBinding', resource: 'rolebindings', namespaced: true, names: 'path',
      defaults: defaultBinding, validate: (o) => validateBinding(o, true), validateUpdate: roleRefImmutable,
    }),
    newStrategy({
      group: rbacGroup, kind: 'ClusterRoleBinding', resource: 'clusterrolebindings', namespaced: false, names: 'path',
      defaults: defaultBinding, validate: (o) => validateBinding(o, false), validateUpdate: roleRefImmutable,
    }),
  ];
}

// ---------------------------------------------------------------------------
// storage.k8s.io
// ---------------------------------------------------------------------------

function storageStrategies(): Strategy[] {
  const g = 'storage.k8s.io';
  return [
    newStrategy({
      group: g, kind: 'StorageClass', resource: 'storageclasses', namespaced: false,
      defaults(obj) {
        dflt(obj, 'reclaimPolicy', 'Delete');
        dflt(obj, 'volumeBindingMode', 'Immediate');
      },
      validate(obj) {
        const errs: FieldError[] = [];
        if (!obj.provisioner) errs.push(required('provisioner', ''));
        errs.push(...oneOf(obj.reclaimPolicy as string | undefined, ['Delete', 'Retain'], 'reclaimPolicy', false));
        errs.push(...oneOf(obj.volumeBindingMode as string | undefined, ['Immediate', 'WaitForFirstConsumer'], 'volumeBindingMode', false));
        return errs;
      },
      validateUpdate(n, o) {
        const errs: FieldError[] = [];
        if (!deepEqual(n.parameters, o.parameters)) errs.push(forbidden('parameters', 'updates to parameters are forbidden.'));
        if (n.provisioner !== o.provisioner) errs.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
        if (n.reclaimPolicy !== o.reclaimPolicy) errs.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
        errs.push(...immutable(n.volumeBindingMode, o.volumeBindingMode, 'volumeBindingMode'));
        return errs;
      },
    }),
    newStrategy({
      group: g, kind: 'VolumeAttachment', resource: 'volumeattachments', namespaced: false, hasStatus: true,
      defaults(obj) {
        const inline = objAt(objAt(obj.spec, 'source'), 'inlineVolumeSpec');
        if (inline) defaultPVSpecTypes(inline);
      },
      validate(obj) {
        const s = specOf(obj);
        const errs: FieldError[] = [];
        if (!s.attacher) errs.push(required('spec.attacher', ''));
        if (!s.nodeName) errs.push(required('spec.nodeName', ''));
        return errs;
      },
      validateUpdate: (n, o) => (deepEqual(n.spec, o.spec) ? [] : [invalid('spec', n.spec, 'field is immutable')]),
    }),
    newStrategy({
      group: g, kind: 'CSIDriver', resource: 'csidrivers', namespaced: false,
      defaults(obj) {
        const s = child(obj, 'spec');
        dflt(s, 'attachRequired', true);
        dflt(s, 'podInfoOnMount', false);
        dflt(s, 'storageCapacity', false);
        dflt(s, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
        dflt(s, 'requiresRepublish', false);
        if (!Array.isArray(s.volumeLifecycleModes) || s.volumeLifecycleModes.length === 0) s.volumeLifecycleModes = ['Persistent'];
        dflt(s, 'seLinuxMount', false);
      },
    }),
    newStrategy({ group: g, kind: 'CSINode', resource: 'csinodes', namespaced: false }),
  ];
}

// ---------------------------------------------------------------------------
// networking.k8s.io, scheduling.k8s.io, certificates.k8s.io, node.k8s.io, apiextensions
// ---------------------------------------------------------------------------

function networkingStrategies(): Strategy[] {
  const g = 'networking.k8s.io';
  return [
    newStrategy({
      group: g, kind: 'Ingress', resource: 'ingresses', namespaced: true, hasStatus: true, tracksGeneration: true,
      validate(obj) {
        const errs: FieldError[] = [];
        for (const [i, r] of (((specOf(obj).rules ?? []) as Obj[]).entries())) {
          for (const [j, p] of ((((r.http as Obj | undefined)?.paths ?? []) as Obj[]).entries())) {
            errs.push(...oneOf(p.pathType as string | undefined, ['Exact', 'ImplementationSpecific', 'Prefix'], `spec.rules[${i}].http.paths[${j}].pathType`));
          }
        }
        return errs;
      },
    }),
    newStrategy({
      group: g, kind: 'IngressClass', resource: 'ingressclasses', namespaced: false, tracksGeneration: true,
      defaults(obj) {
        const params = objAt(obj.spec, 'parameters');
        if (params) dflt(params, 'scope', 'Cluster');
      },
    }),
    newStrategy({
      group: g, kind: 'NetworkPolicy', resource: 'networkpolicies', namespaced: true, tracksGeneration: true,
      defaults(obj) {
        const s = child(obj, 'spec');
        for (const dir of ['ingress', 'egress']) {
          for (const rule of (s[dir] ?? []) as Obj[]) for (const p of (rule.ports ?? []) as Obj[]) dflt(p, 'protocol', 'TCP');
        }
        if (!Array.isArray(s.policyTypes) || s.policyTypes.length === 0) {
          s.policyTypes = Array.isArray(s.egress) && s.egress.length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
        }
      },
      validate: (obj) => validateLabelSelector(specOf(obj).podSelector as never, 'spec.podSelector'),
    }),
  ];
}

function miscStrategies(): Strategy[] {
  return [
    newStrategy({
      group: 'scheduling.k8s.io', kind: 'PriorityClass', resource: 'priorityclasses', namespaced: false,
      defaults: (obj) => dflt(obj, 'preemptionPolicy', 'PreemptLowerPriority'),
      validate(obj) {
        const errs = oneOf(obj.preemptionPolicy as string | undefined, ['Never', 'PreemptLowerPriority'], 'preemptionPolicy');
        const name = obj.metadata?.name ?? '';
        if (name.startsWith('system-') && !['system-node-critical', 'system-cluster-critical'].includes(name)) {
          errs.push(forbidden('metadata.name', 'priority class names with \'system-\' prefix are reserved for system use only'));
        }
        return errs;
      },
      validateUpdate(n, o) {
        const errs: FieldError[] = [];
        if (n.value !== o.value) errs.push(forbidden('value', 'may not be changed in an update.'));
        errs.push(...immutable(n.preemptionPolicy, o.preemptionPolicy, 'preemptionPolicy'));
        return errs;
      },
    }),
    newStrategy({
      group: 'certificates.k8s.io', kind: 'CertificateSigningRequest', resource: 'certificatesigningrequests', namespaced: false, hasStatus: true,
      defaults(obj) {
        // SetDefaults_CertificateSigningRequestCondition
        for (const c of items(objAt(obj, 'status'), 'conditions')) dfltZero(c, 'status', 'True');
      },
      // csrStatusStrategy: the spec stays; condition times are filled in.
      prepareForStatusUpdate: (n, o, now) => populateConditionTimestamps(n, o, now ?? ''),
      // csrApprovalStrategy: only the conditions (and metadata) change.
      subresourcePrepare: {
        approval(n, o, now) {
          populateConditionTimestamps(n, o, now);
          const conditions = (n.status as Obj | undefined)?.conditions;
          n.spec = deepCopy(o.spec);
          n.status = { ...deepCopy((o.status ?? {}) as Obj), conditions };
          if (conditions === undefined) delete (n.status as Obj).conditions;
        },
      },
      validate(obj) {
        const s = specOf(obj);
        const errs: FieldError[] = [];
        if (!s.request) errs.push(required('spec.request', ''));
        if (!s.signerName) errs.push(required('spec.signerName', ''));
        return errs;
      },
      validateUpdate: (n, o) => (deepEqual(n.spec, o.spec) ? [] : [forbidden('spec', 'field is immutable')]),
      fields: { 'spec.signerName': (o) => (specOf(o).signerName as string | undefined) ?? '' },
    }),
    newStrategy({
      group: 'node.k8s.io', kind: 'RuntimeClass', resource: 'runtimeclasses', namespaced: false,
      validate: (obj) => (obj.handler ? [] : [required('handler', '')]),
      validateUpdate: (n, o) => immutable(n.handler, o.handler, 'handler'),
    }),
    newStrategy({
      group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition', resource: 'customresourcedefinitions', namespaced: false,
      hasStatus: true, tracksGeneration: true,
      defaults(obj) {
        // SetDefaults_CustomResourceDefinition(Spec) and the conversion webhook's service port.
        const s = child(obj, 'spec');
        const names = child(s, 'names');
        if (typeof names.kind === 'string') {
          dfltZero(names, 'singular', names.kind.toLowerCase());
          if (names.kind) dfltZero(names, 'listKind', `${names.kind}List`);
        }
        dflt(s, 'conversion', { strategy: 'None' });
        const service = objAt(objAt(objAt(s.conversion, 'webhook'), 'clientConfig'), 'service');
        if (service) dflt(service, 'port', 443);
        const st = child(obj, 'status');
        if (!Array.isArray(st.storedVersions) || st.storedVersions.length === 0) {
          const storage = items(s, 'versions').find((v) => v.storage === true);
          if (storage) st.storedVersions = [storage.name];
        }
      },
      validate(obj) {
        const s = specOf(obj);
        const names = (s.names ?? {}) as Obj;
        const errs: FieldError[] = [];
        const expected = `${names.plural ?? ''}.${s.group ?? ''}`;
        if (obj.metadata?.name !== expected) errs.push(invalid('metadata.name', obj.metadata?.name ?? '', 'must be spec.names.plural+"."+spec.group'));
        errs.push(...oneOf(s.scope as string | undefined, ['Cluster', 'Namespaced'], 'spec.scope'));
        if (!names.kind) errs.push(required('spec.names.kind', ''));
        if (!Array.isArray(s.versions) || s.versions.length === 0) errs.push(required('spec.versions', 'must have exactly one version marked as storage version'));
        return errs;
      },
      validateUpdate: (n, o) => immutable(specOf(n).scope, specOf(o).scope, 'spec.scope'),
    }),
  ];
}

export function otherStrategies(): Strategy[] {
  return [hpaStrategy(), pdbStrategy(), leaseStrategy(), endpointSliceStrategy(), eventsV1Strategy(), ...rbacStrategies(), ...storageStrategies(), ...networkingStrategies(), ...miscStrategies()];
}

/**
 * The CSR strategies' populateConditionTimestamps: a condition without
 * lastUpdateTime gets now; without lastTransitionTime, that of the old
 * condition of the same type and status, else now.
 */
function populateConditionTimestamps(n: KubeObject, o: KubeObject, now: string): void {
  const old = items(objAt(o, 'status'), 'conditions');
  for (const c of items(objAt(n, 'status'), 'conditions')) {
    if (!c.lastUpdateTime) c.lastUpdateTime = now;
    if (!c.lastTransitionTime) c.lastTransitionTime = old.find((x) => x.type === c.type && x.status === c.status && x.lastTransitionTime)?.lastTransitionTime ?? now;
  }
}
