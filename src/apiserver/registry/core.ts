/**
 * core/v1 kinds other than pods: replicationcontrollers, services (services.ts),
 * namespaces, nodes, secrets, configmaps, persistentvolume(claim)s, events,
 * endpoints, serviceaccounts, resourcequotas, limitranges
 * (pkg/registry/core/*, pkg/apis/core/v1/defaults.go, core validation).
 */
import type { Secret, PersistentVolumeClaim, PersistentVolume, Namespace, Node, Event } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../api/types.js';
import type { Strategy } from './strategy.js';
import {
  type FieldError,
  invalid,
  required,
  forbidden,
  tooLong,
  isConfigMapKey,
  isValidPortNum,
} from '../../api/validation.js';
import { newStrategy, child, dflt, dfltZero, meta, clone, setOrDelete, items, objAt } from './generic.js';
import { defaultPodTemplate, validatePodTemplate, defaultPVCSpec, defaultVolumeSource } from './pod-spec.js';
import { roundUpResourceList } from './quantities.js';
import { immutable, nonNegative, oneOf, deepEqual, validateLabels } from './meta-validation.js';
import { specOf, validateReplicas, scaleAccess, setSelectorString, selectorMismatch } from './workload.js';
import { selectorFromSet } from '../../api/labels.js';
import { compare as compareQuantity } from '../../api/quantity.js';
import { serviceStrategy } from './services.js';
import { deepCopy } from '../../util/json/deep-copy.js';

type Obj = Record<string, unknown>;

// ---------------------------------------------------------------------------
// ReplicationController
// ---------------------------------------------------------------------------

function replicationControllerStrategy(): Strategy {
  return newStrategy({
    group: '',
    kind: 'ReplicationController',
    resource: 'replicationcontrollers',
    namespaced: true,
    hasStatus: true,
    tracksGeneration: true,
    // v1 keeps the pre-GC behaviour: dependents are orphaned unless asked.
    defaultDeletePropagation: 'Orphan',
    defaults(obj) {
      const s = child(obj, 'spec');
      const labels = ((s.template as Obj | undefined)?.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;
      if (labels) {
        if (!s.selector || Object.keys(s.selector as Obj).length === 0) s.selector = { ...labels };
        const m = meta(obj);
        if (!m.labels || Object.keys(m.labels).length === 0) m.labels = { ...labels };
      }
      dflt(s, 'replicas', 1);
      defaultPodTemplate(s.template as never);
    },
    validate(obj) {
      const s = specOf(obj);
      const errs = [...validateReplicas(obj), ...nonNegative(s.minReadySeconds as number | undefined, 'spec.minReadySeconds')];
      const sel = (s.selector ?? {}) as Record<string, string>;
      if (Object.keys(sel).length === 0) errs.push(required('spec.selector', ''));
      else errs.push(...validateLabels(sel, 'spec.selector'));
      const t = s.template as Obj | undefined;
      if (!t) errs.push(required('spec.template', ''));
      else {
        const labels = (t.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;
        if (Object.keys(sel).length > 0 && !selectorFromSet(sel).matches(labels ?? {})) errs.push(selectorMismatch(labels));
        errs.push(...validatePodTemplate(t as never, 'spec.template', ['Always']));
      }
      return errs;
    },
    fields: { 'status.replicas': (o) => String(((o.status as Obj | undefined)?.replicas as number | undefined) ?? 0) },
    scale: scaleAccess(setSelectorString),
  });
}

// ---------------------------------------------------------------------------
// Namespace
// ---------------------------------------------------------------------------

function namespaceStrategy(): Strategy {
  return newStrategy({
    group: '',
    kind: 'Namespace',
    resource: 'namespaces',
    namespaced: false,
    hasStatus: true,
    names: 'label',
    defaults(obj) {
      const m = meta(obj);
      if (m.name) m.labels = { ...m.labels, 'kubernetes.io/metadata.name': m.name };
      dfltZero(child(obj, 'status'), 'phase', 'Active');
    },
    prepareForCreate(obj) {
      obj.status = { phase: 'Active' };
      const s = child(obj, 'spec') as NonNullable<Namespace['spec']>;
      const f = (s.finalizers ??= []);
      if (!f.includes('kubernetes')) f.push('kubernetes');
    },
    prepareForUpdate(n, o) {
      // spec.finalizers change only through /finalize.
      setOrDelete(child(n, 'spec'), 'finalizers', clone((o.spec as Obj | undefined)?.finalizers));
    },
    validate(obj) {
      const errs: FieldError[] = [];
      for (const [i, f] of (((obj.spec as Obj | undefined)?.finalizers ?? []) as string[]).entries()) {
        if (!f.includes('/') && f !== 'kubernetes') errs.push(invalid(`spec.finalizers[${i}]`, f, "name is neither a standard finalizer name nor is it fully qualified"));
      }
      return errs;
    },
    fields: { 'status.phase': (o) => ((o.status as Obj | undefined)?.phase as string | undefined) ?? '' },
  });
}

/** The /finalize subresource: only spec.finalizers change. Mutates newObj. */
export function prepareForNamespaceFinalize(newObj: KubeObject, oldObj: KubeObject): void {
  const finalizers = clone((newObj.spec as Obj | undefined)?.finalizers);
  for (const k of Object.keys(newObj)) delete newObj[k];
  Object.assign(newObj, deepCopy(oldObj));
  setOrDelete(child(newObj, 'spec'), 'finalizers', finalizers);
}

// ---------------------------------------------------------------------------
// Node
// ---------------------------------------------------------------------------

function nodeStrategy(): Strategy {
  return newStrategy({
    group: '',
    kind: 'Node',
    resource: 'nodes',
    namespaced: false,
    hasStatus: true,
    defaults(obj) {
      const st = obj.status as NonNullable<Node['status']> | undefined;
      if (st?.capacity && !st.allocatable) st.allocatable = { ...st.capacity };
      roundUpResourceList(st?.capacity);
      roundUpResourceList(st?.allocatable);
    },
    // Kubelets register with their status, so create keeps it.
    keepStatusOnCreate: true,
    validate(obj) {
      const errs: FieldError[] = [];
      for (const [i, t] of ((obj as Node).spec?.taints ?? []).entries()) {
        errs.push(...oneOf(t.effect, ['NoSchedule', 'PreferNoSchedule', 'NoExecute'], `spec.taints[${i}].effect`));
        if (!t.key) errs.push(required(`spec.taints[${i}].key`, ''));
      }
      return errs;
    },
    fields: { 'spec.unschedulable': (o) => String(((o as Node).spec?.unschedulable) === true) },
  });
}

// ---------------------------------------------------------------------------
// Secret, ConfigMap
// ---------------------------------------------------------------------------

const maxSecretSize = 1024 * 1024;

function validateDataKeys(obj: KubeObject, fields: string[]): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  const seen = new Set<string>();
  for (const f of fields) {
    for (const [k, v] of Object.entries((obj[f] ?? {}) as Record<string, string>)) {
      for (const m of isConfigMapKey(k)) errs.push(invalid(`${f}[${k}]`, k, m));
      if (seen.has(k)) errs.push(invalid(`${f}[${k}]`, k, 'duplicate of key present in ' + fields.find((x) => x !== f)));
      seen.add(k);
      size += String(v).length;
    }
  }
  if (size > maxSecretSize) errs.push(tooLong(fields[0], '', maxSecretSize));
  return errs;
}

/** Immutable secrets and config maps: data and the flag itself are frozen. */
function validateImmutableData(n: KubeObject, o: KubeObject, fields: string[]): FieldError[] {
  if (o.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (n.immutable !== true) errs.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const f of fields) if (!deepEqual(n[f] ?? {}, o[f] ?? {})) errs.push(forbidden(f, 'field is immutable when `immutable` is set'));
  return errs;
}

function secretStrategy(): Strategy {
  return newStrategy({
    group: '',
    kind: 'Secret',
    resource: 'secrets',
    namespaced: true,
    defaults: (obj) => dfltZero(obj, 'type', 'Opaque'),
    validate(obj) {
      const s = obj as Secret;
      const errs = validateDataKeys(obj, ['data', 'stringData']);
      const data = { ...s.data, ...s.stringData };
      switch (s.type) {
        case 'kubernetes.io/service-account-token':
          if (!s.metadata?.annotations?.['kubernetes.io/service-account.name']) {
            errs.push(required('metadata.annotations[kubernetes.io/service-account.name]', ''));
          }
          break;
        case 'kubernetes.io/dockercfg':
          if (data['.dockercfg'] === undefined) errs.push(required('data[.dockercfg]', ''));
          break;
        case 'kubernetes.io/dockerconfigjson':
          if (data['.dockerconfigjson'] === undefined) errs.push(required('data[.dockerconfigjson]', ''));
          break;
        case 'kubernetes.io/tls':
          if (data['tls.crt'] === undefined) errs.push(required('data[tls.crt]', ''));
          if (data['tls.key'] === undefined) errs.push(required('data[tls.key]', ''));
          break;
        case 'kubernetes.io/ssh-auth':
          if (data['ssh-privatekey'] === undefined) errs.push(required('data[ssh-privatekey]', ''));
          break;
        default:
          break;
      }
      return errs;
    },
    validateUpdate: (n, o) => [...immutable(n.type, o.type, 'type'), ...validateImmutableData(n, o, ['data'])],
    fields: { type: (o) => (o.type as string | undefined) ?? '' },
  });
}

function configMapStrategy(): Strategy {
  return newStrategy({
    group: '',
    kind: 'ConfigMap',
    resource: 'configmaps',
    namespaced: true,
    validate: (obj) => validateDataKeys(obj, ['data', 'binaryData']),
    validateUpdate: (n, o) => validateImmutableData(n, o, ['data', 'binaryData']),
  });
}

// ---------------------------------------------------------------------------
// PersistentVolumeClaim, PersistentVolume
// ---------------------------------------------------------------------------

const accessModes = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];

/** SetDefaults_PersistentVolumeClaim (also used for claim templates). */
export function defaultPVC(obj: KubeObject): void {
  defaultPVCSpec(child(obj, 'spec'));
  const st = child(obj, 'status');
  dfltZero(st, 'phase', 'Pending');
  roundUpResourceList(st.capacity);
  roundUpResourceList(st.allocatedResources);
}

/**
 * The defaults of a PersistentVolumeSpec's own types: capacity and the
 * volume source. A VolumeAttachment's inline volume spec gets only these
 * (reclaim policy and volume mode come from SetDefaults_PersistentVolume).
 */
export function defaultPVSpecTypes(spec: Record<string, unknown>): void {
  roundUpResourceList(spec.capacity);
  defaultVolumeSource(spec);
}

function validateAccessModes(modes: string[] | undefined, path: string): FieldError[] {
  if (!modes?.length) return [required(path, '')];
  const errs: FieldError[] = [];
  for (const m of modes) errs.push(...oneOf(m, accessModes, path));
  if (modes.includes('ReadWriteOncePod') && modes.length > 1) {
    errs.push(forbidden(path, 'may not use ReadWriteOncePod with other access modes'));
  }
  return errs;
}

function pvcStrategy(): Strategy {
  return newStrategy({
    group: '',
    kind: 'PersistentVolumeClaim',
    resource: 'persistentvolumeclaims',
    namespaced: true,
    hasStatus: true,
    defaults: defaultPVC,
    prepareForCreate: (obj) => (obj.status = { phase: 'Pending' }),
    validate(obj) {
      const s = ((obj as PersistentVolumeClaim).spec ?? {}) as NonNullable<PersistentVolumeClaim['spec']>;
      const errs = validateAccessModes(s.accessModes, 'spec.accessModes');
      if (!s.dataSource && !s.dataSourceRef && s.resources?.requests?.storage === undefined) errs.push(required('spec.resources[storage]', ''));
      errs.push(...oneOf(s.volumeMode, ['Block', 'Filesystem'], 'spec.volumeMode', false));
      return errs;
    },
    validateUpdate(n, o) {
      const ns = deepCopy((n.spec ?? {}) as Obj);
      const os = (o.spec ?? {}) as Obj;
      // Binding fills volumeName once; the storage request of a bound claim and the attributes class may change.
      if (!os.volumeName && ns.volumeName) delete ns.volumeName;
      const errs: FieldError[] = [];
      const newReqs = (ns.resources as Obj | undefined)?.requests as Record<string, string> | undefined;
      const oldReqs = (os.resources as Obj | undefined)?.requests as Record<string, string> | undefined;
      if ((n as PersistentVolumeClaim).status?.phase === 'Bound' && newReqs) {
        if (oldReqs?.['storage'] !== undefined) newReqs['storage'] = oldReqs['storage'];
        else delete newReqs['storage'];
        const newSize = ((n.spec as Obj).resources as Obj | undefined)?.requests as Record<string, string> | undefined;
        const oldSize = oldReqs?.['storage'] ?? '0';
        const statusSize = (o as PersistentVolumeClaim).status?.capacity?.['storage'] ?? '0';
        // RecoverVolumeExpansionFailure (GA): a request may shrink back towards, never to or below, status.capacity.
        if (compareQuantity(newSize?.['storage'] ?? '0', oldSize) < 0 && compareQuantity(newSize?.['storage'] ?? '0', statusSize) <= 0) {
          errs.push(forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
        }
      }
      setOrDelete(ns, 'volumeAttributesClassName', os.volumeAttributesClassName);
      const osCmp = { ...os };
      if (!os.volumeName) delete osCmp.volumeName;
      if (!deepEqual(ns, osCmp)) {
        errs.unshift(forbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
      }
      return errs;
    },
  });
}

function pvStrategy(): Strategy {
  return newStrategy({
    group: '',
    kind: 'PersistentVolume',
    resource: 'persistentvolumes',
    namespaced: false,
    hasStatus: true,
    defaults(obj) {
      // SetDefaults_PersistentVolume, then its spec's types.
      const s = child(obj, 'spec');
      dfltZero(child(obj, 'status'), 'phase', 'Pending');
      dfltZero(s, 'persistentVolumeReclaimPolicy', 'Retain');
      dflt(s, 'volumeMode', 'Filesystem');
      defaultPVSpecTypes(s);
    },
    prepareForCreate: (obj) => (obj.status = { phase: 'Pending' }),
    validate(obj) {
      const s = ((obj as PersistentVolume).spec ?? {}) as NonNullable<PersistentVolume['spec']> & Obj;
      const errs = validateAccessModes(s.accessModes, 'spec.accessModes');
      if (s.capacity?.storage === undefined) errs.push(required('spec.capacity', ''));
      errs.push(...oneOf(s.persistentVolumeReclaimPolicy, ['Delete', 'Recycle', 'Retain'], 'spec.persistentVolumeReclaimPolicy'));
      const nonSource = new Set([
        'accessModes', 'capacity', 'claimRef', 'mountOptions', 'nodeAffinity', 'persistentVolumeReclaimPolicy',
        'storageClassName', 'volumeMode', 'volumeAttributesClassName',
      ]);
      const sources = Object.keys(s).filter((k) => !nonSource.has(k) && s[k] !== undefined);
      if (sources.length === 0) errs.push(required('spec', 'must specify a volume type'));
      else if (sources.length > 1) errs.push(forbidden(`spec.${sources[1]}`, 'may not specify more than 1 volume type'));
      return errs;
    },
  });
}

// ---------------------------------------------------------------------------
// Events, endpoints, and the kinds with no special rules
// ---------------------------------------------------------------------------

function eventStrategy(): Strategy {
  const io = (o: KubeObject) => ((o as unknown as Event).involvedObject ?? {}) as Record<string, string | undefined>;
  return newStrategy({
    group: '',
    kind: 'Event',
    resource: 'events',
    namespaced: true,
    allowCreateOnUpdate: true,
    validate(obj) {
      const e = obj as unknown as Event;
      const errs: FieldError[] = [];
      const ns = e.involvedObject?.namespace;
      if (ns && ns !== e.metadata?.namespace) errs.push(invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
      if (e.type && !['Normal', 'Warning'].includes(e.type) && e.reportingComponent) {
        errs.push(...oneOf(e.type, ['Normal', 'Warning'], 'type'));
      }
      return errs;
    },
    fields: {
      'involvedObject.kind': (o) => io(o).kind ?? '',
      'involvedObject.namespace': (o) => io(o).namespace ?? '',
      'involvedObject.name': (o) => io(o).name ?? '',
      'involvedObject.uid': (o) => io(o).uid ?? '',
      'involvedObject.apiVersion': (o) => io(o).apiVersion ?? '',
      'involvedObject.resourceVersion': (o) => io(o).resourceVersion ?? '',
      'involvedObject.fieldPath': (o) => io(o).fieldPath ?? '',
      reason: (o) => (o as unknown as Event).reason ?? '',
      reportingComponent: (o) => (o as unknown as Event).reportingComponent ?? '',
      // Source.Component, else ReportingController (ToSelectableFields).
      source: (o) => (o as unknown as Event).source?.component || ((o as unknown as Event).reportingComponent ?? ''),
      type: (o) => (o as unknown as Event).type ?? '',
    },
  });
}

function endpointsStrategy(): Strategy {
  return newStrategy({
    group: '',
    kind: 'Endpoints',
    resource: 'endpoints',
    namespaced: true,
    allowCreateOnUpdate: true,
    defaults(obj) {
      for (const ss of items(obj, 'subsets')) for (const p of items(ss, 'ports')) dfltZero(p, 'protocol', 'TCP');
    },
    validate(obj) {
      const errs: FieldError[] = [];
      for (const [i, ss] of ((obj.subsets ?? []) as Obj[]).entries()) {
        for (const [j, p] of ((ss.ports ?? []) as Obj[]).entries()) {
          for (const m of isValidPortNum(p.port as number)) errs.push(invalid(`subsets[${i}].ports[${j}].port`, p.port, m));
        }
      }
      return errs;
    },
  });
}

function resourceQuotaStrategy(): Strategy {
  return newStrategy({
    group: '', kind: 'ResourceQuota', resource: 'resourcequotas', namespaced: true, hasStatus: true,
    defaults(obj) {
      roundUpResourceList(objAt(obj.spec, 'hard'));
      roundUpResourceList(objAt(obj.status, 'hard'));
      roundUpResourceList(objAt(obj.status, 'used'));
    },
  });
}

/**
 * SetDefaults_LimitRangeItem: a Container item's `default` comes from `max`,
 * its `defaultRequest` from `default` then `min`. Mutates item.
 */
export function defaultLimitRangeItem(item: Obj): void {
  for (const k of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio']) roundUpResourceList(item[k]);
  if (item.type !== 'Container') return;
  const def: Obj = { ...(objAt(item, 'default') ?? {}) };
  const defReq: Obj = { ...(objAt(item, 'defaultRequest') ?? {}) };
  for (const [k, v] of Object.entries(objAt(item, 'max') ?? {})) if (!(k in def)) def[k] = v;
  for (const [k, v] of Object.entries(def)) if (!(k in defReq)) defReq[k] = v;
  for (const [k, v] of Object.entries(objAt(item, 'min') ?? {})) if (!(k in defReq)) defReq[k] = v;
  // Go allocates both maps; empty ones are not written (omitempty).
  if (Object.keys(def).length > 0) item.default = def;
  if (Object.keys(defReq).length > 0) item.defaultRequest = defReq;
}

function limitRangeStrategy(): Strategy {
  return newStrategy({
    group: '', kind: 'LimitRange', resource: 'limitranges', namespaced: true,
    defaults(obj) {
      for (const item of items(obj.spec, 'limits')) defaultLimitRangeItem(item);
    },
  });
}

function simple(kind: string, resource: string): Strategy {
  return newStrategy({ group: '', kind, resource, namespaced: true });
}

export function coreStrategies(): Strategy[] {
  return [
    replicationControllerStrategy(),
    serviceStrategy(),
    namespaceStrategy(),
    nodeStrategy(),
    secretStrategy(),
    configMapStrategy(),
    pvcStrategy(),
    pvStrategy(),
    eventStrategy(),
    endpointsStrategy(),
    resourceQuotaStrategy(),
    simple('ServiceAccount', 'serviceaccounts'),
    limitRangeStrategy(),
  ];
}
