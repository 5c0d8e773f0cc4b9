/**
 * Node taint helpers as pkg/util/taints and pkg/controller/controller_utils.go
 * (AddOrUpdateTaintOnNode, RemoveTaintOffNode, SwapNodeControllerTaint).
 *
 * Taints are written with a patch that replaces `spec.taints` whole and
 * carries the node's resourceVersion as precondition (upstream's strategic
 * patch does the same: spec.taints has no merge key; a JSON merge patch
 * states it without relying on the server's patch metadata), retried on
 * Conflict with a fresh read.
 */
import type { Node, Taint } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { matchTaint, taintExists } from '../../api/taints.js';
import { isConflict } from '../../client/errors.js';
import type { Client } from '../../client/interfaces.js';
import type { Kube } from '../../tools/cache/factory.js';
import { rfc3339, type Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';

export const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_NODE_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const TAINT_NODE_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
export const TAINT_NODE_DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
export const TAINT_NODE_NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';
export const TAINT_NODE_PID_PRESSURE = 'node.kubernetes.io/pid-pressure';

/** The NoExecute taint of a node whose Ready condition is Unknown. */
export const UNREACHABLE_TAINT_TEMPLATE: Readonly<Taint> = Object.freeze({ key: TAINT_NODE_UNREACHABLE, effect: 'NoExecute' });
/** The NoExecute taint of a node whose Ready condition is False. */
export const NOT_READY_TAINT_TEMPLATE: Readonly<Taint> = Object.freeze({ key: TAINT_NODE_NOT_READY, effect: 'NoExecute' });

/** Node condition type -> condition status -> NoSchedule taint key (nodeConditionToTaintKeyStatusMap). */
export const NODE_CONDITION_TO_TAINT_KEY: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.freeze({
  Ready: { False: TAINT_NODE_NOT_READY, Unknown: TAINT_NODE_UNREACHABLE },
  MemoryPressure: { True: TAINT_NODE_MEMORY_PRESSURE },
  DiskPressure: { True: TAINT_NODE_DISK_PRESSURE },
  NetworkUnavailable: { True: TAINT_NODE_NETWORK_UNAVAILABLE },
  PIDPressure: { True: TAINT_NODE_PID_PRESSURE },
});

/** Taint keys the controller manages from conditions (taintKeyToNodeConditionMap). */
export const CONDITION_TAINT_KEYS: ReadonlySet<string> = new Set(Object.values(NODE_CONDITION_TO_TAINT_KEY).flatMap((m) => Object.values(m)));

/** Taints in `wanted` missing from `current`, and taints in `current` missing from `wanted` (TaintSetDiff). */
export function taintSetDiff(wanted: readonly Taint[], current: readonly Taint[]): { add: Taint[]; remove: Taint[] } {
  return {
    add: wanted.filter((t) => !taintExists(current, t)),
    remove: current.filter((t) => !taintExists(wanted, t)),
  };
}

function taintEqual(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect && (a.value ?? '') === (b.value ?? '') && (a.timeAdded ?? '') === (b.timeAdded ?? '');
}

/** `taints` with `t` added, or replacing the taint with its key and effect; undefined when already equal. */
export function addOrUpdateTaint(taints: readonly Taint[], t: Taint): Taint[] | undefined {
  let replaced = false;
  const out: Taint[] = [];
  for (const x of taints) {
    if (matchTaint(x, t)) {
      if (taintEqual(x, t)) return undefined;
      out.push(t);
      replaced = true;
    } else out.push(x);
  }
  if (!replaced) out.push(t);
  return out;
}

export interface TaintWriter {
  client: Client;
  clock: Clock;
  log: Logger;
}

/** UpdateTaintBackoff: 5 attempts, 100 ms apart (jittered up to 2x). */
const UPDATE_TAINT_STEPS = 5;
const UPDATE_TAINT_BASE_MS = 100;

/**
 * Reads the node (live), applies `change` to its taints and patches them with
 * the read resourceVersion as precondition; retries on Conflict. `change`
 * returns undefined when nothing needs writing.
 */
async function updateNodeTaints(w: TaintWriter, nodeName: string, change: (taints: Taint[]) => Taint[] | undefined): Promise<void> {
  const nodes = w.client.resource<Kube<Node>>(GVR.nodes);
  for (let attempt = 1; ; attempt++) {
    const node = await nodes.get(nodeName, attempt === 1 ? { resourceVersion: '0' } : {});
    const next = change([...(node.spec?.taints ?? [])]);
    if (!next) return;
    try {
      await nodes.patch(nodeName, 'merge', {
        metadata: { resourceVersion: node.metadata?.resourceVersion },
        spec: { taints: next.length ? next : null },
      });
      return;
    } catch (err) {
      if (!isConflict(err) || attempt >= UPDATE_TAINT_STEPS) throw err;
      await w.clock.sleep(UPDATE_TAINT_BASE_MS * (1 + Math.random()));
    }
  }
}

/** Adds (or updates) `taints` on the node (AddOrUpdateTaintOnNode). */
export async function addOrUpdateTaintsOnNode(w: TaintWriter, nodeName: string, taints: readonly Taint[]): Promise<void> {
  if (!taints.length) return;
  await updateNodeTaints(w, nodeName, (current) => {
    let cur = current;
    let updated = false;
    for (const t of taints) {
      const next = addOrUpdateTaint(cur, t);
      if (next) {
        cur = next;
        updated = true;
      }
    }
    return updated ? cur : undefined;
  });
}

/**
 * Removes `taints` (matched by key and effect) from the node
 * (RemoveTaintOffNode). When `node` is given and has none of them, no call
 * is made.
 */
export async function removeTaintsOffNode(w: TaintWriter, nodeName: string, node: Node | undefined, taints: readonly Taint[]): Promise<void> {
  if (!taints.length) return;
  if (node && !taints.some((t) => taintExists(node.spec?.taints, t))) return;
  await updateNodeTaints(w, nodeName, (current) => {
    const next = current.filter((x) => !taints.some((t) => matchTaint(x, t)));
    return next.length === current.length ? undefined : next;
  });
}

/**
 * Adds `add` (stamped with timeAdded = now) then removes `remove`
 * (SwapNodeControllerTaint). False (logged) on failure.
 */
export async function swapNodeControllerTaint(w: TaintWriter, add: readonly Taint[], remove: readonly Taint[], node: Node): Promise<boolean> {
  const name = node.metadata?.name ?? '';
  const now = rfc3339(w.clock.now());
  const stamped = add.map((t) => ({ ...t, timeAdded: now }));
  try {
    await addOrUpdateTaintsOnNode(w, name, stamped);
  } catch (err) {
    w.log.error(err, { node: name, taints: stamped.map((t) => `${t.key}:${t.effect}`) }, 'unable to taint unresponsive Node');
    return false;
  }
  if (stamped.length) w.log.v(4).info({ node: name, taints: stamped.map((t) => `${t.key}:${t.effect}`) }, 'Added taint to node');
  try {
    await removeTaintsOffNode(w, name, node, remove);
  } catch (err) {
    w.log.error(err, { node: name, taints: remove.map((t) => `${t.key}:${t.effect}`) }, 'unable to remove taint from unresponsive Node');
    return false;
  }
  if (remove.length) w.log.v(4).info({ node: name, taints: remove.map((t) => `${t.key}:${t.effect}`) }, 'Made sure that node has no taint');
  return true;
}
