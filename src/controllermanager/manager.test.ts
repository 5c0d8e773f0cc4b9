import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newRestConfig } from '../client/rest-config.js';
import { controllerRestConfig } from './manager.js';

describe('per-controller clients', () => {
  it('appends the controller name to the user agent and keeps the manager QPS and burst, as client-go AddUserAgent does for each controller', () => {
    const base = newRestConfig({ host: 'https://127.0.0.1:6443', qps: 20, burst: 30, userAgent: 'kcm-controller-manager/v0.1.0' });
    const c = controllerRestConfig(base, 'replicaset-controller');
    assert.equal(c.userAgent, 'kcm-controller-manager/v0.1.0/replicaset-controller');
    assert.equal(c.qps, 20);
    assert.equal(c.burst, 30);
    assert.equal(c.host, base.host);
    assert.equal(base.userAgent, 'kcm-controller-manager/v0.1.0');
  });
});
