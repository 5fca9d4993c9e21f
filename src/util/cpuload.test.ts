import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpuBusySampler, machineCpuTimes, machineCpuTimesBesides, processCpuMs, type CpuTimes } from './cpuload.js';

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

  it("counts a process's own CPU as idle: how busy the rest of the machine is", () => {
    const start = performance.now();
    while (performance.now() - start < 50) Math.sqrt(start);
    const own = processCpuMs(process.pid);
    assert.ok(own >= 50 && own <= process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000 + 20, `this process used ${own} ms`);
    const besides = machineCpuTimesBesides(process.pid);
    const all = machineCpuTimes();
    assert.ok(besides.idle - all.idle >= own - 20, 'its CPU moved to idle');
    assert.equal(processCpuMs(2 ** 22 + 1), 0, 'no such process');
  });
});
