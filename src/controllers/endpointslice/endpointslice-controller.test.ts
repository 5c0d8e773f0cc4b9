import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { GVR } from '../../api/gvr.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { FakeClock } from '../../util/clock/clock.js';
import { setLogOutput } from '../../util/log/logger.js';
import { descriptor, newEndpointSliceController } from './endpointslice-controller.js';
import { pod, service, setupController, until } from './test-support.js';

type Slice = Kube<EndpointSlice>;

function setup(seed: (f: FakeClient, c: FakeClock) => void, maxEndpointsPerSlice?: number) {
  return setupController(
    (f, c) => {
      f.seed(GVR.nodes, { metadata: { name: 'node-1', labels: { 'topology.kubernetes.io/zone': 'zone-a' } } });
      seed(f, c);
    },
    (ctx) => newEndpointSliceController(ctx, maxEndpointsPerSlice ? { maxEndpointsPerSlice } : {}),
  );
}

const slices = (f: FakeClient, ns = 'default') => f.storedList<Slice>(GVR.endpointSlices, ns);
const ips = (s: Slice) => (s.endpoints ?? []).map((e) => e.addresses[0]).sort();

async function cached(env: { informers: { endpointSlices(): { getIndexer(): { list(): unknown[] } } }; fake: FakeClient }) {
  await until(() => env.informers.endpointSlices().getIndexer().list().length === slices(env.fake).length, 'slice cache caught up');
}

describe('endpointslice controller', () => {
  before(() => setLogOutput(() => {}));

  it('creates one slice per service with labels, owner, ports and endpoint conditions', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web', {}, 'default', { team: 'a' }));
      f.seed(GVR.pods, pod('p1', { ip: '10.0.0.1' }), pod('p2', { ip: '10.0.0.2', ready: false }), pod('p3', { ip: '10.0.0.3', deleting: true }));
    });
    await env.c.syncService('default/web');
    const all = slices(env.fake);
    assert.equal(all.length, 1);
    const s = all[0]!;
    assert.match(s.metadata!.name!, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.equal(s.addressType, 'IPv4');
    assert.deepEqual(s.metadata?.labels, { team: 'a', 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' });
    assert.deepEqual(s.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'uid-svc-web', controller: true, blockOwnerDeletion: true }]);
    assert.deepEqual(s.ports, [{ name: 'http', protocol: 'TCP', port: 8080 }]);
    const byIp = Object.fromEntries((s.endpoints ?? []).map((e) => [e.addresses[0], e]));
    assert.deepEqual(byIp['10.0.0.1']!.conditions, { ready: true, serving: true, terminating: false });
    assert.deepEqual(byIp['10.0.0.2']!.conditions, { ready: false, serving: false, terminating: false });
    assert.deepEqual(byIp['10.0.0.3']!.conditions, { ready: false, serving: true, terminating: true });
    assert.equal(byIp['10.0.0.1']!.nodeName, 'node-1');
    assert.equal(byIp['10.0.0.1']!.zone, 'zone-a');
    assert.deepEqual(byIp['10.0.0.1']!.targetRef, { kind: 'Pod', namespace: 'default', name: 'p1', uid: 'uid-p1' });
    assert.ok(s.metadata?.annotations?.['endpoints.kubernetes.io/last-change-trigger-time']);
    await env.stop();
  });

  it('keeps one empty placeholder slice for a service without pods and does not rewrite it', async () => {
    const env = await setup((f) => f.seed(GVR.services, service('web', { clusterIP: 'None' })));
    await env.c.syncService('default/web');
    assert.equal(slices(env.fake).length, 1);
    const s = slices(env.fake)[0]!;
    assert.deepEqual(s.endpoints ?? [], []);
    assert.deepEqual(s.ports ?? [], []);
    assert.equal(s.metadata?.labels?.['service.kubernetes.io/headless'], '');
    await cached(env);
    env.fake.clearActions();
    await env.c.syncService('default/web');
    assert.deepEqual(env.fake.actions().filter((a) => ['create', 'update', 'delete'].includes(a.verb)), []);
    await env.stop();
  });

  it('splits endpoints over slices of at most maxEndpointsPerSlice', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
      for (let i = 0; i < 25; i++) f.seed(GVR.pods, pod(`p${i}`, { ip: `10.0.0.${i + 1}` }));
    }, 10);
    await env.c.syncService('default/web');
    assert.deepEqual(slices(env.fake).map((s) => s.endpoints!.length).sort(), [10, 10, 5]);
    await env.stop();
  });

  it('puts pods whose named port resolves differently into separate slices', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
      f.seed(GVR.pods, pod('a', { ip: '10.0.0.1' }), pod('b', { ip: '10.0.0.2', ports: [{ name: 'http', containerPort: 9090 }] }));
    });
    await env.c.syncService('default/web');
    const got = slices(env.fake).map((s) => [s.ports![0]!.port, ips(s)]).sort();
    assert.deepEqual(got, [
      [8080, ['10.0.0.1']],
      [9090, ['10.0.0.2']],
    ]);
    await env.stop();
  });

  it('updates a slice in place when an endpoint changes or goes, and turns the last removal into the placeholder by update', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
      f.seed(GVR.pods, pod('p1', { ip: '10.0.0.1' }), pod('p2', { ip: '10.0.0.2' }));
    });
    await env.c.syncService('default/web');
    const name = slices(env.fake)[0]!.metadata!.name;
    await cached(env);
    await env.fake.resource(GVR.pods).namespace('default').delete('p2');
    await until(() => env.informers.pods().getIndexer().list().length === 1, 'pod gone from cache');
    await env.c.syncService('default/web');
    assert.deepEqual(slices(env.fake).map((s) => [s.metadata!.name, ips(s)]), [[name, ['10.0.0.1']]]);
    await until(() => env.informers.endpointSlices().getIndexer().list()[0] !== undefined && (env.informers.endpointSlices().getIndexer().list()[0] as Slice).endpoints!.length === 1, 'slice cache updated');
    await env.fake.resource(GVR.pods).namespace('default').delete('p1');
    await until(() => env.informers.pods().getIndexer().list().length === 0, 'pods gone from cache');
    env.fake.clearActions();
    await env.c.syncService('default/web');
    assert.deepEqual(env.fake.actions().filter((a) => ['create', 'update', 'delete'].includes(a.verb)).map((a) => a.verb), ['update']);
    const s = slices(env.fake);
    assert.equal(s.length, 1);
    assert.equal(s[0]!.metadata!.name, name);
    assert.deepEqual(s[0]!.endpoints ?? [], []);
    assert.deepEqual(s[0]!.ports ?? [], []);
    await env.stop();
  });

  it('fails the sync while the slice cache is older than its own last write', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
      f.seed(GVR.pods, pod('p1'));
    });
    // Informers stopped: the cache never sees the slice the first sync creates.
    await env.stop();
    await env.c.syncService('default/web');
    await assert.rejects(env.c.syncService('default/web'), /informer cache is out of date/);
    assert.equal(slices(env.fake).length, 1, 'no duplicate slice created');
  });

  it('leaves out pods on unknown nodes and fails the sync, unless not-ready addresses are published', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'), service('pub', { publishNotReadyAddresses: true }));
      f.seed(GVR.pods, pod('p1', { ip: '10.0.0.1' }), pod('lost', { ip: '10.0.0.2', node: 'node-x' }));
    });
    await assert.rejects(env.c.syncService('default/web'), /skipping Pod lost for Service default\/web: Node node-x Not Found/);
    assert.match(env.recorder.events[0]!, /^Warning FailedToUpdateEndpointSlices Error updating Endpoint Slices for Service default\/web: /);
    const web = slices(env.fake).find((s) => s.metadata?.labels?.['kubernetes.io/service-name'] === 'web')!;
    assert.deepEqual(ips(web), ['10.0.0.1']);
    await env.c.syncService('default/pub');
    const pub = slices(env.fake).find((s) => s.metadata?.labels?.['kubernetes.io/service-name'] === 'pub')!;
    assert.deepEqual(ips(pub), ['10.0.0.1', '10.0.0.2']);
    await env.stop();
  });

  it('ignores services without a selector and of type ExternalName', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('manual', { selector: undefined }), service('ext', { type: 'ExternalName', externalName: 'x.example' }));
      f.seed(GVR.pods, pod('p1'));
    });
    await env.c.syncService('default/manual');
    await env.c.syncService('default/ext');
    assert.deepEqual(slices(env.fake), []);
    await env.stop();
  });

  it('follows pods through informer events while running and resyncs a slice someone else edited', async () => {
    const env = await setup((f) => f.seed(GVR.services, service('web')));
    const abort = new AbortController();
    const run = env.c.run(2, abort.signal);
    await until(() => slices(env.fake).length === 1, 'placeholder created');
    await env.fake.resource(GVR.pods).namespace('default').create(pod('p1', { ip: '10.0.0.7' }) as never);
    await until(() => slices(env.fake).some((s) => ips(s).includes('10.0.0.7')), 'pod added to a slice');
    await cached(env);
    const s = slices(env.fake)[0]!;
    await env.fake.resource<Slice>(GVR.endpointSlices).namespace('default').update({ ...s, endpoints: [] });
    // Changes by others are batched for at least a second.
    await until(() => !slices(env.fake).some((x) => ips(x).includes('10.0.0.7')), 'edit stored');
    await env.clock.advance(999);
    assert.ok(!slices(env.fake).some((x) => ips(x).includes('10.0.0.7')), 'not repaired before the batching delay');
    await env.clock.advance(1);
    await until(() => slices(env.fake).some((x) => ips(x).includes('10.0.0.7')), 'slice repaired');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered under its upstream name with five workers', () => {
    assert.equal(descriptor.name, 'endpointslice-controller');
    assert.deepEqual(descriptor.aliases, ['endpointslice']);
    assert.equal(descriptor.defaultWorkers, 5);
  });
});
