// Development harness for the dashboard page (not part of the build): serves the
// page, built fresh on each load of /, and a fake server — /api/stream,
// /api/timeline, /api/object — from generated data: a namespace with a
// Deployment → 2 ReplicaSets → 5,000 pods on 100 nodes, a Job, a StatefulSet
// with PVCs, a CronJob, a Service, a dangling owner, a deleting custom resource,
// controllers with queues and scheduler decisions; deltas every 250 ms.
//
//   node web/dashboard/dev-server.mjs [--port 8089] [--pods 5000] [--nodes 100]
//        [--auth]            require /login?token=dev first (to see the 401 banner)
//        [--metrics]         controllers in 'metrics' mode (no keys, no errors)
//        [--ctl-error]       the controller manager cannot be read (ok: false)
//        [--no-minify]       readable app.js (for profiling)
//        [--churn 50]        pods changed per delta
import { createServer } from 'node:http';
import { readFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { buildDashboard } from './build.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] && !args[i + 1].startsWith('--') ? args[i + 1] : def;
};
const flag = (name) => args.includes(`--${name}`);
const PORT = Number(opt('port', process.env.PORT ?? 8089));
const N_PODS = Number(opt('pods', 5000));
const N_NODES = Number(opt('nodes', 100));
const AUTH = flag('auth');
const MODE = flag('metrics') ? 'metrics' : 'debug';
const CTL_ERROR = flag('ctl-error');
const CHURN = Number(opt('churn', 50));

// ---- generated cluster ------------------------------------------------------

let rv = 1000;
const nextRv = () => String(++rv);
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = (a) => a[Math.floor(rand() * a.length)];
const suffix = (n = 5) => Array.from({ length: n }, () => pick('bcdfghjklmnpqrstvwxz2456789')).join('');
let uidN = 0;
const newUid = () => {
  const h = (++uidN).toString(16).padStart(12, '0');
  return `0b5e${h.slice(0, 4)}-1c2d-4e5f-8a9b-${h}`;
};

const T0 = Date.now() - 40 * 60_000;
const iso = (ms) => new Date(ms).toISOString();
const objects = new Map(); // uid → ObjectSummary
const full = new Map(); // uid → extra fake spec for /api/object

function add(o) {
  const obj = {
    uid: o.uid ?? newUid(),
    apiVersion: o.apiVersion ?? 'v1',
    kind: o.kind,
    namespace: o.namespace,
    name: o.name,
    resourceVersion: nextRv(),
    created: iso(o.created ?? T0 + rand() * 60_000),
    deleting: o.deleting ?? false,
    finalizers: o.finalizers,
    owners: o.owners ?? [],
    health: o.health ?? 'ok',
    status: o.status ?? '',
    ...(o.revision ? { revision: o.revision } : {}),
    ...(o.replicas ? { replicas: o.replicas } : {}),
    ...(o.pod ? { pod: o.pod } : {}),
    ...(o.node ? { node: o.node } : {}),
    ...(o.lease ? { lease: o.lease } : {}),
  };
  objects.set(obj.uid, obj);
  return obj;
}
const ref = (o, controller = true) => ({ uid: o.uid, kind: o.kind, name: o.name, controller });

// Nodes
const nodes = [];
for (let i = 1; i <= N_NODES; i++) {
  const name = `node-${String(i).padStart(3, '0')}`;
  const notReady = i === 7 || i === 58;
  const pressure = i === 23;
  const cordoned = i === 42;
  const conditions = [
    { type: 'MemoryPressure', status: pressure ? 'True' : 'False', reason: pressure ? 'KubeletHasInsufficientMemory' : 'KubeletHasSufficientMemory' },
    { type: 'DiskPressure', status: 'False' },
    { type: 'PIDPressure', status: 'False' },
    notReady
      ? { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' }
      : { type: 'Ready', status: 'True', reason: 'KubeletReady' },
  ];
  const taints = [];
  if (notReady) taints.push({ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }, { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' });
  if (cordoned) taints.push({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' });
  if (pressure) taints.push({ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' });
  if (i % 25 === 0) taints.push({ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' });
  nodes.push(
    add({
      kind: 'Node',
      name,
      health: notReady ? 'failed' : pressure ? 'warning' : cordoned ? 'warning' : 'ok',
      status: notReady ? 'NotReady' : cordoned ? 'Ready,SchedulingDisabled' : 'Ready',
      node: {
        ready: !notReady,
        unschedulable: cordoned,
        taints,
        conditions,
        allocatable: { cpu: 7800, memory: 15.5 * 2 ** 30, pods: 110 },
        capacity: { cpu: 8000, memory: 16 * 2 ** 30, pods: 110 },
        zone: `zone-${'abc'[i % 3]}`,
      },
    }),
  );
}
const schedulable = nodes.filter((n) => n.node.ready && !n.node.unschedulable && !n.node.taints.length);

function podOf(owner, name, opts = {}) {
  const node = opts.node === undefined ? pick(schedulable).name : opts.node;
  const phase = opts.phase ?? (node ? 'Running' : 'Pending');
  const health = opts.health ?? (phase === 'Running' ? 'ok' : phase === 'Succeeded' ? 'ok' : phase === 'Failed' ? 'failed' : 'progressing');
  return add({
    kind: 'Pod',
    namespace: owner?.namespace ?? opts.namespace,
    name,
    owners: owner ? [ref(owner)] : opts.owners ?? [],
    health,
    status: opts.status ?? (phase === 'Running' ? 'Running' : phase),
    deleting: opts.deleting,
    finalizers: opts.finalizers,
    pod: {
      phase,
      ready: phase === 'Running',
      node: node ?? undefined,
      requests: opts.requests ?? { cpu: 100, memory: 128 * 2 ** 20 },
      containers: 1,
      readyContainers: phase === 'Running' ? 1 : 0,
      restarts: 0,
      ...(opts.unschedulable ? { unschedulable: opts.unschedulable } : {}),
    },
  });
}

// demo: Deployment web → 2 ReplicaSets → N_PODS pods
const NS = 'demo';
const deploy = add({
  kind: 'Deployment',
  apiVersion: 'apps/v1',
  namespace: NS,
  name: 'web',
  revision: '2',
  health: 'progressing',
  status: `${N_PODS - 40}/${N_PODS} ready, rolling out`,
  replicas: { desired: N_PODS, ready: N_PODS - 40, available: N_PODS - 40, updated: Math.round(N_PODS * 0.6) },
});
const rsNew = add({ kind: 'ReplicaSet', apiVersion: 'apps/v1', namespace: NS, name: 'web-7c9f6d8b4', owners: [ref(deploy)], revision: '2', health: 'progressing', status: '', replicas: { desired: Math.round(N_PODS * 0.6), ready: 0 } });
const rsOld = add({ kind: 'ReplicaSet', apiVersion: 'apps/v1', namespace: NS, name: 'web-5d4b8f7c6', owners: [ref(deploy)], revision: '1', health: 'ok', status: '', replicas: { desired: N_PODS - Math.round(N_PODS * 0.6), ready: 0 } });
const webPods = [];
for (let i = 0; i < N_PODS; i++) {
  const rs = i < Math.round(N_PODS * 0.6) ? rsNew : rsOld;
  const pending = rs === rsNew && i % 150 === 0;
  const p = podOf(rs, `${rs.name}-${suffix()}`, pending
    ? { node: null, phase: 'Pending', status: 'Pending', unschedulable: { reason: 'Unschedulable', message: `0/${N_NODES} nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 1 node(s) were unschedulable, 4 node(s) had untolerated taint {dedicated: gpu}, ${N_NODES - 7} Insufficient cpu. preemption: 0/${N_NODES} nodes are available: ${N_NODES} No preemption victims found for incoming pod.` } }
    : { requests: { cpu: rs === rsNew ? 120 : 100, memory: (rs === rsNew ? 160 : 128) * 2 ** 20 } });
  webPods.push(p);
}
for (const rs of [rsNew, rsOld]) {
  const pods = webPods.filter((p) => p.owners[0].uid === rs.uid);
  rs.replicas.ready = pods.filter((p) => p.pod.ready).length;
  rs.status = `${rs.replicas.ready}/${rs.replicas.desired} ready`;
}
// A couple of terminating pods (with a finalizer) in the old ReplicaSet.
for (const p of webPods.filter((p) => p.owners[0].uid === rsOld.uid).slice(0, 3)) {
  p.deleting = true;
  p.finalizers = ['example.com/drain'];
  p.health = 'terminating';
  p.status = 'Terminating';
}

// Service → EndpointSlice
const svc = add({ kind: 'Service', namespace: NS, name: 'web', status: 'ClusterIP 10.96.12.7', health: 'ok' });
add({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', namespace: NS, name: `web-${suffix()}`, owners: [ref(svc)], status: '100 endpoints (of many)', health: 'ok' });
add({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', namespace: NS, name: `web-${suffix()}`, owners: [ref(svc)], status: '100 endpoints', health: 'ok' });

// Job → Pods
const job = add({ kind: 'Job', apiVersion: 'batch/v1', namespace: NS, name: 'migrate-schema', status: '2/3 succeeded, 1 failed', health: 'warning' });
podOf(job, `migrate-schema-${suffix()}`, { phase: 'Succeeded', status: 'Completed' });
podOf(job, `migrate-schema-${suffix()}`, { phase: 'Succeeded', status: 'Completed' });
podOf(job, `migrate-schema-${suffix()}`, { phase: 'Failed', status: 'Error (exit 1)' });

// StatefulSet → Pods and PVCs
const sts = add({ kind: 'StatefulSet', apiVersion: 'apps/v1', namespace: NS, name: 'db', status: '2/3 ready', health: 'progressing', replicas: { desired: 3, ready: 2 } });
for (let i = 0; i < 3; i++) {
  podOf(sts, `db-${i}`, i === 2 ? { phase: 'Pending', node: nodes[3].name, status: 'ContainerCreating', health: 'progressing' } : { requests: { cpu: 500, memory: 2 ** 30 } });
  add({ kind: 'PersistentVolumeClaim', namespace: NS, name: `data-db-${i}`, owners: [ref(sts)], status: 'Bound', health: 'ok' });
}

// CronJob → Job → Pod
const cron = add({ kind: 'CronJob', apiVersion: 'batch/v1', namespace: NS, name: 'nightly-report', status: 'last run 5m ago', health: 'ok' });
const cjob = add({ kind: 'Job', apiVersion: 'batch/v1', namespace: NS, name: 'nightly-report-29012345', owners: [ref(cron)], status: '1/1 succeeded', health: 'ok' });
podOf(cjob, `nightly-report-29012345-${suffix()}`, { phase: 'Succeeded', status: 'Completed' });

// A dangling owner: pods whose ReplicaSet is gone.
const goneRs = { uid: newUid(), kind: 'ReplicaSet', name: 'api-6f5d9c8b7', controller: true };
podOf(null, `api-6f5d9c8b7-${suffix()}`, { namespace: NS, owners: [goneRs] });
podOf(null, `api-6f5d9c8b7-${suffix()}`, { namespace: NS, owners: [goneRs], health: 'warning', status: 'CrashLoopBackOff' });

// A custom resource being deleted, held by its finalizer, with a child.
const widget = add({ kind: 'Widget', apiVersion: 'example.com/v1', namespace: NS, name: 'blue', status: 'Deleting: waiting for cleanup', health: 'terminating', deleting: true, finalizers: ['example.com/cleanup'] });
add({ kind: 'ConfigMap', namespace: NS, name: 'blue-config', owners: [ref(widget)], status: '3 keys', health: 'ok' });
add({ kind: 'ConfigMap', namespace: NS, name: 'kube-root-ca.crt', status: '1 key', health: 'ok' });

// default: a small Deployment (pods as rows)
const hello = add({ kind: 'Deployment', apiVersion: 'apps/v1', namespace: 'default', name: 'hello', revision: '1', status: '3/3 ready', health: 'ok', replicas: { desired: 3, ready: 3, available: 3, updated: 3 } });
const helloRs = add({ kind: 'ReplicaSet', apiVersion: 'apps/v1', namespace: 'default', name: 'hello-6d8f7b9c5', owners: [ref(hello)], revision: '1', status: '3/3 ready', health: 'ok', replicas: { desired: 3, ready: 3 } });
for (let i = 0; i < 3; i++) podOf(helloRs, `hello-6d8f7b9c5-${suffix()}`);

// Leases
const now0 = Date.now();
add({ kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', namespace: 'kube-system', name: 'kube-controller-manager', status: 'held', lease: { holder: 'kcm-7f9c_3b2a', renewTime: iso(now0), acquireTime: iso(T0), transitions: 2, durationSeconds: 15 } });
add({ kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', namespace: 'kube-system', name: 'kube-scheduler', status: 'held', lease: { holder: 'scheduler-1_9d8e', renewTime: iso(now0), transitions: 0, durationSeconds: 15 } });
for (const n of nodes.slice(0, 30)) {
  add({ kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', namespace: 'kube-node-lease', name: n.name, status: 'held', lease: { holder: n.name, renewTime: iso(n.node.ready ? now0 : now0 - 120_000), durationSeconds: 40 } });
}

const namespaces = ['default', NS, 'kube-node-lease', 'kube-system'];

// ---- controllers --------------------------------------------------------------

const queueDefs = [
  ['deployment', 'deployment'],
  ['replicaset', 'replicaset'],
  ['job', 'job'],
  ['job', 'job_orphan_pod'],
  ['statefulset', 'statefulset'],
  ['endpointslice', 'endpoint_slice'],
  ['endpointslice', 'endpoint_slice_mirroring'],
  ['garbagecollector', 'garbage_collector_attempt_to_delete'],
  ['garbagecollector', 'garbage_collector_attempt_to_orphan'],
  ['cronjob', 'cronjob'],
  ['nodelifecycle', 'node_lifecycle_taint'],
  ['ttlafterfinished', 'ttl_jobs_to_delete'],
];
const queues = queueDefs.map(([controller, name]) => ({
  name,
  controller,
  depth: 0,
  adds: Math.floor(rand() * 5000),
  addsPerSecond: 0,
  retries: 0,
  processing: [],
  longestRunningSeconds: 0,
  waiting: [],
  duration: { count: Math.floor(rand() * 5000), p50: 0.002, p90: 0.008, p99: 0.03 },
  lastErrors: [],
}));
const podKeys = () => `${NS}/${pick(webPods).name}`;
let tick = 0;
function controllersState() {
  tick++;
  for (const q of queues) {
    const busy = q.name === 'replicaset' ? 40 + 35 * Math.sin(tick / 6) : q.name === 'garbage_collector_attempt_to_delete' ? 8 * Math.abs(Math.sin(tick / 9)) : rand() < 0.3 ? rand() * 4 : 0;
    q.depth = Math.max(0, Math.round(busy));
    q.addsPerSecond = +(q.depth * 1.5 + rand() * 2).toFixed(1);
    q.adds += Math.round(q.addsPerSecond);
    q.duration.count += Math.round(q.addsPerSecond);
    q.processing = q.depth ? [{ key: q.name === 'replicaset' ? `${NS}/${rsNew.name}` : podKeys(), seconds: +(rand() * (q.name === 'replicaset' ? 2.5 : 0.2)).toFixed(3) }] : [];
    q.longestRunningSeconds = q.processing[0]?.seconds ?? 0;
    q.waiting = Array.from({ length: Math.min(50, q.depth) }, podKeys);
    if (q.name === 'job' && rand() < 0.3) {
      q.retries++;
      q.lastErrors.push({ time: Date.now(), key: `${NS}/${job.name}`, message: 'Operation cannot be fulfilled on jobs.batch "migrate-schema": the object has been modified; please apply your changes to the latest version and try again' });
      if (q.lastErrors.length > 10) q.lastErrors.shift();
    }
    if (q.name === 'garbage_collector_attempt_to_delete' && !q.lastErrors.length) {
      q.retries = 3;
      q.lastErrors.push({ time: Date.now() - 30_000, key: `[example.com/v1/Widget, namespace: demo, name: blue, uid: ${widget.uid}]`, message: 'waiting for finalizer example.com/cleanup' });
    }
  }
  const metrics = MODE === 'metrics';
  return {
    source: metrics ? 'https://127.0.0.1:10257/metrics' : 'https://127.0.0.1:10257/debug/controllers',
    mode: MODE,
    ok: !CTL_ERROR,
    ...(CTL_ERROR ? { error: 'Get "https://127.0.0.1:10257/debug/controllers": dial tcp 127.0.0.1:10257: connect: connection refused' } : {}),
    fetchedAt: Date.now(),
    controllers: [...new Set(queueDefs.map(([c]) => c)), 'podgc'].map((name) => ({
      name,
      healthy: name !== 'nodelifecycle' || tick % 20 < 15,
      queues: queueDefs.filter(([c]) => c === name).map(([, q]) => q),
    })),
    queues: queues.map((q) => (metrics ? { ...q, waiting: undefined, lastErrors: undefined, processing: [] } : q)),
    leaderElection: { lease: 'kube-system/kube-controller-manager', identity: 'kcm-7f9c_3b2a', leading: true },
  };
}

// ---- scheduling ---------------------------------------------------------------

const scheduling = [];
function decisions(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const p = pick(webPods);
    const failed = rand() < 0.25;
    out.push(
      failed
        ? { time: Date.now(), namespace: NS, pod: p.name, podUid: p.uid, reason: 'FailedScheduling', message: `0/${N_NODES} nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 1 node(s) were unschedulable, ${N_NODES - 3} Insufficient cpu.` }
        : { time: Date.now(), namespace: NS, pod: p.name, podUid: p.uid, reason: 'Scheduled', node: p.pod.node ?? pick(schedulable).name, message: `Successfully assigned ${NS}/${p.name} to ${p.pod.node ?? 'node-001'}` },
    );
  }
  scheduling.push(...out);
  if (scheduling.length > 500) scheduling.splice(0, scheduling.length - 500);
  return out;
}
decisions(40);

// ---- deltas -----------------------------------------------------------------

const HEALTH_CYCLE = { ok: 'progressing', progressing: 'ok', warning: 'ok', failed: 'progressing', terminating: 'terminating', unknown: 'ok' };
const STATUS = { ok: 'Running', progressing: 'ContainerCreating', warning: 'CrashLoopBackOff', failed: 'Error', terminating: 'Terminating', unknown: 'Unknown' };
const timelineExtra = new Map(); // uid → entries appended live
function makeDelta() {
  const upserts = [];
  const touched = new Set();
  for (let i = 0; i < CHURN; i++) {
    const p = pick(webPods);
    if (p.deleting) continue;
    const r = rand();
    const next = r < 0.04 ? 'failed' : r < 0.1 ? 'warning' : HEALTH_CYCLE[p.health];
    const np = { ...p, health: next, status: STATUS[next], resourceVersion: nextRv(), pod: { ...p.pod, ready: next === 'ok', readyContainers: next === 'ok' ? 1 : 0, restarts: p.pod.restarts + (next === 'warning' ? 1 : 0) } };
    objects.set(p.uid, np);
    webPods[webPods.indexOf(p)] = np;
    upserts.push(np);
    touched.add(np.uid);
    const entry = { type: 'write', time: Date.now(), uid: np.uid, kind: 'Pod', namespace: NS, name: np.name, op: 'MODIFIED', resourceVersion: np.resourceVersion, manager: 'kubelet', changed: ['status.conditions', 'status.containerStatuses'], text: `status.phase Running · ready ${np.pod.ready}` };
    const owner = np.owners[0].uid;
    if (!timelineExtra.has(owner)) timelineExtra.set(owner, []);
    timelineExtra.get(owner).push(entry);
    touched.add(owner);
  }
  // The ReplicaSets' counts follow.
  for (const rs of [rsNew, rsOld]) {
    const cur = objects.get(rs.uid);
    let ready = 0;
    for (const p of webPods) if (p.owners[0].uid === rs.uid && p.pod.ready) ready++;
    if (ready !== cur.replicas.ready) {
      const n = { ...cur, resourceVersion: nextRv(), replicas: { ...cur.replicas, ready }, status: `${ready}/${cur.replicas.desired} ready`, health: ready === cur.replicas.desired ? 'ok' : 'progressing' };
      objects.set(n.uid, n);
      upserts.push(n);
      touched.add(n.uid);
    }
  }
  // Renew the leases now and then.
  if (tick % 2 === 0) {
    for (const o of objects.values()) {
      if (o.kind !== 'Lease' || o.lease.renewTime < iso(Date.now() - 100_000)) continue; // NotReady nodes stop renewing
      const n = { ...o, resourceVersion: nextRv(), lease: { ...o.lease, renewTime: iso(Date.now()) } };
      objects.set(n.uid, n);
      upserts.push(n);
    }
  }
  return { time: Date.now(), upserts, deletes: [], touched: [...touched] };
}

// ---- timeline -----------------------------------------------------------------

function descendantsOf(uid, depth = 0, out = new Set([uid])) {
  if (depth > 4) return out;
  for (const o of objects.values()) {
    if (o.owners.some((r) => r.uid === uid) && !out.has(o.uid)) {
      out.add(o.uid);
      descendantsOf(o.uid, depth + 1, out);
    }
  }
  return out;
}

function timeline(uid, withDesc) {
  const uids = [...(withDesc ? descendantsOf(uid) : new Set([uid]))];
  const o = objects.get(uid);
  const entries = [];
  const base = Date.now() - 5 * 60_000;
  let t = base;
  const step = () => (t += 200 + Math.floor(rand() * 3000));
  if (o) {
    const ctlName = { Deployment: 'deployment', ReplicaSet: 'replicaset', Job: 'job', StatefulSet: 'statefulset', CronJob: 'cronjob', Service: 'endpointslice' }[o.kind] ?? 'garbagecollector';
    const key = o.namespace ? `${o.namespace}/${o.name}` : o.name;
    entries.push({ type: 'write', time: step(), uid, kind: o.kind, namespace: o.namespace, name: o.name, op: 'ADDED', resourceVersion: String(rv - 900), manager: 'kubectl-client-side-apply', changed: ['metadata', 'spec'], text: 'created' });
    entries.push({ type: 'reconcile', time: step(), controller: ctlName, queue: ctlName, key, durationMs: 3.2 });
    const kids = uids.filter((u) => u !== uid).slice(0, 40);
    for (const k of kids) {
      const c = objects.get(k);
      if (!c) continue;
      entries.push({ type: 'write', time: step(), uid: c.uid, kind: c.kind, namespace: c.namespace, name: c.name, op: 'ADDED', resourceVersion: String(rv - 800), manager: `${ctlName}-controller`, changed: ['metadata.ownerReferences', 'spec'], text: `created by ${ctlName}-controller` });
      if (c.kind === 'Pod') {
        entries.push({ type: 'event', time: step(), uid: c.uid, kind: 'Pod', namespace: c.namespace, name: c.name, reason: c.pod?.node ? 'Scheduled' : 'FailedScheduling', message: c.pod?.node ? `Successfully assigned ${c.namespace}/${c.name} to ${c.pod.node}` : c.pod?.unschedulable?.message ?? '0/100 nodes are available', eventType: c.pod?.node ? 'Normal' : 'Warning', source: 'default-scheduler', count: 1 });
        if (c.pod?.node) entries.push({ type: 'write', time: step(), uid: c.uid, kind: 'Pod', namespace: c.namespace, name: c.name, op: 'MODIFIED', resourceVersion: String(rv - 700), manager: 'kubelet', changed: ['status.phase', 'status.conditions', 'status.podIP'], text: 'status.phase Pending → Running' });
      } else {
        entries.push({ type: 'event', time: step(), uid: o.uid, kind: o.kind, namespace: o.namespace, name: o.name, reason: o.kind === 'Deployment' ? 'ScalingReplicaSet' : 'SuccessfulCreate', message: `Created ${c.kind.toLowerCase()}: ${c.name}`, eventType: 'Normal', source: `${ctlName}-controller`, count: 1 });
      }
    }
    entries.push({ type: 'reconcile', time: step(), controller: ctlName, queue: ctlName, key, durationMs: 48.7, error: 'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again' });
    entries.push({ type: 'event', time: step(), uid, kind: o.kind, namespace: o.namespace, name: o.name, reason: 'BackOff', message: 'Back-off restarting failed container app in pod', eventType: 'Warning', source: 'kubelet', count: 4 });
    entries.push({ type: 'write', time: step(), uid, kind: o.kind, namespace: o.namespace, name: o.name, op: 'MODIFIED', resourceVersion: String(rv - 100), manager: `${ctlName}-controller`, changed: ['status.readyReplicas', 'status.availableReplicas', 'status.conditions'], text: 'status.readyReplicas 2 → 3' });
    entries.push({ type: 'reconcile', time: step(), controller: ctlName, queue: ctlName, key, durationMs: 1.4 });
  }
  const set = new Set(uids);
  for (const [owner, list] of timelineExtra) {
    if (!set.has(owner)) continue;
    for (const e of list.slice(-200)) entries.push(e);
  }
  entries.sort((a, b) => a.time - b.time);
  return { uid, uids, entries: entries.slice(-2000) };
}

function fullObject(o) {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: {
      name: o.name,
      ...(o.namespace ? { namespace: o.namespace } : {}),
      uid: o.uid,
      resourceVersion: o.resourceVersion,
      creationTimestamp: o.created,
      ...(o.deleting ? { deletionTimestamp: iso(Date.now() - 60_000) } : {}),
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      labels: { app: o.name.split('-')[0] },
      ...(o.owners.length ? { ownerReferences: o.owners.map((r) => ({ apiVersion: 'apps/v1', kind: r.kind, name: r.name, uid: r.uid, controller: r.controller, blockOwnerDeletion: true })) } : {}),
      managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: o.apiVersion, time: o.created, fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:conditions': {} } } }],
    },
    spec: o.pod ? { nodeName: o.pod.node, containers: [{ name: 'app', image: 'registry.example/app:1.2.3', resources: { requests: { cpu: `${o.pod.requests.cpu}m`, memory: `${o.pod.requests.memory / 2 ** 20}Mi` } } }] } : o.replicas ? { replicas: o.replicas.desired } : {},
    status: o.pod ? { phase: o.pod.phase, conditions: [{ type: 'Ready', status: o.pod.ready ? 'True' : 'False' }] } : o.replicas ? { readyReplicas: o.replicas.ready } : {},
    _dev: { group, version },
  };
}

// ---- HTTP -------------------------------------------------------------------

const outdir = await mkdtemp(join(tmpdir(), 'kcm-dashboard-dev-'));
const MINIFY = !flag('no-minify');
await buildDashboard(outdir, { minify: MINIFY });
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };
const clients = new Set();
const session = randomBytes(8).toString('hex');

function authed(req) {
  if (!AUTH) return true;
  return (req.headers.cookie ?? '').split(/;\s*/).includes(`kcm_dev_session=${session}`);
}

function send(res, event, data) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const p = url.pathname;
  try {
    if (p === '/login') {
      if (url.searchParams.get('token') !== 'dev') return void res.writeHead(401).end('bad token');
      res.writeHead(302, { 'set-cookie': `kcm_dev_session=${session}; HttpOnly; Path=/; SameSite=Strict`, location: '/' });
      return void res.end();
    }
    if (p === '/' || p === '/index.html' || p === '/app.js' || p === '/app.css') {
      if (p === '/' || p === '/index.html') await buildDashboard(outdir, { minify: MINIFY }); // pick up edits on reload
      const f = p === '/' ? '/index.html' : p;
      const body = await readFile(join(outdir, f));
      res.writeHead(200, { 'content-type': TYPES[f.slice(f.lastIndexOf('.'))], 'cache-control': 'no-store' });
      return void res.end(body);
    }
    if (p.startsWith('/api/') && !authed(req)) {
      res.writeHead(401, { 'content-type': 'text/plain' });
      return void res.end('unauthorized');
    }
    if (p === '/api/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      send(res, 'snapshot', { time: Date.now(), cluster: 'https://127.0.0.1:6443 (dev-server)', namespaces, objects: [...objects.values()], controllers: controllersState(), scheduling });
      clients.add(res);
      req.on('close', () => clients.delete(res));
      return;
    }
    if (p === '/api/timeline') {
      const uid = url.searchParams.get('uid') ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(timeline(uid, url.searchParams.get('descendants') === '1')));
    }
    if (p === '/api/object') {
      const o = objects.get(url.searchParams.get('uid') ?? '');
      if (!o) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(fullObject(o)));
    }
    if (p === '/healthz') return void res.end('ok');
    res.writeHead(404).end('not found');
  } catch (e) {
    console.error(e);
    res.writeHead(500).end(String(e));
  }
});

setInterval(() => {
  if (!clients.size) return;
  const d = makeDelta();
  for (const c of clients) send(c, 'delta', d);
}, 250);
setInterval(() => {
  if (!clients.size) return;
  const c = controllersState();
  const s = decisions(1 + Math.floor(rand() * 3));
  for (const r of clients) {
    send(r, 'controllers', c);
    send(r, 'scheduling', s);
  }
}, 1000);

server.listen(PORT, '127.0.0.1', () => {
  console.log(`kcm dashboard dev server: http://127.0.0.1:${PORT}/${AUTH ? `login?token=dev` : ''}  (${objects.size} objects)`);
});
