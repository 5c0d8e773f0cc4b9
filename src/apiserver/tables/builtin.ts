/**
 * Registers the built-in printers' columns with the table registry, once.
 * The router calls it at start, so every server renders upstream's columns.
 */
import { registerTableColumns, type TableColumn } from '../table.js';
import { podColumns } from './pods.js';
import * as w from './workloads.js';
import * as c from './core.js';
import * as o from './others.js';
import { nameColumn } from './columns.js';

const builtin: [string, string, TableColumn[]][] = [
  ['', 'pods', podColumns],
  ['', 'services', c.serviceColumns],
  ['', 'nodes', c.nodeColumns],
  ['', 'namespaces', c.namespaceColumns],
  ['', 'configmaps', c.configMapColumns],
  ['', 'secrets', c.secretColumns],
  ['', 'serviceaccounts', c.serviceAccountColumns],
  ['', 'endpoints', c.endpointsColumns],
  ['', 'events', c.eventColumns],
  ['', 'persistentvolumeclaims', c.pvcColumns],
  ['', 'persistentvolumes', c.pvColumns],
  ['', 'resourcequotas', c.resourceQuotaColumns],
  ['', 'limitranges', c.limitRangeColumns],
  ['', 'componentstatuses', c.componentStatusColumns],
  ['', 'podtemplates', c.podTemplateColumns],
  ['', 'replicationcontrollers', c.replicationControllerColumns],
  ['apps', 'deployments', w.deploymentColumns],
  ['apps', 'replicasets', w.replicaSetColumns],
  ['apps', 'statefulsets', w.statefulSetColumns],
  ['apps', 'daemonsets', w.daemonSetColumns],
  ['apps', 'controllerrevisions', w.controllerRevisionColumns],
  ['batch', 'jobs', w.jobColumns],
  ['batch', 'cronjobs', w.cronJobColumns],
  ['autoscaling', 'horizontalpodautoscalers', w.hpaColumns],
  ['policy', 'poddisruptionbudgets', w.pdbColumns],
  ['discovery.k8s.io', 'endpointslices', o.endpointSliceColumns],
  ['coordination.k8s.io', 'leases', o.leaseColumns],
  ['networking.k8s.io', 'ingresses', o.ingressColumns],
  ['networking.k8s.io', 'ingressclasses', o.ingressClassColumns],
  ['networking.k8s.io', 'networkpolicies', o.networkPolicyColumns],
  ['rbac.authorization.k8s.io', 'roles', o.roleColumns],
  ['rbac.authorization.k8s.io', 'clusterroles', o.roleColumns],
  ['rbac.authorization.k8s.io', 'rolebindings', o.roleBindingColumns],
  ['rbac.authorization.k8s.io', 'clusterrolebindings', o.roleBindingColumns],
  ['storage.k8s.io', 'storageclasses', o.storageClassColumns],
  ['storage.k8s.io', 'csidrivers', o.csiDriverColumns],
  ['storage.k8s.io', 'volumeattachments', o.volumeAttachmentColumns],
  ['scheduling.k8s.io', 'priorityclasses', o.priorityClassColumns],
  ['certificates.k8s.io', 'certificatesigningrequests', o.csrColumns],
  ['admissionregistration.k8s.io', 'validatingwebhookconfigurations', o.webhookConfigurationColumns],
  ['admissionregistration.k8s.io', 'mutatingwebhookconfigurations', o.webhookConfigurationColumns],
  ['admissionregistration.k8s.io', 'validatingadmissionpolicies', o.validatingAdmissionPolicyColumns],
  ['admissionregistration.k8s.io', 'validatingadmissionpolicybindings', o.validatingAdmissionPolicyBindingColumns],
  ['node.k8s.io', 'runtimeclasses', o.runtimeClassColumns],
  ['flowcontrol.apiserver.k8s.io', 'flowschemas', o.flowSchemaColumns],
  // apiextensions-apiserver has no printer for CRDs: the default table convertor's Name and Created At.
  ['apiextensions.k8s.io', 'customresourcedefinitions', [nameColumn, c.createdAtColumn]],
];

let done = false;

export function registerBuiltinTables(): void {
  if (done) return;
  done = true;
  for (const [group, resource, cols] of builtin) registerTableColumns(group, resource, cols, { exact: true });
}
