import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { Type } from 'typebox';
import { applyJsonPatch } from '../../apiserver/patch/json-patch.js';
import { StatusError, newStatus } from '../../client/errors.js';
import { setLogOutput } from '../../util/log/logger.js';
import { kinds } from '../kinds.js';
import { defineResource, type CustomObject } from '../resource.js';
import { defaultingWebhook, validatingWebhook } from './admission.js';
import { webhookConfigurations } from './configurations.js';
import { conversionWebhook } from './conversion.js';
import { createJsonPatch } from './json-patch-diff.js';
import type { AdmissionRequest } from './review-types.js';
import { newWebhookServer, type WebhookServer } from './server.js';

const Site = defineResource({
  group: 'sites.example.com',
  version: 'v1',
  kind: 'StaticSite',
  spec: Type.Object({ domain: Type.String(), replicas: Type.Optional(Type.Integer()), tags: Type.Optional(Type.Array(Type.String())) }),
});
type Site = CustomObject<{ domain: string; replicas?: number; tags?: string[] }, never>;

describe('JSON patches between two objects', () => {
  it('adds, removes and replaces fields, recursing into objects and equal-length lists', () => {
    const from = { a: 1, b: { c: 'x', d: [1, 2], e: true }, gone: 'y', list: [1, 2, 3] };
    const to = { a: 2, b: { c: 'x', d: [1, 5], f: null }, list: [1, 2], 'k/~': 'escaped' };
    const ops = createJsonPatch(from, to);
    assert.deepEqual(ops, [
      { op: 'remove', path: '/gone' },
      { op: 'replace', path: '/a', value: 2 },
      { op: 'remove', path: '/b/e' },
      { op: 'replace', path: '/b/d/1', value: 5 },
      { op: 'add', path: '/b/f', value: null },
      { op: 'replace', path: '/list', value: [1, 2] },
      { op: 'add', path: '/k~1~0', value: 'escaped' },
    ]);
    assert.deepEqual(applyJsonPatch(structuredClone(from), ops), to);
    assert.deepEqual(createJsonPatch({ x: [1] }, { x: [1] }), []);
  });
});

describe('webhook server', () => {
  let server: WebhookServer;
  let agent: Agent;
  const ac = new AbortController();
  let running: Promise<void>;
  let restoreLog: (line: string) => void;

  before(async () => {
    restoreLog = setLogOutput(() => {});
    server = newWebhookServer({ port: 0, host: '127.0.0.1' });
    server.register(
      '/default',
      defaultingWebhook(Site, (s) => {
        s.spec.replicas ??= 1;
        s.metadata = { ...s.metadata, labels: { ...s.metadata?.labels, 'sites.example.com/defaulted': 'true' } };
      }),
    );
    server.register(
      '/validate',
      validatingWebhook(Site, {
        validateCreate: (s) => {
          if (s.spec.domain.endsWith('.local')) throw new Error('spec.domain: .local domains are not published');
          return s.spec.replicas === 0 ? ['replicas is 0: the site serves nothing'] : undefined;
        },
        validateUpdate: (old, s) => {
          if (old.spec.domain !== s.spec.domain) throw new StatusError(newStatus(422, 'Invalid', 'spec.domain is immutable'));
        },
        validateDelete: (s) => {
          if (s.metadata?.labels?.protected === 'true') throw new Error('protected');
        },
      }),
    );
    server.register(
      '/convert',
      conversionWebhook((obj, to) => {
        if (to === 'sites.example.com/v2') {
          const spec = obj.spec as { domain: string };
          return { ...obj, spec: { hosts: [spec.domain] } };
        }
        if (to === 'sites.example.com/v1') {
          const spec = obj.spec as { hosts: string[] };
          return { ...obj, spec: { domain: spec.hosts[0] } };
        }
        throw new Error(`cannot convert to ${to}`);
      }),
      'conversion',
    );
    running = server.start(ac.signal);
    await server.listening();
    agent = new Agent({ connect: { ca: server.caBundle } });
  });
  after(async () => {
    ac.abort();
    await running;
    await agent.close();
    setLogOutput(restoreLog);
  });

  async function post(path: string, body: unknown, contentType = 'application/json'): Promise<{ status: number; json: any; text: string }> {
    const r = await request(`${server.url()}${path}`, { method: 'POST', dispatcher: agent, headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await r.body.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: r.statusCode, json, text };
  }

  const review = (req: Partial<AdmissionRequest<Site>>, apiVersion = 'admission.k8s.io/v1') => ({
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      uid: 'u-1',
      kind: { group: 'sites.example.com', version: 'v1', kind: 'StaticSite' },
      resource: { group: 'sites.example.com', version: 'v1', resource: 'staticsites' },
      operation: 'CREATE',
      userInfo: { username: 'admin' },
      ...req,
    },
  });
  const site = (domain: string, extra: Partial<Site['spec']> = {}, labels?: Record<string, string>): Site => ({
    apiVersion: 'sites.example.com/v1',
    kind: 'StaticSite',
    metadata: { name: 'a', namespace: 'default', ...(labels ? { labels } : {}) },
    spec: { domain, ...extra },
  });

  it('answers a defaulting webhook with the JSON patch of its changes, echoing the review version and uid', async () => {
    for (const v of ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1']) {
      const r = await post('/default', review({ object: site('a.example.com') }, v));
      assert.equal(r.status, 200);
      assert.equal(r.json.apiVersion, v);
      assert.equal(r.json.response.uid, 'u-1');
      assert.equal(r.json.response.allowed, true);
      assert.equal(r.json.response.patchType, 'JSONPatch');
      const ops = JSON.parse(Buffer.from(r.json.response.patch, 'base64').toString());
      assert.deepEqual(applyJsonPatch(site('a.example.com'), ops), site('a.example.com', { replicas: 1 }, { 'sites.example.com/defaulted': 'true' }));
    }
    const none = await post('/default', review({ object: site('a.example.com', { replicas: 3 }, { 'sites.example.com/defaulted': 'true' }) }));
    assert.deepEqual(none.json.response, { uid: 'u-1', allowed: true });
    const del = await post('/default', review({ operation: 'DELETE', oldObject: site('a.example.com') }));
    assert.deepEqual(del.json.response, { uid: 'u-1', allowed: true });
  });

  it('denies with 403 and the message, passes warnings, and uses a StatusError as given', async () => {
    const deny = await post('/validate', review({ object: site('home.local') }));
    assert.deepEqual(deny.json.response, { uid: 'u-1', allowed: false, status: { metadata: {}, status: 'Failure', message: 'spec.domain: .local domains are not published', reason: 'Forbidden', code: 403 } });
    const warn = await post('/validate', review({ object: site('a.example.com', { replicas: 0 }) }));
    assert.deepEqual(warn.json.response, { uid: 'u-1', allowed: true, warnings: ['replicas is 0: the site serves nothing'] });
    const upd = await post('/validate', review({ operation: 'UPDATE', oldObject: site('a.example.com'), object: site('b.example.com') }));
    assert.equal(upd.json.response.allowed, false);
    assert.equal(upd.json.response.status.code, 422);
    assert.equal(upd.json.response.status.reason, 'Invalid');
    assert.equal(upd.json.response.status.kind, undefined);
    const delProtected = await post('/validate', review({ operation: 'DELETE', oldObject: site('a.example.com', {}, { protected: 'true' }) }));
    assert.equal(delProtected.json.response.allowed, false);
    const delOk = await post('/validate', review({ operation: 'DELETE', oldObject: site('a.example.com') }));
    assert.equal(delOk.json.response.allowed, true);
  });

  it('refuses a request for another kind with 400', async () => {
    const r = await post('/validate', review({ kind: { group: '', version: 'v1', kind: 'ConfigMap' }, object: site('a') }));
    assert.equal(r.json.response.allowed, false);
    assert.equal(r.json.response.status.code, 400);
    assert.match(r.json.response.status.message, /handles StaticSite\.sites\.example\.com, not ConfigMap\.core/);
  });

  it('converts objects between versions, and reports a failure Status when one cannot be converted', async () => {
    const conv = (desired: string, objects: unknown[]) => post('/convert', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'c-1', desiredAPIVersion: desired, objects } });
    const up = await conv('sites.example.com/v2', [site('a.example.com'), { ...site('b.example.com'), apiVersion: 'sites.example.com/v2', spec: { hosts: ['b.example.com'] } }]);
    assert.equal(up.json.kind, 'ConversionReview');
    assert.deepEqual(up.json.response.result, { metadata: {}, status: 'Success' });
    assert.deepEqual(
      up.json.response.convertedObjects.map((o: any) => [o.apiVersion, o.spec.hosts[0], o.metadata.name]),
      [
        ['sites.example.com/v2', 'a.example.com', 'a'],
        ['sites.example.com/v2', 'b.example.com', 'a'],
      ],
    );
    const bad = await conv('sites.example.com/v9', [site('a')]);
    assert.equal(bad.json.response.result.status, 'Failure');
    assert.match(bad.json.response.result.message, /cannot convert to sites\.example\.com\/v9/);
    assert.deepEqual(bad.json.response.convertedObjects, []);
  });

  it('answers 404 for unknown paths, 405 for other methods, 400 for bodies it cannot read', async () => {
    assert.equal((await post('/nowhere', {})).status, 404);
    const get = await request(`${server.url()}/validate`, { dispatcher: agent });
    await get.body.text();
    assert.equal(get.statusCode, 405);
    assert.equal((await post('/validate', '{not json')).status, 400);
    assert.equal((await post('/validate', review({}), 'text/plain')).status, 400);
    assert.equal((await post('/validate', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' })).status, 400);
  });
});

describe('webhook configurations', () => {
  it('builds mutating and validating configurations for a kind, by URL or Service', () => {
    const { mutating, validating } = webhookConfigurations({
      name: 'sites',
      caBundle: 'PEM',
      target: { url: 'https://127.0.0.1:9443/' },
      webhooks: [
        { type: 'mutating', name: 'default.sites.example.com', path: '/default', kind: Site, reinvocationPolicy: 'IfNeeded' },
        { type: 'validating', name: 'validate.sites.example.com', path: '/validate', kind: Site, operations: ['CREATE', 'UPDATE', 'DELETE'], subresources: ['status'] },
      ],
    });
    assert.deepEqual(mutating?.webhooks?.[0], {
      name: 'default.sites.example.com',
      admissionReviewVersions: ['v1'],
      clientConfig: { url: 'https://127.0.0.1:9443/default', caBundle: Buffer.from('PEM').toString('base64') },
      rules: [{ apiGroups: ['sites.example.com'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['staticsites'], scope: 'Namespaced' }],
      failurePolicy: 'Fail',
      sideEffects: 'None',
      timeoutSeconds: 10,
      reinvocationPolicy: 'IfNeeded',
    });
    assert.deepEqual((validating?.webhooks?.[0]?.rules?.[0] as { resources?: string[] }).resources, ['staticsites', 'staticsites/status']);
    const svc = webhookConfigurations({ name: 'x', caBundle: 'PEM', target: { service: { namespace: 'ops', name: 'hooks' } }, webhooks: [{ type: 'validating', name: 'v.x.io', path: '/v', kind: kinds.ConfigMap }] });
    assert.deepEqual(svc.validating?.webhooks?.[0]?.clientConfig.service, { namespace: 'ops', name: 'hooks', path: '/v' });
    assert.equal(svc.mutating, undefined);
  });
});
