/**
 * kubectl fidelity against `kcm apiserver`: client-side and server-side
 * apply, strategic merge patches, field validation, tables, explain,
 * describe with events, managed fields, logs and exec on simulated pods.
 * kubectl runs with its default validation (the server's OpenAPI is used).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startApiServerProcess, type KcmProcess } from './harness.js';

let kcm: KcmProcess;

before(async () => {
  kcm = await startApiServerProcess();
  await kcm.kubectlOk(['create', 'serviceaccount', 'default']);
});
after(async () => {
  await kcm?.stop();
});

const json = async (args: string[]) => JSON.parse(await kcm.kubectlOk([...args, '-o', 'json'])) as Record<string, any>;

function deployment(name: string, o: { replicas?: number; containers?: object[]; labels?: Record<string, string> } = {}): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: o.labels ?? { app: name } },
    spec: {
      replicas: o.replicas ?? 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: o.containers ?? [{ name: 'web', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] } },
    },
  });
}

describe('kubectl apply, patch and validation', () => {
  it('applies client-side: create, change, remove a field, edit the container list', async () => {
    assert.match(await kcm.kubectlOk(['apply', '-f', '-'], { input: deployment('csa', { labels: { app: 'csa', tier: 'fe' } }) }), /deployment.apps\/csa created/);
    assert.match(
      await kcm.kubectlOk(['apply', '-f', '-'], { input: deployment('csa', { replicas: 3, containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }, { name: 'side', image: 'busybox' }] }) }),
      /configured/,
    );
    let d = await json(['get', 'deploy', 'csa']);
    assert.equal(d.spec.replicas, 3);
    assert.equal(d.metadata.labels.tier, undefined, 'a label removed from the manifest is removed');
    assert.deepEqual(d.spec.template.spec.containers.map((c: any) => `${c.name}=${c.image}`), ['web=nginx:1.27', 'side=busybox']);
    await kcm.kubectlOk(['apply', '-f', '-'], { input: deployment('csa', { replicas: 3, containers: [{ name: 'side', image: 'busybox:1.36' }] }) });
    d = await json(['get', 'deploy', 'csa', '--show-managed-fields']);
    assert.deepEqual(d.spec.template.spec.containers.map((c: any) => `${c.name}=${c.image}`), ['side=busybox:1.36']);
    assert.ok(d.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    assert.equal(d.metadata.managedFields[0].manager, 'kubectl-client-side-apply');
  });

  it('applies server-side: conflicts with another manager, then --force-conflicts takes over', async () => {
    await kcm.kubectlOk(['apply', '--server-side', '-f', '-'], { input: deployment('ssa') });
    await kcm.kubectlOk(['patch', 'deploy', 'ssa', '--type', 'merge', '-p', '{"spec":{"replicas":4}}']);
    const res = await kcm.kubectl(['apply', '--server-side', '-f', '-'], { input: deployment('ssa', { replicas: 2 }) });
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /Apply failed with 1 conflict: conflict with "kubectl-patch" using apps\/v1: \.spec\.replicas/);
    await kcm.kubectlOk(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: deployment('ssa', { replicas: 2 }) });
    const d = await json(['get', 'deploy', 'ssa', '--show-managed-fields']);
    assert.equal(d.spec.replicas, 2);
    const apply = d.metadata.managedFields.find((e: any) => e.operation === 'Apply');
    assert.equal(apply.manager, 'kubectl');
    assert.ok(apply.fieldsV1['f:spec']['f:replicas']);
  });

  it('moves a client-side applied object to server-side apply without conflicts, as kubectl upgrades it', async () => {
    await kcm.kubectlOk(['apply', '-f', '-'], { input: deployment('csa2ssa') });
    const out = await kcm.kubectlOk(['apply', '--server-side', '-f', '-'], { input: deployment('csa2ssa', { replicas: 2, containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] }) });
    assert.match(out, /deployment.apps\/csa2ssa serverside-applied/);
    const d = await json(['get', 'deploy', 'csa2ssa']);
    assert.equal(d.spec.replicas, 2);
    assert.equal(d.spec.template.spec.containers[0].image, 'nginx:1.27');
  });

  it('patches containers by name with a strategic merge patch', async () => {
    await kcm.kubectlOk(['apply', '-f', '-'], { input: deployment('smp', { containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'redis' }] }) });
    await kcm.kubectlOk(['patch', 'deploy', 'smp', '--type', 'strategic', '-p', JSON.stringify({ spec: { template: { spec: { containers: [{ name: 'b', image: 'redis:7' }] } } } })]);
    const d = await json(['get', 'deploy', 'smp']);
    assert.deepEqual(d.spec.template.spec.containers.map((c: any) => `${c.name}=${c.image}`), ['a=nginx', 'b=redis:7']);
  });

  it('refuses unknown fields with the field named (kubectl asks for Strict validation)', async () => {
    const bad = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bad' }, data: { a: 'b' }, foo: 'bar' });
    const res = await kcm.kubectl(['create', '-f', '-'], { input: bad });
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /strict decoding error: unknown field "foo"/);
    const warn = await kcm.kubectl(['create', '--validate=warn', '-f', '-'], { input: bad });
    assert.equal(warn.code, 0, warn.stderr);
    assert.match(warn.stderr, /Warning: unknown field "foo"/);
  });

  it('explains deployment.spec.strategy from the served OpenAPI', async () => {
    const out = await kcm.kubectlOk(['explain', 'deployment.spec.strategy']);
    assert.match(out, /KIND:\s+Deployment/);
    assert.match(out, /rollingUpdate\s+<RollingUpdateDeployment>/);
  });
});

describe('kubectl get tables, describe, logs and exec', () => {
  it('prints upstream columns for pods, deployments, services, nodes and jobs', async () => {
    await kcm.kubectlOk(['apply', '-f', '-'], { input: deployment('tab') });
    assert.match((await kcm.kubectlOk(['get', 'deploy', 'tab', '-o', 'wide'])).split('\n')[0]!, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/);
    await kcm.kubectlOk(['run', 'tab-pod', '--image=nginx']);
    const pods = await kcm.kubectlOk(['get', 'pod', 'tab-pod', '-o', 'wide']);
    assert.match(pods.split('\n')[0]!, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
    assert.match(pods.split('\n')[1]!, /^tab-pod\s+0\/1\s+Pending\s+0\s+/);
    const svc = await kcm.kubectlOk(['get', 'svc', 'kubernetes', '-o', 'wide']);
    assert.match(svc, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\s+SELECTOR\n/);
    assert.match(svc, /kubernetes\s+ClusterIP\s+10\.0\.0\.1\s+<none>\s+443\/TCP\s+\S+\s+<none>/);
    await kcm.kubectlOk(['create', 'job', 'tab-job', '--image=busybox']);
    assert.match((await kcm.kubectlOk(['get', 'job', 'tab-job'])).split('\n')[0]!, /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE$/);
    assert.match(await kcm.kubectlOk(['get', 'job', 'tab-job']), /tab-job\s+Running\s+0\/1\s+\S*\s+/);
    const node = JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'tab-node' }, status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.33.0' } } });
    await kcm.kubectlOk(['create', '-f', '-'], { input: node });
    const nodes = await kcm.kubectlOk(['get', 'nodes', '-o', 'wide']);
    assert.match(nodes.split('\n')[0]!, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME$/);
    for (const [res, header] of [
      ['cm', /^NAME\s+DATA\s+AGE$/],
      ['ns', /^NAME\s+STATUS\s+AGE$/],
      ['pc', /^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY$/],
      ['sa', /^NAME\s+SECRETS\s+AGE$/],
    ] as const) {
      const out = await kcm.kubectlOk(['get', res, '-A']);
      assert.match(out.split('\n')[0]!.replace(/^NAMESPACE\s+/, ''), header, `${res}: ${out}`);
    }
  });

  it('describes a pod with its events (field selectors on involvedObject)', async () => {
    await kcm.kubectlOk(['run', 'ev-pod', '--image=nginx']);
    const uid = (await json(['get', 'pod', 'ev-pod'])).metadata.uid;
    const ev = (name: string, podUid: string, reason: string) =>
      JSON.stringify({ apiVersion: 'v1', kind: 'Event', metadata: { name }, involvedObject: { kind: 'Pod', name: 'ev-pod', namespace: 'default', uid: podUid }, reason, message: `${reason} happened`, type: 'Normal', source: { component: 'kubelet' }, count: 1, firstTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });
    await kcm.kubectlOk(['create', '-f', '-'], { input: ev('ev-pod.1', uid, 'Pulled') });
    await kcm.kubectlOk(['create', '-f', '-'], { input: ev('ev-pod.2', 'other-uid', 'Stale') });
    const out = await kcm.kubectlOk(['describe', 'pod', 'ev-pod']);
    assert.match(out, /Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message/);
    assert.match(out, /Normal\s+Pulled\s+\S+\s+kubelet\s+Pulled happened/);
    assert.doesNotMatch(out, /Stale/);
  });

  it('answers logs and exec on a pod with no node as kube-apiserver does', async () => {
    // Only the API server runs here: the pod is never scheduled (test/e2e/containers.test.ts covers running pods).
    await kcm.kubectlOk(['run', 'sim-pod', '--image=nginx']);
    assert.equal(await kcm.kubectlOk(['logs', 'sim-pod']), '');
    const exec = await kcm.kubectl(['exec', 'sim-pod', '--', 'ls']);
    assert.notEqual(exec.code, 0);
    assert.match(exec.stderr, /pod sim-pod does not have a host assigned/);
  });
});
