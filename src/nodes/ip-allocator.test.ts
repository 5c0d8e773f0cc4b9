import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newIpAllocator } from './ip-allocator.js';
import { imageID, isPullable, normalizeImage, pullErrorMessage } from './image.js';

describe('newIpAllocator', () => {
  it('hands out addresses from .2 and keeps one per key', () => {
    const a = newIpAllocator('10.244.1.0/24');
    assert.equal(a.allocate('ns/a'), '10.244.1.2');
    assert.equal(a.allocate('ns/b'), '10.244.1.3');
    assert.equal(a.allocate('ns/a'), '10.244.1.2');
    assert.equal(a.size(), 2);
  });
  it('reuses released addresses once the range wraps and reports exhaustion', () => {
    const a = newIpAllocator('10.0.0.0/29');
    const got = ['a', 'b', 'c', 'd', 'e'].map((k) => a.allocate(k));
    assert.deepEqual(got, ['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6']);
    assert.equal(a.allocate('f'), undefined);
    a.release('b');
    assert.equal(a.allocate('f'), '10.0.0.3');
  });
  it('gives a key its preferred address when free and in range, another otherwise', () => {
    const a = newIpAllocator('10.244.1.0/24');
    assert.equal(a.allocate('ns/a', '10.244.1.7'), '10.244.1.7');
    assert.equal(a.allocate('ns/b', '10.244.1.7'), '10.244.1.2');
    assert.equal(a.allocate('ns/c', '10.244.2.9'), '10.244.1.3');
    assert.equal(a.allocate('ns/d', '10.244.1.1'), '10.244.1.4');
    assert.equal(a.allocate('ns/a', '10.244.1.9'), '10.244.1.7');
  });
  it('rejects a malformed CIDR', () => {
    assert.throws(() => newIpAllocator('10.0.0/24'));
  });
});

describe('images', () => {
  it('cannot pull from hosts under .invalid', () => {
    assert.equal(isPullable('nginx.invalid/x:1'), false);
    assert.equal(isPullable('registry.invalid/app'), false);
    assert.equal(isPullable('nginx'), true);
    assert.equal(isPullable('ghcr.io/a/b:1'), true);
    // The images upstream's e2e tests use to make a pull fail.
    for (const image of ['foo:non-existent', 'webserver:404', 'gcr.io/google_samples/gb-redisslave:nonexistent', 'invalid.com/invalid/alpine:3.1']) assert.equal(isPullable(image), false, image);
    for (const image of ['nginx:1.25', 'localhost:5000/app', 'registry:5000/app:404x', 'app@sha256:404']) assert.equal(isPullable(image), true, image);
    assert.equal(pullErrorMessage('webserver:404'), 'failed to pull and unpack image "docker.io/library/webserver:404": failed to resolve reference "docker.io/library/webserver:404": docker.io/library/webserver:404: not found');
  });
  it('normalizes references as containerd reports them', () => {
    assert.equal(normalizeImage('nginx'), 'docker.io/library/nginx:latest');
    assert.equal(normalizeImage('bitnami/redis:7'), 'docker.io/bitnami/redis:7');
    assert.equal(normalizeImage('localhost:5000/app'), 'localhost:5000/app:latest');
    assert.match(imageID('nginx:1.25'), /^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
  });
});
