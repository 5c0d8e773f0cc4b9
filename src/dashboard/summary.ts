/**
 * One object at a glance (protocol.ts ObjectSummary): its owners, a health
 * colour and a short status line, per kind, as `kubectl get` would sum it up.
 */
import type { Node, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { DaemonSet, Deployment, ReplicaSet, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { CronJob, Job } from 'kubernetes-types/batch/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { KubeObject } from '../api/types.js';
import { milliValue, value } from '../api/quantity.js';
import { podRequests } from '../scheduler/resources.js';
import type { Health, NodeInfo, ObjectSummary, PodInfo, Resources } from './protocol.js';

type Condition = { type?: string; status?: string; reason?: string; message?: string };

function condition(conds: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conds?.find((c) => c.type === type);
}

function quantity(q: string | number | undefined, milli: boolean): number {
  if (q === undefined) return 0;
  try {
    return milli ? milliValue(String(q)) : value(String(q));
  } catch {
    return 0;
  }
}

function resources(list: Record<string, string | number> | undefined): Resources & { pods: number } {
  return { cpu: quantity(list?.cpu, true), memory: quantity(list?.memory, false), pods: quantity(list?.pods, false) };
}

/** kubectl's pod STATUS column, shortened: a waiting or terminated container's reason wins over the phase. */
function podStatus(pod: Pod): string {
  if (pod.metadata?.deletionTimestamp) return 'Terminating';
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const s of statuses) {
    const reason = s.state?.waiting?.reason ?? (s.state?.terminated && s.state.terminated.exitCode !== 0 ? s.state.terminated.reason : undefined);
    if (reason && reason !== 'ContainerCreating' && reason !== 'PodInitializing') return reason;
  }
  return pod.status?.reason ?? pod.status?.phase ?? 'Pending';
}

export function podInfo(pod: Pod): PodInfo {
  const statuses = pod.status?.containerStatuses ?? [];
  const r = podRequests(pod);
  const scheduled = condition(pod.status?.conditions, 'PodScheduled');
  return {
    phase: pod.status?.phase ?? 'Pending',
    ready: condition(pod.status?.conditions, 'Ready')?.status === 'True',
    ...(pod.spec?.nodeName ? { node: pod.spec.nodeName } : {}),
    requests: { cpu: r.milliCPU, memory: r.memory },
    containers: pod.spec?.containers?.length ?? 0,
    readyContainers: statuses.filter((s) => s.ready).length,
    restarts: statuses.reduce((n, s) => n + (s.restartCount ?? 0), 0),
    ...(scheduled?.status === 'False' ? { unschedulable: { reason: scheduled.reason ?? '', message: scheduled.message ?? '' } } : {}),
  };
}

function podHealth(pod: Pod, info: PodInfo, status: string): Health {
  if (info.phase === 'Failed') return 'failed';
  if (info.phase === 'Succeeded') return 'ok';
  if (/BackOff|Err|Invalid|OOMKilled|Error/.test(status)) return 'failed';
  if (info.unschedulable) return 'warning';
  if (info.phase === 'Running' && info.ready) return 'ok';
  if (info.phase === 'Running' && (pod.status?.containerStatuses ?? []).some((s) => s.state?.running)) return info.restarts > 0 ? 'warning' : 'progressing';
  return 'progressing';
}

export function nodeInfo(node: Node): NodeInfo {
  const labels = node.metadata?.labels ?? {};
  const zone = labels['topology.kubernetes.io/zone'] ?? labels['failure-domain.beta.kubernetes.io/zone'];
  return {
    ready: condition(node.status?.conditions, 'Ready')?.status === 'True',
    unschedulable: !!node.spec?.unschedulable,
    taints: (node.spec?.taints ?? []).map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect })),
    conditions: (node.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, ...(c.reason ? { reason: c.reason } : {}), ...(c.message ? { message: c.message } : {}) })),
    allocatable: resources(node.status?.allocatable),
    capacity: resources(node.status?.capacity),
    ...(zone ? { zone } : {}),
  };
}

type Partial_ = Pick<ObjectSummary, 'health' | 'status'> & Partial<Pick<ObjectSummary, 'replicas' | 'revision' | 'pod' | 'node' | 'lease'>>;

function workload(desired: number, ready: number, extra: { available?: number; updated?: number } = {}): Partial_ {
  const done = ready >= desired && (extra.available === undefined || extra.available >= desired) && (extra.updated === undefined || extra.updated >= desired);
  return { health: done ? 'ok' : 'progressing', status: `${ready}/${desired} ready`, replicas: { desired, ready, ...extra } };
}

function byKind(obj: KubeObject): Partial_ {
  switch (obj.kind) {
    case 'Pod': {
      const pod = obj as Pod;
      const info = podInfo(pod);
      const status = podStatus(pod);
      return { health: podHealth(pod, info, status), status, pod: info };
    }
    case 'Node': {
      const info = nodeInfo(obj as Node);
      const status = `${info.ready ? 'Ready' : 'NotReady'}${info.unschedulable ? ',SchedulingDisabled' : ''}`;
      return { health: !info.ready ? 'failed' : info.unschedulable ? 'warning' : 'ok', status, node: info };
    }
    case 'Deployment': {
      const d = obj as Deployment;
      const s = d.status ?? {};
      const w = workload(d.spec?.replicas ?? 1, s.readyReplicas ?? 0, { available: s.availableReplicas ?? 0, updated: s.updatedReplicas ?? 0 });
      const progressing = condition(s.conditions, 'Progressing');
      if (progressing?.status === 'False') w.health = 'failed';
      else if (condition(s.conditions, 'ReplicaFailure')?.status === 'True') w.health = 'warning';
      w.status = `${s.readyReplicas ?? 0}/${d.spec?.replicas ?? 1} ready, ${s.updatedReplicas ?? 0} up-to-date`;
      return w;
    }
    case 'ReplicaSet':
    case 'ReplicationController': {
      const rs = obj as ReplicaSet;
      const w = workload(rs.spec?.replicas ?? 1, rs.status?.readyReplicas ?? 0, { available: rs.status?.availableReplicas ?? 0 });
      if (condition(rs.status?.conditions, 'ReplicaFailure')?.status === 'True') w.health = 'warning';
      return w;
    }
    case 'StatefulSet': {
      const s = obj as StatefulSet;
      return workload(s.spec?.replicas ?? 1, s.status?.readyReplicas ?? 0, { updated: s.status?.updatedReplicas ?? 0 });
    }
    case 'DaemonSet': {
      const ds = obj as DaemonSet;
      const st = ds.status;
      return workload(st?.desiredNumberScheduled ?? 0, st?.numberReady ?? 0, { available: st?.numberAvailable ?? 0, updated: st?.updatedNumberScheduled ?? 0 });
    }
    case 'Job': {
      const j = obj as Job;
      const st = j.status ?? {};
      if (condition(st.conditions, 'Complete')?.status === 'True') return { health: 'ok', status: `Complete ${st.succeeded ?? 0}/${j.spec?.completions ?? 1}` };
      const failed = condition(st.conditions, 'Failed');
      if (failed?.status === 'True') return { health: 'failed', status: `Failed: ${failed.reason ?? ''}` };
      if (j.spec?.suspend) return { health: 'warning', status: 'Suspended' };
      return { health: 'progressing', status: `Running: ${st.active ?? 0} active, ${st.succeeded ?? 0}/${j.spec?.completions ?? 1} succeeded` };
    }
    case 'CronJob': {
      const cj = obj as CronJob;
      return { health: cj.spec?.suspend ? 'warning' : 'ok', status: `${cj.spec?.schedule ?? ''}${cj.spec?.suspend ? ' (suspended)' : ''}, ${cj.status?.active?.length ?? 0} active` };
    }
    case 'PersistentVolumeClaim': {
      const phase = (obj as PersistentVolumeClaim).status?.phase ?? 'Pending';
      return { health: phase === 'Bound' ? 'ok' : phase === 'Lost' ? 'failed' : 'progressing', status: phase };
    }
    case 'Namespace': {
      const phase = (obj as { status?: { phase?: string } }).status?.phase ?? 'Active';
      return { health: phase === 'Active' ? 'ok' : 'terminating', status: phase };
    }
    case 'Lease': {
      const spec = (obj as Lease).spec ?? {};
      return {
        health: spec.holderIdentity ? 'ok' : 'unknown',
        status: spec.holderIdentity ? `held by ${spec.holderIdentity}` : 'not held',
        lease: {
          ...(spec.holderIdentity ? { holder: spec.holderIdentity } : {}),
          ...(spec.renewTime ? { renewTime: String(spec.renewTime) } : {}),
          ...(spec.acquireTime ? { acquireTime: String(spec.acquireTime) } : {}),
          ...(spec.leaseTransitions !== undefined ? { transitions: spec.leaseTransitions } : {}),
          ...(spec.leaseDurationSeconds !== undefined ? { durationSeconds: spec.leaseDurationSeconds } : {}),
        },
      };
    }
    default: {
      // Custom resources and the rest: a Ready condition when there is one.
      const ready = condition((obj as { status?: { conditions?: Condition[] } }).status?.conditions, 'Ready');
      if (ready) return { health: ready.status === 'True' ? 'ok' : ready.status === 'False' ? 'failed' : 'progressing', status: ready.status === 'True' ? 'Ready' : (ready.reason ?? 'NotReady') };
      return { health: 'ok', status: '' };
    }
  }
}

export function summarize(obj: KubeObject): ObjectSummary {
  const md = obj.metadata ?? {};
  const extra = byKind(obj);
  const deleting = !!md.deletionTimestamp;
  const revision = md.annotations?.['deployment.kubernetes.io/revision'];
  return {
    uid: md.uid ?? '',
    apiVersion: obj.apiVersion ?? '',
    kind: obj.kind ?? '',
    ...(md.namespace ? { namespace: md.namespace } : {}),
    name: md.name ?? '',
    resourceVersion: md.resourceVersion ?? '',
    created: String(md.creationTimestamp ?? ''),
    deleting,
    ...(md.finalizers?.length ? { finalizers: md.finalizers } : {}),
    owners: (md.ownerReferences ?? []).map((o) => ({ uid: o.uid, kind: o.kind, name: o.name, controller: !!o.controller })),
    ...extra,
    ...(deleting ? { health: 'terminating' as const } : {}),
    ...(revision ? { revision } : {}),
  };
}
