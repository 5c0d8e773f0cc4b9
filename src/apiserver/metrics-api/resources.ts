/** The served resources of metrics.k8s.io/v1beta1 (discovery as metrics-server's: get and list, no singular names). */
import type { ServedResource } from '../resources.js';
import { newStrategy } from '../registry/generic.js';
import { METRICS_GROUP, METRICS_VERSION } from './types.js';

/** The owner key of the metrics resources in the resource table (not a CRD name: it has a space). */
export const METRICS_RESOURCES_OWNER = 'resource metrics';

function served(resource: 'nodes' | 'pods', kind: string, namespaced: boolean): ServedResource {
  // Field selectors: the object-meta fields only (generic.AddObjectMetaFieldsSet).
  const strategy = newStrategy({
    group: METRICS_GROUP,
    resource,
    kind,
    namespaced,
    hasStatus: false,
  });
  return {
    group: METRICS_GROUP,
    version: METRICS_VERSION,
    resource,
    singular: '',
    kind,
    listKind: `${kind}List`,
    namespaced,
    shortNames: [],
    categories: [],
    verbs: ['get', 'list'],
    subresources: new Map(),
    strategy,
    allowCreateOnUpdate: false,
    returnDeletedObject: false,
    virtual: true,
  };
}

export function metricsResources(): ServedResource[] {
  return [served('nodes', 'NodeMetrics', false), served('pods', 'PodMetrics', true)];
}
