import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FlagError } from '../cmd/flags.js';
import { parseUpFlags } from './options.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

  it('widens the default pod range for more than 256 nodes of a /24 each, but never a range the user gave', () => {
    assert.equal(parseUpFlags([]).cm['cluster-cidr'], '10.244.0.0/16');
    assert.equal(parseUpFlags(['--nodes', '256']).cm['cluster-cidr'], '10.244.0.0/16');
    assert.equal(parseUpFlags(['--nodes', '1000']).cm['cluster-cidr'], '10.244.0.0/14');
    assert.equal(parseUpFlags(['--nodes', '3000']).cm['cluster-cidr'], '10.224.0.0/12');
    assert.equal(parseUpFlags(['--nodes', '1000', '--cluster-cidr', '10.244.0.0/16']).cm['cluster-cidr'], '10.244.0.0/16');
  });

  it('refuses a negative scheduler QPS with a flag error', () => {
    assert.throws(() => parseUpFlags(['--scheduler-kube-api-qps=-1']), FlagError);
  });

  it("passes the controller manager's delegated-auth flags through, but not its auth kubeconfigs (the admin kubeconfig serves)", () => {
    const o = parseUpFlags(['--authorization-always-allow-paths=/healthz', '--authentication-skip-lookup']);
    assert.deepEqual(o.cm['authorization-always-allow-paths'], ['/healthz']);
    assert.equal(o.cm['authentication-skip-lookup'], true);
    assert.equal(o.cm['authentication-kubeconfig'], '');
    assert.throws(() => parseUpFlags(['--authentication-kubeconfig=/x']), /unknown flag: --authentication-kubeconfig/);
  });

  it("takes the API server's --request-timeout (default 1m) and refuses a negative one", () => {
    assert.equal(parseUpFlags([]).flags.values['request-timeout'], 60_000);
    assert.equal(parseUpFlags(['--request-timeout=5s']).flags.values['request-timeout'], 5_000);
    assert.throws(() => parseUpFlags(['--request-timeout=-1s']), /--request-timeout can not be negative value/);
  });

  it('checks --scheduler-config before starting and names the problem in one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kcm-sched-config-'));
    try {
      const good = join(dir, 'good.yaml');
      writeFileSync(good, 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n- schedulerName: b\n');
      assert.equal(parseUpFlags(['--scheduler-config', good]).flags.values['scheduler-config'], good);
      const bad = join(dir, 'bad.yaml');
      writeFileSync(bad, 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 101\n');
      assert.throws(
        () => parseUpFlags(['--scheduler-config', bad]),
        (err: unknown) =>
          err instanceof FlagError && (err as Error).message === `invalid argument "${bad}" for "--scheduler-config" flag: percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]`,
      );
      assert.throws(() => parseUpFlags(['--scheduler-config', join(dir, 'missing.yaml')]), /for "--scheduler-config" flag: ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
