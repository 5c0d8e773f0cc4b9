/**
 * Admission webhooks with the real kubectl against `kcm apiserver`, the way
 * docs/webhooks.md tells people to develop them: the webhook runs on the
 * host (here, in this test process), reached through a selectorless Service
 * whose EndpointSlice points at 127.0.0.1, or by URL.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startApiServerProcess, type KcmProcess } from './harness.js';
import { jsonPatch, reviewAnswer, startTestWebhookServer, type TestWebhookServer } from '../../src/apiserver/admission/webhook/test-support.js';

let kcm: KcmProcess;
let hooks: TestWebhookServer;

before(async () => {
  kcm = await startApiServerProcess();
  hooks = await startTestWebhookServer(['webhook-service.default.svc']);
  hooks.handle('/validate', (c, res) => {
    const data = c.body.request.object?.data ?? {};
    if ('password' in data) return reviewAnswer(c, res, { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'ConfigMaps must not hold passwords; use a Secret' } });
    reviewAnswer(c, res, { allowed: true, warnings: ['checked by the e2e webhook'] });
  });
  hooks.handle('/mutate', (c, res) => reviewAnswer(c, res, { allowed: true, ...jsonPatch([{ op: 'add', path: '/metadata/annotations', value: { 'e2e.kcm.io/mutated': 'yes' } }]) }));
});
after(async () => {
  await kcm?.stop();
  await hooks?.close();
});

const apply = (obj: unknown) => kcm.kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(obj) });
const rules = [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'], scope: 'Namespaced' }];

describe('admission webhooks with kubectl', () => {
  it('serves the webhook configuration kinds in discovery and tables', async () => {
    const res = await kcm.kubectlOk(['api-resources', '--api-group=admissionregistration.k8s.io', '-o', 'name']);
    for (const r of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings']) {
      assert.ok(res.includes(`${r}.admissionregistration.k8s.io`), `${r} in\n${res}`);
    }
  });

  it('calls a webhook on the host through a selectorless Service and an EndpointSlice at 127.0.0.1', async () => {
    await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'webhook-service', namespace: 'default' }, spec: { ports: [{ name: 'https', port: 443 }] } });
    await apply({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'webhook-service-local', namespace: 'default', labels: { 'kubernetes.io/service-name': 'webhook-service' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port: hooks.port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    });
    await apply({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'no-passwords' },
      webhooks: [{ name: 'no-passwords.e2e.kcm.io', clientConfig: { service: { namespace: 'default', name: 'webhook-service', path: '/validate' }, caBundle: hooks.caBundle }, rules, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
    });
    const table = await kcm.kubectlOk(['get', 'validatingwebhookconfigurations']);
    assert.match(table, /^NAME\s+WEBHOOKS\s+AGE\n/);
    assert.match(table, /\nno-passwords\s+1\s+\S+\n/);

    const refused = await kcm.kubectl(['create', 'configmap', 'creds', '--from-literal=password=hunter2']);
    assert.notEqual(refused.code, 0);
    assert.equal(refused.stderr.trim(), 'error: failed to create configmap: admission webhook "no-passwords.e2e.kcm.io" denied the request: ConfigMaps must not hold passwords; use a Secret');
    const ok = await kcm.kubectl(['create', 'configmap', 'settings', '--from-literal=color=blue']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stderr, /Warning: checked by the e2e webhook/);
  });

  it('applies a mutating webhook patch reached by URL', async () => {
    await apply({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'annotate' },
      webhooks: [{ name: 'annotate.e2e.kcm.io', clientConfig: { url: `${hooks.base}/mutate`, caBundle: hooks.caBundle }, rules, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
    });
    await kcm.kubectlOk(['create', 'configmap', 'annotated', '--from-literal=a=b']);
    assert.equal(await kcm.kubectlOk(['get', 'configmap', 'annotated', '-o', 'jsonpath={.metadata.annotations.e2e\\.kcm\\.io/mutated}']), 'yes');
  });
});
