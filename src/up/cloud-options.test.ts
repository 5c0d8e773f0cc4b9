import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FlagError } from '../cmd/flags.js';
import { parseUpFlags } from './options.js';

describe('kcm up cloud flags', () => {
  it('runs the local cloud provider with a loopback load-balancer range by default', () => {
    const o = parseUpFlags([]);
    assert.equal(o.cm['cloud-provider'], 'local');
    assert.equal(o.flags.values['load-balancer-ip-range'], '127.0.0.100-127.0.0.200');
    assert.ok(o.controllers.includes('service-lb-controller'));
    assert.ok(o.controllers.includes('cloud-node-controller'));
  });

  it('turns the cloud off with an empty --cloud-provider and rejects a bad range', () => {
    assert.equal(parseUpFlags(['--cloud-provider=']).cm['cloud-provider'], '');
    assert.throws(() => parseUpFlags(['--load-balancer-ip-range=10.0.0.9-10.0.0.1']), (err: unknown) => err instanceof FlagError && /--load-balancer-ip-range/.test(err.message));
    assert.throws(() => parseUpFlags(['--cloud-provider=nimbus']), /unknown cloud provider "nimbus"/);
  });
});
