import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startTestServer, eventually, type TestServer } from '../test-server.js';
import { startTestWebhookServer, type ReceivedCall, type TestWebhookServer } from '../admission/webhook/test-support.js';
import { newWebhookServer, type WebhookServer } from '../../runtime/webhook/server.js';
import { conversionWebhook } from '../../runtime/webhook/conversion.js';

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const group = 'conv.example.com';

/** v1: spec.cronSpec and spec.image; v2: spec.schedule.cron and spec.containers[].image. */
const v1Schema = {
  type: 'object',
  properties: { spec: { type: 'object', properties: { cronSpec: { type: 'string' }, image: { type: 'string' }, replicas: { type: 'integer', default: 1 } } } },
};
const v2Schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        schedule: { type: 'object', properties: { cron: { type: 'string' } } },
        containers: { type: 'array', items: { type: 'object', properties: { image: { type: 'string' } } } },
        replicas: { type: 'integer' },
      },
    },
  },
};

function convCrd(plural: string, kind: string, conversion: unknown, storage = 'v1') {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [
        { name: 'v1', served: true, storage: storage === 'v1', schema: { openAPIV3Schema: v1Schema } },
        { name: 'v2', served: true, storage: storage === 'v2', schema: { openAPIV3Schema: v2Schema } },
      ],
      conversion,
    },
  };
}

/** The test's conversion between the two shapes (in place). */
function convertOne(obj: any, desired: string): any {
  const spec = obj.spec ?? {};
  if (desired.endsWith('/v2')) {
    const { cronSpec, image, ...rest } = spec;
    obj.spec = { ...rest, schedule: { cron: cronSpec }, containers: image ? [{ image }] : [] };
  } else {
    const { schedule, containers, ...rest } = spec;
    obj.spec = { ...rest, cronSpec: schedule?.cron, image: containers?.[0]?.image };
  }
  obj.apiVersion = desired;
  return obj;
}

function answer(call: ReceivedCall, res: ServerResponse, response: Record<string, unknown>, apiVersion = call.body.apiVersion): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion, kind: 'ConversionReview', response }));
}

async function establish(s: TestServer, body: { metadata: { name: string }; spec: { names: { plural: string } } }): Promise<void> {
  const res = await s.request('POST', crdPath, body);
  assert.equal(res.status, 201, res.text);
  await eventually(async () => (await s.request('GET', `/apis/${group}/v2/namespaces/default/${body.spec.names.plural}`)).status === 200);
}

describe('CRD conversion webhooks', () => {
  let s: TestServer;
  let hook: TestWebhookServer;
  /** What /convert does for the next calls. */
  let mode: 'ok' | 'fail' | 'fail-bare' | 'garbage' | 'wrong-uid' | 'drop' | 'rename' | 'relabel' | 'hang' = 'ok';
  const reviews = () => hook.calls.filter((c) => c.path === '/convert');
  const tabs = (v: string, name = '') => `/apis/${group}/${v}/namespaces/default/crontabs${name ? `/${name}` : ''}`;

  before(async () => {
    s = await startTestServer({ crdConversionWebhookTimeoutMs: 1000 });
    hook = await startTestWebhookServer(['conv-hook.default.svc']);
    hook.handle('/convert', (call, res) => {
      const req = call.body.request;
      // Converts a copy: the call stays recorded as it came.
      const convertCronTab = (o: unknown, to: string) => convertOne(structuredClone(o), to);
      switch (mode) {
        case 'ok':
          return answer(call, res, { uid: req.uid, convertedObjects: req.objects.map((o: any) => convertCronTab(o, req.desiredAPIVersion)), result: { status: 'Success' } });
        case 'fail':
          return answer(call, res, { uid: req.uid, convertedObjects: [], result: { status: 'Failure', message: 'cannot convert crontabs today' } });
        case 'fail-bare':
          return answer(call, res, { uid: req.uid, result: { status: 'Failure' } });
        case 'garbage':
          return void res.writeHead(200, { 'content-type': 'application/json' }).end('garbage');
        case 'wrong-uid':
          return answer(call, res, { uid: 'someone-else', convertedObjects: [], result: { status: 'Success' } });
        case 'drop':
          return answer(call, res, { uid: req.uid, convertedObjects: [], result: { status: 'Success' } });
        case 'rename':
          return answer(call, res, { uid: req.uid, convertedObjects: req.objects.map((o: any) => ({ ...convertCronTab(o, req.desiredAPIVersion), metadata: { ...o.metadata, name: 'other' } })), result: { status: 'Success' } });
        case 'relabel':
          return answer(call, res, {
            uid: req.uid,
            convertedObjects: req.objects.map((o: any) => ({
              ...convertCronTab(o, req.desiredAPIVersion),
              metadata: { ...o.metadata, labels: { converted: 'yes' }, generation: 42, finalizers: ['sneaky'] },
            })),
            result: { status: 'Success' },
          });
        case 'hang':
          return undefined;
      }
    });
    await establish(s, convCrd('crontabs', 'CronTab', { strategy: 'Webhook', webhook: { clientConfig: { url: `${hook.base}/convert`, caBundle: hook.caBundle }, conversionReviewVersions: ['v1'] } }));
  });
  after(async () => {
    await s.close();
    await hook.close();
  });
  beforeEach(async () => {
    mode = 'ok';
    await s.request('DELETE', tabs('v1'));
    hook.calls.length = 0;
  });

  it('stores at the storage version and round-trips between versions of different shape', async () => {
    const created = await s.request('POST', tabs('v1'), { apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name: 'rt' }, spec: { cronSpec: '* * * * */5', image: 'busybox' } });
    assert.equal(created.status, 201, created.text);
    assert.equal(reviews().length, 0, 'no review for objects already at the version');

    const v2 = await s.request('GET', tabs('v2', 'rt'));
    assert.equal(v2.status, 200, v2.text);
    assert.equal(v2.body.apiVersion, `${group}/v2`);
    assert.deepEqual(v2.body.spec, { schedule: { cron: '* * * * */5' }, containers: [{ image: 'busybox' }], replicas: 1 });
    const [review] = reviews();
    assert.ok(review);
    assert.match(review.url, /^\/convert\?timeout=1s$/);
    assert.equal(review.body.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(review.body.kind, 'ConversionReview');
    assert.equal(review.body.request.desiredAPIVersion, `${group}/v2`);
    assert.equal(review.body.request.objects.length, 1);
    assert.equal(review.body.request.objects[0].apiVersion, `${group}/v1`);
    assert.equal(review.body.request.objects[0].spec.replicas, 1, 'decoded (defaulted) at the stored version before conversion');

    // Update at v2: validated at v2, stored at v1.
    v2.body.spec.schedule.cron = '0 * * * *';
    const upd = await s.request('PUT', tabs('v2', 'rt'), v2.body);
    assert.equal(upd.status, 200, upd.text);
    assert.equal(upd.body.apiVersion, `${group}/v2`);
    assert.deepEqual(upd.body.spec.schedule, { cron: '0 * * * *' });
    const stored = await s.storage.get('/registry/conv.example.com/crontabs/default/rt');
    assert.equal(stored!.object.apiVersion, `${group}/v1`);
    assert.equal((stored!.object as any).spec.cronSpec, '0 * * * *');
    assert.equal((stored!.object as any).spec.schedule, undefined);

    const v1 = await s.request('GET', tabs('v1', 'rt'));
    assert.equal(v1.status, 200, v1.text);
    assert.deepEqual(v1.body.spec, { cronSpec: '0 * * * *', image: 'busybox', replicas: 1 });
    assert.equal(v1.body.metadata.generation, 2);

    // A merge patch at v2 goes the same way.
    const patched = await s.request('PATCH', tabs('v2', 'rt'), { spec: { containers: [{ image: 'nginx' }] } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.spec.containers, [{ image: 'nginx' }]);
    assert.equal(((await s.storage.get('/registry/conv.example.com/crontabs/default/rt'))!.object as any).spec.image, 'nginx');
  });

  it('creates at a non-storage version through the webhook, pruned with each version\'s schema', async () => {
    const created = await s.request('POST', tabs('v2'), { apiVersion: `${group}/v2`, kind: 'CronTab', metadata: { name: 'at-v2' }, spec: { schedule: { cron: '1 2 3 4 5' }, containers: [{ image: 'x' }], junk: true } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.spec, { schedule: { cron: '1 2 3 4 5' }, containers: [{ image: 'x' }], replicas: 1 });
    const stored = (await s.storage.get('/registry/conv.example.com/crontabs/default/at-v2'))!.object as any;
    assert.equal(stored.apiVersion, `${group}/v1`);
    assert.deepEqual(stored.spec, { cronSpec: '1 2 3 4 5', image: 'x' });
    // To the storage version, then back for the answer.
    assert.deepEqual(reviews().map((c) => c.body.request.desiredAPIVersion), [`${group}/v1`, `${group}/v2`]);
  });

  it('converts a list at a non-storage version in one review, objects already there untouched', async () => {
    for (const name of ['a', 'b', 'c']) {
      assert.equal((await s.request('POST', tabs('v1'), { metadata: { name }, spec: { cronSpec: `${name} * * * *`, image: name } })).status, 201);
    }
    hook.calls.length = 0;
    const list = await s.request('GET', tabs('v2'));
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.kind, 'CronTabList');
    assert.equal(list.body.apiVersion, `${group}/v2`);
    assert.deepEqual(list.body.items.map((i: any) => [i.apiVersion, i.metadata.name, i.spec.schedule.cron]), [
      [`${group}/v2`, 'a', 'a * * * *'],
      [`${group}/v2`, 'b', 'b * * * *'],
      [`${group}/v2`, 'c', 'c * * * *'],
    ]);
    assert.equal(reviews().length, 1);
    assert.equal(reviews()[0]!.body.request.objects.length, 3);
    hook.calls.length = 0;
    assert.equal((await s.request('GET', tabs('v1'))).status, 200);
    assert.equal(reviews().length, 0);
  });

  it('watches at a non-storage version: initial and later events converted, in order', async () => {
    assert.equal((await s.request('POST', tabs('v1'), { metadata: { name: 'w1' }, spec: { cronSpec: 'one', image: 'i1' } })).status, 201);
    const w = await s.watch(`${tabs('v2')}?watch=1`);
    assert.equal(w.status, 200);
    const first = await w.next();
    assert.equal(first.type, 'ADDED');
    assert.equal(first.object.apiVersion, `${group}/v2`);
    assert.deepEqual(first.object.spec.schedule, { cron: 'one' });
    assert.equal((await s.request('POST', tabs('v1'), { metadata: { name: 'w2' }, spec: { cronSpec: 'two', image: 'i2' } })).status, 201);
    assert.equal((await s.request('PATCH', tabs('v1', 'w1'), { spec: { cronSpec: 'one-more' } })).status, 200);
    assert.equal((await s.request('DELETE', tabs('v1', 'w2'))).status, 200);
    const events = [await w.next(), await w.next(), await w.next()];
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name, e.object.apiVersion, e.object.spec.schedule.cron]), [
      ['ADDED', 'w2', `${group}/v2`, 'two'],
      ['MODIFIED', 'w1', `${group}/v2`, 'one-more'],
      ['DELETED', 'w2', `${group}/v2`, 'two'],
    ]);
    w.close();
  });

  it('ends a watch with an InternalError event when an event cannot be converted', async () => {
    const rv = (await s.request('GET', tabs('v1'))).body.metadata.resourceVersion;
    const w = await s.watch(`${tabs('v2')}?watch=1&resourceVersion=${rv}`);
    mode = 'fail';
    assert.equal((await s.request('POST', tabs('v1'), { metadata: { name: 'wf' }, spec: { cronSpec: 'x' } })).status, 201);
    const ev = await w.next();
    assert.equal(ev.type, 'ERROR');
    assert.equal(ev.object.code, 500);
    assert.equal(ev.object.reason, 'InternalError');
    assert.equal(ev.object.message, `Internal error occurred: conversion webhook for ${group}/v1, Kind=CronTab failed: cannot convert crontabs today`);
    await w.ended;
  });

  it('answers 500 with the webhook\'s refusal for reads and writes that need conversion, and serves the storage version without it', async () => {
    assert.equal((await s.request('POST', tabs('v1'), { metadata: { name: 'ref' }, spec: { cronSpec: 'x', image: 'y' } })).status, 201);
    mode = 'fail';
    const get = await s.request('GET', tabs('v2', 'ref'));
    assert.equal(get.status, 500, get.text);
    assert.deepEqual(get.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `conversion webhook for ${group}/v1, Kind=CronTab failed: cannot convert crontabs today`,
      code: 500,
    });
    const list = await s.request('GET', tabs('v2'));
    assert.equal(list.status, 500);
    assert.equal(list.body.message, `conversion webhook for ${group}/v1, Kind=CronTab failed: cannot convert crontabs today`);
    const create = await s.request('POST', tabs('v2'), { metadata: { name: 'no' }, spec: { schedule: { cron: 'x' } } });
    assert.equal(create.status, 500);
    assert.equal(create.body.message, `conversion webhook for ${group}/v2, Kind=CronTab failed: cannot convert crontabs today`);
    assert.equal(await s.storage.get('/registry/conv.example.com/crontabs/default/no'), undefined);
    const del = await s.request('DELETE', tabs('v2', 'ref'));
    assert.equal(del.status, 500);
    assert.ok(await s.storage.get('/registry/conv.example.com/crontabs/default/ref'), 'kept when its delete could not convert it');
    // The storage version needs no webhook.
    assert.equal((await s.request('GET', tabs('v1', 'ref'))).status, 200);
    mode = 'fail-bare';
    assert.equal((await s.request('GET', tabs('v2', 'ref'))).body.message, `conversion webhook for ${group}/v1, Kind=CronTab failed: response.result.status was 'Failure', not 'Success'`);
  });

  it('refuses answers that are not valid conversions, with upstream\'s texts', async () => {
    assert.equal((await s.request('POST', tabs('v1'), { metadata: { name: 'bad' }, spec: { cronSpec: 'x' } })).status, 201);
    const prefix = `conversion webhook for ${group}/v1, Kind=CronTab`;
    const cases: [typeof mode, string][] = [
      ['garbage', `${prefix} failed: couldn't get version/kind; json parse error: invalid character 'g' looking for beginning of value`],
      ['wrong-uid', `${prefix} failed: expected response.uid="UID", got "someone-else"`],
      ['drop', `${prefix} returned 0 objects, expected 1`],
      ['rename', `${prefix} returned invalid object: must have the same name: bad != other`],
    ];
    for (const [m, message] of cases) {
      mode = m;
      hook.calls.length = 0;
      const r = await s.request('GET', tabs('v2', 'bad'));
      assert.equal(r.status, 500, `${m}: ${r.text}`);
      assert.equal(r.body.message, message.replace('UID', reviews()[0]?.body.request.uid), m);
    }
    const list = await s.request('GET', tabs('v2'));
    assert.equal(list.body.message, `${prefix} returned invalid converted object at index 1: must have the same name: bad != other`);
  });

  it('keeps only the labels and annotations a webhook changes in metadata', async () => {
    assert.equal((await s.request('POST', tabs('v1'), { metadata: { name: 'meta', labels: { orig: 'yes' } }, spec: { cronSpec: 'x' } })).status, 201);
    mode = 'relabel';
    const got = await s.request('GET', tabs('v2', 'meta'));
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body.metadata.labels, { converted: 'yes' });
    assert.equal(got.body.metadata.generation, 1);
    assert.equal(got.body.metadata.finalizers, undefined);
  });

  it('gives up on a webhook that does not answer within the deadline', async () => {
    assert.equal((await s.request('POST', tabs('v1'), { metadata: { name: 'slow' }, spec: { cronSpec: 'x' } })).status, 201);
    mode = 'hang';
    const started = Date.now();
    const r = await s.request('GET', tabs('v2', 'slow'));
    assert.equal(r.status, 500, r.text);
    assert.equal(r.body.message, `conversion webhook for ${group}/v1, Kind=CronTab failed: Post "${hook.base}/convert?timeout=1s": context deadline exceeded`);
    assert.ok(Date.now() - started < 5000);
  });

  it('records a new storage version in status.storedVersions and reads objects stored at either', async () => {
    assert.equal((await s.request('POST', tabs('v1'), { metadata: { name: 'old' }, spec: { cronSpec: 'old', image: 'o' } })).status, 201);
    const crd = (await s.request('GET', `${crdPath}/crontabs.${group}`)).body;
    assert.deepEqual(crd.status.storedVersions, ['v1']);
    crd.spec.versions[0].storage = false;
    crd.spec.versions[1].storage = true;
    const upd = await s.request('PUT', `${crdPath}/crontabs.${group}`, crd);
    assert.equal(upd.status, 200, upd.text);
    assert.deepEqual(upd.body.status.storedVersions, ['v1', 'v2']);
    try {
      // Served with the new storage version once the CRD controller has caught up.
      await eventually(async () => {
        await s.request('DELETE', tabs('v1', 'probe'));
        const c = await s.request('POST', tabs('v1'), { metadata: { name: 'probe' }, spec: { cronSpec: 'p' } });
        return ((await s.storage.get('/registry/conv.example.com/crontabs/default/probe'))?.object.apiVersion ?? '') === `${group}/v2` && c.status === 201;
      });
      const newer = (await s.storage.get('/registry/conv.example.com/crontabs/default/probe'))!.object as any;
      assert.deepEqual(newer.spec.schedule, { cron: 'p' });
      const list = await s.request('GET', tabs('v1'));
      assert.deepEqual(list.body.items.map((i: any) => [i.metadata.name, i.spec.cronSpec]), [['old', 'old'], ['probe', 'p']]);
      // A version still in storedVersions cannot leave spec.versions.
      const cur = (await s.request('GET', `${crdPath}/crontabs.${group}`)).body;
      cur.spec.versions = [cur.spec.versions[1]];
      const drop = await s.request('PUT', `${crdPath}/crontabs.${group}`, cur);
      assert.equal(drop.status, 422, drop.text);
      assert.ok(
        drop.body.message.includes(
          'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions',
        ),
        drop.body.message,
      );
    } finally {
      const back = (await s.request('GET', `${crdPath}/crontabs.${group}`)).body;
      back.spec.versions[0].storage = true;
      back.spec.versions[1].storage = false;
      assert.equal((await s.request('PUT', `${crdPath}/crontabs.${group}`, back)).status, 200);
      await eventually(async () => {
        await s.request('DELETE', tabs('v1', 'probe2'));
        await s.request('POST', tabs('v1'), { metadata: { name: 'probe2' }, spec: { cronSpec: 'p' } });
        return ((await s.storage.get('/registry/conv.example.com/crontabs/default/probe2'))?.object.apiVersion ?? '') === `${group}/v1`;
      });
    }
  });

  it('reaches the webhook by service reference through a selectorless Service and its EndpointSlice at 127.0.0.1, with ConversionReview v1beta1', async () => {
    const svc = await s.request('POST', '/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'conv-hook' }, spec: { ports: [{ name: 'https', port: 443 }] } });
    assert.equal(svc.status, 201, svc.text);
    const slice = await s.request('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'conv-hook-1', labels: { 'kubernetes.io/service-name': 'conv-hook' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port: hook.port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    });
    assert.equal(slice.status, 201, slice.text);
    const crd = convCrd('svctabs', 'SvcTab', { strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'default', name: 'conv-hook', path: '/convert' }, caBundle: hook.caBundle }, conversionReviewVersions: ['v1beta1', 'v1'] } });
    await establish(s, crd);
    const stored = (await s.request('GET', `${crdPath}/svctabs.${group}`)).body;
    assert.equal(stored.spec.conversion.webhook.clientConfig.service.port, 443, 'port defaulted');
    const path = (v: string, name = '') => `/apis/${group}/${v}/namespaces/default/svctabs${name ? `/${name}` : ''}`;
    assert.equal((await s.request('POST', path('v1'), { metadata: { name: 'via-svc' }, spec: { cronSpec: 'svc', image: 'i' } })).status, 201);
    hook.calls.length = 0;
    const got = await s.request('GET', path('v2', 'via-svc'));
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body.spec.schedule, { cron: 'svc' });
    const [review] = reviews();
    assert.equal(review!.body.apiVersion, 'apiextensions.k8s.io/v1beta1');
    assert.equal(review!.headers.host, 'conv-hook.default.svc:443');
  });

  it('converts with a kcm/runtime conversion webhook server', async () => {
    const server: WebhookServer = newWebhookServer({ port: 0, host: '127.0.0.1' });
    server.register('/convert', conversionWebhook((obj, to) => convertOne(obj, to)), 'conversion');
    const abort = new AbortController();
    const running = server.start(abort.signal);
    try {
      await server.listening();
      const caBundle = Buffer.from(server.caBundle).toString('base64');
      await establish(s, convCrd('runtimetabs', 'RuntimeTab', { strategy: 'Webhook', webhook: { clientConfig: { url: `${server.url()}/convert`, caBundle }, conversionReviewVersions: ['v1'] } }, 'v2'));
      const path = (v: string, name = '') => `/apis/${group}/${v}/namespaces/default/runtimetabs${name ? `/${name}` : ''}`;
      const created = await s.request('POST', path('v1'), { metadata: { name: 'rt1' }, spec: { cronSpec: 'lib', image: 'img' } });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(created.body.spec, { cronSpec: 'lib', image: 'img', replicas: 1 });
      const stored = (await s.storage.get('/registry/conv.example.com/runtimetabs/default/rt1'))!.object as any;
      assert.equal(stored.apiVersion, `${group}/v2`);
      assert.deepEqual(stored.spec, { schedule: { cron: 'lib' }, containers: [{ image: 'img' }], replicas: 1 });
      const v2 = await s.request('GET', path('v2', 'rt1'));
      assert.deepEqual(v2.body.spec, stored.spec);
    } finally {
      abort.abort();
      await running;
    }
  });

  describe('validation of spec.conversion', () => {
    const cases: [string, unknown, string[], boolean?][] = [
      [
        'a webhook strategy without a webhook',
        { strategy: 'Webhook' },
        ['spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook', 'spec.conversion.conversionReviewVersions: Required value'],
      ],
      ['both url and service', { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://a.example.com/c', service: { namespace: 'n', name: 's' } }, conversionReviewVersions: ['v1'] } }, ['spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required']],
      ['a plain http url', { strategy: 'Webhook', webhook: { clientConfig: { url: 'http://a.example.com/c' }, conversionReviewVersions: ['v1'] } }, [`spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`]],
      [
        'a service without a name (reported as upstream reports it)',
        { strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'n', port: 70000 } }, conversionReviewVersions: ['v1'] } },
        ['spec.conversion.webhookClientConfig.service.namespace: Required value: service namespace is required', 'spec.conversion.webhookClientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive'],
      ],
      ['no review version this server speaks', { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://a.example.com/c' }, conversionReviewVersions: ['v2', 'v2'] } }, [
        'spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version',
        'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1',
      ]],
      ['a webhook under strategy None', { strategy: 'None', webhook: { clientConfig: { url: 'https://a.example.com/c' }, conversionReviewVersions: ['v1'] } }, [
        'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
        'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
      ]],
      ['an unknown strategy', { strategy: 'Magic' }, ['spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"']],
      ['an empty conversion', {}, ['spec.conversion.strategy: Required value']],
      ['webhook conversion with preserveUnknownFields', { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://a.example.com/c' }, conversionReviewVersions: ['v1'] } }, ['spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true'], true],
    ];
    for (const [what, conversion, messages, preserve] of cases) {
      it(`refuses ${what}`, async () => {
        const body: any = convCrd('invalids', 'Invalid', conversion);
        if (preserve) body.spec.preserveUnknownFields = true;
        const r = await s.request('POST', crdPath, body);
        assert.equal(r.status, 422, r.text);
        for (const m of messages) assert.ok(r.body.message.includes(m), `${m}\nnot in\n${r.body.message}`);
      });
    }

    it('defaults the strategy to None, and takes an invalid caBundle only where upstream does', async () => {
      const none = convCrd('plains', 'Plain', undefined);
      delete (none.spec as any).conversion;
      const r = await s.request('POST', crdPath, none);
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(r.body.spec.conversion, { strategy: 'None' });
      const bad = convCrd('badcas', 'BadCa', { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://a.example.com/c', caBundle: Buffer.from('not a cert').toString('base64') }, conversionReviewVersions: ['v1'] } });
      assert.equal((await s.request('POST', crdPath, bad)).status, 201);
      await eventually(async () => (await s.request('GET', `${crdPath}/badcas.${group}`)).body.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True'));
      // Established with an invalid bundle already: another invalid one is no worse.
      const cur = (await s.request('GET', `${crdPath}/badcas.${group}`)).body;
      cur.spec.conversion.webhook.clientConfig.caBundle = Buffer.from('still not').toString('base64');
      assert.equal((await s.request('PUT', `${crdPath}/badcas.${group}`, cur)).status, 200);
      // Established with a valid bundle: an invalid one is refused.
      const good = (await s.request('GET', `${crdPath}/crontabs.${group}`)).body;
      good.spec.conversion.webhook.clientConfig.caBundle = Buffer.from('nope').toString('base64');
      const r2 = await s.request('PUT', `${crdPath}/crontabs.${group}`, good);
      assert.equal(r2.status, 422, r2.text);
      assert.ok(
        r2.body.message.includes('spec.conversion.webhookClientConfig.caBundle: Invalid value: []byte{0x6e, 0x6f, 0x70, 0x65}: data does not contain any valid RSA or ECDSA certificates'),
        r2.body.message,
      );
    });
  });
});
