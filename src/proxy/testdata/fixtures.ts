/** Services, EndpointSlices and a Node for the proxy's tests. */
import type { Node, Service, ServicePort } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';

export const NODE = 'node-1';

export function node(name = NODE, extra: { podCIDR?: string; labels?: Record<string, string> } = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(extra.labels ?? {}) } },
    spec: { podCIDR: extra.podCIDR ?? '10.244.1.0/24' },
    status: {
      addresses: [
        { type: 'InternalIP', address: '192.168.0.10' },
        { type: 'Hostname', address: name },
      ],
    },
  };
}

export function service(ns: string, name: string, spec: Service['spec'], status?: Service['status']): Service {
  const ports: ServicePort[] = spec?.ports ?? [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 8080 }];
  return { apiVersion: 'v1', kind: 'Service', metadata: { namespace: ns, name, resourceVersion: '1' }, spec: { type: 'ClusterIP', ...spec, ports }, ...(status ? { status } : {}) };
}

export interface Ep {
  ip: string;
  node: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export function slice(ns: string, svc: string, eps: Ep[], opts: { name?: string; port?: number; portName?: string } = {}): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { namespace: ns, name: opts.name ?? `${svc}-abcde`, labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    ports: [{ name: opts.portName ?? 'p80', port: opts.port ?? 8080, protocol: 'TCP' }],
    endpoints: eps.map((e) => ({
      addresses: [e.ip],
      nodeName: e.node,
      conditions: {
        ready: e.ready ?? true,
        serving: e.serving ?? e.ready ?? true,
        terminating: e.terminating ?? false,
      },
    })),
  };
}

/** The representative scenarios: each a Service and its slices. */
export const scenarios: Record<string, { service: Service; slices: EndpointSlice[] }> = {
  'clusterip-3-endpoints': {
    service: service('ns1', 'svc1', { clusterIP: '172.30.0.41' }),
    slices: [
      slice('ns1', 'svc1', [
        { ip: '10.244.1.5', node: NODE },
        { ip: '10.244.2.6', node: 'node-2' },
        { ip: '10.244.3.7', node: 'node-3' },
      ]),
    ],
  },
  nodeport: {
    service: service('ns2', 'svc2', { type: 'NodePort', clusterIP: '172.30.0.42', ports: [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30001 }] }),
    slices: [
      slice('ns2', 'svc2', [
        { ip: '10.244.1.9', node: NODE },
        { ip: '10.244.2.8', node: 'node-2' },
      ]),
    ],
  },
  loadbalancer: {
    service: service(
      'ns3',
      'svc3',
      {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.43',
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30003 }],
        loadBalancerSourceRanges: ['203.0.113.0/25'],
      },
      { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
    ),
    slices: [slice('ns3', 'svc3', [{ ip: '10.244.3.10', node: 'node-3' }])],
  },
  'session-affinity': {
    service: service('ns4', 'svc4', { clusterIP: '172.30.0.44', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } } }),
    slices: [
      slice('ns4', 'svc4', [
        { ip: '10.244.1.20', node: NODE },
        { ip: '10.244.2.21', node: 'node-2' },
      ]),
    ],
  },
  'external-traffic-policy-local': {
    service: service(
      'ns5',
      'svc5',
      {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.45',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 30055,
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30005 }],
      },
      { loadBalancer: { ingress: [{ ip: '5.6.7.8' }] } },
    ),
    slices: [
      slice('ns5', 'svc5', [
        { ip: '10.244.1.11', node: NODE },
        { ip: '10.244.1.13', node: NODE, ready: false, serving: true, terminating: true },
        { ip: '10.244.2.12', node: 'node-2' },
      ]),
    ],
  },
  'internal-traffic-policy-local': {
    service: service('ns6', 'svc6', { clusterIP: '172.30.0.46', internalTrafficPolicy: 'Local' }),
    slices: [slice('ns6', 'svc6', [{ ip: '10.244.2.14', node: 'node-2' }])],
  },
  'no-endpoints': {
    service: service('ns7', 'svc7', { clusterIP: '172.30.0.47', externalIPs: ['192.168.99.1'] }),
    slices: [],
  },
  'terminating-endpoints': {
    service: service('ns8', 'svc8', {
      type: 'NodePort',
      clusterIP: '172.30.0.48',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30008 }],
    }),
    slices: [
      slice('ns8', 'svc8', [
        { ip: '10.244.1.15', node: NODE, ready: false, serving: true, terminating: true },
        { ip: '10.244.2.16', node: 'node-2', ready: false, serving: false, terminating: true },
      ]),
    ],
  },
};
