import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Endpoints } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { Kube } from '../../tools/cache/factory.js';
import { StatusError, newStatus } from '../../client/errors.js';
import { setLogOutput } from '../../util/log/logger.js';
import { pod, service, setupController, until } from '../endpointslice/test-support.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { FakeClock } from '../../util/clock/clock.js';
import { descriptor, newEndpointsController } from './endpoints-controller.js';

function setup(seed: (f: FakeClient, c: FakeClock) => void) {
  return setupController(seed, (ctx) => newEndpointsController(ctx));
}

const ep = (f: FakeClient, name = 'web', ns = 'default') => f.stored<Kube<Endpoints>>(GVR.endpoints, ns, name);

describe('endpoints controller', () => {
  before(() => setLogOutput(() => {}));

  it('creates Endpoints with ready and not-ready pod addresses and the resolved target port', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web', {}, 'default', { team: 'a' }));
      f.seed(GVR.pods, pod('p1', { ip: '10.0.0.1' }), pod('p2', { ip: '10.0.0.2', ready: false }), pod('other', { ip: '10.0.0.3', labels: { app: 'db' } }));
    });
    await env.c.syncService('default/web');
    const e = ep(env.fake)!;
    assert.ok(e, 'endpoints created');
    assert.deepEqual(e.metadata, { ...e.metadata, labels: { team: 'a' } });
    assert.equal(e.subsets?.length, 1);
    const s = e.subsets![0]!;
    assert.deepEqual(s.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    assert.deepEqual(
      s.addresses?.map((a) => [a.ip, a.nodeName, a.targetRef?.name, a.targetRef?.kind, a.targetRef?.uid]),
      [['10.0.0.1', 'node-1', 'p1', 'Pod', 'uid-p1']],
    );
    assert.deepEqual(s.notReadyAddresses?.map((a) => a.ip), ['10.0.0.2']);
    assert.ok(e.metadata?.annotations?.['endpoints.kubernetes.io/last-change-trigger-time'], 'trigger time set');
    await env.stop();
  });

  it('writes no labels field for a service without labels', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
    });
    await env.c.syncService('default/web');
    const e = ep(env.fake)!;
    assert.ok(e, 'endpoints created');
    assert.equal('labels' in e.metadata!, false);
    await env.stop();
  });

  it('skips pods without an IP, terminal pods and terminating pods', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
      f.seed(GVR.pods, pod('noip', { ip: '' }), pod('done', { ip: '10.0.0.2', phase: 'Succeeded' }), pod('bye', { ip: '10.0.0.3', deleting: true }), pod('ok', { ip: '10.0.0.4' }));
    });
    await env.c.syncService('default/web');
    const all = ep(env.fake)!.subsets!.flatMap((s) => [...(s.addresses ?? []), ...(s.notReadyAddresses ?? [])]).map((a) => a.ip);
    assert.deepEqual(all, ['10.0.0.4']);
    await env.stop();
  });

  it('publishes not-ready and terminating pods as ready with publishNotReadyAddresses, and labels headless services', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web', { clusterIP: 'None', publishNotReadyAddresses: true }));
      f.seed(GVR.pods, pod('p1', { ip: '10.0.0.1', ready: false }), pod('p2', { ip: '10.0.0.2', deleting: true }));
    });
    await env.c.syncService('default/web');
    const e = ep(env.fake)!;
    assert.deepEqual(e.subsets![0]!.addresses?.map((a) => a.ip), ['10.0.0.1', '10.0.0.2']);
    assert.equal(e.subsets![0]!.notReadyAddresses, undefined);
    assert.equal(e.metadata?.labels?.['service.kubernetes.io/headless'], '');
    await env.stop();
  });

  it('gives a headless service without ports a subset without ports', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web', { clusterIP: 'None', ports: [] }));
      f.seed(GVR.pods, pod('p1', { ip: '10.0.0.1' }));
    });
    await env.c.syncService('default/web');
    const s = ep(env.fake)!.subsets!;
    assert.equal(s.length, 1);
    assert.deepEqual(s[0]!.addresses?.map((a) => a.ip), ['10.0.0.1']);
    assert.equal(s[0]!.ports, undefined);
    await env.stop();
  });

  it('groups pods by the ports they offer when a named port resolves differently', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
      f.seed(
        GVR.pods,
        pod('a', { ip: '10.0.0.1', ports: [{ name: 'http', containerPort: 8080 }] }),
        pod('b', { ip: '10.0.0.2', ports: [{ name: 'http', containerPort: 9090 }] }),
        pod('c', { ip: '10.0.0.3', ports: [{ name: 'http', containerPort: 8080 }] }),
        pod('none', { ip: '10.0.0.4', ports: [{ name: 'other', containerPort: 1 }] }),
      );
    });
    await env.c.syncService('default/web');
    const s = ep(env.fake)!.subsets!;
    assert.deepEqual(
      s.map((x) => [x.ports![0]!.port, x.addresses!.map((a) => a.ip)]),
      [
        [8080, ['10.0.0.1', '10.0.0.3']],
        [9090, ['10.0.0.2']],
      ],
    );
    await env.stop();
  });

  it('does not write when nothing changed, and updates when a pod becomes ready', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
      f.seed(GVR.pods, pod('p1', { ip: '10.0.0.1', ready: false }));
    });
    await env.c.syncService('default/web');
    await until(() => !!env.informers.endpoints().getIndexer().getByKey('default/web'), 'endpoints cached');
    env.fake.clearActions();
    await env.c.syncService('default/web');
    assert.deepEqual(env.fake.actions().filter((a) => a.verb !== 'list' && a.verb !== 'watch'), []);
    const p = pod('p1', { ip: '10.0.0.1', readySince: '2024-01-01T00:05:00Z' });
    await env.fake.resource(GVR.pods).namespace('default').updateStatus({ ...p, metadata: { ...p.metadata } } as never);
    await until(() => env.informers.pods().getIndexer().getByKey('default/p1')?.status?.conditions?.[0]?.status === 'True', 'pod cached');
    await env.c.syncService('default/web');
    const e = ep(env.fake)!;
    assert.deepEqual(e.subsets![0]!.addresses?.map((a) => a.ip), ['10.0.0.1']);
    assert.equal(e.metadata?.annotations?.['endpoints.kubernetes.io/last-change-trigger-time'], '2024-01-01T00:05:00Z');
    await env.stop();
  });

  it('deletes the Endpoints when the service is gone and ignores services without selector or of type ExternalName', async () => {
    const env = await setup((f) => {
      f.seed(GVR.endpoints, { metadata: { name: 'gone', namespace: 'default' } });
      f.seed(GVR.endpoints, { metadata: { name: 'manual', namespace: 'default' }, subsets: [{ addresses: [{ ip: '1.2.3.4' }] }] });
      f.seed(GVR.services, service('manual', { selector: undefined }), service('ext', { type: 'ExternalName', externalName: 'x.example' }));
    });
    await env.c.syncService('default/gone');
    await env.c.syncService('default/manual');
    await env.c.syncService('default/ext');
    assert.equal(ep(env.fake, 'gone'), undefined);
    assert.deepEqual(ep(env.fake, 'manual')!.subsets, [{ addresses: [{ ip: '1.2.3.4' }] }]);
    assert.equal(ep(env.fake, 'ext'), undefined);
    await env.stop();
  });

  it('truncates to 1000 addresses and sets the over-capacity annotation', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
      for (let i = 0; i < 1003; i++) f.seed(GVR.pods, pod(`p${i}`, { ip: `10.1.${Math.floor(i / 250)}.${i % 250}` }));
    });
    await env.c.syncService('default/web');
    const e = ep(env.fake)!;
    assert.equal(e.subsets![0]!.addresses!.length, 1000);
    assert.equal(e.metadata?.annotations?.['endpoints.kubernetes.io/over-capacity'], 'truncated');
    await env.stop();
  });

  it('records FailedToCreateEndpoint and fails the sync when the create fails', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
      f.seed(GVR.pods, pod('p1'));
    });
    env.fake.prependReactor('create', 'endpoints', () => {
      throw new StatusError(newStatus(500, 'InternalError', 'boom'));
    });
    await assert.rejects(env.c.syncService('default/web'), /boom/);
    assert.match(env.recorder.events[0]!, /^Warning FailedToCreateEndpoint Failed to create endpoint for service default\/web: /);
    await env.stop();
  });

  it('records FailedToUpdateEndpoint with the error and fails the sync when the update fails', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
      f.seed(GVR.pods, pod('p1'));
      f.seed(GVR.endpoints, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web', namespace: 'default' }, subsets: [] } as Kube<Endpoints>);
    });
    env.fake.prependReactor('update', 'endpoints', () => {
      throw new StatusError(newStatus(500, 'InternalError', 'boom'));
    });
    await assert.rejects(env.c.syncService('default/web'), /boom/);
    assert.deepEqual(env.recorder.events, ['Warning FailedToUpdateEndpoint Failed to update endpoint default/web: boom']);
    await env.stop();
  });

  it('keeps Endpoints in step through informer events while running', async () => {
    const env = await setup((f) => {
      f.seed(GVR.services, service('web'));
    });
    const abort = new AbortController();
    const run = env.c.run(2, abort.signal);
    await until(() => !!ep(env.fake), 'empty endpoints created');
    assert.deepEqual(ep(env.fake)!.subsets ?? [], []);
    await env.fake.resource(GVR.pods).namespace('default').create(pod('p1', { ip: '10.0.0.9' }) as never);
    await until(() => ep(env.fake)?.subsets?.[0]?.addresses?.[0]?.ip === '10.0.0.9', 'pod address added');
    await env.fake.resource(GVR.pods).namespace('default').delete('p1');
    await until(() => (ep(env.fake)?.subsets ?? []).length === 0, 'pod address removed');
    await env.fake.resource(GVR.services).namespace('default').delete('web');
    await until(() => ep(env.fake) === undefined, 'endpoints deleted with the service');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered under its upstream name with five workers', () => {
    assert.equal(descriptor.name, 'endpoints-controller');
    assert.deepEqual(descriptor.aliases, ['endpoint']);
    assert.equal(descriptor.defaultWorkers, 5);
  });
});
