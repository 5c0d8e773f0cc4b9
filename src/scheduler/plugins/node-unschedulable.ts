/** NodeUnschedulable: keeps pods off cordoned nodes unless they tolerate node.kubernetes.io/unschedulable:NoSchedule. */
import { unresolvable, type FilterPlugin } from '../framework.js';
import { tolerationsTolerateTaint } from '../../api/taints.js';

export const ERR_REASON_UNSCHEDULABLE = 'node(s) were unschedulable';

export const nodeUnschedulable: FilterPlugin = {
  name: 'NodeUnschedulable',
  filter(ctx, info) {
    if (!info.node?.spec?.unschedulable) return undefined;
    const tolerates = tolerationsTolerateTaint(ctx.pod.spec?.tolerations, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' });
    return tolerates ? undefined : unresolvable(ERR_REASON_UNSCHEDULABLE);
  },
};
