import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deepCopy } from './deep-copy.js';

test('deepCopy copies plain objects and arrays deeply', () => {
  const src = Object.freeze({ a: 1, b: Object.freeze({ c: [1, { d: 'x' }], e: null }), f: undefined as unknown, g: true });
  const c = deepCopy(src);
  assert.deepEqual(c, src);
  assert.ok(Object.hasOwn(c, 'f'), 'undefined members are kept, as structuredClone keeps them');
  assert.notEqual(c.b, src.b);
  assert.notEqual(c.b.c, src.b.c);
  assert.notEqual(c.b.c[1], src.b.c[1]);
  assert.ok(!Object.isFrozen(c) && !Object.isFrozen(c.b), 'the copy is writable');
  (c.b.c[1] as { d: string }).d = 'y';
  assert.equal((src.b.c[1] as { d: string }).d, 'x');
});

test('deepCopy gives what structuredClone gives for members that are not plain JSON', () => {
  const bytes = new Uint8Array([1, 2, 3]);
  const src = { m: new Map([['k', { v: 1 }]]), bytes, list: [new Date(0)] };
  const c = deepCopy(src);
  assert.ok(c.m instanceof Map && c.m !== src.m);
  assert.deepEqual(c.m.get('k'), { v: 1 });
  assert.ok(c.bytes instanceof Uint8Array && c.bytes !== bytes);
  assert.deepEqual([...c.bytes], [1, 2, 3]);
  assert.ok(c.list[0] instanceof Date && c.list[0].getTime() === 0);
  assert.equal(deepCopy(null), null);
  assert.equal(deepCopy('s'), 's');
  assert.equal(deepCopy(undefined), undefined);
});

test('deepCopy keeps a decoded "__proto__" member as a member', () => {
  const src = JSON.parse('{"metadata":{"__proto__":{"polluted":true},"name":"x"}}') as { metadata: Record<string, unknown> };
  const c = deepCopy(src);
  assert.equal(Object.getPrototypeOf(c.metadata), Object.prototype);
  assert.deepEqual(Object.keys(c.metadata), ['__proto__', 'name']);
  assert.equal((c.metadata as { polluted?: boolean }).polluted, undefined);
  assert.deepEqual(JSON.stringify(c), JSON.stringify(src));
});
