import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FlagError, flagUsage, formatDuration, parseFlags } from '../cmd/flags.js';
import { applyConfigFile, buildControllerOptions, controllerManagerFlags, effectiveConfiguration, validateFlags } from './options.js';

const parse = (args: string[]) => parseFlags(controllerManagerFlags, args);

describe('controller-manager options', () => {
  it('has kube-controller-manager defaults', () => {
    const v = parse([]).values;
    assert.equal(v['leader-elect'], true);
    assert.equal(v['leader-elect-lease-duration'], 15_000);
    assert.equal(v['leader-elect-renew-deadline'], 10_000);
    assert.equal(v['leader-elect-retry-period'], 2_000);
    assert.equal(v['leader-elect-resource-name'], 'kube-controller-manager');
    assert.equal(v['leader-elect-resource-namespace'], 'kube-system');
    assert.equal(v['kube-api-qps'], 20);
    assert.equal(v['kube-api-burst'], 30);
    assert.equal(v['min-resync-period'], 12 * 3_600_000);
    assert.equal(v['secure-port'], 10257);
    assert.equal(v['terminated-pod-gc-threshold'], 12500);
    assert.deepEqual(v.controllers, ['*']);
    // Delegated authentication and authorization of the secure port.
    assert.equal(v['authentication-token-webhook-cache-ttl'], 10_000);
    assert.equal(v['authentication-tolerate-lookup-failure'], false);
    assert.deepEqual(v['authorization-always-allow-paths'], ['/healthz', '/readyz', '/livez']);
    assert.equal(v['authorization-webhook-cache-authorized-ttl'], 10_000);
    assert.equal(v['authorization-webhook-cache-unauthorized-ttl'], 10_000);
    assert.deepEqual(v['requestheader-username-headers'], ['x-remote-user']);
    assert.throws(() => validateFlags(parse(['--requestheader-username-headers= ']).values), /empty value in "requestheader-username-headers"/);
  });

  it('sizes each controller from its --concurrent-*-syncs flag', () => {
    const o = buildControllerOptions(parse(['--concurrent-deployment-syncs=9']).values);
    assert.equal(o.concurrency['deployment-controller'], 9);
    assert.equal(o.concurrency['replicaset-controller'], 5);
    assert.equal(o.concurrency['garbage-collector-controller'], 20);
    assert.equal(o.concurrency['daemonset-controller'], 2);
  });

  it('takes values from --config unless the flag was given', () => {
    const parsed = parse(['--config', 'c.yaml', '--kube-api-qps', '7']);
    const yaml = [
      'apiVersion: kubecontrollermanager.config.k8s.io/v1alpha1',
      'kind: KubeControllerManagerConfiguration',
      'generic:',
      '  controllers: ["*", "-deployment"]',
      '  clientConnection: { qps: 99, burst: 77 }',
      '  leaderElection: { leaderElect: false, leaseDuration: 30s }',
      'deploymentController: { concurrentDeploymentSyncs: 3 }',
      'podGCController: { terminatedPodGCThreshold: 10 }',
    ].join('\n');
    applyConfigFile(parsed, () => yaml);
    const v = parsed.values;
    assert.deepEqual(v.controllers, ['*', '-deployment']);
    assert.equal(v['kube-api-qps'], 7);
    assert.equal(v['kube-api-burst'], 77);
    assert.equal(v['leader-elect'], false);
    assert.equal(v['leader-elect-lease-duration'], 30_000);
    assert.equal(v['concurrent-deployment-syncs'], 3);
    assert.equal(v['terminated-pod-gc-threshold'], 10);
  });

  it('rejects a config file of another kind or with a bad value', () => {
    assert.throws(() => applyConfigFile(parse(['--config', 'x']), () => 'kind: Pod'), FlagError);
    assert.throws(
      () => applyConfigFile(parse(['--config', 'x']), () => 'kind: KubeControllerManagerConfiguration\ngeneric: { minResyncPeriod: soon }'),
      /minResyncPeriod/,
    );
  });

  it('rejects a renew deadline not shorter than the lease duration', () => {
    assert.throws(() => validateFlags(parse(['--leader-elect-renew-deadline=20s']).values), /leaseDuration must be greater than/);
    assert.doesNotThrow(() => validateFlags(parse(['--leader-elect=false', '--leader-elect-renew-deadline=20s']).values));
  });

  it('shows the effective configuration in KubeControllerManagerConfiguration shape', () => {
    const c = effectiveConfiguration(parse(['--concurrent-job-syncs=2']).values, formatDuration) as any;
    assert.equal(c.kind, 'KubeControllerManagerConfiguration');
    assert.equal(c.generic.leaderElection.leaseDuration, '15s');
    assert.equal(c.jobController.concurrentJobSyncs, 2);
  });

  it('marks flags kcm accepts but does not use in --help', () => {
    const help = flagUsage(controllerManagerFlags, 'kcm controller-manager [flags]');
    assert.match(help, /--use-service-account-credentials .*not used by kcm yet/);
    assert.doesNotMatch(help, /--pvclaimbinder-sync-period duration .*not used by kcm yet/);
    assert.doesNotMatch(help, /--cluster-signing-duration duration .*not used by kcm yet/);
    assert.match(help, /Leader election flags:/);
    assert.match(help, /--leader-elect-lease-duration duration .*\(default 15s\)/);
  });
});
