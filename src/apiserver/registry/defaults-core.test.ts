/**
 * The core/v1 defaults, pinned against pkg/apis/core/v1/defaults.go and the
 * +default markers of k8s.io/api/core/v1 (what kube-apiserver returns for an
 * object created with the minimum fields).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { strategyFor } from './strategy.js';
import { defaultImagePullPolicy, imageTag } from './pod-spec.js';

type Any = Record<string, any>;

function defaulted(resource: string, obj: Any): Any {
  const out = structuredClone(obj) as KubeObject;
  strategyFor('', resource).defaults(out);
  return out as Any;
}

/** What SetDefaults_Container adds to a container with only a name and an untagged image. */
const containerDefaults = { imagePullPolicy: 'Always', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', resources: {} };
const podSpecDefaults = { dnsPolicy: 'ClusterFirst', restartPolicy: 'Always', securityContext: {}, terminationGracePeriodSeconds: 30, schedulerName: 'default-scheduler' };

describe('core/v1 defaults', () => {
  it('defaults a minimal pod as SetDefaults_Pod and SetDefaults_PodSpec do', () => {
    const pod = defaulted('pods', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    assert.deepEqual(pod.spec, { containers: [{ name: 'c', image: 'nginx', ...containerDefaults }], enableServiceLinks: true, ...podSpecDefaults });
  });

  it('treats empty strings and zeros of non-pointer fields as unset', () => {
    const pod = defaulted('pods', {
      spec: {
        dnsPolicy: '',
        restartPolicy: '',
        schedulerName: '',
        containers: [
          {
            name: 'c',
            image: 'nginx:1.25',
            imagePullPolicy: '',
            terminationMessagePath: '',
            ports: [{ containerPort: 80, protocol: '' }],
            readinessProbe: { tcpSocket: { port: 80 }, timeoutSeconds: 0, periodSeconds: 0, successThreshold: 0, failureThreshold: 0 },
          },
        ],
      },
    });
    const c = pod.spec.containers[0];
    assert.equal(pod.spec.dnsPolicy, 'ClusterFirst');
    assert.equal(pod.spec.restartPolicy, 'Always');
    assert.equal(pod.spec.schedulerName, 'default-scheduler');
    assert.equal(c.imagePullPolicy, 'IfNotPresent');
    assert.equal(c.terminationMessagePath, '/dev/termination-log');
    assert.deepEqual(c.ports, [{ containerPort: 80, protocol: 'TCP' }]);
    assert.deepEqual(c.readinessProbe, { tcpSocket: { port: 80 }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
  });

  it('defaults probes, lifecycle hooks, env field refs and every kind of container', () => {
    const probe = { httpGet: { port: 8080 } };
    const pod = defaulted('pods', {
      spec: {
        initContainers: [{ name: 'i', image: 'busybox:latest', env: [{ name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }] }],
        containers: [
          {
            name: 'c',
            image: 'nginx@sha256:' + 'a'.repeat(64),
            livenessProbe: probe,
            startupProbe: { grpc: { port: 9000 } },
            lifecycle: { postStart: { httpGet: { port: 80 } }, preStop: { httpGet: { port: 80, path: '/stop' } } },
            env: [{ name: 'F', valueFrom: { fileKeyRef: { volumeName: 'v', path: 'p', key: 'k' } } }],
          },
        ],
        ephemeralContainers: [{ name: 'e', image: 'debug' }],
      },
    });
    const [init] = pod.spec.initContainers;
    const [c] = pod.spec.containers;
    assert.equal(init.imagePullPolicy, 'Always');
    assert.deepEqual(init.env[0].valueFrom.fieldRef, { apiVersion: 'v1', fieldPath: 'metadata.namespace' });
    assert.equal(c.imagePullPolicy, 'IfNotPresent');
    assert.deepEqual(c.livenessProbe, { httpGet: { port: 8080, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
    assert.deepEqual(c.startupProbe.grpc, { port: 9000, service: '' });
    assert.deepEqual(c.lifecycle, { postStart: { httpGet: { port: 80, path: '/', scheme: 'HTTP' } }, preStop: { httpGet: { port: 80, path: '/stop', scheme: 'HTTP' } } });
    assert.equal(c.env[0].valueFrom.fileKeyRef.optional, false);
    assert.deepEqual(pod.spec.ephemeralContainers, [{ name: 'e', image: 'debug', ...containerDefaults }]);
  });

  it('defaults every volume source that has defaults', () => {
    const pod = defaulted('pods', {
      spec: {
        containers: [{ name: 'c', image: 'x' }],
        volumes: [
          { name: 'empty' },
          { name: 'hp', hostPath: { path: '/tmp' } },
          { name: 's', secret: { secretName: 's' } },
          { name: 'cm', configMap: { name: 'cm' } },
          { name: 'd', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } },
          {
            name: 'pr',
            projected: {
              sources: [
                { serviceAccountToken: { path: 'token' } },
                { downwardAPI: { items: [{ path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
              ],
            },
          },
          { name: 'iscsi', iscsi: { targetPortal: 'p', iqn: 'q', lun: 0 } },
          { name: 'rbd', rbd: { monitors: ['m'], image: 'i' } },
          { name: 'az', azureDisk: { diskName: 'd', diskURI: 'u' } },
          { name: 'sio', scaleIO: { gateway: 'g', system: 's', secretRef: { name: 'x' } } },
          { name: 'eph', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } },
          { name: 'img', image: { reference: 'registry.k8s.io/pause:latest' } },
        ],
      },
    });
    const v = Object.fromEntries(pod.spec.volumes.map((x: Any) => [x.name, x]));
    assert.deepEqual(v.empty, { name: 'empty', emptyDir: {} });
    assert.deepEqual(v.hp.hostPath, { path: '/tmp', type: '' });
    assert.deepEqual(v.s.secret, { secretName: 's', defaultMode: 420 });
    assert.deepEqual(v.cm.configMap, { name: 'cm', defaultMode: 420 });
    assert.deepEqual(v.d.downwardAPI, { items: [{ path: 'n', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } }], defaultMode: 420 });
    assert.deepEqual(v.pr.projected, {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
        { downwardAPI: { items: [{ path: 'ns', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
    assert.equal(v.iscsi.iscsi.iscsiInterface, 'default');
    assert.deepEqual(v.rbd.rbd, { monitors: ['m'], image: 'i', pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' });
    assert.deepEqual(v.az.azureDisk, { diskName: 'd', diskURI: 'u', cachingMode: 'ReadWrite', fsType: 'ext4', readOnly: false, kind: 'Shared' });
    assert.equal(v.sio.scaleIO.storageMode, 'ThinProvisioned');
    assert.equal(v.sio.scaleIO.fsType, 'xfs');
    assert.equal(v.eph.ephemeral.volumeClaimTemplate.spec.volumeMode, 'Filesystem');
    assert.equal(v.img.image.pullPolicy, 'Always');
  });

  it('copies limits to requests, host-network ports and pod-level requests on pods only', () => {
    const spec = {
      hostNetwork: true,
      resources: { limits: { cpu: '2', memory: '1Gi' } },
      containers: [
        { name: 'a', image: 'x:1', ports: [{ containerPort: 8080 }], resources: { limits: { cpu: '500m' }, requests: { memory: '100Mi' } } },
        { name: 'b', image: 'x:1', resources: { requests: { cpu: '0.0001' } } },
      ],
    };
    const pod = defaulted('pods', { spec });
    const [a, b] = pod.spec.containers;
    assert.deepEqual(a.resources.requests, { memory: '100Mi', cpu: '500m' });
    assert.deepEqual(a.ports, [{ containerPort: 8080, hostPort: 8080, protocol: 'TCP' }]);
    // SetDefaults_ResourceList rounds up to milli-units.
    assert.deepEqual(b.resources.requests, { cpu: '1m' });
    // Pod-level requests: the containers' sum where they ask, else the pod-level limit.
    assert.deepEqual(pod.spec.resources, { limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '501m', memory: '100Mi' } });

    const tpl = defaulted('podtemplates', { template: { spec } });
    const [ta] = tpl.template.spec.containers;
    assert.equal(ta.resources.requests.cpu, undefined, 'templates get no requests from limits');
    assert.deepEqual(ta.ports, [{ containerPort: 8080, protocol: 'TCP' }], 'templates get no host ports');
    assert.equal(tpl.template.spec.enableServiceLinks, undefined);
    assert.equal(tpl.template.spec.dnsPolicy, 'ClusterFirst');
  });

  it('parses image references as ParseImageName for the pull policy', () => {
    assert.equal(imageTag('nginx'), 'latest');
    assert.equal(imageTag('localhost:5000/team/app:v1.2'), 'v1.2');
    assert.equal(imageTag('nginx@sha256:' + 'a'.repeat(64)), '');
    assert.equal(imageTag('Nginx'), undefined);
    assert.equal(defaultImagePullPolicy('nginx:latest@sha256:' + 'b'.repeat(64)), 'Always');
    assert.equal(defaultImagePullPolicy('Nginx'), 'IfNotPresent');
    assert.equal(defaultImagePullPolicy('nginx@md5:abc'), 'IfNotPresent');
  });

  it('defaults a replication controller from its template', () => {
    const rc = defaulted('replicationcontrollers', { metadata: { name: 'r' }, spec: { template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } });
    assert.deepEqual(rc.metadata.labels, { app: 'a' });
    assert.deepEqual(rc.spec.selector, { app: 'a' });
    assert.equal(rc.spec.replicas, 1);
    assert.deepEqual(rc.spec.template.spec, { containers: [{ name: 'c', image: 'x', ...containerDefaults }], ...podSpecDefaults });
  });

  it('defaults services as SetDefaults_Service plus the IP family fields', () => {
    const svc = defaulted('services', { spec: { ports: [{ port: 80 }], selector: { app: 'a' } } });
    assert.deepEqual(svc.spec, {
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
      selector: { app: 'a' },
      sessionAffinity: 'None',
      type: 'ClusterIP',
      internalTrafficPolicy: 'Cluster',
      ipFamilyPolicy: 'SingleStack',
      ipFamilies: ['IPv4'],
    });
    const lb = defaulted('services', {
      spec: { type: 'LoadBalancer', sessionAffinity: 'ClientIP', ports: [{ port: 80, targetPort: 0 }] },
      status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }, { hostname: 'lb.example' }] } },
    });
    assert.equal(lb.spec.externalTrafficPolicy, 'Cluster');
    assert.equal(lb.spec.allocateLoadBalancerNodePorts, true);
    assert.deepEqual(lb.spec.sessionAffinityConfig, { clientIP: { timeoutSeconds: 10800 } });
    assert.equal(lb.spec.ports[0].targetPort, 80);
    assert.deepEqual(lb.status.loadBalancer.ingress, [{ ip: '1.2.3.4', ipMode: 'VIP' }, { hostname: 'lb.example' }]);
    // ClusterIP with external IPs is externally accessible.
    const ext = defaulted('services', { metadata: { name: 's', namespace: 'd' }, spec: { externalIPs: ['1.2.3.4'], ports: [{ port: 80 }], sessionAffinityConfig: { clientIP: { timeoutSeconds: 5 } } } });
    assert.equal(ext.spec.externalTrafficPolicy, 'Cluster');
    assert.equal(ext.spec.sessionAffinityConfig, undefined, 'sessionAffinity None drops the config');
    assert.deepEqual(strategyFor('', 'services').validate(ext as KubeObject), []);
    // A headless service without selector may be dual-stack.
    const headless = defaulted('services', { spec: { clusterIP: 'None', ports: [{ port: 80 }] } });
    assert.deepEqual(headless.spec.clusterIPs, ['None']);
    assert.equal(headless.spec.ipFamilyPolicy, 'RequireDualStack');
    assert.deepEqual(headless.spec.ipFamilies, ['IPv4', 'IPv6']);
    const external = defaulted('services', { spec: { type: 'ExternalName', externalName: 'example.com' } });
    assert.deepEqual(external.spec, { type: 'ExternalName', externalName: 'example.com', sessionAffinity: 'None' });
  });

  it('refuses externalTrafficPolicy on services that are not externally accessible', () => {
    const svc = defaulted('services', { metadata: { name: 's', namespace: 'd' }, spec: { ports: [{ port: 80 }], externalTrafficPolicy: 'Local' } });
    assert.deepEqual(strategyFor('', 'services').validate(svc as KubeObject).map((e) => e.message), [
      'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services',
    ]);
  });

  it('defaults persistent volumes, claims and their sources', () => {
    const pv = defaulted('persistentvolumes', { spec: { capacity: { storage: '1Gi' }, hostPath: { path: '/d' }, persistentVolumeReclaimPolicy: '' } });
    assert.deepEqual(pv.spec, { capacity: { storage: '1Gi' }, hostPath: { path: '/d', type: '' }, persistentVolumeReclaimPolicy: 'Retain', volumeMode: 'Filesystem' });
    assert.deepEqual(pv.status, { phase: 'Pending' });
    const rbd = defaulted('persistentvolumes', { spec: { rbd: { monitors: ['m'], image: 'i' } } });
    assert.deepEqual(rbd.spec.rbd, { monitors: ['m'], image: 'i', pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' });
    const pvc = defaulted('persistentvolumeclaims', { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    assert.deepEqual(pvc.spec, { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' });
    assert.deepEqual(pvc.status, { phase: 'Pending' });
  });

  it('defaults namespaces, nodes, secrets and endpoints', () => {
    const ns = defaulted('namespaces', { metadata: { name: 'team', labels: { 'kubernetes.io/metadata.name': 'other' } } });
    assert.deepEqual(ns.metadata.labels, { 'kubernetes.io/metadata.name': 'team' });
    assert.deepEqual(ns.status, { phase: 'Active' });
    const node = defaulted('nodes', { status: { capacity: { cpu: '4', pods: '110' } } });
    assert.deepEqual(node.status.allocatable, { cpu: '4', pods: '110' });
    assert.equal(defaulted('secrets', { type: '' }).type, 'Opaque');
    assert.equal(defaulted('secrets', {}).type, 'Opaque');
    const ep = defaulted('endpoints', { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }] }] });
    assert.deepEqual(ep.subsets[0].ports, [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }]);
  });

  it('defaults container limit range items from max, default and min', () => {
    const lr = defaulted('limitranges', {
      spec: {
        limits: [
          { type: 'Container', max: { cpu: '2', memory: '1Gi' }, min: { cpu: '100m', 'ephemeral-storage': '1Mi' }, default: { memory: '512Mi' } },
          { type: 'Pod', max: { cpu: '4' } },
        ],
      },
    });
    assert.deepEqual(lr.spec.limits, [
      {
        type: 'Container',
        max: { cpu: '2', memory: '1Gi' },
        min: { cpu: '100m', 'ephemeral-storage': '1Mi' },
        default: { memory: '512Mi', cpu: '2' },
        defaultRequest: { memory: '512Mi', cpu: '2', 'ephemeral-storage': '1Mi' },
      },
      { type: 'Pod', max: { cpu: '4' } },
    ]);
  });

  it('leaves the kinds without defaults alone', () => {
    for (const resource of ['configmaps', 'serviceaccounts', 'events']) {
      const obj = { metadata: { name: 'x' } };
      assert.deepEqual(defaulted(resource, obj), obj, resource);
    }
    assert.deepEqual(defaulted('resourcequotas', { spec: { hard: { cpu: '0.0005' } } }).spec.hard, { cpu: '1m' });
  });
});
