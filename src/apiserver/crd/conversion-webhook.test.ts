import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { KubeObject } from '../../api/types.js';
import { WebhookCallError, type WebhookClient } from '../admission/webhook/webhook-client.js';
import { convertByWebhook, restoreObjectMeta } from './conversion-webhook.js';
import { ConversionError, newCustomResourceConverter } from './conversion.js';
import { validateStoredVersions } from './conversion-validation.js';

const hook = { clientConfig: { url: 'https://hook.example.com/convert' }, reviewVersions: ['v1'] };
const gvk = 'ex.io/v1, Kind=Tab';

function tab(name: string, extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'ex.io/v1', kind: 'Tab', metadata: { name, namespace: 'ns', uid: `uid-${name}`, generation: 1 }, spec: { x: 1 }, ...extra };
}

/** A client that answers every review with `answer(review)`, recording what it was sent. */
function fakeClient(answer: (review: any) => unknown): WebhookClient & { sent: any[] } {
  const sent: any[] = [];
  return {
    sent,
    async post(_cc, body) {
      sent.push(body);
      return { body: answer(body), text: '' };
    },
    async close() {},
  };
}

/** A v1 answer converting every object to the desired version with `edit` applied. */
const converting = (edit: (o: any) => any = (o) => o) => (review: any) => ({
  apiVersion: review.apiVersion,
  kind: 'ConversionReview',
  response: { uid: review.request.uid, result: { status: 'Success' }, convertedObjects: review.request.objects.map((o: any) => edit({ ...structuredClone(o), apiVersion: review.request.desiredAPIVersion })) },
});

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail('expected a failure');
}

describe('conversion webhook calls', () => {
  it('sends one review with the objects, an empty response and a fresh uid, and returns the converted objects', async () => {
    const client = fakeClient(converting((o) => ({ ...o, spec: { y: o.spec.x } })));
    const out = await convertByWebhook(client, hook, [tab('a'), tab('b')], 'ex.io/v2', { list: true });
    assert.deepEqual(out.map((o) => [o.apiVersion, o.metadata?.name, o.spec]), [
      ['ex.io/v2', 'a', { y: 1 }],
      ['ex.io/v2', 'b', { y: 1 }],
    ]);
    const [review] = client.sent;
    assert.equal(review.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(review.request.desiredAPIVersion, 'ex.io/v2');
    assert.equal(review.request.objects.length, 2);
    assert.match(review.request.uid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(review.response, { uid: '', convertedObjects: null, result: { metadata: {} } });
  });

  it('speaks v1beta1 when the CRD lists it first, without checking the answer\'s uid or kind', async () => {
    const client = fakeClient((review) => ({ response: { uid: 'whatever', result: { status: 'Success' }, convertedObjects: [{ ...review.request.objects[0], apiVersion: 'ex.io/v2' }] } }));
    const [out] = await convertByWebhook(client, { ...hook, reviewVersions: ['v1beta1', 'v1'] }, [tab('a')], 'ex.io/v2');
    assert.equal(client.sent[0].apiVersion, 'apiextensions.k8s.io/v1beta1');
    assert.equal(out!.apiVersion, 'ex.io/v2');
    assert.equal(await failure(convertByWebhook(client, { ...hook, reviewVersions: ['v2'] }, [tab('a')], 'ex.io/v2')), 'no supported conversion review versions');
  });

  it('words bad answers as upstream does', async () => {
    const v1 = (response: unknown, rest: Record<string, unknown> = {}) => fakeClient(() => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response, ...rest }));
    const run = (c: WebhookClient, list = false, objs = [tab('a')]) => failure(convertByWebhook(c, hook, objs, 'ex.io/v2', { list }));
    assert.equal(await run(fakeClient(() => ({ kind: 'ConversionReview', apiVersion: 'apiextensions.k8s.io/v1beta1', response: {} }))), `conversion webhook for ${gvk} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1beta1, Kind=ConversionReview`);
    assert.equal(await run(v1(undefined)), `conversion webhook for ${gvk} failed: no response provided`);
    assert.equal(await run(fakeClient(() => 'text')), `conversion webhook for ${gvk} failed: couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
    const wrongVersion = fakeClient(converting((o) => ({ ...o, apiVersion: 'ex.io/v3' })));
    assert.equal(await run(wrongVersion), `conversion webhook for ${gvk} returned invalid object at index 0: invalid groupVersion (expected ex.io/v2, received ex.io/v3)`);
    assert.equal(await run(wrongVersion, true, [tab('a'), tab('b')]), `conversion webhook for ${gvk} returned invalid converted object at index 1: invalid groupVersion (expected ex.io/v2, received ex.io/v3)`);
    assert.equal(await run(fakeClient(converting((o) => ({ ...o, kind: 'Other' })))), `conversion webhook for ${gvk} returned invalid object at index 0: invalid kind (expected Tab, received Other)`);
    assert.equal(await run(fakeClient(converting((o) => ({ ...o, metadata: { ...o.metadata, uid: 'x' } })))), `conversion webhook for ${gvk} returned invalid object: must have the same UID: uid-a != x`);
    assert.equal(await run(fakeClient(converting((o) => ({ ...o, kind: undefined }))), true), `conversion webhook for ${gvk} returned invalid converted object at index 0: Object 'Kind' is missing in '{"apiVersion":"ex.io/v2","metadata":{"name":"a","namespace":"ns","uid":"uid-a","generation":1},"spec":{"x":1}}'`);
    const noMeta = fakeClient(converting((o) => ({ ...o, metadata: undefined })));
    assert.equal(await run(noMeta), `conversion webhook for ${gvk} returned invalid object: must have the same name: a != `);
    assert.equal(
      await run(fakeClient(converting((o) => ({ ...o, metadata: { ...o.metadata, labels: { 'bad key!': 'v' } } })))),
      `conversion webhook for ${gvk} returned invalid metadata: metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
    const call = new WebhookCallError('Post "https://hook.example.com/convert?timeout=30s": dial tcp 10.0.0.1:443: connect: connection refused');
    const refusing: WebhookClient = { post: async () => Promise.reject(call), close: async () => undefined };
    assert.equal(await run(refusing), `conversion webhook for ${gvk} failed: ${call.message}`);
    assert.equal(await failure(convertByWebhook(undefined, hook, [tab('a')], 'ex.io/v2')), `conversion webhook for ${gvk} failed: no webhook client is configured in this server`);
  });

  it('restores metadata but labels and annotations, checking the ones that changed', () => {
    const original = tab('a', { metadata: { name: 'a', uid: 'u', labels: { keep: 'x' }, annotations: { note: 'n' }, finalizers: ['f'] } });
    const converted: KubeObject = { apiVersion: 'ex.io/v2', kind: 'Tab', metadata: { name: 'a', uid: 'u', labels: { keep: 'x', added: 'y' }, generation: 9 } };
    assert.equal(restoreObjectMeta(original, converted), undefined);
    assert.deepEqual(converted.metadata, { name: 'a', uid: 'u', labels: { keep: 'x', added: 'y' }, finalizers: ['f'] });
    assert.equal(restoreObjectMeta(original, { apiVersion: 'ex.io/v2', kind: 'Tab' }), 'missing metadata in converted object');
    assert.equal(restoreObjectMeta(original, { apiVersion: 'ex.io/v2', kind: 'Tab', metadata: [] as never }), 'invalid metadata of type []interface {} in converted object');
    assert.equal(restoreObjectMeta(original, { apiVersion: 'ex.io/v2', kind: 'Tab', metadata: { labels: { n: 1 } } as never }), 'metadata.labels[n] must be a string, but is int64 in converted object');
    assert.equal(restoreObjectMeta(original, { apiVersion: 'ex.io/v2', kind: 'Tab', metadata: { annotations: 'x' } as never }), 'invalid metadata.annotations of type string in converted object');
  });
});

describe('the CR converter', () => {
  const crd = (conversion: unknown): CustomResourceDefinition =>
    ({
      metadata: { name: 'tabs.ex.io' },
      spec: { group: 'ex.io', scope: 'Namespaced', names: { plural: 'tabs', kind: 'Tab' }, versions: [{ name: 'v1', served: true, storage: true }, { name: 'v2', served: true, storage: false }], conversion },
    }) as never;

  it('None: rewrites apiVersion only, and refuses versions the CRD does not have', async () => {
    const c = newCustomResourceConverter(crd({ strategy: 'None' }), {});
    const [out] = await c.convert([tab('a')], 'v2');
    assert.deepEqual(out, { ...tab('a'), apiVersion: 'ex.io/v2' });
    await assert.rejects(c.convert([tab('a')], 'v9'), (err: unknown) => err instanceof ConversionError && err.message === 'request to convert CR to an invalid group/version: ex.io/v9' && err.status.code === 500 && err.status.reason === undefined);
    await assert.rejects(c.convert([{ ...tab('a'), apiVersion: 'ex.io/v0' }], 'v2'), /request to convert CR from an invalid group\/version: ex.io\/v0/);
    await assert.rejects(c.convert([tab('a'), { ...tab('b'), apiVersion: 'other.io/v1' }], 'v2', { list: true }), /request to convert CR list failed, list index 1 has invalid group\/version: other.io\/v1/);
  });

  it('Webhook: sends only the objects not at the target version, and none when all are', async () => {
    const client = fakeClient(converting());
    const c = newCustomResourceConverter(crd({ strategy: 'Webhook', webhook: { clientConfig: { url: 'https://h.example.com' }, conversionReviewVersions: ['v1'] } }), { webhookClient: client });
    const already = { ...tab('b'), apiVersion: 'ex.io/v2' };
    const out = await c.convert([tab('a'), already, tab('c')], 'v2', { list: true });
    assert.deepEqual(out.map((o) => [o.metadata?.name, o.apiVersion]), [['a', 'ex.io/v2'], ['b', 'ex.io/v2'], ['c', 'ex.io/v2']]);
    assert.equal(out[1], already);
    assert.deepEqual(client.sent[0].request.objects.map((o: any) => o.metadata.name), ['a', 'c']);
    await c.convert([already], 'v2');
    assert.equal(client.sent.length, 1);
  });
});

describe('status.storedVersions validation', () => {
  it('keeps the storage version and every stored version in spec.versions', () => {
    const versions = [{ name: 'v2', storage: true }];
    assert.deepEqual(validateStoredVersions(['v1', 'v2'], versions).map((e) => e.message), [
      'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions',
    ]);
    assert.deepEqual(validateStoredVersions(['v1'], [{ name: 'v1' }, versions[0]!]).map((e) => e.message), ['status.storedVersions: Invalid value: []string{"v1"}: must have the storage version v2']);
    assert.deepEqual(validateStoredVersions([], versions).map((e) => e.message), ['status.storedVersions: Invalid value: []string(nil): must have at least one stored version']);
  });
});
