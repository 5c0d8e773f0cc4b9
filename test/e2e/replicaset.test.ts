/**
 * ReplicaSets with kubectl against `kcm up`: scale up and down, and the
 * ReplicaFailure condition under a quota.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { startCluster } from './cluster.js';

let kcm: KcmProcess;
before(async () => {
  kcm = await startCluster(['--controller-manager-secure-port', '0']);
});
after(async () => {
  await kcm?.stop();
});

const rs = (name: string, replicas: number) =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx:1' }] } } },
  });

async function json(args: string[]): Promise<any> {
  return JSON.parse(await kcm.kubectlOk([...args, '-o', 'json']));
}

describe('replica sets with kubectl', { timeout: 180_000 }, () => {
  it('keeps the replica count, naming pods after the replica set', async () => {
    await kcm.kubectlOk(['apply', '--validate=false', '-f', '-'], { input: rs('web', 3) });
    await waitFor(async () => (await json(['get', 'pods', '-l', 'app=web'])).items.length === 3, 30_000, '3 pods');
    const pods = (await json(['get', 'pods', '-l', 'app=web'])).items as Array<{ metadata: { name: string } }>;
    for (const p of pods) assert.match(p.metadata.name, /^web-[a-z0-9]{5}$/);
    await kcm.kubectlOk(['scale', 'rs/web', '--replicas=1']);
    await waitFor(async () => (await json(['get', 'pods', '-l', 'app=web'])).items.filter((p: any) => !p.metadata.deletionTimestamp).length === 1, 30_000, '1 pod');
    const reasons = await waitFor(async () => {
      const r = ((await json(['get', 'events', '--field-selector', 'involvedObject.name=web'])).items as Array<{ reason: string; source?: { component?: string } }>)
        .filter((e) => e.source?.component === 'replicaset-controller')
        .map((e) => e.reason);
      return r.includes('SuccessfulCreate') && r.includes('SuccessfulDelete') ? r : undefined;
    }, 30_000, 'events');
    assert.ok(reasons.length >= 2);
  });

  it('sets ReplicaFailure when a quota refuses pods and clears it when the quota allows them', async () => {
    await kcm.kubectlOk(['apply', '--validate=false', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'q' } }) });
    await kcm.kubectlOk(['apply', '--validate=false', '-n', 'q', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pods' }, spec: { hard: { pods: '1' } } }),
    });
    await kcm.kubectlOk(['apply', '--validate=false', '-n', 'q', '-f', '-'], { input: rs('limited', 3) });
    const cond = await waitFor(
      async () => ((await json(['get', 'rs', 'limited', '-n', 'q'])).status?.conditions ?? []).find((c: any) => c.type === 'ReplicaFailure'),
      60_000,
      'ReplicaFailure',
    );
    assert.equal(cond.reason, 'FailedCreate');
    assert.match(cond.message, /exceeded quota/);
    await kcm.kubectlOk(['patch', 'resourcequota', 'pods', '-n', 'q', '--type=merge', '-p', '{"spec":{"hard":{"pods":"10"}}}']);
    await waitFor(async () => !((await json(['get', 'rs', 'limited', '-n', 'q'])).status?.conditions ?? []).some((c: any) => c.type === 'ReplicaFailure'), 90_000, 'ReplicaFailure cleared');
  });
});
