import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FlagError } from '../cmd/flags.js';
import { parseUpFlags } from './options.js';

describe('kcm up flags', () => {
  it('gives the scheduler 200 QPS and a burst of 400 by default, above kube-scheduler 50/100 that caps binding at 50 pods per second', () => {
    const o = parseUpFlags([]);
    assert.equal(o.flags.values['scheduler-kube-api-qps'], 200);
    assert.equal(o.flags.values['scheduler-kube-api-burst'], 400);
  });

  it('takes the scheduler limits from --scheduler-kube-api-qps and --scheduler-kube-api-burst without touching the controller manager limits', () => {
    const o = parseUpFlags(['--scheduler-kube-api-qps', '50', '--scheduler-kube-api-burst', '100']);
    assert.equal(o.flags.values['scheduler-kube-api-qps'], 50);
    assert.equal(o.flags.values['scheduler-kube-api-burst'], 100);
    assert.equal(o.cm['kube-api-qps'], 200);
    assert.equal(o.cm['kube-api-burst'], 400);
  });

  it('refuses a negative scheduler QPS with a flag error', () => {
    assert.throws(() => parseUpFlags(['--scheduler-kube-api-qps=-1']), FlagError);
  });
});
