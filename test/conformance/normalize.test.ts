import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffSnapshots, normalizeName, snapshot } from './normalize.js';

const pod = (name: string, hash: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid: name + '-uid', resourceVersion: '12', creationTimestamp: '2026-11-25T00:00:00Z', labels: { app: 'web', 'pod-template-hash': hash } },
  spec: { nodeName: 'node-' + name.slice(-1) },
  status: { phase: 'Running', podIP: '10.244.1.7', ...extra },
});

describe('conformance normalisation', () => {
  it('names generated alike normalise alike', () => {
    assert.equal(normalizeName('web-5d59d67564-x7k2p', new Set(['5d59d67564'])), 'web-<hash>-<rand>');
    assert.equal(normalizeName('agent-8kz2q'), 'agent-<rand>');
    assert.equal(normalizeName('hello-27834712'), 'hello-<time>');
    assert.equal(normalizeName('db-0'), 'db-0');
    assert.equal(normalizeName('web'), 'web');
  });

  it('two runs that differ only in uids, times, IPs, nodes, hashes and random suffixes are identical', () => {
    const a = snapshot([pod('web-5d59d67564-x7k2p', '5d59d67564'), pod('web-5d59d67564-b4c6d', '5d59d67564')], [
      { type: 'Normal', reason: 'SuccessfulCreate', message: 'Created pod: web-5d59d67564-x7k2p', involvedObject: { kind: 'ReplicaSet' }, source: { component: 'replicaset-controller' } },
    ]);
    const b = snapshot([pod('web-6f7c8d9b44-q9z4m', '6f7c8d9b44'), pod('web-6f7c8d9b44-r5t8w', '6f7c8d9b44')], [
      { type: 'Normal', reason: 'SuccessfulCreate', message: 'Created pod: web-6f7c8d9b44-r5t8w', involvedObject: { kind: 'ReplicaSet' }, source: { component: 'replicaset-controller' } },
    ]);
    assert.deepEqual(Object.keys(a.objects), ['Pod/web-<hash>-<rand>', 'Pod/web-<hash>-<rand>#2']);
    const d = diffSnapshots(a, b);
    assert.deepEqual(d, { objects: [], eventsOnlyReal: [], eventsOnlyKcm: [] });
  });

  it('reports a missing field, a different value and an event only one side emitted', () => {
    const a = snapshot([pod('web-5d59d67564-x7k2p', '5d59d67564', { replicas: 0 })], [{ type: 'Normal', reason: 'SuccessfulDelete', message: 'Deleted pod: x', involvedObject: { kind: 'ReplicaSet' } }]);
    const b = snapshot([pod('web-5d59d67564-x7k2p', '5d59d67564', { phase: 'Pending' })], []);
    const d = diffSnapshots(a, b);
    assert.deepEqual(
      d.objects.map((x) => [x.path, x.real, x.kcm]),
      [
        ['Pod/web-<hash>-<rand>.status.phase', 'Running', 'Pending'],
        ['Pod/web-<hash>-<rand>.status.replicas', 0, undefined],
      ],
    );
    assert.deepEqual(d.eventsOnlyReal, ['Normal SuccessfulDelete ReplicaSet: Deleted pod: x ()']);
    assert.deepEqual(d.eventsOnlyKcm, []);
  });

  it('ignores container ids, uuids in labels, certificates and node names in event messages', () => {
    const run = (id: string, uid: string, ca: string, node: string) =>
      snapshot(
        [{ kind: 'Job', metadata: { name: 'j', labels: { 'controller-uid': uid } }, status: { containerID: `kcm://${id}` }, data: { 'ca.crt': `-----BEGIN CERTIFICATE-----\n${ca}\n-----END CERTIFICATE-----\n` } }],
        [{ type: 'Normal', reason: 'Scheduled', message: `Successfully assigned ns/j-x7k2p to ${node}`, involvedObject: { kind: 'Pod' } }],
      );
    const d = diffSnapshots(run('ab12', '3cea18e2-ca49-40ce-95e2-e945b41a97bf', 'MIIB', 'kcm-node-0'), run('cd34', 'c29feb4f-2625-4057-b77a-b329e4fd2499', 'MIIC', 'kcm-node-2'));
    assert.deepEqual(d, { objects: [], eventsOnlyReal: [], eventsOnlyKcm: [] });
  });
});
