/** NodeName: a pod naming a node in spec.nodeName fits only that node. */
import { unresolvable, type FilterPlugin } from '../framework.js';

export const ERR_REASON_NODE_NAME = "node(s) didn't match the requested node name";

export const nodeNamePlugin: FilterPlugin = {
  name: 'NodeName',
  filter(ctx, info) {
    const want = ctx.pod.spec?.nodeName;
    if (!want || want === info.node?.metadata?.name) return undefined;
    return unresolvable(ERR_REASON_NODE_NAME);
  },
};
