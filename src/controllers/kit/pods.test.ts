import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { filterActivePods, podDeletionCost, POD_DELETION_COST, sortActivePods, sortActivePodsWithRanks } from './pods.js';

interface PodSpec {
  name: string;
  node?: string;
  phase?: string;
  ready?: string; // Ready=True since
  restarts?: number;
  created?: string;
  cost?: string;
  uid?: string;
  deleting?: boolean;
}

function pod(s: PodSpec): Pod {
  return {
    metadata: {
      name: s.name,
      uid: s.uid ?? s.name,
      creationTimestamp: s.created,
      deletionTimestamp: s.deleting ? '2026-01-01T00:00:00Z' : undefined,
      annotations: s.cost !== undefined ? { [POD_DELETION_COST]: s.cost } : undefined,
    },
    spec: { nodeName: s.node, containers: [] },
    status: {
      phase: s.phase,
      conditions: s.ready ? [{ type: 'Ready', status: 'True', lastTransitionTime: s.ready }] : [{ type: 'Ready', status: 'False' }],
      containerStatuses: [{ name: 'c', restartCount: s.restarts ?? 0, image: 'i', imageID: '', ready: !!s.ready }],
    },
  } as Pod;
}

const names = (pods: Pod[]) => pods.map((p) => p.metadata!.name);
const t = (h: number) => new Date(Date.UTC(2026, 0, 1, h)).toISOString().replace('.000', '');

describe('filterActivePods', () => {
  it('drops Succeeded, Failed and deleting pods', () => {
    const pods = [pod({ name: 'run', phase: 'Running' }), pod({ name: 'ok', phase: 'Succeeded' }), pod({ name: 'bad', phase: 'Failed' }), pod({ name: 'del', phase: 'Running', deleting: true }), pod({ name: 'pend', phase: 'Pending' })];
    assert.deepEqual(names(filterActivePods(pods)), ['run', 'pend']);
  });
});

describe('ActivePods order (first to delete first)', () => {
  // Each case lists pods already in the expected order; the sort gets them reversed and shuffled.
  const cases: [string, PodSpec[]][] = [
    ['unassigned < assigned', [{ name: 'a' }, { name: 'b', node: 'n' }]],
    ['Pending < Unknown < Running', [{ name: 'p', node: 'n', phase: 'Pending' }, { name: 'u', node: 'n', phase: 'Unknown' }, { name: 'r', node: 'n', phase: 'Running' }]],
    ['not ready < ready', [{ name: 'nr', node: 'n', phase: 'Running' }, { name: 'r', node: 'n', phase: 'Running', ready: t(1) }]],
    ['ready for less time < more', [{ name: 'recent', node: 'n', phase: 'Running', ready: t(5) }, { name: 'long', node: 'n', phase: 'Running', ready: t(1) }]],
    ['more restarts < fewer', [{ name: 'many', node: 'n', phase: 'Running', restarts: 5 }, { name: 'few', node: 'n', phase: 'Running', restarts: 1 }]],
    ['no creation time < newer < older', [{ name: 'none', node: 'n' }, { name: 'new', node: 'n', created: t(5) }, { name: 'old', node: 'n', created: t(1) }]],
    [
      'the phase outranks readiness and restarts',
      [{ name: 'pending', node: 'n', phase: 'Pending', restarts: 0 }, { name: 'running', node: 'n', phase: 'Running', restarts: 9 }],
    ],
  ];
  for (const [name, specs] of cases) {
    it(name, () => {
      const want = specs.map((s) => s.name);
      assert.deepEqual(names(sortActivePods(specs.map(pod).reverse())), want);
    });
  }
});

describe('ActivePodsWithRanks order', () => {
  const now = Date.parse(t(12));
  const cases: [string, { spec: PodSpec; rank: number }[]][] = [
    ['lower deletion cost < higher', [{ spec: { name: 'cheap', node: 'n', phase: 'Running', cost: '-5' }, rank: 0 }, { spec: { name: 'dear', node: 'n', phase: 'Running', cost: '10' }, rank: 0 }]],
    ['doubled up (higher rank) < not', [{ spec: { name: 'doubled', node: 'n', phase: 'Running' }, rank: 2 }, { spec: { name: 'alone', node: 'm', phase: 'Running' }, rank: 0 }]],
    ['deletion cost outranks rank', [{ spec: { name: 'cheap', node: 'n', cost: '1' }, rank: 0 }, { spec: { name: 'dear', node: 'n', cost: '2' }, rank: 5 }]],
    // 11 h and 10 h old are in the same log2 bucket of nanoseconds: the lower UID goes first.
    [
      'creation times in one log2 bucket tie on UID',
      [{ spec: { name: 'older', node: 'n', created: t(1), uid: 'a' }, rank: 0 }, { spec: { name: 'newer', node: 'n', created: t(2), uid: 'b' }, rank: 0 }],
    ],
    ['different log2 buckets: newer < older', [{ spec: { name: 'new', node: 'n', created: t(11), uid: 'z' }, rank: 0 }, { spec: { name: 'old', node: 'n', created: t(1), uid: 'a' }, rank: 0 }]],
  ];
  for (const [name, entries] of cases) {
    it(name, () => {
      const rev = [...entries].reverse();
      const sorted = sortActivePodsWithRanks(rev.map((e) => pod(e.spec)), rev.map((e) => e.rank), now);
      assert.deepEqual(names(sorted), entries.map((e) => e.spec.name));
    });
  }
});

describe('podDeletionCost', () => {
  const cases: [string | undefined, number][] = [
    [undefined, 0],
    ['100', 100],
    ['-7', -7],
    ['0', 0],
    ['+1', 0],
    ['007', 0],
    ['2147483648', 0],
    ['x', 0],
  ];
  for (const [value, want] of cases) it(`${value} → ${want}`, () => assert.equal(podDeletionCost(pod({ name: 'p', cost: value })), want));
});
