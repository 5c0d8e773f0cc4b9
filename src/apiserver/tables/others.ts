/** Printers of discovery, networking, rbac, storage, scheduling, coordination and certificates kinds. */
import { ageColumn, col, int, nameColumn, since, type Loose } from './columns.js';
import { createdAtColumn } from './core.js';

function moreList(items: string[], max = 3, empty = '<unset>'): string {
  if (!items.length) return empty;
  const shown = items.slice(0, max).join(',');
  return items.length > max ? `${shown} + ${items.length - max} more...` : shown;
}

export const endpointSliceColumns = [
  nameColumn,
  col('AddressType', 'string', 'The IP protocol for this slice', (o) => o.addressType ?? ''),
  col('Ports', 'string', 'The ports of this slice', (o) => moreList(((o.ports ?? []) as Loose[]).map((p) => (p.port === undefined || p.port === null ? '<unset>' : String(p.port))))),
  col('Endpoints', 'string', 'The endpoints of this slice', (o) => moreList(((o.endpoints ?? []) as Loose[]).flatMap((e) => e.addresses ?? []))),
  ageColumn,
];

export const leaseColumns = [nameColumn, col('Holder', 'string', 'The holder of the lease', (o) => o.spec?.holderIdentity ?? ''), ageColumn];

function ingressHosts(o: Loose): string {
  const hosts = ((o.spec?.rules ?? []) as Loose[]).map((r) => r.host).filter(Boolean) as string[];
  if (!hosts.length) return '*';
  const shown = hosts.slice(0, 4).join(',');
  return hosts.length > 4 ? `${shown} + ${hosts.length - 4} more...` : shown;
}

export const ingressColumns = [
  nameColumn,
  col('Class', 'string', 'The name of the IngressClass resource that should be used for additional configuration', (o) => o.spec?.ingressClassName ?? '<none>'),
  col('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule', ingressHosts),
  col('Address', 'string', 'Address is a list containing ingress points for the load-balancer', (o) => ((o.status?.loadBalancer?.ingress ?? []) as Loose[]).map((i) => i.ip || i.hostname).join(',')),
  col('Ports', 'string', 'Ports of TLS configurations that open', (o) => ((o.spec?.tls ?? []).length ? '80, 443' : '80')),
  ageColumn,
];

export const ingressClassColumns = [nameColumn, col('Controller', 'string', 'Controller that is responsible for handling this class', (o) => o.spec?.controller ?? ''), col('Parameters', 'string', 'A reference to a resource with additional parameters', (o) => (o.spec?.parameters ? `${o.spec.parameters.kind}/${o.spec.parameters.name}` : '<none>')), ageColumn];

export const networkPolicyColumns = [
  nameColumn,
  col('Pod-Selector', 'string', 'Selects the pods to which this NetworkPolicy object applies', (o) => {
    const ml = (o.spec?.podSelector?.matchLabels ?? {}) as Record<string, string>;
    const keys = Object.keys(ml).sort();
    return keys.length ? keys.map((k) => `${k}=${ml[k]}`).join(',') : '<none>';
  }),
  ageColumn,
];

export const roleColumns = [nameColumn, createdAtColumn];

const subjects = (o: Loose, kind: string) => ((o.subjects ?? []) as Loose[]).filter((s) => s.kind === kind).map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name)).join(', ');

export const roleBindingColumns = [
  nameColumn,
  col('Role', 'string', 'Role of the binding', (o) => `${o.roleRef?.kind ?? ''}/${o.roleRef?.name ?? ''}`),
  ageColumn,
  col('Users', 'string', 'Users in the binding', (o) => subjects(o, 'User'), 1),
  col('Groups', 'string', 'Groups in the binding', (o) => subjects(o, 'Group'), 1),
  col('ServiceAccounts', 'string', 'ServiceAccounts in the binding', (o) => subjects(o, 'ServiceAccount'), 1),
];

export const storageClassColumns = [
  col('Name', 'string', 'Name of the storage class', (o) => {
    const a = o.metadata?.annotations ?? {};
    const isDefault = a['storageclass.kubernetes.io/is-default-class'] === 'true' || a['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
    return isDefault ? `${o.metadata?.name} (default)` : o.metadata?.name ?? '';
  }, 0, 'name'),
  col('Provisioner', 'string', 'Indicates the type of the provisioner.', (o) => o.provisioner ?? ''),
  col('ReclaimPolicy', 'string', 'Indicates the type of the reclaim policy.', (o) => o.reclaimPolicy ?? 'Delete'),
  col('VolumeBindingMode', 'string', 'Indicates the binding mode of the storage class.', (o) => o.volumeBindingMode ?? 'Immediate'),
  col('AllowVolumeExpansion', 'string', 'Indicates whether the storage class allows volume expansion.', (o) => String(!!o.allowVolumeExpansion)),
  ageColumn,
];

export const priorityClassColumns = [
  nameColumn,
  col('Value', 'integer', 'The value of this priority class.', (o) => int(o.value)),
  col('Global-Default', 'boolean', 'Indicates the priority class is global default.', (o) => !!o.globalDefault),
  ageColumn,
  col('PreemptionPolicy', 'string', 'The preemption policy of this priority class.', (o) => o.preemptionPolicy ?? 'PreemptLowerPriority'),
];

function csrCondition(o: Loose): string {
  const out: string[] = [];
  let approved = false;
  let denied = false;
  for (const c of (o.status?.conditions ?? []) as Loose[]) {
    if (c.type === 'Approved') approved = true;
    else if (c.type === 'Denied') denied = true;
    else if (c.type === 'Failed') out.push('Failed');
  }
  const head: string[] = [];
  if (denied) head.push('Denied');
  else if (approved) head.push('Approved');
  else head.push('Pending');
  if (o.status?.certificate && approved) head.push('Issued');
  return [...head, ...out].join(',');
}

function formatSeconds(s: number): string {
  return since(new Date(0).toISOString(), s * 1000);
}

export const csrColumns = [
  nameColumn,
  ageColumn,
  col('SignerName', 'string', 'Signer name for the request', (o) => o.spec?.signerName ?? ''),
  col('Requestor', 'string', 'Requestor of the request', (o) => o.spec?.username ?? ''),
  col('RequestedDuration', 'string', 'Requested duration of the certificate', (o) => (o.spec?.expirationSeconds ? formatSeconds(o.spec.expirationSeconds) : '<none>')),
  col('Condition', 'string', 'State of the request', csrCondition),
];

export const webhookConfigurationColumns = [nameColumn, col('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration', (o) => (o.webhooks ?? []).length), ageColumn];

export const validatingAdmissionPolicyColumns = [
  nameColumn,
  col('Validations', 'integer', 'Validations indicates the number of validation rules defined in this configuration', (o) => (o.spec?.validations ?? []).length),
  col('ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy', (o) => (o.spec?.paramKind ? `${o.spec.paramKind.apiVersion ?? ''}/${o.spec.paramKind.kind ?? ''}` : '<unset>')),
  ageColumn,
];

/** printValidatingAdmissionPolicyBinding: the param as `ns/name`, `*\/name`, a selector, or <unset>. */
function paramRefCell(o: Loose): string {
  const pr = o.spec?.paramRef;
  if (!pr) return '<unset>';
  if (pr.name) return pr.namespace ? `${pr.namespace}/${pr.name}` : `*/${pr.name}`;
  if (pr.selector) return goProtoLabelSelector(pr.selector);
  return '<unset>';
}

/** The generated (gogo-protobuf) String() of a metav1.LabelSelector, as the printer shows it. */
function goProtoLabelSelector(sel: Loose): string {
  const ml = (sel.matchLabels ?? {}) as Record<string, string>;
  const labels = Object.keys(ml)
    .sort()
    .map((k) => `${k}: ${ml[k]},`)
    .join('');
  const exprs = ((sel.matchExpressions ?? []) as Loose[]).map((r) => `LabelSelectorRequirement{Key:${r.key ?? ''},Operator:${r.operator ?? ''},Values:[${(r.values ?? []).join(' ')}],},`).join('');
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

export const validatingAdmissionPolicyBindingColumns = [
  nameColumn,
  col('PolicyName', 'string', 'PolicyName indicates the policy definition which the policy binding binded to', (o) => o.spec?.policyName ?? ''),
  col('ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param', paramRefCell),
  ageColumn,
];

export const runtimeClassColumns = [nameColumn, col('Handler', 'string', 'Name of the handler', (o) => o.handler ?? ''), ageColumn];

export const flowSchemaColumns = [
  nameColumn,
  col('PriorityLevel', 'string', 'Name of the priority level', (o) => o.spec?.priorityLevelConfiguration?.name ?? ''),
  col('MatchingPrecedence', 'string', 'Precedence of the flow schema', (o) => String(int(o.spec?.matchingPrecedence))),
  col('DistinguisherMethod', 'string', 'The distinguisher method', (o) => o.spec?.distinguisherMethod?.type ?? '<none>'),
  ageColumn,
  col('MissingPL', 'string', 'Whether the priority level is missing', (o) => {
    const c = ((o.status?.conditions ?? []) as Loose[]).find((x) => x.type === 'Dangling');
    return c ? c.status : '?';
  }),
];

export const csiDriverColumns = [
  nameColumn,
  col('AttachRequired', 'boolean', 'Indicates this CSI volume driver requires an attach operation.', (o) => o.spec?.attachRequired ?? true),
  col('PodInfoOnMount', 'boolean', 'Indicates this CSI volume driver requires additional pod information during mount operations.', (o) => !!o.spec?.podInfoOnMount),
  col('StorageCapacity', 'boolean', 'Indicates this CSI volume driver uses storage capacity.', (o) => !!o.spec?.storageCapacity),
  col('TokenRequests', 'string', 'Indicates the token requests of this CSI volume driver.', (o) => ((o.spec?.tokenRequests ?? []) as Loose[]).map((t) => t.audience).join(',') || '<unset>'),
  col('RequiresRepublish', 'boolean', 'Indicates this CSI volume driver requires republish.', (o) => !!o.spec?.requiresRepublish),
  col('Modes', 'string', 'Volume lifecycle modes', (o) => (o.spec?.volumeLifecycleModes ?? ['Persistent']).join(',')),
  ageColumn,
];

export const volumeAttachmentColumns = [
  nameColumn,
  col('Attacher', 'string', 'Name of the attacher', (o) => o.spec?.attacher ?? ''),
  col('PV', 'string', 'Name of the persistent volume', (o) => o.spec?.source?.persistentVolumeName ?? ''),
  col('Node', 'string', 'Name of the node', (o) => o.spec?.nodeName ?? ''),
  col('Attached', 'boolean', 'Is the volume attached', (o) => !!o.status?.attached),
  ageColumn,
];
