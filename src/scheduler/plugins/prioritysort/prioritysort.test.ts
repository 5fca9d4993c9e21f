import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { QueuedPodInfo } from '../../framework/interface.js';
import { PodInfo } from '../../framework/types.js';
import { makePod } from '../../testing/builders.js';
import { PrioritySort } from './prioritysort.js';

const queued = (priority: number | undefined, timestamp: number): QueuedPodInfo => {
  const b = makePod();
  if (priority !== undefined) b.priority(priority);
  return { podInfo: new PodInfo(b.obj()), timestamp, attempts: 0, unschedulablePlugins: new Set(), pendingPlugins: new Set() };
};

describe('PrioritySort', () => {
  const cases = [
    { name: 'higher priority first', a: queued(10, 2), b: queued(1, 1), want: true },
    { name: 'lower priority later', a: queued(1, 1), b: queued(10, 2), want: false },
    { name: 'equal priority: earlier first', a: queued(5, 1), b: queued(5, 2), want: true },
    { name: 'equal priority: later second', a: queued(5, 2), b: queued(5, 1), want: false },
    { name: 'unset priority is 0', a: queued(undefined, 1), b: queued(0, 2), want: true },
  ];
  for (const c of cases) it(c.name, () => assert.equal(new PrioritySort().less(c.a, c.b), c.want));
});
