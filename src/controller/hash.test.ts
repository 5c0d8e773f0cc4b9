import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, computeHash, newFnv32a, safeEncodeString } from './hash.js';

const template = {
  metadata: { labels: { app: 'web', tier: 'fe' } },
  spec: { containers: [{ name: 'c', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] },
};

describe('computeHash', () => {
  it('matches the FNV-32a reference values', () => {
    const h = newFnv32a();
    assert.equal(h.sum32(), 0x811c9dc5);
    h.write(new TextEncoder().encode('a'));
    assert.equal(h.sum32(), 0xe40c292c);
    const h2 = newFnv32a();
    h2.write(new TextEncoder().encode('foobar'));
    assert.equal(h2.sum32(), 0xbf9cf968);
  });

  it('encodes with the safe alphabet as apimachinery does', () => {
    // '0' is code 48: 48 % 27 = 21 -> '4'; '9' is 57: 57 % 27 = 3 -> 'f'.
    assert.equal(safeEncodeString('09'), '4f');
    assert.match(computeHash(template), /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  });

  it('does not depend on key order or undefined members', () => {
    const reordered = {
      spec: { containers: [{ ports: [{ containerPort: 80 }], image: 'nginx:1.25', name: 'c', args: undefined }] },
      metadata: { labels: { tier: 'fe', app: 'web' } },
    };
    assert.equal(computeHash(reordered), computeHash(template));
    assert.equal(canonicalJson({ b: 1, a: [1, { d: 2, c: 3 }] }), '{"a":[1,{"c":3,"d":2}],"b":1}');
  });

  it('changes with any change of the template', () => {
    const base = computeHash(template);
    const variants = [
      { ...template, metadata: { labels: { app: 'web', tier: 'be' } } },
      { ...template, spec: { containers: [{ name: 'c', image: 'nginx:1.26', ports: [{ containerPort: 80 }] }] } },
      { ...template, spec: { containers: [{ name: 'c', image: 'nginx:1.25', ports: [{ containerPort: 81 }] }] } },
      { ...template, spec: { ...template.spec, restartPolicy: 'Always' } },
    ];
    for (const v of variants) assert.notEqual(computeHash(v), base);
  });

  it('mixes in the collision count', () => {
    const none = computeHash(template);
    const zero = computeHash(template, 0);
    const one = computeHash(template, 1);
    assert.notEqual(zero, none);
    assert.notEqual(one, zero);
    assert.equal(computeHash(template, 1), one);
    assert.equal(computeHash(template, null), none);
  });
});
