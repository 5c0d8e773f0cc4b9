/**
 * Admission and policy with the real kubectl against `kcm apiserver`:
 * ResourceQuota refusing a pod with Kubernetes' message, LimitRange defaults
 * on a created pod.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startApiServerProcess, type KcmProcess } from './harness.js';

let kcm: KcmProcess;

before(async () => {
  kcm = await startApiServerProcess();
});
after(async () => {
  await kcm?.stop();
});

const create = (ns: string, obj: unknown) => kcm.kubectl(['create', '--validate=false', '-n', ns, '-f', '-'], { input: JSON.stringify(obj) });
const pod = (name: string, resources?: unknown) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx:1.27', ...(resources ? { resources } : {}) }] } });

async function newNamespace(name: string): Promise<string> {
  await kcm.kubectlOk(['create', '--validate=false', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }) });
  await kcm.kubectlOk(['create', '--validate=false', '-n', name, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }) });
  return name;
}

describe('admission with kubectl', () => {
  it('a quota refuses the pod past its limit with Kubernetes message', async () => {
    const ns = await newNamespace('quota-e2e');
    const q = await create(ns, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pod-quota' }, spec: { hard: { pods: '1' } } });
    assert.equal(q.code, 0, q.stderr);
    const first = await create(ns, pod('first'));
    assert.equal(first.code, 0, first.stderr);
    const second = await create(ns, pod('second'));
    assert.notEqual(second.code, 0);
    assert.match(second.stderr, /Error from server \(Forbidden\): error when creating "STDIN": pods "second" is forbidden: exceeded quota: pod-quota, requested: pods=1, used: pods=1, limited: pods=1/);
    await kcm.kubectlOk(['delete', 'pod', 'first', '-n', ns, '--grace-period=0', '--force', '--wait=false']);
    const again = await create(ns, pod('second'));
    assert.equal(again.code, 0, again.stderr);
  });

  it('LimitRange defaults are visible on a created pod, and its minimum is enforced', async () => {
    const ns = await newNamespace('limits-e2e');
    const lr = await create(ns, {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'cpu-defaults' },
      spec: { limits: [{ type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '250m' }, min: { cpu: '100m' } }] },
    });
    assert.equal(lr.code, 0, lr.stderr);
    assert.equal((await create(ns, pod('web'))).code, 0);
    const got = JSON.parse(await kcm.kubectlOk(['get', 'pod', 'web', '-n', ns, '-o', 'json']));
    assert.deepEqual(got.spec.containers[0].resources, { limits: { cpu: '500m' }, requests: { cpu: '250m' } });
    assert.equal(got.metadata.annotations['kubernetes.io/limit-ranger'], 'LimitRanger plugin set: cpu request for container c; cpu limit for container c');
    const small = await create(ns, pod('small', { requests: { cpu: '50m' } }));
    assert.notEqual(small.code, 0);
    assert.match(small.stderr, /pods "small" is forbidden: minimum cpu usage per Container is 100m, but request is 50m/);
  });
});
