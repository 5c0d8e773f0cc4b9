import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointAddress, Endpoints } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { GVR } from '../../api/gvr.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { service, setupController, until } from '../endpointslice/test-support.js';
import { descriptor, newEndpointSliceMirroringController } from './endpointslicemirroring-controller.js';
import { addressTypeOf } from './mirroring-reconciler.js';

const MANAGED = 'endpointslicemirroring-controller.k8s.io';
const noSelector = (name: string) => service(name, { selector: undefined as unknown as Record<string, string> });
function endpoints(name: string, ips: string[], o: { notReady?: string[]; labels?: Record<string, string>; annotations?: Record<string, string>; port?: number } = {}): Kube<Endpoints> {
  const addr = (ip: string): EndpointAddress => ({ ip });
  return {
    metadata: { name, namespace: 'default', uid: `uid-ep-${name}`, ...(o.labels ? { labels: o.labels } : {}), ...(o.annotations ? { annotations: o.annotations } : {}) },
    subsets: [{ addresses: ips.map(addr), ...(o.notReady ? { notReadyAddresses: o.notReady.map(addr) } : {}), ports: [{ name: 'http', port: o.port ?? 8080, protocol: 'TCP' }] }],
  };
}
const slices = (f: FakeClient) => f.resource<Kube<EndpointSlice>>(GVR.endpointSlices).namespace('default').list().then((l) => l.items);
const create = (ctx: Parameters<typeof newEndpointSliceMirroringController>[0]) => newEndpointSliceMirroringController(ctx, { maxEndpointsPerSubset: 3 });

describe('endpointslice mirroring controller', () => {
  before(() => setLogOutput(() => {}));

  it('mirrors the Endpoints of a selectorless service into a labelled, owned slice', async () => {
    const env = await setupController(
      (f) => {
        f.seed(GVR.services, noSelector('ext'));
        f.seed(GVR.endpoints, endpoints('ext', ['10.1.0.1', '10.1.0.2'], { notReady: ['10.1.0.3'], labels: { team: 'a' }, annotations: { note: 'x', 'endpoints.kubernetes.io/last-change-trigger-time': 't' } }));
      },
      create,
    );
    await env.c.syncEndpoints('default/ext');
    const [s, ...rest] = await slices(env.fake);
    assert.equal(rest.length, 0);
    assert.equal(s!.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'], MANAGED);
    assert.equal(s!.metadata?.labels?.['kubernetes.io/service-name'], 'ext');
    assert.equal(s!.metadata?.labels?.['team'], 'a');
    assert.deepEqual(s!.metadata?.annotations, { note: 'x' });
    assert.match(s!.metadata?.name ?? '', /^ext-/);
    assert.equal(s!.metadata?.ownerReferences?.[0]?.kind, 'Endpoints');
    assert.equal(s!.metadata?.ownerReferences?.[0]?.uid, 'uid-ep-ext');
    assert.equal(s!.addressType, 'IPv4');
    assert.deepEqual(s!.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    assert.deepEqual(
      s!.endpoints.map((e) => [e.addresses[0], e.conditions?.ready]),
      [
        ['10.1.0.1', true],
        ['10.1.0.2', true],
        ['10.1.0.3', false],
      ],
    );
    // Nothing changed: no write.
    const writes = env.fake.actions().length;
    await until(() => env.informers.endpointSlices().getIndexer().list().length === 1, 'slice cached');
    await env.c.syncEndpoints('default/ext');
    assert.equal(env.fake.actions().filter((a, i) => i >= writes && a.verb !== 'list' && a.verb !== 'watch').length, 0);
    await env.stop();
  });

  it('skips services with a selector, skip-mirror and leader-election Endpoints', async () => {
    const env = await setupController(
      (f) => {
        f.seed(GVR.services, service('sel'), noSelector('skip'), noSelector('lock'));
        f.seed(
          GVR.endpoints,
          endpoints('sel', ['10.1.0.1']),
          endpoints('skip', ['10.1.0.1'], { labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } }),
          endpoints('lock', ['10.1.0.1'], { annotations: { 'control-plane.alpha.kubernetes.io/leader': '{}' } }),
        );
      },
      create,
    );
    for (const n of ['sel', 'skip', 'lock', 'missing']) await env.c.syncEndpoints(`default/${n}`);
    assert.equal((await slices(env.fake)).length, 0);
    await env.stop();
  });

  it('mirrors at most the configured addresses per subset and reports skipped and invalid ones', async () => {
    const components: string[] = [];
    const env = await setupController(
      (f) => {
        f.seed(GVR.services, noSelector('big'));
        f.seed(GVR.endpoints, endpoints('big', ['10.1.0.1', '1.2.3', '10.1.0.2', '10.1.0.3', '10.1.0.4', '10.1.0.5']));
      },
      (ctx) =>
        create({
          ...ctx,
          recorder: (component) => {
            components.push(component);
            return ctx.recorder(component);
          },
        }),
    );
    assert.deepEqual(components, ['endpoint-slice-mirroring-controller'], 'the event source upstream uses');
    await env.c.syncEndpoints('default/big');
    const [s] = await slices(env.fake);
    assert.equal(s!.endpoints.length, 3);
    assert.deepEqual(env.recorder.events, [
      'Warning InvalidIPAddress Skipped 1 invalid IP addresses when mirroring to EndpointSlices',
      'Warning TooManyAddressesToMirror A max of 3 addresses can be mirrored to EndpointSlices per Endpoints subset. 3 addresses were skipped',
    ]);
    await env.stop();
  });

  it('splits address families into separate slices', async () => {
    const env = await setupController(
      (f) => {
        f.seed(GVR.services, noSelector('dual'));
        f.seed(GVR.endpoints, endpoints('dual', ['10.1.0.1', 'fd00::1']));
      },
      create,
    );
    await env.c.syncEndpoints('default/dual');
    const types = (await slices(env.fake)).map((s) => s.addressType).sort();
    assert.deepEqual(types, ['IPv4', 'IPv6']);
    assert.equal(addressTypeOf('::ffff:10.0.0.1'), 'IPv4');
    assert.equal(addressTypeOf('10.0.0.300'), undefined);
    await env.stop();
  });

  it('updates the slice in place when addresses change and replaces a slice of old ports', async () => {
    const env = await setupController(
      (f) => {
        f.seed(GVR.services, noSelector('ext'));
        f.seed(GVR.endpoints, endpoints('ext', ['10.1.0.1']));
      },
      create,
    );
    await env.c.syncEndpoints('default/ext');
    const [first] = await slices(env.fake);
    await until(() => env.informers.endpointSlices().getIndexer().list().length === 1, 'slice cached');
    await env.fake.resource(GVR.endpoints).namespace('default').update(endpoints('ext', ['10.1.0.9'], { port: 9090 }));
    await until(() => env.informers.endpoints().getIndexer().list()[0]?.subsets?.[0]?.ports?.[0]?.port === 9090, 'endpoints cached');
    await env.c.syncEndpoints('default/ext');
    const after = await slices(env.fake);
    assert.equal(after.length, 1);
    assert.equal(after[0]!.metadata?.name, first!.metadata?.name, 'the doomed slice was recycled');
    assert.equal(after[0]!.ports?.[0]?.port, 9090);
    assert.deepEqual(after[0]!.endpoints.map((e) => e.addresses[0]), ['10.1.0.9']);
    await env.stop();
  });

  it('deletes mirrored slices when the service gains a selector, through informer events', async () => {
    const env = await setupController(
      (f) => {
        f.seed(GVR.services, noSelector('ext'));
        f.seed(GVR.endpoints, endpoints('ext', ['10.1.0.1']));
      },
      create,
    );
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await until(() => env.fake.stored(GVR.endpointSlices, 'default', '') === undefined && env.fake.actions().some((a) => a.verb === 'create'), 'mirrored');
    const svc = env.fake.stored<ReturnType<typeof service>>(GVR.services, 'default', 'ext')!;
    await env.fake.resource(GVR.services).namespace('default').update({ ...svc, spec: { ...svc.spec, selector: { app: 'web' } } });
    await until(() => env.fake.actions().some((a) => a.verb === 'delete' && a.resource === 'endpointslices'), 'slice deleted');
    assert.equal((await slices(env.fake)).length, 0);
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'endpointslice-mirroring-controller');
    assert.deepEqual(descriptor.aliases, ['endpointslicemirroring']);
  });
});
