import type { ConfigMap, Pod, Secret, Service } from 'kubernetes-types/core/v1.js';
import type { NodeFacts, ObjectSource } from './types.js';

export const NODE: NodeFacts = {
  nodeName: 'node-1',
  hostIP: '172.18.0.2',
  podIP: '10.244.1.7',
  allocatable: { cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi' },
};

export function b64(s: string): string {
  return Buffer.from(s).toString('base64');
}

export function source(objs: { configMaps?: ConfigMap[]; secrets?: Secret[]; services?: Service[]; token?: (aud: string | undefined, exp: number) => string | Buffer | undefined }): ObjectSource {
  const key = (o: { metadata?: { namespace?: string; name?: string } }) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  return {
    configMap: (ns, name) => (objs.configMaps ?? []).find((o) => key(o) === `${ns}/${name}`),
    secret: (ns, name) => (objs.secrets ?? []).find((o) => key(o) === `${ns}/${name}`),
    services: (ns) => (objs.services ?? []).filter((s) => s.metadata?.namespace === ns),
    serviceAccountToken: objs.token ? (_ns, _sa, aud, exp) => objs.token!(aud, exp) : undefined,
  };
}

export function pod(spec: Partial<NonNullable<Pod['spec']>> = {}, meta: Partial<NonNullable<Pod['metadata']>> = {}): Pod {
  return {
    metadata: { name: 'web-0', namespace: 'ns1', uid: 'uid-123', ...meta },
    spec: { containers: [{ name: 'app', image: 'busybox' }], nodeName: 'node-1', serviceAccountName: 'default', ...spec },
  };
}

export const KUBERNETES_SVC: Service = {
  metadata: { name: 'kubernetes', namespace: 'default' },
  spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 as never }] },
};
