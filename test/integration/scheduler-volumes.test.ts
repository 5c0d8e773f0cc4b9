/**
 * The scheduler's volume plugins against the embedded API server, with kcm's
 * PersistentVolume controller and simulated nodes: an unbound Immediate claim
 * keeps its pod pending; a WaitForFirstConsumer claim gets the selected node
 * and its pod binds once the (simulated) provisioner's volume is bound; a
 * claim bound to a local volume takes its pod to the volume's node.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { GVR } from '../../src/api/gvr.js';
import type { KubeObject } from '../../src/api/types.js';
import { startTestEnv, type TestEnv } from '../../src/testing/test-env.js';

async function eventually(fn: () => Promise<void>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fn();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

type Obj<T> = T & KubeObject;

function claim(name: string, storageClassName: string): Obj<PersistentVolumeClaim> {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName },
  } as Obj<PersistentVolumeClaim>;
}

function pod(name: string, claimName: string): Obj<Pod> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'nginx:1.27' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }] },
  } as Obj<Pod>;
}

function storageClass(name: string, mode: 'Immediate' | 'WaitForFirstConsumer'): Obj<StorageClass> {
  return { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'example.com/simulated', volumeBindingMode: mode } as Obj<StorageClass>;
}

function localVolume(name: string, cls: string, hostname: string, claimRef?: PersistentVolume['spec'] extends infer S ? S extends { claimRef?: infer R } ? R : never : never): Obj<PersistentVolume> {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: cls,
      hostPath: { path: `/tmp/${name}` },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [hostname] }] }] } },
      ...(claimRef ? { claimRef } : {}),
    },
  } as Obj<PersistentVolume>;
}

describe('scheduler volume plugins against the embedded API server', () => {
  let env: TestEnv;
  let nodes: Obj<Node>[];
  const pods = () => env.client.resource<Obj<Pod>>(GVR.pods).namespace('default');
  const claims = () => env.client.resource<Obj<PersistentVolumeClaim>>(GVR.persistentVolumeClaims).namespace('default');
  const hostname = (n: Node) => n.metadata?.labels?.['kubernetes.io/hostname'] ?? n.metadata?.name ?? '';

  before(async () => {
    env = await startTestEnv({ controllers: ['persistentvolume-binder', 'serviceaccount'], nodes: 2 });
    await eventually(async () => void (await env.client.resource<KubeObject>(GVR.serviceAccounts).namespace('default').get('default')));
    nodes = (await env.client.resource<Obj<Node>>(GVR.nodes).list()).items;
    assert.equal(nodes.length, 2);
  });
  after(async () => {
    await env.stop();
  });

  it('keeps a pod with an unbound Immediate claim Pending with the upstream message', async () => {
    await env.client.resource<Obj<StorageClass>>(GVR.storageClasses).create(storageClass('immediate', 'Immediate'));
    await claims().create(claim('imm', 'immediate'));
    await pods().create(pod('imm-pod', 'imm'));
    await eventually(async () => {
      const p = await pods().get('imm-pod');
      const cond = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
      assert.equal(cond?.status, 'False');
      assert.equal(cond?.reason, 'Unschedulable');
      assert.equal(
        cond?.message,
        '0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..',
      );
      assert.equal(p.spec?.nodeName, undefined);
    });
  });

  it('selects a node for a WaitForFirstConsumer claim and binds the pod once the claim is bound', async () => {
    await env.client.resource<Obj<StorageClass>>(GVR.storageClasses).create(storageClass('late', 'WaitForFirstConsumer'));
    await claims().create(claim('wffc', 'late'));
    await pods().create(pod('wffc-pod', 'wffc'));
    let selected = '';
    await eventually(async () => {
      selected = (await claims().get('wffc')).metadata?.annotations?.['volume.kubernetes.io/selected-node'] ?? '';
      assert.ok(selected, 'selected-node set');
    });
    assert.equal((await pods().get('wffc-pod')).spec?.nodeName, undefined, 'the pod waits for its claim');
    // The provisioner: a volume on the selected node, pre-bound to the claim; the PersistentVolume controller binds the claim.
    const c = await claims().get('wffc');
    const node = nodes.find((n) => n.metadata?.name === selected)!;
    await env.client
      .resource<Obj<PersistentVolume>>(GVR.persistentVolumes)
      .create(localVolume('pvc-wffc', 'late', hostname(node), { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'wffc', uid: c.metadata?.uid }));
    await eventually(async () => assert.equal((await pods().get('wffc-pod')).spec?.nodeName, selected));
    assert.equal((await claims().get('wffc')).spec?.volumeName, 'pvc-wffc');
  });

  it("sends a pod whose claim is bound to a local volume to the volume's node", async () => {
    const target = nodes[1]!;
    const pvs = env.client.resource<Obj<PersistentVolume>>(GVR.persistentVolumes);
    await pvs.create(localVolume('local-1', '', hostname(target)));
    // Once the PersistentVolume controller has seen the volume, the claim binds at its first sync.
    await eventually(async () => assert.equal((await pvs.get('local-1')).status?.phase, 'Available'));
    await claims().create(claim('local', ''));
    await eventually(async () => assert.equal((await claims().get('local')).status?.phase, 'Bound'));
    await pods().create(pod('local-pod', 'local'));
    await eventually(async () => assert.equal((await pods().get('local-pod')).spec?.nodeName, target.metadata?.name));
  });
});
