/** NodePorts: a pod's hostPorts must be free on the node (same protocol and port; 0.0.0.0 overlaps every IP). */
import { unschedulable, type FilterPlugin } from '../framework.js';
import { hostPortConflicts, podHostPorts, type HostPort } from '../node-info.js';

export const ERR_REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports";

const STATE_KEY = 'NodePorts/wanted';

export const nodePorts: FilterPlugin = {
  name: 'NodePorts',
  preFilter(ctx) {
    ctx.state.set(STATE_KEY, podHostPorts(ctx.pod));
    return undefined;
  },
  filter(ctx, info) {
    const want = (ctx.state.get(STATE_KEY) as HostPort[] | undefined) ?? podHostPorts(ctx.pod);
    for (const w of want) if (hostPortConflicts(info.usedPorts, w)) return unschedulable(ERR_REASON_NODE_PORTS);
    return undefined;
  },
};
