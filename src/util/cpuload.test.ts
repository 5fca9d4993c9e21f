import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpuBusySampler, machineCpuTimes, type CpuTimes } from './cpuload.js';

describe('cpuBusySampler', () => {
  it('answers the busy share of the CPU time between two looks', () => {
    const readings: CpuTimes[] = [
      { idle: 100, total: 200 },
      { idle: 125, total: 300 },
      { idle: 225, total: 400 },
      { idle: 225, total: 400 },
    ];
    const busy = cpuBusySampler(() => readings.shift()!);
    assert.equal(busy(), 0.75, '75 of 100 ticks busy');
    assert.equal(busy(), 0, 'all idle');
    assert.equal(busy(), 0, 'no time passed');
  });

  it('reads this machine', () => {
    const { idle, total } = machineCpuTimes();
    assert.ok(total > 0 && idle >= 0 && idle <= total);
    const share = cpuBusySampler()();
    assert.ok(share >= 0 && share <= 1);
  });
});
