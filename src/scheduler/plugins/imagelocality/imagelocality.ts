// ImageLocality: prefers nodes that already have the pod's images, weighing each image's size by
// the share of nodes that have it (so a ubiquitous image does not pull every pod to one node).
import type { Pod } from '../../../api/types.js';
import { CycleState, ReadOnlyState, StateKey } from '../../framework/cycle-state.js';
import { MAX_NODE_SCORE, type Handle, type Plugin, type PreScorePlugin, type ScorePlugin } from '../../framework/interface.js';
import { Code, Status, type Result } from '../../framework/status.js';
import type { ImageState, NodeInfo } from '../../framework/types.js';

export const NAME = 'ImageLocality';

const mb = 1024 * 1024;
/** Below this total, images score 0 (they are quick to pull anyway). */
export const MIN_THRESHOLD = 23 * mb;
/** Per container, above this total the score is 100. */
export const MAX_CONTAINER_THRESHOLD = 1000 * mb;

/** Docker's default tag: "nginx" and "nginx:latest" are the same image. */
export function normalizedImageName(name: string): string {
  return name.lastIndexOf(':') <= name.lastIndexOf('/') ? `${name}:latest` : name;
}

export function scaledImageScore(state: ImageState, totalNumNodes: number): number {
  return Math.trunc(state.size * (state.nodes.size / totalNumNodes));
}

export function calculatePriority(sumScores: number, numContainers: number): number {
  const maxThreshold = MAX_CONTAINER_THRESHOLD * numContainers;
  const clamped = Math.min(Math.max(sumScores, MIN_THRESHOLD), maxThreshold);
  return Math.trunc((MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) / (maxThreshold - MIN_THRESHOLD));
}

interface PreScoreState {
  /** The pod's images, normalized, one entry per container. */
  images: string[];
  totalNumNodes: number;
}
const preScoreKey = new StateKey<ReadOnlyState<PreScoreState>>(`PreScore${NAME}`);

const podImages = (pod: Pod) => [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => normalizedImageName(c.image ?? ''));

export class ImageLocality implements PreScorePlugin, ScorePlugin {
  readonly name = NAME;

  constructor(private readonly handle: Handle) {}

  /** Skip when no candidate node has any of the images: every score would be 0. */
  preScore(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Result {
    const images = podImages(pod);
    if (!nodes.some((n) => n.imageStates.size > 0 && images.some((i) => n.imageStates.has(i)))) return Status.of(Code.Skip);
    state.write(preScoreKey, new ReadOnlyState({ images, totalNumNodes: this.handle.snapshot().list().length }));
    return undefined;
  }

  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): number {
    const s = state.read(preScoreKey)?.value ?? { images: podImages(pod), totalNumNodes: this.handle.snapshot().list().length };
    if (nodeInfo.imageStates.size === 0) return 0;
    let sum = 0;
    for (const image of s.images) {
      const st = nodeInfo.imageStates.get(image);
      if (st) sum += scaledImageScore(st, s.totalNumNodes);
    }
    return calculatePriority(sum, s.images.length);
  }
}

export const factory = (_args: unknown, handle: Handle): Plugin => new ImageLocality(handle);
