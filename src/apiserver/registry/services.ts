/**
 * Services (pkg/registry/core/service): SetDefaults_Service plus the IP
 * family fields the REST storage fills, validation, and keeping allocated
 * cluster IPs and node ports across updates.
 */
import type { Service, ServicePort } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../api/types.js';
import type { Strategy } from './strategy.js';
import { type FieldError, invalid, required, forbidden, duplicate, isValidPortName, isValidPortNum, isDNS1123Label, GoLiteral } from '../../api/validation.js';
import { newStrategy, child, dflt, dfltZero, items, objAt } from './generic.js';
import { oneOf, validateLabels } from './meta-validation.js';

type Obj = Record<string, unknown>;

const serviceTypes = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const usesClusterIP = (t: string | undefined) => t !== 'ExternalName';
const usesNodePorts = (t: string | undefined) => t === 'NodePort' || t === 'LoadBalancer';

/** service.ExternallyAccessible: NodePort, LoadBalancer, or ClusterIP with external IPs. */
function externallyAccessible(s: NonNullable<Service['spec']>): boolean {
  return usesNodePorts(s.type) || (s.type === 'ClusterIP' && (s.externalIPs?.length ?? 0) > 0);
}

/**
 * SetDefaults_Service, then what the service REST storage fills before
 * allocation (initIPFamilyFields on a single-stack IPv4 cluster, clusterIPs
 * from clusterIP).
 */
function defaultService(obj: KubeObject): void {
  const s = child(obj, 'spec') as Obj & NonNullable<Service['spec']>;
  dfltZero(s, 'sessionAffinity', 'None');
  if (s.sessionAffinity === 'None') delete s.sessionAffinityConfig;
  if (s.sessionAffinity === 'ClientIP' && typeof s.sessionAffinityConfig?.clientIP?.timeoutSeconds !== 'number') {
    s.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
  }
  dfltZero(s, 'type', 'ClusterIP');
  for (const p of items(s, 'ports')) {
    dfltZero(p, 'protocol', 'TCP');
    if (p.targetPort === undefined || p.targetPort === null || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
  if (externallyAccessible(s)) dfltZero(s, 'externalTrafficPolicy', 'Cluster');
  if (s.type === 'NodePort' || s.type === 'LoadBalancer' || s.type === 'ClusterIP') dflt(s, 'internalTrafficPolicy', 'Cluster');
  if (s.type === 'LoadBalancer') {
    dflt(s, 'allocateLoadBalancerNodePorts', true);
    for (const ing of items(objAt(objAt(obj, 'status'), 'loadBalancer'), 'ingress')) {
      if (ing.ip && (ing.ipMode === undefined || ing.ipMode === null)) ing.ipMode = 'VIP';
    }
  }
  if (s.clusterIP && !s.clusterIPs?.length) s.clusterIPs = [s.clusterIP];
  if (usesClusterIP(s.type)) {
    const headlessWithoutSelector = s.clusterIPs?.[0] === 'None' && Object.keys(s.selector ?? {}).length === 0;
    // Headless services without a selector may be dual-stack even on a single-stack cluster.
    dflt(s, 'ipFamilyPolicy', headlessWithoutSelector ? 'RequireDualStack' : 'SingleStack');
    if (!s.ipFamilies?.length) s.ipFamilies = ['IPv4'];
    if (headlessWithoutSelector && s.ipFamilies.length < 2 && s.ipFamilyPolicy === 'RequireDualStack') {
      s.ipFamilies = [...s.ipFamilies, s.ipFamilies[0] === 'IPv6' ? 'IPv4' : 'IPv6'];
    }
  }
}

function validateServicePorts(ports: ServicePort[], type: string | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  const keys = new Set<string>();
  for (const [i, p] of ports.entries()) {
    const path = `spec.ports[${i}]`;
    if (ports.length > 1 && !p.name) errs.push(required(`${path}.name`, ''));
    else if (p.name) {
      for (const m of isDNS1123Label(p.name)) errs.push(invalid(`${path}.name`, p.name, m));
      if (names.has(p.name)) errs.push(duplicate(`${path}.name`, p.name));
      names.add(p.name);
    }
    for (const m of isValidPortNum(p.port)) errs.push(invalid(`${path}.port`, p.port, m));
    errs.push(...oneOf(p.protocol, ['TCP', 'UDP', 'SCTP'], `${path}.protocol`));
    if (typeof p.targetPort === 'number') for (const m of isValidPortNum(p.targetPort)) errs.push(invalid(`${path}.targetPort`, p.targetPort, m));
    else if (typeof p.targetPort === 'string') for (const m of isValidPortName(p.targetPort)) errs.push(invalid(`${path}.targetPort`, p.targetPort, m));
    if (p.nodePort) {
      if (!usesNodePorts(type)) errs.push(forbidden(`${path}.nodePort`, 'may not be used when `type` is \'ClusterIP\''));
      else for (const m of isValidPortNum(p.nodePort)) errs.push(invalid(`${path}.nodePort`, p.nodePort, m));
    }
    const key = `${p.port}/${p.protocol}`;
    if (keys.has(key)) errs.push(duplicate(path, new GoLiteral(`core.ServicePort{Name:${JSON.stringify(p.name ?? '')}, Protocol:${JSON.stringify(p.protocol)}, Port:${p.port}}`)));
    keys.add(key);
  }
  return errs;
}

function validateService(obj: KubeObject): FieldError[] {
  const s = (obj.spec ?? {}) as NonNullable<Service['spec']>;
  const errs: FieldError[] = [...oneOf(s.type, serviceTypes, 'spec.type')];
  errs.push(...oneOf(s.sessionAffinity, ['ClientIP', 'None'], 'spec.sessionAffinity'));
  const headless = s.clusterIP === 'None';
  if (s.type === 'ExternalName') {
    if (!s.externalName) errs.push(required('spec.externalName', ''));
  } else if (!s.ports?.length && !headless) {
    errs.push(required('spec.ports', ''));
  }
  if (headless && s.type !== 'ClusterIP' && s.type !== 'ExternalName') {
    errs.push(invalid('spec.clusterIPs[0]', new GoLiteral('"None"'), 'may not be set to \'None\' for LoadBalancer or NodePort services'));
  }
  errs.push(...validateServicePorts(s.ports ?? [], s.type));
  if (s.selector) errs.push(...validateLabels(s.selector, 'spec.selector'));
  if (!externallyAccessible(s)) {
    if (s.externalTrafficPolicy) errs.push(invalid('spec.externalTrafficPolicy', s.externalTrafficPolicy, 'may only be set for externally-accessible services'));
  } else {
    errs.push(...oneOf(s.externalTrafficPolicy, ['Cluster', 'Local'], 'spec.externalTrafficPolicy'));
  }
  if (s.internalTrafficPolicy) errs.push(...oneOf(s.internalTrafficPolicy, ['Cluster', 'Local'], 'spec.internalTrafficPolicy'));
  return errs;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The strategy's dropTypeDependentFields: a type change that leaves fields
 * the new type does not use exactly as they were wipes them (the allocator
 * releases what they held); a field the user changed too is left for
 * validation to judge.
 */
function dropTypeDependentFields(n: NonNullable<Service['spec']>, o: NonNullable<Service['spec']>): void {
  if (usesClusterIP(o.type) && !usesClusterIP(n.type)) {
    if (n.clusterIP === o.clusterIP && sameJson(n.clusterIPs, o.clusterIPs)) {
      delete n.clusterIP;
      delete n.clusterIPs;
    }
    if (sameJson(n.ipFamilies, o.ipFamilies)) delete n.ipFamilies;
    if (sameJson(n.ipFamilyPolicy, o.ipFamilyPolicy)) delete n.ipFamilyPolicy;
  }
  const nodePorts = (x: NonNullable<Service['spec']>) => (x.ports ?? []).map((p) => p.nodePort ?? 0);
  if (usesNodePorts(o.type) && !usesNodePorts(n.type) && sameJson(nodePorts(n), nodePorts(o))) {
    for (const p of n.ports ?? []) delete p.nodePort;
  }
  const needsHC = (x: NonNullable<Service['spec']>) => x.type === 'LoadBalancer' && x.externalTrafficPolicy === 'Local';
  if (needsHC(o) && !needsHC(n) && (n.healthCheckNodePort ?? 0) === (o.healthCheckNodePort ?? 0)) delete n.healthCheckNodePort;
  if (o.type === 'LoadBalancer' && n.type !== 'LoadBalancer') {
    if (n.allocateLoadBalancerNodePorts !== undefined && n.allocateLoadBalancerNodePorts === o.allocateLoadBalancerNodePorts) delete n.allocateLoadBalancerNodePorts;
    if (sameJson(n.loadBalancerClass, o.loadBalancerClass)) delete n.loadBalancerClass;
  }
  if (usesNodePorts(o.type) && !usesNodePorts(n.type) && n.externalTrafficPolicy === o.externalTrafficPolicy) delete n.externalTrafficPolicy;
}

/**
 * PrepareForUpdate: dropTypeDependentFields, then as the service REST
 * storage's patchAllocatedValues: an update that leaves clusterIP /
 * nodePorts empty keeps the allocated ones.
 */
function keepAllocated(newObj: KubeObject, oldObj: KubeObject): void {
  const n = (newObj.spec ?? {}) as NonNullable<Service['spec']>;
  const o = (oldObj.spec ?? {}) as NonNullable<Service['spec']>;
  dropTypeDependentFields(n, o);
  // A load balancer's status goes with the type (de-provisioning is not the user's concern).
  if (n.type !== 'LoadBalancer' && (newObj.status as Obj | undefined)?.loadBalancer) (newObj.status as Obj).loadBalancer = {};
  if (usesClusterIP(n.type) && usesClusterIP(o.type)) {
    if (!n.clusterIP && o.clusterIP) n.clusterIP = o.clusterIP;
    if (!n.clusterIPs?.length && o.clusterIPs?.length) n.clusterIPs = [...o.clusterIPs];
  }
  if (usesNodePorts(n.type) && usesNodePorts(o.type)) {
    for (const p of n.ports ?? []) {
      if (p.nodePort) continue;
      const prev = (o.ports ?? []).find((q) => (q.name ?? '') === (p.name ?? '') && q.port === p.port && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP'))
        ?? (o.ports?.length === 1 && n.ports?.length === 1 ? o.ports[0] : undefined);
      if (prev?.nodePort) p.nodePort = prev.nodePort;
    }
    if (!n.healthCheckNodePort && o.healthCheckNodePort && n.externalTrafficPolicy === 'Local') n.healthCheckNodePort = o.healthCheckNodePort;
  }
}

function validateServiceUpdate(newObj: KubeObject, oldObj: KubeObject): FieldError[] {
  const n = (newObj.spec ?? {}) as NonNullable<Service['spec']>;
  const o = (oldObj.spec ?? {}) as NonNullable<Service['spec']>;
  if (!usesClusterIP(n.type) || !usesClusterIP(o.type)) return [];
  const oldIPs = o.clusterIPs?.length ? o.clusterIPs : o.clusterIP ? [o.clusterIP] : [];
  const newIPs = n.clusterIPs?.length ? n.clusterIPs : n.clusterIP ? [n.clusterIP] : [];
  if (oldIPs.length > 0 && newIPs[0] !== oldIPs[0]) {
    return [invalid('spec.clusterIPs[0]', newIPs, 'may not change once set')];
  }
  return [];
}

export function serviceStrategy(): Strategy {
  return newStrategy({
    group: '',
    kind: 'Service',
    resource: 'services',
    namespaced: true,
    hasStatus: true,
    names: 'dns1035',
    allowCreateOnUpdate: true,
    defaults: defaultService,
    prepareForUpdate: keepAllocated,
    validate: validateService,
    validateUpdate: validateServiceUpdate,
    fields: {
      'spec.clusterIP': (o) => ((o.spec as Obj | undefined)?.clusterIP as string | undefined) ?? '',
      'spec.type': (o) => ((o.spec as Obj | undefined)?.type as string | undefined) ?? '',
    },
  });
}
