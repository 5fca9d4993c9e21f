import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../api/types.js';
import { containerOOMScoreAdjust, containerResources, milliCPUToQuota, milliCPUToShares, podMemoryLimit, sandboxOverhead, sandboxResources } from './resources.js';

describe('milliCPUToShares', () => {
  for (const [milli, shares] of [
    [0, 2],
    [1, 2],
    [1, 2],
    [2, 2],
    [100, 102],
    [250, 256],
    [1000, 1024],
    [500000, 262144],
  ] as const) {
    it(`${milli}m → ${shares}`, () => assert.equal(milliCPUToShares(milli), shares));
  }
});

describe('milliCPUToQuota', () => {
  for (const [milli, quota] of [
    [0, 0],
    [5, 1000],
    [9, 1000],
    [10, 1000],
    [200, 20000],
    [1500, 150000],
  ] as const) {
    it(`${milli}m → ${quota}`, () => assert.equal(milliCPUToQuota(milli, 100000), quota));
  }
});

const MiB = 1024 * 1024;
const pod = (containers: Container[], extra: Partial<Pod['spec']> = {}): Pod => ({ metadata: { name: 'p', namespace: 'd', uid: 'u' }, spec: { containers, ...extra } });

describe('containerResources', () => {
  it('Guaranteed: shares, quota, memory, oom -997', () => {
    const c: Container = { name: 'c', resources: { requests: { cpu: '500m', memory: '64Mi' }, limits: { cpu: '500m', memory: '64Mi' } } };
    assert.deepEqual(containerResources(pod([c]), c, 1024 * MiB), { cpu_shares: 512, cpu_quota: 50000, cpu_period: 100000, memory_limit_in_bytes: 64 * MiB, oom_score_adj: -997 });
  });
  it('BestEffort: minimal shares, no quota, oom 1000', () => {
    const c: Container = { name: 'c' };
    assert.deepEqual(containerResources(pod([c]), c, 1024 * MiB), { cpu_shares: 2, oom_score_adj: 1000 });
  });
  it('limit without request: shares from the limit', () => {
    const c: Container = { name: 'c', resources: { limits: { cpu: '2' } } };
    const r = containerResources(pod([c]), c, 1024 * MiB);
    assert.equal(r.cpu_shares, 2048);
    assert.equal(r.cpu_quota, 200000);
  });
});

describe('containerOOMScoreAdjust (Burstable)', () => {
  for (const [request, want] of [
    ['256Mi', 750],
    ['0', 999],
    ['1023Mi', 3],
    ['1Gi', 3],
  ] as const) {
    it(`request ${request} of 1Gi → ${want}`, () => {
      const c: Container = { name: 'c', resources: { requests: { memory: request, cpu: '100m' } } };
      assert.equal(containerOOMScoreAdjust(pod([c]), c, 1024 * MiB), want);
    });
  }
  it('critical priority → -997', () => {
    const c: Container = { name: 'c', resources: { requests: { cpu: '100m' } } };
    assert.equal(containerOOMScoreAdjust(pod([c], { priority: 2000001000 }), c, 1024 * MiB), -997);
  });
});

describe('pod-level resources', () => {
  const p = pod(
    [
      { name: 'a', resources: { requests: { cpu: '100m' }, limits: { cpu: '200m', memory: '100Mi' } } },
      { name: 'b', resources: { requests: { cpu: '300m' }, limits: { memory: '50Mi' } } },
    ],
    { initContainers: [{ name: 'i', resources: { requests: { cpu: '1' }, limits: { memory: '10Mi' } } }], overhead: { cpu: '250m', memory: '120Mi' } },
  );
  it('sandbox resources: max(sum, init) requests, summed limits', () => {
    assert.deepEqual(sandboxResources(p), { cpu_shares: 1024, cpu_quota: 20000, cpu_period: 100000, memory_limit_in_bytes: 150 * MiB });
  });
  it('pod memory limit only when every container declares one', () => {
    assert.equal(Number(podMemoryLimit(p)!.value()), 150 * MiB);
    assert.equal(podMemoryLimit(pod([{ name: 'a', resources: { limits: { memory: '1Mi' } } }, { name: 'b' }])), undefined);
  });
  it('overhead as guaranteed', () => {
    assert.deepEqual(sandboxOverhead(p), { cpu_shares: 256, cpu_quota: 25000, cpu_period: 100000, memory_limit_in_bytes: 120 * MiB });
    assert.equal(sandboxOverhead(pod([])), undefined);
  });
});
