import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerPort, Endpoints, Pod, Service } from 'kubernetes-types/core/v1.js';
import { FakeClock } from '../util/clock/clock.js';
import { PodRuntime } from './pod-runtime.js';
import { newRestartBackoff } from './restart-backoff.js';
import { PodSandbox, SimNetwork, type ClusterView } from './sandbox.js';

const NODE_IP = '172.18.0.2';

function cluster(affinity: Service['spec'], ports: (i: number) => ContainerPort[] = () => []) {
  const clock = new FakeClock();
  const svc: Service = { metadata: { name: 'web', namespace: 'ns' }, spec: { clusterIP: '10.96.0.50', ports: [{ port: 80, targetPort: 9376, nodePort: 30080 }], ...affinity } };
  const ips = ['10.244.0.2', '10.244.0.3'];
  const ep: Endpoints = { metadata: { name: 'web', namespace: 'ns' }, subsets: [{ addresses: ips.map((ip) => ({ ip })), ports: [{ port: 9376 }] }] };
  const view: ClusterView = {
    configMap: () => undefined,
    secret: () => undefined,
    services: () => [svc],
    service: (_ns, name) => (name === 'web' ? svc : undefined),
    allServices: () => [svc],
    endpoints: () => ep,
    nodeIPs: () => [NODE_IP],
  };
  const net = new SimNetwork(view, () => clock.now());
  ips.forEach((ip, i) => {
    const pod: Pod = { metadata: { name: `web-${i}`, namespace: 'ns', uid: `u${i}` }, spec: { containers: [{ name: 'h', image: 'agnhost:2.21', args: ['serve-hostname'], ports: ports(i) }] } };
    let sb: PodSandbox | undefined;
    const rt = new PodRuntime(pod, clock.now(), { backoff: newRestartBackoff({ clock }), emit: () => {}, spawn: (c, _p, at) => sb!.spawn(c, at) });
    sb = new PodSandbox(pod, rt, { nodeName: 'n', hostIP: NODE_IP, podIP: ip, allocatable: { cpu: '4', memory: '8Gi' } }, view, net, clock);
    rt.podIP = ip;
    rt.step(clock.now());
    net.add(sb, ip);
  });
  const get = (ip: string, port: number, clientIP = '10.244.1.9') => {
    const r = net.request(ip, port, { method: 'GET', path: '/', headers: {}, body: '', clientIP });
    return typeof r === 'string' ? r : r.body;
  };
  return { clock, net, get };
}

describe('the simulated pod network', () => {
  it('spreads Service requests over the ready endpoints, by cluster IP, DNS name and NodePort', () => {
    const c = cluster({});
    assert.deepEqual([c.get('10.96.0.50', 80), c.get('10.96.0.50', 80)].sort(), ['web-0', 'web-1']);
    assert.deepEqual(c.net.resolve('web', 'ns'), ['10.96.0.50']);
    assert.deepEqual(c.net.resolve('web.ns.svc.cluster.local', 'default'), ['10.96.0.50']);
    assert.match(c.get(NODE_IP, 30080), /^web-[01]$/);
    assert.equal(c.get(NODE_IP, 30081), 'refused');
    assert.equal(c.get('10.96.0.50', 81), 'refused');
    assert.equal(c.get('10.244.0.2', 9376), 'web-0');
  });

  it('keeps a client on one endpoint with sessionAffinity ClientIP until the timeout passes', async () => {
    const c = cluster({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } } });
    const first = c.get('10.96.0.50', 80);
    for (let i = 0; i < 5; i++) assert.equal(c.get('10.96.0.50', 80), first);
    assert.equal(c.get(NODE_IP, 30080), first, 'the same affinity through the NodePort');
    const other = c.get('10.96.0.50', 80, '10.244.2.7');
    assert.match(other, /^web-[01]$/);
    await c.clock.advance(11_000);
    // Both affinities expired: client B takes the next endpoint in turn, then client A the one after, not its old one.
    c.get('10.96.0.50', 80, '10.244.2.7');
    const after = c.get('10.96.0.50', 80);
    assert.notEqual(after, first);
    assert.equal(c.get('10.96.0.50', 80), after, 'and sticks to it again');
  });

  it("reaches a container's hostPort on its node's address, and on loopback from that node's network", () => {
    const c = cluster({}, (i) => [{ containerPort: 9376, hostPort: 54321, hostIP: i === 0 ? '127.0.0.1' : NODE_IP }]);
    assert.equal(c.get(NODE_IP, 54321), 'web-1');
    assert.equal(c.get('127.0.0.1', 54321, NODE_IP), 'web-0');
    // Loopback from a pod's own network namespace is not the node's.
    assert.equal(c.get('127.0.0.1', 54321), 'unreachable');
    assert.equal(c.get(NODE_IP, 54322), 'refused');
  });
});

describe('containers started at first use', () => {
  const view: ClusterView = {
    configMap: () => undefined,
    secret: () => undefined,
    services: () => [],
    service: () => undefined,
    allServices: () => [],
    endpoints: () => undefined,
    nodeIPs: () => [NODE_IP],
  };
  function run(containers: Pod['spec'] extends infer S ? (S extends { containers: infer C } ? C : never) : never, extra: Partial<NonNullable<Pod['spec']>> = {}) {
    const clock = new FakeClock();
    const net = new SimNetwork(view, () => clock.now());
    const pod: Pod = { metadata: { name: 'web', namespace: 'ns', uid: 'u1' }, spec: { containers, ...extra } };
    let sb: PodSandbox | undefined;
    const rt = new PodRuntime(pod, clock.now(), { backoff: newRestartBackoff({ clock }), emit: () => {}, spawn: (c, _p, at) => sb!.spawn(c, at) });
    sb = new PodSandbox(pod, rt, { nodeName: 'n', hostIP: NODE_IP, podIP: '10.244.0.2', allocatable: { cpu: '4', memory: '8Gi' } }, view, net, clock);
    rt.podIP = '10.244.0.2';
    rt.step(clock.now());
    net.add(sb, '10.244.0.2');
    const state = (i = 0) => rt.containers[i]!.state;
    const started = (i = 0) => {
      const s = state(i);
      assert.equal(s.kind, 'running');
      return (s as { run: { started: boolean } }).run.started;
    };
    return { clock, rt, net, state, started };
  }

  it('leaves an nginx run by its image command unstarted until it serves, and then it serves as one started at once', () => {
    const c = run([{ name: 'web', image: 'nginx:1.25' }]);
    assert.equal(c.started(), false);
    c.clock.advance(5000);
    c.rt.step(c.clock.now());
    assert.equal(c.started(), false, 'time passing does not start it');
    const r = c.net.request('10.244.0.2', 80, { method: 'GET', path: '/', headers: {}, body: '', clientIP: '10.244.1.9' });
    assert.ok(typeof r !== 'string' && r.status === 200 && r.body.includes('Welcome to nginx!'));
    assert.equal(c.started(), true);
  });

  it('starts it for an exec, which sees its file system and environment', () => {
    const c = run([{ name: 'web', image: 'nginx', env: [{ name: 'GREETING', value: 'hi' }] }]);
    assert.equal(c.started(), false);
    const s = c.state();
    assert.ok(s.kind === 'running');
    const r = s.run.exec(['sh', '-c', 'echo $GREETING; cat /etc/hostname; ls /usr/share/nginx/html'], c.clock.now(), 10_000);
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, 'hi\nweb\n50x.html\nindex.html\n');
    assert.equal(c.started(), true);
  });

  it('ends it with 0 on SIGTERM as nginx ends, started or not', () => {
    const c = run([{ name: 'web', image: 'nginx:1.14-alpine' }]);
    assert.equal(c.started(), false);
    c.clock.advance(1000);
    const s = c.state();
    assert.ok(s.kind === 'running');
    assert.deepEqual(s.run.term(c.clock.now()), { code: 0, at: c.clock.now() });
  });

  it('starts at once what is not a silent server by its image command, or has mounts other than credentials below /var/run/secrets/', () => {
    const cmd = run([{ name: 'web', image: 'nginx', command: ['nginx', '-g', 'daemon off;'] }]);
    assert.equal(cmd.started(), true);
    const daemon = run([{ name: 'b', image: 'busybox', command: ['sleep', '3600'] }]);
    assert.equal(daemon.started(), true);
    const sub = run([{ name: 'web', image: 'nginx', volumeMounts: [{ name: 'v', mountPath: '/data', subPath: 'x' }] }], { volumes: [{ name: 'v', emptyDir: {} }] });
    assert.equal(sub.started(), true);
    const data = run([{ name: 'web', image: 'nginx', volumeMounts: [{ name: 'v', mountPath: '/usr/share/nginx/html' }] }], { volumes: [{ name: 'v', emptyDir: {} }] });
    assert.equal(data.started(), true);
    // A mount that fails fails at the start, as kubelet's makeMounts does: mounting over / is busy.
    const root = run([{ name: 'web', image: 'nginx', volumeMounts: [{ name: 'v', mountPath: '/' }] }], { volumes: [{ name: 'v', emptyDir: {} }] });
    assert.deepEqual(root.state(), { kind: 'waiting', reason: 'CreateContainerConfigError', message: 'error mounting into container "web": Resource busy' });
    const token = run([{ name: 'web', image: 'nginx', volumeMounts: [{ name: 'v', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }] }], { volumes: [{ name: 'v', emptyDir: {} }] });
    assert.equal(token.started(), false);
  });
});
