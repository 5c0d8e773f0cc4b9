import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateJsonPath, getPath, parseJsonPath, setPath } from './json-path.js';

const obj = {
  metadata: { name: 'a', labels: { 'app.kubernetes.io/name': 'web' } },
  spec: { replicas: 2, items: [{ n: 1 }, { n: 2 }] },
  status: { conditions: [{ type: 'Synced', status: 'False' }, { type: 'Ready', status: 'True' }] },
};

describe('printer-column JSONPath', () => {
  it('reads simple dotted paths', () => {
    assert.equal(getPath(obj, '.spec.replicas'), 2);
    assert.equal(getPath(obj, '.spec.missing'), undefined);
  });

  it('reads indexes, wildcards and quoted keys', () => {
    assert.equal(getPath(obj, '.spec.items[1].n'), 2);
    assert.deepEqual(evaluateJsonPath(obj, parseJsonPath('.spec.items[*].n')), [1, 2]);
    assert.equal(getPath(obj, ".metadata.labels['app.kubernetes.io/name']"), 'web');
  });

  it('filters list items by a field value', () => {
    assert.equal(getPath(obj, '.status.conditions[?(@.type=="Ready")].status'), 'True');
    assert.deepEqual(evaluateJsonPath(obj, parseJsonPath(".status.conditions[?(@.status!='True')].type")), ['Synced']);
  });

  it('refuses syntax it does not support', () => {
    assert.throws(() => parseJsonPath('.spec..x'), /empty field name/);
    assert.throws(() => parseJsonPath('.spec[1:2]'), /unsupported/);
  });

  it('sets a value, creating the objects on the way', () => {
    const o: Record<string, unknown> = {};
    setPath(o, '.spec.scale.replicas', 4);
    assert.deepEqual(o, { spec: { scale: { replicas: 4 } } });
  });
});
