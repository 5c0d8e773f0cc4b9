/**
 * Paths kube-apiserver 1.32 serves that the 1.20 document lacks, for the
 * resources kcm serves (src/api/registry.ts): each is derived from the path
 * of a resource with the same shape (verbs, scope, subresource), with names,
 * kinds, operation ids and the body definition rewritten.
 *
 * addMissingPaths(doc) adds them (never replaces an existing path).
 */

/** Deep-copies `v`, replacing every string through `f`. */
function mapStrings(v, f) {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, f));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapStrings(x, f)]));
  return v;
}

const DERIVED = [
  // authentication.k8s.io/v1 SelfSubjectReview (GA in 1.28): create-only, cluster-scoped, like TokenReview.
  {
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    from: '/apis/authentication.k8s.io/v1/tokenreviews',
    replace: [['TokenReview', 'SelfSubjectReview']],
  },
  // pods/ephemeralcontainers (GA in 1.25): get, replace, patch of the Pod, like pods/status.
  {
    path: '/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers',
    from: '/api/v1/namespaces/{namespace}/pods/{name}/status',
    replace: [['NamespacedPodStatus', 'NamespacedPodEphemeralcontainers'], ['status of the specified Pod', 'ephemeralcontainers of the specified Pod']],
  },
];

// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and its Binding (GA in 1.30): cluster-scoped,
// every verb, like ValidatingWebhookConfiguration; the policy's /status like a VolumeAttachment's.
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
for (const [plural, kind] of [
  ['validatingadmissionpolicies', 'ValidatingAdmissionPolicy'],
  ['validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding'],
]) {
  const replace = [['ValidatingWebhookConfiguration', kind], ['validatingwebhookconfigurations', plural]];
  for (const [to, from] of [
    [`${ADMISSION}/${plural}`, `${ADMISSION}/validatingwebhookconfigurations`],
    [`${ADMISSION}/${plural}/{name}`, `${ADMISSION}/validatingwebhookconfigurations/{name}`],
    [`${ADMISSION}/watch/${plural}`, `${ADMISSION}/watch/validatingwebhookconfigurations`],
    [`${ADMISSION}/watch/${plural}/{name}`, `${ADMISSION}/watch/validatingwebhookconfigurations/{name}`],
  ]) {
    DERIVED.push({ path: to, from, replace });
  }
}
DERIVED.push({
  path: `${ADMISSION}/validatingadmissionpolicies/{name}/status`,
  from: '/apis/storage.k8s.io/v1/volumeattachments/{name}/status',
  replace: [
    ['io.k8s.api.storage.v1.VolumeAttachment', 'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy'],
    ['VolumeAttachment', 'ValidatingAdmissionPolicy'],
    ['volumeattachments', 'validatingadmissionpolicies'],
    ['storage.k8s.io', 'admissionregistration.k8s.io'],
    ['StorageV1', 'AdmissionregistrationV1'],
    ['storage_v1', 'admissionregistration_v1'],
  ],
});

export function addMissingPaths(doc) {
  const added = [];
  for (const d of DERIVED) {
    if (doc.paths[d.path]) continue;
    const src = doc.paths[d.from];
    if (!src) throw new Error(`paths: no ${d.from} to derive ${d.path} from`);
    doc.paths[d.path] = mapStrings(src, (s) => d.replace.reduce((acc, [a, b]) => acc.split(a).join(b), s));
    added.push(d.path);
  }
  return added;
}
