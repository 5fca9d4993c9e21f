import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../api/types.js';
import {
  evictionMessage,
  makeSignalObservations,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  nodeConditionsOf,
  rankDiskPressure,
  rankMemoryPressure,
  rankPIDPressure,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
} from './helpers.js';
import { parseThresholdConfig, type EvictionConfigMaps } from './thresholds.js';
import type { PodUsage } from './types.js';

const Mi = 1024 * 1024;
const thresholds = (m: Partial<EvictionConfigMaps>) => parseThresholdConfig({ evictionHard: {}, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {}, ...m });

function pod(name: string, opts: { memory?: string; storage?: string; priority?: number; containers?: string[] } = {}): Pod {
  const requests = { ...(opts.memory ? { memory: opts.memory } : {}), ...(opts.storage ? { 'ephemeral-storage': opts.storage } : {}) };
  return {
    metadata: { name, namespace: 'default', uid: name },
    spec: {
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
      containers: (opts.containers ?? ['c']).map((c) => ({ name: c, image: 'busybox', resources: Object.keys(requests).length ? { requests } : {} })),
    },
  };
}

describe('signal observations', () => {
  it('reads available and capacity per signal', () => {
    const obs = makeSignalObservations({
      time: 0,
      memory: { capacityBytes: 1000 * Mi, workingSetBytes: 900 * Mi },
      allocatableMemory: { capacityBytes: 800 * Mi, workingSetBytes: 1000 * Mi },
      nodeFs: { availableBytes: 5, capacityBytes: 10, inodesFree: 1, inodes: 100 },
      imageFs: { availableBytes: 7, capacityBytes: 10 },
      pids: { maxPID: 4194304, running: 4194000 },
      pods: [],
    });
    assert.deepEqual(Object.fromEntries(obs), {
      'memory.available': { available: 100 * Mi, capacity: 1000 * Mi },
      // Over budget reads as nothing left, not a negative amount.
      'allocatableMemory.available': { available: 0, capacity: 800 * Mi },
      'nodefs.available': { available: 5, capacity: 10 },
      'nodefs.inodesFree': { available: 1, capacity: 100 },
      'imagefs.available': { available: 7, capacity: 10 },
      'pid.available': { available: 304, capacity: 4194304 },
    });
  });
});

describe('thresholds met', () => {
  const ts = thresholds({ evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%' }, evictionMinimumReclaim: { 'memory.available': '50Mi' } });
  const cases: { name: string; memory: number; nodefs: number; minReclaim: boolean; want: string[] }[] = [
    { name: 'plenty', memory: 500 * Mi, nodefs: 50, minReclaim: false, want: [] },
    { name: 'exactly at the threshold is not below it', memory: 100 * Mi, nodefs: 10, minReclaim: false, want: [] },
    { name: 'below both', memory: 99 * Mi, nodefs: 9, minReclaim: false, want: ['memory.available', 'nodefs.available'] },
    { name: 'above the threshold but within the minimum reclaim', memory: 120 * Mi, nodefs: 50, minReclaim: true, want: ['memory.available'] },
    { name: 'past the minimum reclaim', memory: 151 * Mi, nodefs: 50, minReclaim: true, want: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const obs = new Map([
        ['memory.available', { available: c.memory, capacity: 1000 * Mi }],
        ['nodefs.available', { available: c.nodefs, capacity: 100 }],
      ] as const);
      assert.deepEqual(
        thresholdsMet(ts, obs, c.minReclaim).map((t) => t.signal),
        c.want,
      );
    });
  }

  it('a soft threshold counts once met for its grace period', () => {
    const [soft] = thresholds({ evictionSoft: { 'memory.available': '1Gi' }, evictionSoftGracePeriod: { 'memory.available': '30s' } });
    const first = thresholdsFirstObservedAt([soft!], new Map(), 1000);
    assert.deepEqual(thresholdsMetGracePeriod(first, 1000 + 29_999), []);
    const later = thresholdsFirstObservedAt([soft!], new Map([...first].map(([k, v]) => [k, v.at])), 1000 + 20_000);
    assert.equal([...later.values()][0]!.at, 1000);
    assert.equal(thresholdsMetGracePeriod(later, 1000 + 30_000).length, 1);
  });

  it('a condition stays for the transition period after it was last observed', () => {
    const ts2 = thresholds({ evictionHard: { 'memory.available': '1Mi', 'nodefs.inodesFree': '1', 'imagefs.available': '1', 'pid.available': '1' } });
    assert.deepEqual(nodeConditionsOf(ts2), ['MemoryPressure', 'DiskPressure', 'PIDPressure']);
    const seen = nodeConditionsLastObservedAt(['MemoryPressure'], new Map([['DiskPressure', 0]]), 60_000);
    assert.deepEqual(nodeConditionsObservedSince(seen, 300_000, 60_000).sort(), ['DiskPressure', 'MemoryPressure']);
    assert.deepEqual(nodeConditionsObservedSince(seen, 300_000, 300_000), ['MemoryPressure']);
    assert.deepEqual(nodeConditionsObservedSince(seen, 300_000, 360_000), []);
  });
});

describe('ranking', () => {
  it('memory: over requests first, then lower priority, then most above requests; no stats first of all', () => {
    const pods = [
      pod('guaranteed-under', { memory: '100Mi' }),
      pod('burstable-over', { memory: '50Mi' }),
      pod('besteffort-small'),
      pod('besteffort-big'),
      pod('high-priority-over', { priority: 1000 }),
      pod('no-stats', { memory: '1Gi' }),
    ];
    const usage: Record<string, number> = { 'guaranteed-under': 80 * Mi, 'burstable-over': 150 * Mi, 'besteffort-small': 10 * Mi, 'besteffort-big': 120 * Mi, 'high-priority-over': 500 * Mi };
    const stats = (p: Pod): PodUsage | undefined => (usage[p.metadata!.name!] !== undefined ? { uid: p.metadata!.uid!, containers: [], memory: usage[p.metadata!.name!] } : undefined);
    assert.deepEqual(
      rankMemoryPressure(pods, stats).map((p) => p.metadata!.name),
      ['no-stats', 'besteffort-big', 'burstable-over', 'besteffort-small', 'high-priority-over', 'guaranteed-under'],
    );
  });

  it('disk: by usage above the ephemeral-storage request; pid: by processes', () => {
    const pods = [pod('small'), pod('requested', { storage: '1Gi' }), pod('big')];
    const disk: Record<string, number> = { small: 10 * Mi, requested: 500 * Mi, big: 300 * Mi };
    const stats = (p: Pod): PodUsage => ({ uid: p.metadata!.uid!, containers: [], disk: disk[p.metadata!.name!], inodes: disk[p.metadata!.name!], processes: disk[p.metadata!.name!] });
    assert.deepEqual(
      rankDiskPressure(pods, stats, 'ephemeral-storage').map((p) => p.metadata!.name),
      ['big', 'small', 'requested'],
    );
    assert.deepEqual(
      rankPIDPressure(pods, stats).map((p) => p.metadata!.name),
      ['requested', 'big', 'small'],
    );
  });
});

describe('eviction message', () => {
  const ts = thresholds({ evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%' } });
  const obs = new Map([
    ['memory.available', { available: 12 * 1024, capacity: 1000 * Mi }],
    ['nodefs.available', { available: 1000, capacity: 100 * 1024 * Mi }],
  ] as const);
  const cases: { name: string; resource: string; pod: Pod; stats?: PodUsage; want: string }[] = [
    {
      name: 'memory, the container above its request named',
      resource: 'memory',
      pod: pod('p', { containers: ['x', 'y'], memory: '10Mi' }),
      stats: { uid: 'p', containers: [{ name: 'x', memory: 20 * Mi }, { name: 'y', memory: 5 * Mi }] },
      want: 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 12Ki. Container x was using 20Mi, request is 10Mi, has larger consumption of memory. ',
    },
    {
      name: 'memory, no request is 0',
      resource: 'memory',
      pod: pod('p', { containers: ['x'] }),
      stats: { uid: 'p', containers: [{ name: 'x', memory: 20 * Mi + 1 }] },
      want: 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 12Ki. Container x was using 20971521, request is 0, has larger consumption of memory. ',
    },
    {
      name: 'without stats, only the node part',
      resource: 'memory',
      pod: pod('p'),
      want: 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 12Ki. ',
    },
    {
      name: "ephemeral-storage, a percentage threshold as bytes; under 1024 bytes BinarySI prints as DecimalSI (1k)",
      resource: 'ephemeral-storage',
      pod: pod('p', { containers: ['w'] }),
      stats: { uid: 'p', containers: [{ name: 'w', disk: 2 * Mi }] },
      want: 'The node was low on resource: ephemeral-storage. Threshold quantity: 10737418400, available: 1k. Container w was using 2Mi, request is 0, has larger consumption of ephemeral-storage. ',
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.equal(evictionMessage(c.resource, c.pod, c.stats, ts, obs), c.want));
  }
});
