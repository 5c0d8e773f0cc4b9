/**
 * ImageLocality: favours nodes that already hold the pod's images, weighted
 * by image size and by how widely the image is spread (to avoid piling pods
 * onto the one node that has it).
 */
import type { Node } from 'kubernetes-types/core/v1.js';
import { MAX_NODE_SCORE, type ScorePlugin } from '../framework.js';
import type { NodeInfo } from '../node-info.js';

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

/** A node object's images by normalized name (objects from informers are never changed in place, so kept per object). */
const imagesOfNode = new WeakMap<Node, Map<string, number>>();

function nodeImages(node: Node | undefined): Map<string, number> {
  if (!node) return new Map();
  let out = imagesOfNode.get(node);
  if (out) return out;
  out = new Map<string, number>();
  for (const img of node.status?.images ?? []) {
    for (const n of img.names ?? []) out.set(normalizedImageName(n), img.sizeBytes ?? 0);
  }
  imagesOfNode.set(node, out);
  return out;
}

const STATE_KEY = 'ImageLocality/spread';

interface ImageState {
  images: Map<string, Map<string, number>>; // node -> image -> size
  numNodesWithImage: Map<string, number>;
  totalNodes: number;
  /** The node objects it was made from, in list order. */
  nodeObjects: (Node | undefined)[];
}

/**
 * The images of a snapshot's node list. The scheduler cache makes a new list whenever a node changes (pods
 * change NodeInfos, not the list or their nodes), so a list's state holds until then, as upstream keeps image
 * states in its cache instead of going over every node's images in each cycle.
 */
const stateOfNodes = new WeakMap<readonly NodeInfo[], ImageState>();

function imageState(nodes: readonly NodeInfo[]): ImageState {
  let state = stateOfNodes.get(nodes);
  // A node updated in place (a NodeInfo given a new object without a new list) makes the state again.
  if (state && state.nodeObjects.length === nodes.length && nodes.every((info, i) => state!.nodeObjects[i] === info.node)) return state;
  const images = new Map<string, Map<string, number>>();
  const numNodesWithImage = new Map<string, number>();
  for (const info of nodes) {
    const m = nodeImages(info.node);
    images.set(info.node?.metadata?.name ?? '', m);
    for (const k of m.keys()) numNodesWithImage.set(k, (numNodesWithImage.get(k) ?? 0) + 1);
  }
  state = { images, numNodesWithImage, totalNodes: nodes.length, nodeObjects: nodes.map((info) => info.node) };
  stateOfNodes.set(nodes, state);
  return state;
}

/** A cycle's state: the node list's images and the pod's image names (normalized once, not per node). */
interface CycleState {
  nodes: ImageState;
  podImages: string[];
  /** Containers with or without an image: the threshold scales with all of them, as upstream's. */
  containers: number;
}

export const imageLocality: ScorePlugin = {
  name: 'ImageLocality',
  preScore(ctx) {
    const containers = [...(ctx.pod.spec?.initContainers ?? []), ...(ctx.pod.spec?.containers ?? [])];
    const podImages = containers.flatMap((c) => (c.image ? [normalizedImageName(c.image)] : []));
    const state: CycleState = { nodes: imageState(ctx.snapshot.nodes), podImages, containers: containers.length };
    ctx.state.set(STATE_KEY, state);
    return undefined;
  },
  score(ctx, info) {
    const cycle = ctx.state.get(STATE_KEY) as CycleState | undefined;
    if (!cycle || cycle.nodes.totalNodes === 0) return 0;
    const state = cycle.nodes;
    const have = state.images.get(info.node?.metadata?.name ?? '');
    let sum = 0;
    if (have) {
      for (const name of cycle.podImages) {
        const size = have.get(name);
        if (size === undefined) continue;
        sum += Math.trunc((size * (state.numNodesWithImage.get(name) ?? 0)) / state.totalNodes);
      }
    }
    const maxThreshold = MAX_CONTAINER_THRESHOLD * Math.max(1, cycle.containers);
    const clamped = Math.min(Math.max(sum, MIN_THRESHOLD), maxThreshold);
    return Math.trunc((MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) / (maxThreshold - MIN_THRESHOLD));
  },
};
