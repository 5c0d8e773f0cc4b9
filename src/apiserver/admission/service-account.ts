/**
 * ServiceAccount admission for pods: defaults serviceAccountName to
 * `default`, refuses pods whose service account does not exist (after
 * upstream's retries: the `default` account is looked up 10 times, 100-200 ms
 * apart, since the serviceaccount controller creates it just after the
 * namespace), and mounts
 * the projected `kube-api-access-<5>` token volume into every container at
 * /var/run/secrets/kubernetes.io/serviceaccount unless automount is off
 * (pod field first, then the service account's).
 */
import type { Pod, Volume, VolumeMount } from 'kubernetes-types/core/v1.js';
import { generateName } from '../../api/names.js';
import { type AdmissionPlugin, type ObjectReader, onlyWhen, writes } from './admission.js';
import { forbidden } from '../status.js';
import { realClock, type Clock } from '../../util/clock/clock.js';

export const serviceAccountMountPath = '/var/run/secrets/kubernetes.io/serviceaccount';
const mirrorPodAnnotation = 'kubernetes.io/config.mirror';

/** How often getServiceAccount looks up the `default` service account (other names: once). */
export const defaultServiceAccountAttempts = 10;

export interface ServiceAccountAdmissionOptions {
  generateName?: (base: string) => string;
  /** Sleeps between lookups (default: the real clock). */
  clock?: Pick<Clock, 'sleep'>;
  /** The pause between lookups in ms; default random in [100, 200) as upstream, drawn once per lookup. */
  retryInterval?: () => number;
}

export function newServiceAccountAdmission(reader: ObjectReader, opts: ServiceAccountAdmissionOptions = {}): AdmissionPlugin {
  const gen = opts.generateName ?? generateName;
  const clock = opts.clock ?? realClock;
  const retryInterval = opts.retryInterval ?? (() => 100 + Math.floor(Math.random() * 100));

  /**
   * getServiceAccount: our reader reads storage, so every attempt is the live
   * lookup upstream falls back to after a cache miss. Bounded: at most
   * 9 pauses of under 200 ms.
   */
  async function getServiceAccount(namespace: string, name: string) {
    const attempts = name === 'default' ? defaultServiceAccountAttempts : 1;
    const interval = retryInterval();
    for (let i = 0; i < attempts; i++) {
      if (i !== 0) await clock.sleep(interval);
      const sa = await reader.get('', 'serviceaccounts', namespace, name);
      if (sa) return sa;
    }
    return undefined;
  }

  return {
    name: 'ServiceAccount',
    admit: onlyWhen(writes('CREATE', '', 'pods'), async (a) => {
      const pod = a.object as Pod;
      if (pod.metadata?.annotations?.[mirrorPodAnnotation] !== undefined) return;
      pod.spec ??= { containers: [] };
      const spec = pod.spec;
      if (!spec.serviceAccountName) spec.serviceAccountName = 'default';
      const sa = await getServiceAccount(a.namespace, spec.serviceAccountName);
      if (!sa) {
        throw forbidden(a.resource, a.name, `error looking up service account ${a.namespace}/${spec.serviceAccountName}: serviceaccount "${spec.serviceAccountName}" not found`);
      }
      const automount = spec.automountServiceAccountToken ?? (sa as { automountServiceAccountToken?: boolean }).automountServiceAccountToken ?? true;
      if (!automount) return;
      const all = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
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
    }),
  };
}
