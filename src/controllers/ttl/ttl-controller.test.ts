import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { descriptor, newTTLController } from './ttl-controller.js';

const node = (name: string, ttl?: string): Kube<Node> => ({ metadata: { name, ...(ttl !== undefined ? { annotations: { 'node.alpha.kubernetes.io/ttl': ttl } } : {}) } });

describe('ttl controller', () => {
  before(() => setLogOutput(() => {}));

  it('sets a 0 s TTL on nodes of a small cluster and leaves correct nodes alone', async () => {
    const env = await setupController((f) => f.seed(GVR.nodes, node('a'), node('b', '0'), node('c', '30')), (ctx) => newTTLController(ctx));
    env.fake.clearActions();
    for (const n of ['a', 'b', 'c']) await env.c.syncNode(n);
    assert.deepEqual(env.fake.actions().filter((a) => a.verb === 'patch').map((a) => a.name), ['a', 'c']);
    for (const n of ['a', 'b', 'c']) assert.equal(env.fake.stored<Kube<Node>>(GVR.nodes, '', n)!.metadata?.annotations?.['node.alpha.kubernetes.io/ttl'], '0');
    await env.stop();
  });

  it('raises the TTL past 100 nodes and lowers it only below 90 (hysteresis)', async () => {
    const env = await setupController((f) => {
      for (let i = 0; i < 101; i++) f.seed(GVR.nodes, node(`n${i}`));
    }, (ctx) => newTTLController(ctx));
    assert.equal(env.c.desiredTTLSeconds(), 15);
    const nodes = env.fake.resource(GVR.nodes);
    for (let i = 100; i >= 90; i--) await nodes.delete(`n${i}`);
    await until(() => env.informers.nodes().getIndexer().list().length === 90, 'deletions seen');
    assert.equal(env.c.desiredTTLSeconds(), 15, '90 nodes: still 15 s');
    await nodes.delete('n89');
    await until(() => env.informers.nodes().getIndexer().list().length === 89, 'deletion seen');
    assert.equal(env.c.desiredTTLSeconds(), 0);
    await env.c.syncNode('n0');
    assert.equal(env.fake.stored<Kube<Node>>(GVR.nodes, '', 'n0')!.metadata?.annotations?.['node.alpha.kubernetes.io/ttl'], '0');
    await env.stop();
  });

  it('annotates nodes through informer events while running', async () => {
    const env = await setupController((f) => f.seed(GVR.nodes, node('a')), (ctx) => newTTLController(ctx));
    const abort = new AbortController();
    const run = env.c.run(2, abort.signal);
    await env.fake.resource(GVR.nodes).create(node('b'));
    await until(() => ['a', 'b'].every((n) => env.fake.stored<Kube<Node>>(GVR.nodes, '', n)?.metadata?.annotations?.['node.alpha.kubernetes.io/ttl'] === '0'), 'both annotated');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered under its upstream name with five workers', () => {
    assert.equal(descriptor.name, 'ttl-controller');
    assert.deepEqual(descriptor.aliases, ['ttl']);
    assert.equal(descriptor.defaultWorkers, 5);
  });
});
