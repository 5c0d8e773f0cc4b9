/**
 * Strategic-merge and list metadata of fields added since Kubernetes 1.20, as
 * the upstream OpenAPI document (api/openapi-spec/swagger.json) declares them
 * from the Go markers (`+listType=map`, `patchMergeKey:"name"`, ...). Lists
 * without an entry stay atomic, which is what both strategic merge patch
 * (replace) and structured-merge-diff (atomic) assume for them.
 *
 * applyListMetadata(definitions) sets the extensions in place; throws when a
 * named field is missing, so a renamed field cannot be skipped silently.
 */
const map = (key, strategy) => ({
  'x-kubernetes-list-map-keys': [key],
  'x-kubernetes-list-type': 'map',
  ...(strategy ? { 'x-kubernetes-patch-merge-key': key, 'x-kubernetes-patch-strategy': strategy } : {}),
});
const atomic = { 'x-kubernetes-list-type': 'atomic' };

/** definition -> field -> extensions */
export const LIST_METADATA = {
  'io.k8s.api.core.v1.PodSpec': { resourceClaims: map('name', 'merge,retainKeys') },
  'io.k8s.api.core.v1.PodStatus': { resourceClaimStatuses: map('name', 'merge,retainKeys') },
  'io.k8s.api.core.v1.ResourceRequirements': { claims: map('name') },
  'io.k8s.api.core.v1.ContainerStatus': { volumeMounts: map('mountPath', 'merge'), allocatedResourcesStatus: map('name', 'merge') },
  'io.k8s.api.core.v1.ResourceStatus': { resources: map('resourceID') },
  'io.k8s.api.core.v1.NodeStatus': { runtimeHandlers: atomic },
  'io.k8s.api.core.v1.PodAffinityTerm': { matchLabelKeys: atomic, mismatchLabelKeys: atomic },
  'io.k8s.api.core.v1.TopologySpreadConstraint': { matchLabelKeys: atomic },
  'io.k8s.api.core.v1.LinuxContainerUser': { supplementalGroups: atomic },
  'io.k8s.api.policy.v1.PodDisruptionBudgetStatus': { conditions: map('type', 'merge') },
  'io.k8s.api.admissionregistration.v1.MutatingWebhook': { matchConditions: map('name', 'merge') },
  'io.k8s.api.admissionregistration.v1.ValidatingWebhook': { matchConditions: map('name', 'merge') },
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec': { validations: atomic, auditAnnotations: atomic, matchConditions: map('name', 'merge'), variables: atomic },
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyStatus': { conditions: map('type') },
  'io.k8s.api.networking.v1.IngressLoadBalancerStatus': { ingress: atomic },
  'io.k8s.api.networking.v1.IngressLoadBalancerIngress': { ports: atomic },
  'io.k8s.api.authorization.v1.FieldSelectorAttributes': { requirements: atomic },
  'io.k8s.api.authorization.v1.LabelSelectorAttributes': { requirements: atomic },
  'io.k8s.api.resource.v1beta1.ResourceClaimStatus': { reservedFor: map('uid', 'merge'), devices: { 'x-kubernetes-list-map-keys': ['driver', 'device', 'pool'], 'x-kubernetes-list-type': 'map' } },
  'io.k8s.api.resource.v1beta1.AllocatedDeviceStatus': { conditions: map('type') },
};

export function applyListMetadata(D) {
  for (const [def, fields] of Object.entries(LIST_METADATA)) {
    for (const [f, ext] of Object.entries(fields)) {
      const p = D[def]?.properties?.[f];
      if (!p) throw new Error(`list metadata: no field ${def}.${f}`);
      Object.assign(p, ext);
    }
  }
}
