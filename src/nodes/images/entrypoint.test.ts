import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containerArgv, imageConfig, parseImage } from './index.js';

test('parseImage splits registry, repository, tag and digest', () => {
  assert.deepEqual(parseImage('k8s.gcr.io/e2e-test-images/agnhost:2.21'), { registry: 'k8s.gcr.io', repository: 'e2e-test-images/agnhost', name: 'agnhost', tag: '2.21' });
  assert.deepEqual(parseImage('nginx'), { repository: 'nginx', name: 'nginx' });
  assert.deepEqual(parseImage('localhost:5000/busybox@sha256:abc'), { registry: 'localhost:5000', repository: 'busybox', name: 'busybox', digest: 'sha256:abc' });
  assert.deepEqual(parseImage('docker.io/library/httpd:2.4.38-alpine'), { registry: 'docker.io', repository: 'library/httpd', name: 'httpd', tag: '2.4.38-alpine' });
});

test('containerArgv: image defaults when command and args are absent', () => {
  const argv = (image: string, command?: string[], args?: string[]): string[] => containerArgv({ name: 'c', image, ...(command ? { command } : {}), ...(args ? { args } : {}) });
  assert.deepEqual(argv('k8s.gcr.io/e2e-test-images/agnhost:2.21'), ['/agnhost', 'pause']);
  assert.deepEqual(argv('k8s.gcr.io/busybox:1.29'), ['sh']);
  assert.deepEqual(argv('busybox'), ['sh']);
  assert.deepEqual(argv('alpine:3.7'), ['/bin/sh']);
  assert.deepEqual(argv('docker.io/library/nginx:1.14-alpine'), ['nginx', '-g', 'daemon off;']);
  assert.deepEqual(argv('nginx'), ['/docker-entrypoint.sh', 'nginx', '-g', 'daemon off;']);
  assert.deepEqual(argv('docker.io/library/httpd:2.4.38-alpine'), ['httpd-foreground']);
  assert.deepEqual(argv('k8s.gcr.io/pause:3.2'), ['/pause']);
  assert.deepEqual(argv('docker.io/library/redis:5.0.5-alpine'), ['docker-entrypoint.sh', 'redis-server']);
  assert.deepEqual(argv('docker.io/library/perl:5.26'), ['perl5.26.3', '-de0']);
  assert.deepEqual(argv('example.com/unknown:1'), []);
});

test('containerArgv: docker semantics for command and args', () => {
  const agn = 'k8s.gcr.io/e2e-test-images/agnhost:2.21';
  // args alone replace CMD
  assert.deepEqual(containerArgv({ name: 'c', image: agn, args: ['entrypoint-tester', 'override', 'arguments'] }), ['/agnhost', 'entrypoint-tester', 'override', 'arguments']);
  // command replaces ENTRYPOINT and drops CMD
  assert.deepEqual(containerArgv({ name: 'c', image: agn, command: ['/agnhost-2'] }), ['/agnhost-2']);
  assert.deepEqual(containerArgv({ name: 'c', image: agn, command: ['/agnhost-2'], args: ['entrypoint-tester', 'x'] }), ['/agnhost-2', 'entrypoint-tester', 'x']);
  assert.deepEqual(containerArgv({ name: 'c', image: 'busybox', command: ['sleep', '10'] }), ['sleep', '10']);
  assert.deepEqual(containerArgv({ name: 'c', image: 'unknown', args: ['x'] }), ['x']);
  assert.equal(imageConfig('quay.io/x/nope'), undefined);
});
