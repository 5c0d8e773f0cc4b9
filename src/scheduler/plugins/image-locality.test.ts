import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from 'kubernetes-types/core/v1.js';
import { setNode } from '../node-info.js';
import { cycle, makeNode, makePod, nodeInfos } from '../testing.js';
import { imageLocality } from './image-locality.js';

const MB = 1024 * 1024;

function withImages(name: string, images: Array<[string, number]>): Node {
  const n = makeNode(name);
  return { ...n, status: { ...n.status, images: images.map(([img, mb]) => ({ names: [img], sizeBytes: mb * MB })) } };
}

function scores(infos: ReturnType<typeof nodeInfos>, image: string): number[] {
  const ctx = cycle(makePod('p', { spec: { containers: [{ name: 'c', image }] } }), infos);
  imageLocality.preScore!(ctx, infos);
  return infos.map((info) => imageLocality.score(ctx, info) as number);
}

describe('ImageLocality', () => {
  it("scores by the image's size times its spread, from 23 MB to 1000 MB per container, with :latest implied", () => {
    const infos = nodeInfos([withImages('a', [['docker.io/library/nginx:latest', 500]]), withImages('b', [['docker.io/library/nginx:latest', 500]]), withImages('c', [])]);
    // 500 MB on 2 of 3 nodes: 333 MB, (333 - 23) / (1000 - 23) of 100.
    assert.deepEqual(scores(infos, 'docker.io/library/nginx'), [31, 31, 0]);
    assert.deepEqual(scores(infos, 'redis'), [0, 0, 0]);
  });

  it('sees a node whose images changed, in a new node list or in the same one', () => {
    const infos = nodeInfos([withImages('a', [['app:1', 900]]), withImages('b', [])]);
    const ctx = cycle(makePod('p', { spec: { containers: [{ name: 'c', image: 'app:1' }] } }), infos);
    imageLocality.preScore!(ctx, infos);
    assert.deepEqual(infos.map((i) => imageLocality.score(ctx, i)), [43, 0]);
    // The same list (the cache's snapshot between node changes) again: the same answer.
    const again = { ...ctx, state: new Map() };
    imageLocality.preScore!(again, infos);
    assert.deepEqual(infos.map((i) => imageLocality.score(again, i)), [43, 0]);
    // Node b pulls the image: given a new object in place, the state is made again.
    setNode(infos[1]!, withImages('b', [['app:1', 900]]));
    const after = { ...ctx, state: new Map() };
    imageLocality.preScore!(after, infos);
    assert.deepEqual(infos.map((i) => imageLocality.score(after, i)), [89, 89]);
  });
});
