/**
 * ServiceAccount admission for pods: defaults serviceAccountName to
 * `default`, refuses pods whose service account does not exist, and mounts
 * the projected `kube-api-access-<5>` token volume into every container at
 * /var/run/secrets/kubernetes.io/serviceaccount unless automount is off
 * (pod field first, then the service account's).
 */
import type { Pod, Volume, VolumeMount } from 'kubernetes-types/core/v1.js';
import { generateName } from '../../api/names.js';
import type { AdmissionPlugin, ObjectReader } from './admission.js';
import { forbidden } from '../status.js';

export const serviceAccountMountPath = '/var/run/secrets/kubernetes.io/serviceaccount';
const mirrorPodAnnotation = 'kubernetes.io/config.mirror';

export function newServiceAccountAdmission(reader: ObjectReader, opts: { generateName?: (base: string) => string } = {}): AdmissionPlugin {
  const gen = opts.generateName ?? generateName;
  return {
    name: 'ServiceAccount',
    async admit(a) {
      if (a.operation !== 'CREATE' || a.subresource !== '' || a.resource.group !== '' || a.resource.resource !== 'pods') return;
      const pod = a.object as Pod;
      if (pod.metadata?.annotations?.[mirrorPodAnnotation] !== undefined) return;
      pod.spec ??= { containers: [] };
      const spec = pod.spec;
      if (!spec.serviceAccountName) spec.serviceAccountName = 'default';
      const sa = await reader.get('', 'serviceaccounts', a.namespace, spec.serviceAccountName);
      if (!sa) {
        throw forbidden(a.resource, a.name, `error looking up service account ${a.namespace}/${spec.serviceAccountName}: serviceaccount "${spec.serviceAccountName}" not found`);
      }
      const automount = spec.automountServiceAccountToken ?? (sa as { automountServiceAccountToken?: boolean }).automountServiceAccountToken ?? true;
      if (!automount) return;
      const all = [...(spec.initContainers ?? []), ...spec.containers];
      if (all.some((c) => (c.volumeMounts ?? []).some((m) => m.mountPath === serviceAccountMountPath))) return;
      const volumes = spec.volumes ?? [];
      let name = '';
      do name = gen('kube-api-access-');
      while (volumes.some((v) => v.name === name));
      const volume: Volume = {
        name,
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { downwardAPI: { items: [{ fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' }, path: 'namespace' }] } },
          ],
        },
      };
      spec.volumes = [...volumes, volume];
      const mount: VolumeMount = { name, readOnly: true, mountPath: serviceAccountMountPath };
      for (const c of all) c.volumeMounts = [...(c.volumeMounts ?? []), { ...mount }];
    },
  };
}
