import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Node, Pod } from 'kubernetes-types/core/v1.js';
import { activePodInfo, kubeletAdmit as admit } from './admission.js';

/** kubeletAdmit over the active pods' objects. */
const kubeletAdmit = (p: Pod, n: Node, active: Pod[]) => admit(p, n, active.map(activePodInfo));

const node: Node = {
  metadata: { name: 'kcm-node-0', labels: { 'kubernetes.io/hostname': 'kcm-node-0', 'kubernetes.io/os': 'linux', disk: 'ssd' } },
  spec: { taints: [] },
  status: { allocatable: { cpu: '4', memory: '8Gi', pods: '3', 'ephemeral-storage': '100Gi' }, capacity: { cpu: '4', memory: '8Gi', pods: '3' } },
};

let n = 0;
function pod(containers: Partial<Container>[], spec: Partial<NonNullable<Pod['spec']>> = {}, labels?: Record<string, string>): Pod {
  n++;
  return {
    metadata: { name: `p${n}`, namespace: 'default', uid: `u${n}`, ...(labels ? { labels } : {}) },
    spec: { nodeName: 'kcm-node-0', containers: containers.map((c, i) => ({ name: `c${i}`, image: 'nginx', ...c })), ...spec },
  };
}

describe('kubeletAdmit', () => {
  it('admits a pod that fits', () => {
    assert.deepEqual(kubeletAdmit(pod([{ resources: { requests: { cpu: '1' } } }]), node, []), { admit: true });
  });

  it('refuses a pod that does not fit the allocatable left, with kubelet\'s OutOf reason and message', () => {
    const running = [pod([{ resources: { requests: { cpu: '3500m' } } }])];
    assert.deepEqual(kubeletAdmit(pod([{ resources: { requests: { cpu: '1' } } }]), node, running), {
      admit: false,
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 1000, used: 3500, capacity: 4000",
    });
    const mem = kubeletAdmit(pod([{ resources: { requests: { memory: '9Gi' } } }]), node, []);
    assert.equal(mem.reason, 'OutOfmemory');
    assert.equal(mem.message, "Node didn't have enough resource: memory, requested: 9663676416, used: 0, capacity: 8589934592");
    const full = kubeletAdmit(pod([{}]), node, [pod([{}]), pod([{}]), pod([{}])]);
    assert.deepEqual([full.reason, full.message], ['OutOfpods', "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"]);
  });

  it('refuses a host port already taken on the node, but not the same port over another protocol', () => {
    const web = pod([{ ports: [{ containerPort: 80, hostPort: 8080 }] }]);
    assert.deepEqual(kubeletAdmit(pod([{ ports: [{ containerPort: 80, hostPort: 8080 }] }]), node, [web]), {
      admit: false,
      reason: 'NodePorts',
      message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
    });
    assert.equal(kubeletAdmit(pod([{ ports: [{ containerPort: 80, hostPort: 8080, protocol: 'UDP' }] }]), node, [web]).admit, true);
  });

  it('refuses a node selector that does not match, an untolerated NoExecute taint and a foreign OS', () => {
    assert.equal(kubeletAdmit(pod([{}], { nodeSelector: { disk: 'hdd' } }), node, []).message, "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector");
    const tainted: Node = { ...node, spec: { taints: [{ key: 'dedicated', value: 'x', effect: 'NoExecute' }] } };
    assert.equal(kubeletAdmit(pod([{}]), tainted, []).reason, 'TaintToleration');
    assert.equal(kubeletAdmit(pod([{}], { tolerations: [{ key: 'dedicated', operator: 'Exists' }] }), tainted, []).admit, true);
    const noSchedule: Node = { ...node, spec: { taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] } };
    assert.equal(kubeletAdmit(pod([{}]), noSchedule, []).admit, true, 'the kubelet only checks NoExecute taints');
    assert.equal(kubeletAdmit(pod([{}], {}, { 'kubernetes.io/os': 'windows' }), node, []).reason, 'PodOSSelectorNodeLabelDoesNotMatch');
    assert.equal(kubeletAdmit(pod([{}], { os: { name: 'windows' } }), node, []).reason, 'PodOSNotSupported');
  });
});
