import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Service } from 'kubernetes-types/core/v1.js';
import { containerEnv, expand, fromServices, mappingFuncFor, runtimeEnv, DEFAULT_PATH } from './env.js';
import { KUBERNETES_SVC, NODE, b64, pod, source } from './testutil.js';

test('expand: $(VAR), $$ escape, undefined and malformed references left as written', () => {
  const m = mappingFuncFor(new Map([['A', 'x'], ['B', 'y']]));
  assert.equal(expand('$(A)-$(B)', m), 'x-y');
  assert.equal(expand('$$(A)', m), '$(A)');
  assert.equal(expand('$(C)', m), '$(C)');
  assert.equal(expand('$A $', m), '$A $');
  assert.equal(expand('$(A', m), '$(A');
  assert.equal(expand('a$$$$b', m), 'a$$b');
  assert.equal(expand('$$$(A)', m), '$x');
});

test('service env vars: exact names and formats', () => {
  const svc: Service = {
    metadata: { name: 'my-svc', namespace: 'ns1' },
    spec: { clusterIP: '10.96.3.4', ports: [{ port: 80 }, { name: 'dns-udp', port: 53, protocol: 'UDP' }] },
  };
  assert.deepEqual(Object.fromEntries(fromServices([svc])), {
    MY_SVC_SERVICE_HOST: '10.96.3.4',
    MY_SVC_SERVICE_PORT: '80',
    MY_SVC_SERVICE_PORT_DNS_UDP: '53',
    MY_SVC_PORT: 'tcp://10.96.3.4:80',
    MY_SVC_PORT_80_TCP: 'tcp://10.96.3.4:80',
    MY_SVC_PORT_80_TCP_PROTO: 'tcp',
    MY_SVC_PORT_80_TCP_PORT: '80',
    MY_SVC_PORT_80_TCP_ADDR: '10.96.3.4',
    MY_SVC_PORT_53_UDP: 'udp://10.96.3.4:53',
    MY_SVC_PORT_53_UDP_PROTO: 'udp',
    MY_SVC_PORT_53_UDP_PORT: '53',
    MY_SVC_PORT_53_UDP_ADDR: '10.96.3.4',
  });
  const v6: Service = { metadata: { name: 'v6', namespace: 'ns1' }, spec: { clusterIP: 'fd00::5', ports: [{ port: 8080 }] } };
  assert.equal(Object.fromEntries(fromServices([v6])).V6_PORT, 'tcp://[fd00::5]:8080');
});

test('service links: kubernetes always, namespace services unless enableServiceLinks=false, headless skipped', () => {
  const services: Service[] = [
    KUBERNETES_SVC,
    { metadata: { name: 'other', namespace: 'default' }, spec: { clusterIP: '10.96.0.9', ports: [{ port: 1 }] } },
    { metadata: { name: 'db', namespace: 'ns1' }, spec: { clusterIP: '10.96.0.20', ports: [{ port: 5432 }] } },
    { metadata: { name: 'headless', namespace: 'ns1' }, spec: { clusterIP: 'None', ports: [{ port: 1 }] } },
  ];
  const c: Container = { name: 'app' };
  const { env } = containerEnv(pod(), c, source({ services }), NODE);
  assert.equal(env.KUBERNETES_SERVICE_HOST, '10.96.0.1');
  assert.equal(env.KUBERNETES_SERVICE_PORT, '443');
  assert.equal(env.KUBERNETES_SERVICE_PORT_HTTPS, '443');
  assert.equal(env.KUBERNETES_PORT, 'tcp://10.96.0.1:443');
  assert.equal(env.KUBERNETES_PORT_443_TCP_ADDR, '10.96.0.1');
  assert.equal(env.DB_SERVICE_HOST, '10.96.0.20');
  assert.equal(env.OTHER_SERVICE_HOST, undefined);
  assert.equal(env.HEADLESS_SERVICE_HOST, undefined);
  const off = containerEnv(pod({ enableServiceLinks: false }), c, source({ services }), NODE).env;
  assert.equal(off.KUBERNETES_SERVICE_HOST, '10.96.0.1');
  assert.equal(off.DB_SERVICE_HOST, undefined);
  // A pod in default sees its other services (and kubernetes once).
  const inDefault = containerEnv(pod({}, { namespace: 'default' }), c, source({ services }), NODE).env;
  assert.equal(inDefault.OTHER_SERVICE_HOST, '10.96.0.9');
  assert.equal(inDefault.KUBERNETES_SERVICE_HOST, '10.96.0.1');
});

test('env: values with expansion against earlier vars and service vars; later wins', () => {
  const c: Container = {
    name: 'app',
    env: [
      { name: 'A', value: 'a' },
      { name: 'B', value: '$(A)-$(KUBERNETES_SERVICE_HOST)-$(LATER)-$$(A)' },
      { name: 'LATER', value: 'l' },
      { name: 'EMPTY' },
      { name: 'A', value: 'a2' },
    ],
  };
  const { env, error } = containerEnv(pod(), c, source({ services: [KUBERNETES_SVC] }), NODE);
  assert.equal(error, undefined);
  assert.equal(env.B, 'a-10.96.0.1-$(LATER)-$(A)');
  assert.equal(env.EMPTY, '');
  assert.equal(env.A, 'a2');
});

test('env overrides a service variable, which is then not seen by later expansions', () => {
  const c: Container = { name: 'app', env: [{ name: 'KUBERNETES_SERVICE_HOST', value: 'x' }, { name: 'Y', value: '$(KUBERNETES_SERVICE_HOST)' }] };
  const { env } = containerEnv(pod(), c, source({ services: [KUBERNETES_SVC] }), NODE);
  assert.equal(env.KUBERNETES_SERVICE_HOST, 'x');
  assert.equal(env.Y, 'x');
});

test('env fieldRef: metadata, labels/annotations subscripts, spec and status fields', () => {
  const p = pod({ nodeName: 'node-1', serviceAccountName: 'sa1' }, { labels: { app: 'web', tier: 'fe' }, annotations: { note: 'say "hi"' } });
  const f = (fieldPath: string) => ({ valueFrom: { fieldRef: { fieldPath } } });
  const c: Container = {
    name: 'app',
    env: [
      { name: 'NAME', ...f('metadata.name') },
      { name: 'NS', ...f('metadata.namespace') },
      { name: 'UID', ...f('metadata.uid') },
      { name: 'APP', ...f("metadata.labels['app']") },
      { name: 'NOTE', ...f("metadata.annotations['note']") },
      { name: 'MISSING', ...f("metadata.labels['nope']") },
      { name: 'LABELS', ...f('metadata.labels') },
      { name: 'NODE', ...f('spec.nodeName') },
      { name: 'SA', ...f('spec.serviceAccountName') },
      { name: 'HOST_IP', ...f('status.hostIP') },
      { name: 'POD_IP', ...f('status.podIP') },
      { name: 'POD_IPS', ...f('status.podIPs') },
    ],
  };
  const { env, error } = containerEnv(p, c, source({}), { ...NODE, podIPs: ['10.244.1.7', 'fd00::7'] });
  assert.equal(error, undefined);
  assert.deepEqual(
    { ...env },
    {
      NAME: 'web-0',
      NS: 'ns1',
      UID: 'uid-123',
      APP: 'web',
      NOTE: 'say "hi"',
      MISSING: '',
      LABELS: 'app="web"\ntier="fe"',
      NODE: 'node-1',
      SA: 'sa1',
      HOST_IP: '172.18.0.2',
      POD_IP: '10.244.1.7',
      POD_IPS: '10.244.1.7,fd00::7',
    },
  );
  const bad = containerEnv(p, { name: 'app', env: [{ name: 'X', ...f('spec.bogus') }] }, source({}), NODE);
  assert.equal(bad.error, 'field label not supported: spec.bogus');
});

test('env resourceFieldRef: divisor, rounding up, limits defaulted to node allocatable, containerName', () => {
  const p = pod({
    containers: [
      { name: 'app', resources: { requests: { cpu: '250m', memory: '32Mi' }, limits: { cpu: '1250m', memory: '64Mi' } } },
      { name: 'side' },
    ],
  });
  const r = (resource: string, divisor?: string, containerName?: string) => ({
    valueFrom: { resourceFieldRef: { resource, ...(divisor ? { divisor } : {}), ...(containerName ? { containerName } : {}) } },
  });
  const c: Container = {
    ...p.spec!.containers[0]!,
    env: [
      { name: 'CPU_LIMIT', ...r('limits.cpu') },
      { name: 'CPU_LIMIT_M', ...r('limits.cpu', '1m') },
      { name: 'CPU_REQ', ...r('requests.cpu') },
      { name: 'MEM_LIMIT', ...r('limits.memory') },
      { name: 'MEM_LIMIT_MI', ...r('limits.memory', '1Mi') },
      { name: 'MEM_REQ_MI', ...r('requests.memory', '1Mi') },
      { name: 'SIDE_CPU', ...r('limits.cpu', undefined, 'side') },
      { name: 'SIDE_MEM', ...r('limits.memory', '1Gi', 'side') },
      { name: 'SIDE_REQ', ...r('requests.cpu', '1m', 'side') },
      { name: 'EPH', ...r('limits.ephemeral-storage', '1Gi') },
    ],
  };
  const { env, error } = containerEnv(p, c, source({}), NODE);
  assert.equal(error, undefined);
  assert.equal(env.CPU_LIMIT, '2');
  assert.equal(env.CPU_LIMIT_M, '1250');
  assert.equal(env.CPU_REQ, '1');
  assert.equal(env.MEM_LIMIT, String(64 * 1024 * 1024));
  assert.equal(env.MEM_LIMIT_MI, '64');
  assert.equal(env.MEM_REQ_MI, '32');
  assert.equal(env.SIDE_CPU, '4');
  assert.equal(env.SIDE_MEM, '8');
  assert.equal(env.SIDE_REQ, '0');
  assert.equal(env.EPH, '100');
  const missing = containerEnv(p, { name: 'app', env: [{ name: 'X', ...r('limits.cpu', undefined, 'nope') }] }, source({}), NODE);
  assert.equal(missing.error, 'container nope not found');
});

test('env configMapKeyRef/secretKeyRef: values, optional, kubelet error texts', () => {
  const cm = { metadata: { namespace: 'ns1', name: 'cfg' }, data: { k: 'v' } };
  const sec = { metadata: { namespace: 'ns1', name: 'sec' }, data: { pw: b64('s3cr3t') } };
  const src = source({ configMaps: [cm], secrets: [sec] });
  const ok = containerEnv(
    pod(),
    {
      name: 'app',
      env: [
        { name: 'K', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } },
        { name: 'P', valueFrom: { secretKeyRef: { name: 'sec', key: 'pw' } } },
        { name: 'O1', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k', optional: true } } },
        { name: 'O2', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'nope', optional: true } } },
        { name: 'O3', valueFrom: { secretKeyRef: { name: 'nope', key: 'k', optional: true } } },
      ],
    },
    src,
    NODE,
  );
  assert.equal(ok.error, undefined);
  assert.equal(ok.env.K, 'v');
  assert.equal(ok.env.P, 's3cr3t');
  assert.ok(!('O1' in ok.env) && !('O2' in ok.env) && !('O3' in ok.env));
  const err = (e: Container['env']) => containerEnv(pod(), { name: 'app', env: e }, src, NODE).error;
  assert.equal(err([{ name: 'X', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k' } } }]), 'configmap "nope" not found');
  assert.equal(err([{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'zz' } } }]), "couldn't find key zz in ConfigMap ns1/cfg");
  assert.equal(err([{ name: 'X', valueFrom: { secretKeyRef: { name: 'nope', key: 'k' } } }]), 'secret "nope" not found');
  assert.equal(err([{ name: 'X', valueFrom: { secretKeyRef: { name: 'sec', key: 'zz' } } }]), "couldn't find key zz in Secret ns1/sec");
});

test('envFrom: configMap and secret with prefix, invalid keys skipped with the event text, env wins', () => {
  const cm = { metadata: { namespace: 'ns1', name: 'cfg' }, data: { data_1: 'value-1', 'bad key': 'x', '1abc': 'y', SHARED: 'from-cm' } };
  const sec = { metadata: { namespace: 'ns1', name: 'sec' }, data: { data_1: b64('secret-1'), 'a b': b64('z') } };
  const c: Container = {
    name: 'app',
    envFrom: [{ configMapRef: { name: 'cfg' } }, { prefix: 'p_', secretRef: { name: 'sec' } }, { configMapRef: { name: 'nope', optional: true } }],
    env: [{ name: 'SHARED', value: 'from-env' }],
  };
  const { env, warnings, error } = containerEnv(pod(), c, source({ configMaps: [cm], secrets: [sec] }), NODE);
  assert.equal(error, undefined);
  assert.equal(env.data_1, 'value-1');
  assert.equal(env.p_data_1, 'secret-1');
  assert.equal(env.SHARED, 'from-env');
  assert.deepEqual(warnings, [
    'Keys [1abc, bad key] from the EnvFrom configMap ns1/cfg were skipped since they are considered invalid environment variable names.',
    'Keys [p_a b] from the EnvFrom secret ns1/sec were skipped since they are considered invalid environment variable names.',
  ]);
  const missing = containerEnv(pod(), { name: 'app', envFrom: [{ secretRef: { name: 'nope' } }] }, source({}), NODE);
  assert.equal(missing.error, 'secret "nope" not found');
});

test('envFrom overrides service variables; envFrom values are visible to $(VAR)', () => {
  const cm = { metadata: { namespace: 'ns1', name: 'cfg' }, data: { KUBERNETES_SERVICE_HOST: 'mine', X: 'x' } };
  const c: Container = { name: 'app', envFrom: [{ configMapRef: { name: 'cfg' } }], env: [{ name: 'Y', value: '$(X)$(KUBERNETES_SERVICE_HOST)' }] };
  const { env } = containerEnv(pod(), c, source({ configMaps: [cm], services: [KUBERNETES_SVC] }), NODE);
  assert.equal(env.KUBERNETES_SERVICE_HOST, 'mine');
  assert.equal(env.Y, 'xmine');
});

test('runtimeEnv: PATH, HOSTNAME and HOME added unless set', () => {
  assert.deepEqual(runtimeEnv({ A: '1' }, { hostname: 'web-0' }), { PATH: DEFAULT_PATH, HOSTNAME: 'web-0', A: '1', HOME: '/root' });
  const r = runtimeEnv({ HOSTNAME: 'h', HOME: '/home/x', PATH: '/bin' }, { hostname: 'web-0', imageEnv: { PATH: '/opt/bin', LANG: 'C' } });
  assert.deepEqual(r, { PATH: '/bin', HOSTNAME: 'h', LANG: 'C', HOME: '/home/x' });
  assert.equal(runtimeEnv({}, { hostname: 'x', imageEnv: { PATH: '/opt/bin' } }).PATH, '/opt/bin');
});
