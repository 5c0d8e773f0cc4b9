/**
 * Resource metrics and node pressure on `kcm up`, with kubectl: the
 * metrics.k8s.io API (kubectl top, get --raw), an HPA on cpu utilization
 * driven up and down by the `kcm.dev/usage` annotation on its Deployment,
 * and a node put under pressure by `kcm.dev/pressure`, with the kubelet's
 * conditions, events and the lifecycle controller's taints.
 *
 * The metrics parts need kcm up's simulated metrics-server; on a real
 * cluster only the node pressure runs (the simulated kubelets are kcm's in
 * every mode).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { onRealCluster, startCluster } from './cluster.js';

const noMetricsApi = onRealCluster && 'the resource metrics API is served by kcm up (a real cluster needs metrics-server)';

interface HpaView {
  spec: { minReplicas?: number };
  status: { currentReplicas?: number; desiredReplicas?: number; conditions?: { type: string; status: string; reason?: string }[]; currentMetrics?: unknown[] };
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        resources: {requests: {cpu: 100m, memory: 64Mi}}
      - name: sidecar
        image: nginx
        resources: {requests: {cpu: 100m, memory: 32Mi}}
`;

const hpa = `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 6
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 3}
`;

describe('resource metrics and node pressure on kcm up', () => {
  let kcm: KcmProcess;
  before(async () => {
    kcm = await startCluster(onRealCluster ? [] : ['--metric-resolution=3s', '--horizontal-pod-autoscaler-sync-period=2s']);
    if (!onRealCluster) await waitFor(() => /kcm up: ready in \d+ ms/.test(kcm.stdout()), 30_000, `kcm up to report ready (stdout: ${kcm.stdout()})`);
  });
  after(async () => {
    await kcm?.stop();
  });

  it('serves metrics.k8s.io: discovery, kubectl top nodes and pods, get --raw', { skip: noMetricsApi }, async () => {
    const resources = await kcm.kubectlOk(['api-resources', '--api-group=metrics.k8s.io', '--no-headers']);
    assert.match(resources, /^nodes\s+metrics\.k8s\.io\/v1beta1\s+false\s+NodeMetrics$/m);
    assert.match(resources, /^pods\s+metrics\.k8s\.io\/v1beta1\s+true\s+PodMetrics$/m);
    const nodes = await waitFor(async () => {
      const r = await kcm.kubectl(['top', 'nodes', '--no-headers']);
      return r.code === 0 && r.stdout.trim().split('\n').length === 3 ? r.stdout : undefined;
    }, 15_000, 'kubectl top nodes');
    for (const line of nodes.trim().split('\n')) assert.match(line, /^kcm-node-\d\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%\s*$/, line);

    await kcm.kubectlOk(['apply', '-f', '-'], { input: deployment });
    await kcm.kubectlOk(['annotate', 'deploy', 'web', 'kcm.dev/usage=cpu=400m,memory=96Mi']);
    const top = await waitFor(async () => {
      const r = await kcm.kubectl(['top', 'pods', '-l', 'app=web', '--no-headers']);
      const lines = r.code === 0 ? r.stdout.trim().split('\n').filter(Boolean) : [];
      return lines.length === 2 && lines.every((l) => /\s400m\s+96Mi\s*$/.test(l)) ? lines : undefined;
    }, 30_000, 'kubectl top pods showing the annotated usage');
    assert.match(top[0]!, /^web-[a-z0-9]+-[a-z0-9]{5}\s+400m\s+96Mi\s*$/);
    // --containers: the pod's usage shared by the requests (equal cpu, memory 2:1).
    const containers = await kcm.kubectlOk(['top', 'pods', '-l', 'app=web', '--containers', '--no-headers']);
    assert.match(containers, /\ssidecar\s+200m\s+\d+Mi/);
    assert.match(containers, /\sweb\s+200m\s+\d+Mi/);
    const all = await kcm.kubectlOk(['top', 'pods', '-A', '--no-headers']);
    assert.match(all, /^default\s+web-/m);

    const podName = top[0]!.split(/\s+/)[0]!;
    const raw = JSON.parse(await kcm.kubectlOk(['get', '--raw', `/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/${podName}`]));
    assert.equal(raw.kind, 'PodMetrics');
    assert.equal(raw.apiVersion, 'metrics.k8s.io/v1beta1');
    assert.match(raw.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(raw.window, '3s');
    assert.deepEqual(raw.containers.map((c: { name: string }) => c.name), ['web', 'sidecar']);
    assert.equal(raw.containers[0].usage.cpu, '200m');
    const nodeList = JSON.parse(await kcm.kubectlOk(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes']));
    assert.equal(nodeList.kind, 'NodeMetricsList');
    // Nanocores in canonical form, as a Quantity prints them: `450877123n`, or `450877u` when a multiple of 1000 (one in a thousand samples).
    assert.match(nodeList.items[0].usage.cpu, /^\d+[nu]$/);
    assert.match(nodeList.items[0].usage.memory, /^\d+Ki$/);
    const table = await kcm.kubectlOk(['get', 'podmetrics', '-l', 'app=web']);
    assert.match(table, /^NAME\s+CPU\s+MEMORY\s+WINDOW$/m);
    const missing = await kcm.kubectl(['top', 'pod', 'nope']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /pods "nope" not found/);
    await kcm.kubectlOk(['annotate', 'deploy', 'web', 'kcm.dev/usage-']);
    // Back to the default (10 % of the requests: about 20m a pod) at the next scrape.
    await waitFor(async () => {
      const lines = (await kcm.kubectlOk(['top', 'pods', '-l', 'app=web', '--no-headers'])).trim().split('\n');
      return lines.every((l) => Number(/\s(\d+)m\s/.exec(l)?.[1] ?? 1000) < 30) || undefined;
    }, 15_000, 'the default usage after removing the annotation');
  });

  it('scales a Deployment up when the usage annotation raises cpu and back down after the stabilization window', { skip: noMetricsApi }, async () => {
    await kcm.kubectlOk(['apply', '-f', '-'], { input: deployment });
    await kcm.kubectlOk(['apply', '-f', '-'], { input: hpa });
    const events = async () => (await kcm.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.kind=HorizontalPodAutoscaler,involvedObject.name=web', '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}'])).trim().split('\n');
    const view = async () => JSON.parse(await kcm.kubectlOk(['get', 'hpa', 'web', '-o', 'json'])) as HpaView;
    // At the default usage (10 % of requests) it settles at its minimum (a scrape from before may still show more at first).
    await waitFor(async () => {
      const h = await view();
      const util = (h.status.currentMetrics as { resource?: { current?: { averageUtilization?: number } } }[] | undefined)?.[0]?.resource?.current?.averageUtilization;
      const active = h.status.conditions?.some((c) => c.type === 'ScalingActive' && c.status === 'True');
      return active && util !== undefined && util < 50 && h.status.currentReplicas === 2 && h.status.desiredReplicas === 2 ? h : undefined;
    }, 40_000, 'the HPA active at 2 replicas');
    await kcm.kubectlOk(['annotate', 'deploy', 'web', 'kcm.dev/usage=cpu=90%', '--overwrite']);
    // Two pods at 90 % against 50 %: ceil(1.8 * 2) = 4.
    await waitFor(async () => (await events()).includes('SuccessfulRescale: New size: 4; reason: cpu resource utilization (percentage of request) above target') || undefined, 30_000, 'the scale-up event').catch(async (err: Error) => {
      throw new Error(`${err.message}; events: ${(await events()).join(' | ')}; hpa: ${JSON.stringify((await view()).status)}`);
    });
    const up = await view();
    const reasons = Object.fromEntries((up.status.conditions ?? []).map((c) => [c.type, `${c.status} ${c.reason}`]));
    assert.equal(reasons.ScalingActive, 'True ValidMetricFound');
    assert.match(reasons.AbleToScale!, /^True /);
    assert.match(reasons.ScalingLimited!, /^(False DesiredWithinRange|True TooManyReplicas)$/);
    assert.ok((up.status.desiredReplicas ?? 0) >= 4);
    const out = await kcm.kubectlOk(['get', 'hpa', 'web', '--no-headers']);
    assert.match(out, /cpu: \d+%\/50%/);

    await kcm.kubectlOk(['annotate', 'deploy', 'web', 'kcm.dev/usage-']);
    await waitFor(async () => (await events()).some((e) => e === 'SuccessfulRescale: New size: 2; reason: All metrics below target') || undefined, 40_000, 'the scale-down event');
    await waitFor(async () => {
      const r = JSON.parse(await kcm.kubectlOk(['get', 'deploy', 'web', '-o', 'json'])) as { spec: { replicas: number } };
      return r.spec.replicas === 2 || undefined;
    }, 10_000, 'the Deployment back at 2 replicas');
    await kcm.kubectlOk(['delete', 'hpa', 'web']);
    await kcm.kubectlOk(['delete', 'deploy', 'web']);
  });

  it('puts a node under memory and disk pressure by annotation: kubelet conditions, events, taints, and relief', async () => {
    const node = 'kcm-node-2';
    type NodeView = { spec: { taints?: { key: string; effect: string }[] }; status: { conditions: { type: string; status: string; reason: string; message: string }[] } };
    const get = async () => JSON.parse(await kcm.kubectlOk(['get', 'node', node, '-o', 'json'])) as NodeView;
    await kcm.kubectlOk(['annotate', 'node', node, 'kcm.dev/pressure=memory,disk', '--overwrite']);
    const pressed = await waitFor(async () => {
      const n = await get();
      const keys = (n.spec.taints ?? []).map((t) => `${t.key}:${t.effect}`);
      return keys.includes('node.kubernetes.io/memory-pressure:NoSchedule') && keys.includes('node.kubernetes.io/disk-pressure:NoSchedule') ? n : undefined;
    }, 20_000, 'the pressure taints');
    const byType = Object.fromEntries(pressed.status.conditions.map((c) => [c.type, `${c.status} ${c.reason}: ${c.message}`]));
    assert.equal(byType.MemoryPressure, 'True KubeletHasInsufficientMemory: kubelet has insufficient memory available');
    assert.equal(byType.DiskPressure, 'True KubeletHasDiskPressure: kubelet has disk pressure');
    assert.equal(byType.PIDPressure, 'False KubeletHasSufficientPID: kubelet has sufficient PID available');
    assert.equal(byType.Ready, 'True KubeletReady: kubelet is posting ready status');
    const events = await kcm.kubectlOk(['get', 'events', '--field-selector', `involvedObject.kind=Node,involvedObject.name=${node}`, '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}']);
    assert.match(events, new RegExp(`^NodeHasInsufficientMemory: Node ${node} status is now: NodeHasInsufficientMemory$`, 'm'));
    assert.match(events, new RegExp(`^NodeHasDiskPressure: Node ${node} status is now: NodeHasDiskPressure$`, 'm'));

    // A pod without a toleration avoids the node; one tolerating the taints may land there.
    await kcm.kubectlOk(['apply', '-f', '-'], {
      input: `
apiVersion: v1
kind: Pod
metadata: {name: pinned}
spec:
  nodeSelector: {kubernetes.io/hostname: ${node}}
  containers: [{name: c, image: nginx}]
`,
    });
    const unschedulable = await waitFor(async () => {
      const p = JSON.parse(await kcm.kubectlOk(['get', 'pod', 'pinned', '-o', 'json'])) as { status: { conditions?: { type: string; reason?: string; message?: string }[] } };
      return p.status.conditions?.find((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable');
    }, 20_000, 'the pinned pod Unschedulable');
    // kube-scheduler 1.20 words it "had taint {...}, that the pod didn't tolerate".
    assert.match(unschedulable.message ?? '', /had (untolerated )?taint \{node.kubernetes.io\/(memory|disk)-pressure: \}/);

    await kcm.kubectlOk(['annotate', 'node', node, 'kcm.dev/pressure-']);
    await waitFor(async () => {
      const n = await get();
      return !(n.spec.taints ?? []).some((t) => t.key.endsWith('-pressure')) && n.status.conditions.every((c) => c.type === 'Ready' || c.status === 'False') ? n : undefined;
    }, 20_000, 'the pressure relieved and the taints gone');
    await waitFor(async () => {
      const p = JSON.parse(await kcm.kubectlOk(['get', 'pod', 'pinned', '-o', 'json'])) as { spec: { nodeName?: string } };
      return p.spec.nodeName === node || undefined;
    }, 20_000, 'the pinned pod scheduled once the taints are gone');
    await kcm.kubectlOk(['delete', 'pod', 'pinned', '--wait=false']);
  });

  it('evicts a pod whose memory use leaves its node below 100Mi available, as kubelet\'s eviction manager', async () => {
    const node = 'kcm-node-1';
    // 8Gi of capacity: 256Mi for the system and 7850Mi for the pod (and the other pods there) leave less than 100Mi.
    await kcm.kubectlOk(['apply', '-f', '-'], {
      input: `
apiVersion: v1
kind: Pod
metadata: {name: hog, annotations: {kcm.dev/usage: memory=7850Mi}}
spec:
  nodeName: ${node}
  containers: [{name: app, image: nginx, resources: {requests: {memory: 64Mi}}}]
`,
    });
    type PodView = { status: { phase?: string; reason?: string; message?: string; conditions?: { type: string; status: string; reason?: string }[] } };
    const evicted = await waitFor(async () => {
      const p = JSON.parse(await kcm.kubectlOk(['get', 'pod', 'hog', '-o', 'json'])) as PodView;
      return p.status.reason === 'Evicted' && p.status.phase === 'Failed' ? p : undefined;
    }, 40_000, 'the hog evicted');
    assert.match(evicted.status.message ?? '', /^The node was low on resource: memory\. Threshold quantity: 100Mi, available: (0|\d+Ki)\. Container app was using 7850Mi, request is 64Mi, has larger consumption of memory\. $/);
    assert.ok(evicted.status.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'TerminationByKubelet'), JSON.stringify(evicted.status.conditions));
    const events = await kcm.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.name=hog,reason=Evicted', '-o', 'jsonpath={.items[*].message}']);
    assert.match(events, /The node was low on resource: memory\./);
    // The pressure goes with the pod.
    await waitFor(async () => {
      const n = JSON.parse(await kcm.kubectlOk(['get', 'node', node, '-o', 'json'])) as { status: { conditions: { type: string; status: string }[] } };
      return n.status.conditions.find((c) => c.type === 'MemoryPressure')?.status === 'False' || undefined;
    }, 30_000, 'MemoryPressure False again');
    await kcm.kubectlOk(['delete', 'pod', 'hog', '--wait=false']);
  });
});
