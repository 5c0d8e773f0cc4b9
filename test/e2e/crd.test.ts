/**
 * CustomResourceDefinitions with the real kubectl against `kcm apiserver`:
 * apply a CRD, wait for Established, then use its custom resources as a user
 * would (tables with printer columns, validation errors, scale, status,
 * explain, api-resources), and delete the CRD with its objects.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startApiServerProcess, waitFor, type KcmProcess } from './harness.js';

let kcm: KcmProcess;

before(async () => {
  kcm = await startApiServerProcess();
});
after(async () => {
  await kcm?.stop();
});

const crdYaml = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wg]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size:
                type: string
                description: How big the widget is.
                enum: [S, M, L]
              replicas:
                type: integer
                minimum: 0
                default: 1
          status:
            type: object
            properties:
              replicas:
                type: integer
              phase:
                type: string
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Size
      type: string
      jsonPath: .spec.size
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Phase
      type: string
      jsonPath: .status.phase
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
`;

const widget = (name: string, spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'default' }, spec });

describe('custom resources with kubectl', () => {
  it('applies a CRD and serves its resource once Established', async () => {
    const out = await kcm.kubectlOk(['apply', '-f', '-'], { input: crdYaml });
    assert.match(out, /customresourcedefinition.apiextensions.k8s.io\/widgets.example.com created/);
    await kcm.kubectlOk(['wait', '--for', 'condition=Established', 'crd/widgets.example.com', '--timeout=10s']);
    const empty = await kcm.kubectl(['get', 'widgets']);
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stderr, /No resources found in default namespace/);
    const crds = (await kcm.kubectlOk(['get', 'crd', 'widgets.example.com'])).trim().split('\n');
    assert.match(crds[0]!, /^NAME\s+CREATED AT$/);
    assert.match(crds[1]!, /^widgets\.example\.com\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('lists the CRD in api-resources', async () => {
    const out = await kcm.kubectlOk(['api-resources', '--api-group=example.com']);
    assert.match(out, /^widgets\s+wg\s+example\.com\/v1\s+true\s+Widget\s*$/m);
  });

  it('creates a custom resource and prints its printer columns', async () => {
    await kcm.kubectlOk(['apply', '-f', '-'], { input: widget('w1', { size: 'M' }) });
    const out = await kcm.kubectlOk(['get', 'widgets']);
    const [header, row] = out.trim().split('\n');
    assert.match(header!, /^NAME\s+SIZE\s+REPLICAS\s+PHASE\s+AGE$/);
    // A column whose path finds nothing is an empty cell, as kube-apiserver's CRD table convertor leaves it.
    assert.match(row!, /^w1\s+M\s+1\s+\d+s$/);
  });

  it('refuses an invalid custom resource naming the field', async () => {
    const r = await kcm.kubectl(['apply', '-f', '-'], { input: widget('bad', { size: 'XL', replicas: 'two' }) });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec\.replicas/);
    assert.match(r.stderr, /spec\.size/);
    assert.match(r.stderr, /The Widget "bad" is invalid/);
  });

  it('scales a custom resource through its scale subresource', async () => {
    const out = await kcm.kubectlOk(['scale', 'widget/w1', '--replicas=3']);
    assert.match(out, /widget.example.com\/w1 scaled/);
    assert.equal(await kcm.kubectlOk(['get', 'wg', 'w1', '-o', 'jsonpath={.spec.replicas}']), '3');
  });

  it('updates status only through the status subresource', async () => {
    await kcm.kubectlOk(['patch', 'widget', 'w1', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Ready","replicas":3}}']);
    await kcm.kubectlOk(['patch', 'widget', 'w1', '--type=merge', '-p', '{"status":{"phase":"Ignored"}}']);
    assert.equal(await kcm.kubectlOk(['get', 'widget', 'w1', '-o', 'jsonpath={.status.phase}']), 'Ready');
  });

  it('explains the custom resource from its schema', async () => {
    const out = await kcm.kubectlOk(['explain', 'widget.spec.size']);
    assert.match(out, /How big the widget is/);
  });

  it('deletes the objects with the CRD', async () => {
    await kcm.kubectlOk(['apply', '-f', '-'], { input: widget('w2', { size: 'S' }) });
    await kcm.kubectlOk(['delete', 'crd', 'widgets.example.com', '--timeout=20s']);
    await waitFor(async () => (await kcm.api('GET', '/apis/example.com/v1')).status === 404 || undefined, 10_000, 'discovery to drop the group');
    const r = await kcm.kubectl(['get', 'widgets']);
    assert.notEqual(r.code, 0);
    // kubectl's discovery cache may still name the resource: then the list itself is 404, as with kube-apiserver.
    assert.match(r.stderr, /the server doesn't have a resource type "widgets"|Unable to list "example.com\/v1, Resource=widgets": the server could not find the requested resource/);
    // Re-created, the CRD has no objects left over.
    await kcm.kubectlOk(['apply', '-f', '-'], { input: crdYaml });
    await kcm.kubectlOk(['wait', '--for', 'condition=Established', 'crd/widgets.example.com', '--timeout=10s']);
    const list = (await kcm.api('GET', '/apis/example.com/v1/namespaces/default/widgets')).json as { items: unknown[] };
    assert.deepEqual(list.items, []);
  });
});
