import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { registerBuiltinTables } from './builtin.js';
import { toTable } from '../table.js';

registerBuiltinTables();
const now = Date.parse('2025-01-01T12:00:00Z');
const created = '2025-01-01T11:00:00Z';

function table(group: string, resource: string, obj: object) {
  const t = toTable(group, resource, [{ metadata: { name: 'x', creationTimestamp: created }, ...obj } as never], 'None', now) as any;
  return { names: t.columnDefinitions.map((c: any) => c.name), wide: t.columnDefinitions.filter((c: any) => c.priority === 1).map((c: any) => c.name), cells: t.rows[0].cells };
}

describe('built-in table columns match kubectl', () => {
  it('deployments: READY UP-TO-DATE AVAILABLE AGE, wide CONTAINERS IMAGES SELECTOR', () => {
    const t = table('apps', 'deployments', {
      spec: { replicas: 3, selector: { matchLabels: { app: 'web', tier: 'fe' } }, template: { spec: { containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'redis' }] } } },
      status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
    });
    assert.deepEqual(t.names, ['Name', 'Ready', 'Up-to-date', 'Available', 'Age', 'Containers', 'Images', 'Selector']);
    assert.deepEqual(t.wide, ['Containers', 'Images', 'Selector']);
    assert.deepEqual(t.cells, ['x', '2/3', 3, 2, '60m', 'a,b', 'nginx,redis', 'app=web,tier=fe']);
  });

  it('jobs: STATUS COMPLETIONS DURATION AGE', () => {
    const t = table('batch', 'jobs', {
      spec: { completions: 3, parallelism: 1, selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u' } }, template: { spec: { containers: [{ name: 'pi', image: 'perl' }] } } },
      status: { succeeded: 3, startTime: '2025-01-01T11:00:00Z', completionTime: '2025-01-01T11:00:42Z', conditions: [{ type: 'Complete', status: 'True' }] },
    });
    assert.deepEqual(t.names, ['Name', 'Status', 'Completions', 'Duration', 'Age', 'Containers', 'Images', 'Selector']);
    assert.deepEqual(t.cells.slice(0, 5), ['x', 'Complete', '3/3', '42s', '60m']);
    const running = table('batch', 'jobs', { spec: { parallelism: 2 }, status: { startTime: '2025-01-01T11:58:00Z' } });
    assert.deepEqual(running.cells.slice(1, 4), ['Running', '0/1 of 2', '2m']);
  });

  it('services: TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE, wide SELECTOR', () => {
    const t = table('', 'services', { spec: { type: 'NodePort', clusterIP: '10.0.0.7', ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }], selector: { app: 'web' } } });
    assert.deepEqual(t.names, ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector']);
    assert.deepEqual(t.cells, ['x', 'NodePort', '10.0.0.7', '<none>', '80:30080/TCP,53/UDP', '60m', 'app=web']);
    assert.equal(table('', 'services', { spec: { type: 'LoadBalancer', clusterIP: '10.0.0.8', ports: [] } }).cells[3], '<pending>');
  });

  it('nodes: STATUS ROLES AGE VERSION, wide addresses and node info', () => {
    const t = table('', 'nodes', {
      metadata: { name: 'n1', creationTimestamp: created, labels: { 'node-role.kubernetes.io/control-plane': '' } },
      spec: { unschedulable: true },
      status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: '10.0.0.2' }], nodeInfo: { kubeletVersion: 'v1.33.0', osImage: 'kcm', kernelVersion: '6.1', containerRuntimeVersion: 'kcm://1' } },
    });
    assert.deepEqual(t.names, ['Name', 'Status', 'Roles', 'Age', 'Version', 'Internal-IP', 'External-IP', 'OS-Image', 'Kernel-Version', 'Container-Runtime']);
    assert.deepEqual(t.cells, ['n1', 'Ready,SchedulingDisabled', 'control-plane', '60m', 'v1.33.0', '10.0.0.2', '<none>', 'kcm', '6.1', 'kcm://1']);
  });

  it('events have no Age and Name is a wide column', () => {
    const t = table('', 'events', { involvedObject: { kind: 'Pod', name: 'p1' }, reason: 'Scheduled', type: 'Normal', message: 'ok ', count: 2, firstTimestamp: '2025-01-01T11:50:00Z', lastTimestamp: '2025-01-01T11:59:00Z', source: { component: 'kubelet', host: 'n1' } });
    assert.deepEqual(t.names, ['Last Seen', 'Type', 'Reason', 'Object', 'Subobject', 'Source', 'Message', 'First Seen', 'Count', 'Name']);
    assert.deepEqual(t.cells, ['60s', 'Normal', 'Scheduled', 'pod/p1', '', 'kubelet, n1', 'ok', '10m', 2, 'x']);
  });

  it('configmaps, secrets, namespaces, replicasets, statefulsets, daemonsets, cronjobs', () => {
    assert.deepEqual(table('', 'configmaps', { data: { a: '1', b: '2' } }).cells, ['x', 2, '60m']);
    assert.deepEqual(table('', 'secrets', { type: 'Opaque', data: { a: 'eA==' } }).cells, ['x', 'Opaque', 1, '60m']);
    assert.deepEqual(table('', 'namespaces', { status: { phase: 'Active' } }).cells, ['x', 'Active', '60m']);
    assert.deepEqual(table('apps', 'replicasets', { spec: { replicas: 2 }, status: { replicas: 2, readyReplicas: 1 } }).names, ['Name', 'Desired', 'Current', 'Ready', 'Age', 'Containers', 'Images', 'Selector']);
    assert.deepEqual(table('apps', 'statefulsets', { spec: { replicas: 2 }, status: { readyReplicas: 1 } }).cells.slice(0, 3), ['x', '1/2', '60m']);
    const ds = table('apps', 'daemonsets', { spec: { template: { spec: { nodeSelector: { 'kubernetes.io/os': 'linux' } } } }, status: { desiredNumberScheduled: 3 } });
    assert.deepEqual(ds.names.slice(0, 8), ['Name', 'Desired', 'Current', 'Ready', 'Up-to-date', 'Available', 'Node Selector', 'Age']);
    assert.equal(ds.cells[6], 'kubernetes.io/os=linux');
    const cj = table('batch', 'cronjobs', { spec: { schedule: '*/5 * * * *', suspend: false }, status: {} });
    assert.deepEqual(cj.cells.slice(0, 7), ['x', '*/5 * * * *', '<none>', 'False', 0, '<none>', '60m']);
  });

  it('roles print Created At instead of Age; storage classes mark the default', () => {
    assert.deepEqual(table('rbac.authorization.k8s.io', 'roles', {}).names, ['Name', 'Created At']);
    assert.deepEqual(table('apiextensions.k8s.io', 'customresourcedefinitions', {}).names, ['Name', 'Created At']);
    assert.deepEqual(table('apiextensions.k8s.io', 'customresourcedefinitions', {}).cells, ['x', created]);
    const sc = table('storage.k8s.io', 'storageclasses', { metadata: { name: 'std', creationTimestamp: created, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'p' });
    assert.deepEqual(sc.cells, ['std (default)', 'p', 'Delete', 'Immediate', 'false', '60m']);
  });

  it('endpoints list at most three addresses', () => {
    const t = table('', 'endpoints', { subsets: [{ addresses: [{ ip: '1.1.1.1' }, { ip: '1.1.1.2' }, { ip: '1.1.1.3' }, { ip: '1.1.1.4' }], ports: [{ port: 80 }] }] });
    assert.equal(t.cells[1], '1.1.1.1:80,1.1.1.2:80,1.1.1.3:80 + 1 more...');
  });
});
