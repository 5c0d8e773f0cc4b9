/**
 * ImageLocality: favours nodes that already hold the pod's images, weighted
 * by image size and by how widely the image is spread (to avoid piling pods
 * onto the one node that has it).
 */
import type { Node } from 'kubernetes-types/core/v1.js';
import { MAX_NODE_SCORE, type ScorePlugin } from '../framework.js';

const MB = 1024 * 1024;
const MIN_THRESHOLD = 23 * MB;
const MAX_CONTAINER_THRESHOLD = 1000 * MB;

/** Adds `:latest` to an image without tag or digest, as the kubelet reports it. */
export function normalizedImageName(name: string): string {
  const lastSlash = name.lastIndexOf('/');
  const last = name.slice(lastSlash + 1);
  if (!last.includes(':') && !name.includes('@')) return `${name}:latest`;
  return name;
}

function nodeImages(node: Node | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const img of node?.status?.images ?? []) {
    for (const n of img.names ?? []) out.set(normalizedImageName(n), img.sizeBytes ?? 0);
  }
  return out;
}

const STATE_KEY = 'ImageLocality/spread';

interface ImageState {
  images: Map<string, Map<string, number>>; // node -> image -> size
  numNodesWithImage: Map<string, number>;
  totalNodes: number;
}

export const imageLocality: ScorePlugin = {
  name: 'ImageLocality',
  preScore(ctx) {
    const images = new Map<string, Map<string, number>>();
    const numNodesWithImage = new Map<string, number>();
    for (const info of ctx.snapshot.nodes) {
      const m = nodeImages(info.node);
      images.set(info.node?.metadata?.name ?? '', m);
      for (const k of m.keys()) numNodesWithImage.set(k, (numNodesWithImage.get(k) ?? 0) + 1);
    }
    const state: ImageState = { images, numNodesWithImage, totalNodes: ctx.snapshot.nodes.length };
    ctx.state.set(STATE_KEY, state);
    return undefined;
  },
  score(ctx, info) {
    const state = ctx.state.get(STATE_KEY) as ImageState | undefined;
    if (!state || state.totalNodes === 0) return 0;
    const have = state.images.get(info.node?.metadata?.name ?? '') ?? new Map<string, number>();
    const containers = [...(ctx.pod.spec?.initContainers ?? []), ...(ctx.pod.spec?.containers ?? [])];
    let sum = 0;
    for (const c of containers) {
      if (!c.image) continue;
      const name = normalizedImageName(c.image);
      const size = have.get(name);
      if (size === undefined) continue;
      sum += Math.trunc((size * (state.numNodesWithImage.get(name) ?? 0)) / state.totalNodes);
    }
    const maxThreshold = MAX_CONTAINER_THRESHOLD * Math.max(1, containers.length);
    const clamped = Math.min(Math.max(sum, MIN_THRESHOLD), maxThreshold);
    return Math.trunc((MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) / (maxThreshold - MIN_THRESHOLD));
  },
};
