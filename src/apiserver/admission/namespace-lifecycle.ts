/**
 * NamespaceLifecycle: immortal namespaces cannot be deleted; nothing can be
 * created in a missing namespace (404) or one that is terminating (403 with
 * the NamespaceTerminating cause), as upstream's lifecycle plugin.
 */
import type { AdmissionPlugin, ObjectReader } from './admission.js';
import { forbidden, notFound } from '../status.js';

/** Upstream's immortal set (--immortal-namespaces default). */
export const immortalNamespaces: readonly string[] = ['default', 'kube-system', 'kube-public'];

/** Review resources are exempt, as upstream's accessReviewResources. */
const exempt = new Set(['authorization.k8s.io/', 'authentication.k8s.io/']);

export function newNamespaceLifecycle(reader: ObjectReader): AdmissionPlugin {
  return {
    name: 'NamespaceLifecycle',
    async validate(a) {
      const r = a.resource;
      if (a.operation === 'DELETE' && r.group === '' && r.resource === 'namespaces' && immortalNamespaces.includes(a.name)) {
        throw forbidden(r, a.name, 'this namespace may not be deleted');
      }
      if (!a.namespace || !r.namespaced || a.operation !== 'CREATE') return;
      if (exempt.has(`${r.group}/`)) return;
      const ns = await reader.get('', 'namespaces', '', a.namespace);
      if (!ns) throw notFound({ group: '', resource: 'namespaces' }, a.namespace);
      const phase = (ns.status as { phase?: string } | undefined)?.phase;
      if ((phase === 'Terminating' || ns.metadata?.deletionTimestamp) && a.subresource === '') {
        const err = forbidden(r, a.name, `unable to create new content in namespace ${a.namespace} because it is being terminated`);
        err.status.details = {
          ...(err.status.details ?? {}),
          causes: [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }],
        };
        throw err;
      }
    },
  };
}
