/**
 * kubectl's client-side validation against `kcm apiserver`: kubectl reads the
 * protobuf OpenAPI v2 document for what the server does not validate itself
 * (a `kind: List`), so these run with kubectl's default validation, never
 * with --validate=false.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startApiServerProcess, type KcmProcess } from './harness.js';

let kcm: KcmProcess;

before(async () => {
  kcm = await startApiServerProcess();
  await kcm.kubectlOk(['create', 'serviceaccount', 'default']);
});
after(async () => {
  await kcm?.stop();
});

describe('kubectl with the protobuf OpenAPI v2 document', () => {
  it('applies a v1 List of a Pod, a Service and a ConfigMap with default validation', async () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'listed-pod', labels: { app: 'listed' } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'listed-svc' }, spec: { selector: { app: 'listed' }, ports: [{ port: 80, targetPort: 8080 }] } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'listed-cm' }, data: { key: 'value' } },
      ],
    };
    const res = await kcm.kubectl(['apply', '-f', '-'], { input: JSON.stringify(list) });
    assert.equal(res.code, 0, res.stderr);
    assert.doesNotMatch(res.stderr, /unable to respond with a content type/);
    assert.match(res.stdout, /pod\/listed-pod created/);
    assert.match(res.stdout, /service\/listed-svc created/);
    assert.match(res.stdout, /configmap\/listed-cm created/);
    const names = await kcm.kubectlOk(['get', 'pod/listed-pod', 'service/listed-svc', 'configmap/listed-cm', '-o', 'name']);
    assert.deepEqual(names.trim().split('\n'), ['pod/listed-pod', 'service/listed-svc', 'configmap/listed-cm']);
  });

  it('rejects a Pod with an unknown field under --validate=strict (the server checks it)', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'strict-pod' }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], bogusField: true } };
    const res = await kcm.kubectl(['apply', '--validate=strict', '-f', '-'], { input: JSON.stringify(pod) });
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /strict decoding error: unknown field "spec\.bogusField"/);
    const get = await kcm.kubectl(['get', 'pod', 'strict-pod']);
    assert.notEqual(get.code, 0, 'the pod was not created');
  });

  it('rejects a List item with an unknown field under --validate=strict, which kubectl checks against the protobuf document itself', async () => {
    const list = { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'strict-cm' }, data: { k: 'v' }, bogus: 1 }] };
    const res = await kcm.kubectl(['apply', '--validate=strict', '-f', '-'], { input: JSON.stringify(list) });
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /ValidationError\(ConfigMap\): unknown field "bogus" in io\.k8s\.api\.core\.v1\.ConfigMap/);
  });
});
