/** Printers of core/v1 kinds other than pods (upstream printers.go). */
import { ageColumn, col, formatLabels, int, nameColumn, since, orNone, type Loose } from './columns.js';

function servicePorts(o: Loose): string {
  const ports: Loose[] = o.spec?.ports ?? [];
  if (!ports.length) return '<none>';
  return ports.map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol ?? 'TCP'}` : `${p.port}/${p.protocol ?? 'TCP'}`)).join(',');
}

function loadBalancerIps(o: Loose): string[] {
  return ((o.status?.loadBalancer?.ingress ?? []) as Loose[]).map((i) => i.ip || i.hostname).filter(Boolean);
}

/** EXTERNAL-IP of a service (getServiceExternalIP, not wide: long load-balancer lists are cut to 16 characters). */
export function serviceExternalIp(o: Loose, wide = false): string {
  const external: string[] = o.spec?.externalIPs ?? [];
  switch (o.spec?.type ?? 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return external.length ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      let lb = loadBalancerIps(o).join(',');
      if (!wide && lb.length > 16) lb = `${lb.slice(0, 13)}...`;
      const all = [...(lb ? lb.split(',') : []), ...external];
      return all.length ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return o.spec?.externalName ?? '';
    default:
      return '<unknown>';
  }
}

export const serviceColumns = [
  nameColumn,
  col('Type', 'string', 'The type of service.', (o) => o.spec?.type ?? 'ClusterIP'),
  col('Cluster-IP', 'string', 'The cluster IP of the service.', (o) => o.spec?.clusterIP || '<none>'),
  col('External-IP', 'string', 'The external IP of the service.', (o) => serviceExternalIp(o)),
  col('Port(s)', 'string', 'The ports of the service.', servicePorts),
  ageColumn,
  col('Selector', 'string', 'The label selector of the service.', (o) => formatLabels(o.spec?.selector), 1),
];

/** STATUS of a node: Ready / NotReady / Unknown, plus SchedulingDisabled. */
export function nodeStatus(o: Loose): string {
  const ready = ((o.status?.conditions ?? []) as Loose[]).find((c) => c.type === 'Ready');
  const out: string[] = [];
  if (!ready) out.push('Unknown');
  else out.push(ready.status === 'True' ? 'Ready' : 'NotReady');
  if (o.spec?.unschedulable) out.push('SchedulingDisabled');
  return out.join(',');
}

export function nodeRoles(o: Loose): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries((o.metadata?.labels ?? {}) as Record<string, string>)) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role) roles.add(role);
    } else if (k === 'kubernetes.io/role' && v) roles.add(v);
  }
  return roles.size ? [...roles].sort().join(',') : '<none>';
}

const nodeAddress = (o: Loose, type: string) => ((o.status?.addresses ?? []) as Loose[]).find((a) => a.type === type)?.address ?? '<none>';
const unknownIfEmpty = (v: string | undefined) => (v ? v : '<unknown>');

export const nodeColumns = [
  nameColumn,
  col('Status', 'string', 'The status of the node', nodeStatus),
  col('Roles', 'string', 'The roles of the node', nodeRoles),
  ageColumn,
  col('Version', 'string', 'Kubelet Version reported by the node.', (o) => o.status?.nodeInfo?.kubeletVersion ?? ''),
  col('Internal-IP', 'string', 'List of addresses reachable to the node.', (o) => nodeAddress(o, 'InternalIP'), 1),
  col('External-IP', 'string', 'List of addresses reachable to the node.', (o) => nodeAddress(o, 'ExternalIP'), 1),
  col('OS-Image', 'string', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', (o) => unknownIfEmpty(o.status?.nodeInfo?.osImage), 1),
  col('Kernel-Version', 'string', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", (o) => unknownIfEmpty(o.status?.nodeInfo?.kernelVersion), 1),
  col('Container-Runtime', 'string', 'Container runtime version reported by the node through runtime remote API (e.g. containerd://1.4.2).', (o) => unknownIfEmpty(o.status?.nodeInfo?.containerRuntimeVersion), 1),
];

export const namespaceColumns = [nameColumn, col('Status', 'string', 'The status of the namespace', (o) => o.status?.phase ?? ''), ageColumn];

export const configMapColumns = [
  nameColumn,
  col('Data', 'integer', 'Number of data items in the ConfigMap.', (o) => Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length),
  ageColumn,
];

export const secretColumns = [
  nameColumn,
  col('Type', 'string', 'The type of the secret', (o) => o.type ?? ''),
  col('Data', 'integer', 'The number of data items in the secret', (o) => Object.keys(o.data ?? {}).length),
  ageColumn,
];

export const serviceAccountColumns = [nameColumn, col('Secrets', 'string', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', (o) => (o.secrets ?? []).length), ageColumn];

/** formatEndpoints: `ip:port` pairs, at most three, then ` + N more...`. */
export function formatEndpoints(o: Loose): string {
  const list: string[] = [];
  let count = 0;
  const max = 3;
  for (const ss of (o.subsets ?? []) as Loose[]) {
    const ports: Loose[] = ss.ports?.length ? ss.ports : [undefined];
    for (const p of ports) {
      for (const a of (ss.addresses ?? []) as Loose[]) {
        if (list.length < max) list.push(p ? `${a.ip}:${p.port}` : a.ip);
        count++;
      }
    }
  }
  if (!list.length) return '<none>';
  return count > max ? `${list.join(',')} + ${count - max} more...` : list.join(',');
}

export const endpointsColumns = [nameColumn, col('Endpoints', 'string', 'Endpoints of the resource.', formatEndpoints), ageColumn];

function eventSource(o: Loose): string {
  const src = o.source ?? {};
  const comp = src.component || o.reportingComponent || o.reportingController || '';
  const host = src.component ? src.host : o.reportingInstance;
  if (!comp) return '';
  return host ? `${comp}, ${host}` : comp;
}

function eventTimes(o: Loose, now: number): { first: string; last: string; count: number } {
  const first = o.firstTimestamp ? since(o.firstTimestamp, now) : since(o.eventTime, now);
  let last = o.lastTimestamp ? since(o.lastTimestamp, now) : first;
  let count = int(o.count);
  if (o.series) {
    last = since(o.series.lastObservedTime, now);
    count = int(o.series.count);
  } else if (count === 0) count = 1;
  return { first, last, count };
}

export const eventColumns = [
  col('Last Seen', 'string', 'Time when last event from this object was observed', (o, now) => eventTimes(o, now).last),
  col('Type', 'string', 'Type of the event', (o) => o.type ?? ''),
  col('Reason', 'string', 'Reason why the event was generated', (o) => o.reason ?? ''),
  col('Object', 'string', 'The object this Event is about', (o) => (o.involvedObject?.name ? `${String(o.involvedObject.kind ?? '').toLowerCase()}/${o.involvedObject.name}` : String(o.involvedObject?.kind ?? '').toLowerCase())),
  col('Subobject', 'string', 'The subobject this Event is about', (o) => o.involvedObject?.fieldPath ?? '', 1),
  col('Source', 'string', 'The source of the event', eventSource, 1),
  col('Message', 'string', 'A human-readable description of the status of this operation.', (o) => String(o.message ?? '').trim()),
  col('First Seen', 'string', 'Time when first event from this object was observed', (o, now) => eventTimes(o, now).first, 1),
  col('Count', 'string', 'Number of times this event has been seen', (o, now) => eventTimes(o, now).count, 1),
  col('Name', 'string', 'Name of the Event.', (o) => o.metadata?.name ?? '', 1, 'name'),
];

const accessModeShort: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };
const accessModes = (modes: string[] | undefined) => {
  const seen: string[] = [];
  for (const m of ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod']) if ((modes ?? []).includes(m)) seen.push(accessModeShort[m]!);
  return seen.join(',');
};
const storageClassOf = (o: Loose) => o.spec?.storageClassName ?? o.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? '';

export const pvcColumns = [
  nameColumn,
  col('Status', 'string', 'The phase of the claim.', (o) => (o.metadata?.deletionTimestamp ? 'Terminating' : o.status?.phase ?? '')),
  col('Volume', 'string', 'The volume bound to the claim.', (o) => o.spec?.volumeName ?? ''),
  col('Capacity', 'string', 'The capacity of the volume.', (o) => (o.spec?.volumeName ? o.status?.capacity?.storage ?? '' : '')),
  col('Access Modes', 'string', 'The access modes of the volume.', (o) => (o.spec?.volumeName ? accessModes(o.status?.accessModes) : '')),
  col('StorageClass', 'string', 'The storage class of the claim.', (o) => storageClassOf(o) || '<unset>'),
  col('VolumeAttributesClass', 'string', 'The volume attributes class of the claim.', (o) => o.spec?.volumeAttributesClassName || '<unset>'),
  ageColumn,
  col('VolumeMode', 'string', 'The volume mode of the claim.', (o) => o.spec?.volumeMode ?? '<unset>', 1),
];

export const pvColumns = [
  nameColumn,
  col('Capacity', 'string', 'The capacity of the volume.', (o) => o.spec?.capacity?.storage ?? ''),
  col('Access Modes', 'string', 'The access modes of the volume.', (o) => accessModes(o.spec?.accessModes)),
  col('Reclaim Policy', 'string', 'The reclaim policy of the volume.', (o) => o.spec?.persistentVolumeReclaimPolicy ?? ''),
  col('Status', 'string', 'The phase of the volume.', (o) => (o.metadata?.deletionTimestamp ? 'Terminating' : o.status?.phase ?? '')),
  col('Claim', 'string', 'The claim bound to the volume.', (o) => (o.spec?.claimRef ? `${o.spec.claimRef.namespace}/${o.spec.claimRef.name}` : '')),
  col('StorageClass', 'string', 'The storage class of the volume.', (o) => storageClassOf(o) || '<unset>'),
  col('VolumeAttributesClass', 'string', 'The volume attributes class of the volume.', (o) => o.spec?.volumeAttributesClassName || '<unset>'),
  col('Reason', 'string', 'The reason of the phase.', (o) => o.status?.reason ?? ''),
  ageColumn,
  col('VolumeMode', 'string', 'The volume mode of the volume.', (o) => o.spec?.volumeMode ?? '<unset>', 1),
];

export const resourceQuotaColumns = [
  nameColumn,
  ageColumn,
  col('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.', (o) => quotaPairs(o, false)),
  col('Limit', 'string', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.', (o) => quotaPairs(o, true)),
];

function quotaPairs(o: Loose, limits: boolean): string {
  const hard = (o.status?.hard ?? o.spec?.hard ?? {}) as Record<string, string>;
  const used = (o.status?.used ?? {}) as Record<string, string>;
  const parts: string[] = [];
  for (const k of Object.keys(hard).sort()) {
    if (limits !== k.startsWith('limits.')) continue;
    parts.push(`${k}: ${used[k] ?? '0'}/${hard[k]}`);
  }
  return parts.join(', ');
}

export const createdAtColumn = col('Created At', 'date', 'CreationTimestamp is a timestamp representing the server time when this object was created.', (o) => o.metadata?.creationTimestamp ?? '');

export const limitRangeColumns = [nameColumn, createdAtColumn];

/** printComponentStatus: the Healthy condition's status (Healthy/Unhealthy, Unknown without one), message and error. */
const healthyCondition = (o: Loose): Loose | undefined => ((o.conditions ?? []) as Loose[]).find((c) => c.type === 'Healthy');
export const componentStatusColumns = [
  nameColumn,
  col('Status', 'string', 'Status of the component conditions', (o) => {
    const c = healthyCondition(o);
    return c ? (c.status === 'True' ? 'Healthy' : 'Unhealthy') : 'Unknown';
  }),
  col('Message', 'string', 'Message of the component conditions', (o) => healthyCondition(o)?.message ?? ''),
  col('Error', 'string', 'Error of the component conditions', (o) => healthyCondition(o)?.error ?? ''),
];

export const podTemplateColumns = [
  nameColumn,
  col('Containers', 'string', 'Names of each container in the template.', (o) => ((o.template?.spec?.containers ?? []) as Loose[]).map((c) => c.name).join(',')),
  col('Images', 'string', 'Images referenced by each container in the template.', (o) => ((o.template?.spec?.containers ?? []) as Loose[]).map((c) => c.image).join(',')),
  col('Pod Labels', 'string', 'The labels for the pod template.', (o) => formatLabels(o.template?.metadata?.labels)),
];

export const replicationControllerColumns = [
  nameColumn,
  col('Desired', 'integer', 'Number of desired pods.', (o) => int(o.spec?.replicas)),
  col('Current', 'integer', 'Number of actual replicas.', (o) => int(o.status?.replicas)),
  col('Ready', 'integer', 'Number of ready replicas.', (o) => int(o.status?.readyReplicas)),
  ageColumn,
  col('Containers', 'string', 'Names of each container in the template.', (o) => ((o.spec?.template?.spec?.containers ?? []) as Loose[]).map((c) => c.name).join(','), 1),
  col('Images', 'string', 'Images referenced by each container in the template.', (o) => ((o.spec?.template?.spec?.containers ?? []) as Loose[]).map((c) => c.image).join(','), 1),
  col('Selector', 'string', 'Label selector for pods.', (o) => formatLabels(o.spec?.selector), 1),
];

export { orNone };
