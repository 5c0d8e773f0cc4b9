/**
 * Node health tracking (tryUpdateNodeHealth of node_lifecycle_controller.go):
 * the controller remembers, per node, when it last saw the kubelet alive
 * (a new Ready heartbeat or a renewed Lease) and, once that is older than
 * the grace period, writes Ready, MemoryPressure, DiskPressure and
 * PIDPressure as Unknown.
 */
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { Node, NodeCondition, NodeStatus } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Client } from '../../client/interfaces.js';
import type { Kube } from '../../tools/cache/factory.js';
import { parseTime, rfc3339 } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { getNodeCondition } from './node-util.js';

export interface NodeHealthData {
  /** Epoch ms of the last sign of life. */
  probeTimestamp: number;
  /** Epoch ms of the last Ready transition seen. */
  readyTransitionTimestamp: number;
  status: NodeStatus;
  lease?: Lease;
}

/** Conditions set Unknown when the kubelet stops posting (NetworkUnavailable is the control plane's). */
export const MONITORED_CONDITION_TYPES = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;

export interface HealthResult {
  gracePeriodMs: number;
  /** The Ready condition as the node reported it (or a fake Unknown one when it never did). */
  observedReadyCondition: NodeCondition;
  /** The Ready condition after this pass (Unknown once the grace period passed); undefined when the node has none. */
  currentReadyCondition: NodeCondition | undefined;
}

export interface HealthDeps {
  client: Client;
  log: Logger;
  now: () => number;
  nodeMonitorGracePeriodMs: number;
  nodeStartupGracePeriodMs: number;
  /** The node's Lease in kube-node-lease, from the cache. */
  getLease(name: string): Lease | undefined;
}

function microTime(s: string | undefined): number {
  return parseTime(s) ?? 0;
}

function conditionsEqual(a: NodeCondition | undefined, b: NodeCondition | undefined): boolean {
  if (!a || !b) return a === b;
  return (
    a.type === b.type &&
    a.status === b.status &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.message ?? '') === (b.message ?? '') &&
    (a.lastHeartbeatTime ?? '') === (b.lastHeartbeatTime ?? '') &&
    (a.lastTransitionTime ?? '') === (b.lastTransitionTime ?? '')
  );
}

/**
 * Checks `node` (a private copy: its status may be changed) against the
 * health map and updates both; writes the node status when the Ready
 * condition became Unknown. Throws the client's error when that write fails.
 */
export async function tryUpdateNodeHealth(deps: HealthDeps, healthMap: Map<string, NodeHealthData>, node: Kube<Node>): Promise<HealthResult> {
  const name = node.metadata?.name ?? '';
  const created = parseTime(node.metadata?.creationTimestamp) ?? 0;
  let health: NodeHealthData | undefined = healthMap.get(name);
  const save = () => {
    if (health) healthMap.set(name, health);
  };
  try {
    if (!node.status) (node as { status?: NodeStatus }).status = {};
    const status = node.status as NodeStatus & { conditions?: NodeCondition[] };
    let gracePeriodMs: number;
    let observedReadyCondition: NodeCondition;
    let currentReadyCondition = getNodeCondition(status, 'Ready');
    if (!currentReadyCondition) {
      // The kubelet never posted status: a fake Unknown condition dated at creation.
      observedReadyCondition = {
        type: 'Ready',
        status: 'Unknown',
        lastHeartbeatTime: node.metadata?.creationTimestamp,
        lastTransitionTime: node.metadata?.creationTimestamp,
      } as NodeCondition;
      gracePeriodMs = deps.nodeStartupGracePeriodMs;
      if (health) health = { ...health, status: status };
      else health = { status: status, probeTimestamp: created, readyTransitionTimestamp: created };
    } else {
      observedReadyCondition = { ...currentReadyCondition };
      gracePeriodMs = deps.nodeMonitorGracePeriodMs;
    }

    const savedCondition = health ? getNodeCondition(health.status, 'Ready') : undefined;
    const savedLease = health?.lease;
    const now = deps.now();
    if (!health) {
      deps.log.info({ node: name }, 'Missing timestamp for Node. Assuming now as a timestamp');
      health = { status: status, probeTimestamp: now, readyTransitionTimestamp: now };
    } else if (!savedCondition && currentReadyCondition) {
      deps.log.v(1).info({ node: name }, 'Creating timestamp entry for newly observed Node');
      health = { status: status, probeTimestamp: now, readyTransitionTimestamp: now };
    } else if (savedCondition && !currentReadyCondition) {
      deps.log.error({ node: name }, 'ReadyCondition was removed from Status of Node');
      health = { status: status, probeTimestamp: now, readyTransitionTimestamp: now };
    } else if (savedCondition && currentReadyCondition && savedCondition.lastHeartbeatTime !== currentReadyCondition.lastHeartbeatTime) {
      let transition: number;
      if (savedCondition.lastTransitionTime !== currentReadyCondition.lastTransitionTime) {
        deps.log.v(3).info({ node: name, from: savedCondition.status, to: currentReadyCondition.status }, 'ReadyCondition for Node transitioned');
        transition = now;
      } else transition = health.readyTransitionTimestamp;
      deps.log.v(3).info({ node: name }, 'Node ReadyCondition updated. Updating timestamp');
      health = { status: status, probeTimestamp: now, readyTransitionTimestamp: transition };
    }

    // A renewed lease always counts as a sign of life.
    let h: NodeHealthData = health!;
    const observedLease = deps.getLease(name);
    if (observedLease && (!savedLease || microTime(savedLease.spec?.renewTime) < microTime(observedLease.spec?.renewTime))) {
      h = { ...h, lease: observedLease, probeTimestamp: now };
    }

    if (now > h.probeTimestamp + gracePeriodMs) {
      const nowStr = rfc3339(now);
      const conditions = status.conditions ?? (status.conditions = []);
      for (const type of MONITORED_CONDITION_TYPES) {
        const c = conditions.find((x) => x.type === type);
        if (!c) {
          deps.log.v(2).info({ node: name, type }, 'Condition of node was never updated by kubelet');
          conditions.push({
            type,
            status: 'Unknown',
            reason: 'NodeStatusNeverUpdated',
            message: 'Kubelet never posted node status.',
            lastHeartbeatTime: node.metadata?.creationTimestamp,
            lastTransitionTime: nowStr,
          } as NodeCondition);
        } else {
          deps.log.v(2).info({ node: name, type, durationMs: now - h.probeTimestamp }, "Node hasn't been updated");
          if (c.status !== 'Unknown') {
            c.status = 'Unknown';
            c.reason = 'NodeStatusUnknown';
            c.message = 'Kubelet stopped posting node status.';
            c.lastTransitionTime = nowStr;
          }
        }
      }
      currentReadyCondition = getNodeCondition(status, 'Ready');
      if (!conditionsEqual(currentReadyCondition, observedReadyCondition)) {
        try {
          await deps.client.resource<Kube<Node>>(GVR.nodes).updateStatus(node);
        } catch (err) {
          deps.log.error(err, { node: name }, 'Error updating node');
          throw err;
        }
        h = { status: status, probeTimestamp: h.probeTimestamp, readyTransitionTimestamp: deps.now(), ...(observedLease ? { lease: observedLease } : {}) };
      }
    }
    health = h;
    return { gracePeriodMs, observedReadyCondition, currentReadyCondition };
  } finally {
    save();
  }
}
