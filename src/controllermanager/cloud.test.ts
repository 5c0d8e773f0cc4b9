import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlagError, parseFlags } from '../cmd/flags.js';
import { newCloudProvider } from './cloud.js';
import { buildControllerOptions, controllerManagerFlags, effectiveConfiguration, validateFlags } from './options.js';

const parse = (args: string[]) => parseFlags(controllerManagerFlags, args);

describe('controller-manager cloud-provider flags', () => {
  it('has upstream defaults: no provider, cloud routes on, routes reconciled every 10 s, one service worker', () => {
    const v = parse([]).values;
    assert.equal(v['cloud-provider'], '');
    assert.equal(v['configure-cloud-routes'], true);
    assert.equal(v['route-reconciliation-period'], 10_000);
    const o = buildControllerOptions(v);
    assert.equal(o.concurrency['service-lb-controller'], 1);
    assert.equal(o.extra['configure-cloud-routes'], true);
    const cfg = effectiveConfiguration(v, (ms) => `${ms / 1000}s`) as { kubeCloudShared: { cloudProvider: { name: string }; routeReconciliationPeriod: string } };
    assert.equal(cfg.kubeCloudShared.cloudProvider.name, '');
    assert.equal(cfg.kubeCloudShared.routeReconciliationPeriod, '10s');
  });

  it('accepts local, external and none, and rejects an unknown provider with one line', () => {
    for (const p of ['', 'local', 'external']) validateFlags(parse([`--cloud-provider=${p}`]).values);
    assert.throws(() => validateFlags(parse(['--cloud-provider=nimbus']).values), (err: unknown) => err instanceof FlagError && err.message === 'cloud provider could not be initialized: unknown cloud provider "nimbus"');
  });

  it('builds the local provider from --cloud-config, external and none build nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kcm-cloud-'));
    const file = join(dir, 'cloud.yaml');
    writeFileSync(file, 'loadBalancerIPRange: 10.9.0.1-10.9.0.1\nzones: [east]\n');
    const cloud = newCloudProvider('local', file)!;
    assert.equal(cloud.providerName, 'local');
    const svc = { metadata: { name: 's', namespace: 'd', uid: 'u1' }, spec: { type: 'LoadBalancer' } };
    assert.deepEqual((await cloud.loadBalancer()!.ensureLoadBalancer('k', svc, [])).ingress?.[0]?.ip, '10.9.0.1');
    assert.equal((await cloud.zones()!.getZoneByNodeName('n7')).failureDomain, 'east');
    assert.equal(newCloudProvider('external', ''), undefined);
    assert.equal(newCloudProvider('', ''), undefined);
    assert.throws(() => newCloudProvider('local', join(dir, 'missing.yaml')), /couldn't open cloud provider configuration/);
    assert.throws(() => newCloudProvider('local', '', { loadBalancerIPRange: 'x' }), /cloud provider could not be initialized: invalid load balancer IP range "x"/);
  });
});
