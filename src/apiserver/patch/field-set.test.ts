import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldSetOf, newValueLookup, pathKey, valueAt } from './field-set.js';
import { schemaForKind } from './schema.js';
import type { JsonObject } from './json-value.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', labels: { app: 'web', tier: 'fe' }, finalizers: ['a/b'] },
  spec: {
    containers: [
      { name: 'app', image: 'nginx:1', ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 53, protocol: 'UDP' }], args: ['-v', '2'] },
      { name: 'side', image: 'busybox', env: [{ name: 'A', value: '1' }] },
    ],
    nodeSelector: { disk: 'ssd' },
    tolerations: [{ key: 'k', operator: 'Exists' }],
  },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
} as unknown as JsonObject;

describe('field paths', () => {
  it('resolves every path of an object with a memoised lookup exactly as valueAt does', () => {
    const schema = schemaForKind({ group: '', version: 'v1', kind: 'Pod' })!;
    const paths = [...fieldSetOf(pod, schema, true)];
    assert.ok(paths.length > 20);
    const at = newValueLookup(pod);
    for (const p of paths) {
      assert.deepEqual(at(p), valueAt(pod, p), p);
      assert.notEqual(at(p), undefined, p);
    }
  });

  it('gives undefined for paths that are absent, below absent parents, or below scalars', () => {
    const at = newValueLookup(pod);
    for (const tokens of [['f:spec', 'f:hostname'], ['f:spec', 'f:affinity', 'f:nodeAffinity'], ['f:spec', 'f:containers', 'k:{"name":"nope"}', 'f:image'], ['f:status', 'f:phase', 'f:x']]) {
      assert.equal(at(pathKey(tokens)), undefined);
      assert.equal(valueAt(pod, pathKey(tokens)), undefined);
    }
    assert.equal(newValueLookup(undefined)(pathKey(['f:spec'])), undefined);
  });
});
