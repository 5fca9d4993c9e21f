// PrioritySort: higher spec.priority first, then the pod that entered the queue earlier.
import type { Plugin, QueuedPodInfo, QueueSortPlugin } from '../../framework/interface.js';
import { podPriority } from '../../framework/types.js';

export const NAME = 'PrioritySort';

export class PrioritySort implements QueueSortPlugin {
  readonly name = NAME;

  less(a: QueuedPodInfo, b: QueuedPodInfo): boolean {
    const pa = podPriority(a.podInfo.pod);
    const pb = podPriority(b.podInfo.pod);
    return pa > pb || (pa === pb && a.timestamp < b.timestamp);
  }
}

export const factory = (): Plugin => new PrioritySort();
