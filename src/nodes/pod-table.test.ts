import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PodTable } from './pod-table.js';

test('PodTable indexes entries by node and keeps the index in step with set and delete', () => {
  const t = new PodTable<{ node: string; n: number }>();
  t.set('ns/a', { node: 'n1', n: 1 });
  t.set('ns/b', { node: 'n1', n: 2 });
  t.set('ns/c', { node: 'n2', n: 3 });
  assert.deepEqual([...t.onNode('n1')].map(([k]) => k), ['ns/a', 'ns/b']);
  assert.deepEqual([...t.onNode('n3')], []);
  // Replacing an entry under the same key moves it to its new node.
  t.set('ns/b', { node: 'n2', n: 4 });
  assert.deepEqual([...t.onNode('n1')].map(([k]) => k), ['ns/a']);
  assert.deepEqual([...t.onNode('n2')].map(([k, e]) => `${k}:${e.n}`), ['ns/c:3', 'ns/b:4']);
  assert.equal(t.delete('ns/a'), true);
  assert.equal(t.delete('ns/a'), false);
  assert.deepEqual([...t.onNode('n1')], []);
  assert.equal(t.size, 2);
  assert.deepEqual([...t.keys()].sort(), ['ns/b', 'ns/c']);
  assert.equal(t.get('ns/c')?.n, 3);
  assert.equal(t.has('ns/b'), true);
});
