import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../util/clock.js';
import { CgroupNodeStats, meminfoWorkingSet, procStatUsageNanos, statField, workingSetBytes } from './node.js';

test('parsers of cgroup and proc files', () => {
  assert.equal(statField('cache 1\ntotal_inactive_file 4096\n', 'total_inactive_file'), 4096);
  assert.equal(statField('inactive_file 1\n', 'total_inactive_file'), undefined);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  assert.equal(procStatUsageNanos('cpu  100 2 30 999 888 4 5 6 0 0\ncpu0 1 1 1 1\n'), (100 + 2 + 30 + 4 + 5 + 6) * 10_000_000);
  assert.equal(meminfoWorkingSet('MemTotal:       1000 kB\nMemFree:         200 kB\nInactive(file):  300 kB\n'), 500 * 1024);
  assert.equal(workingSetBytes(10, 20), 0);
});

test('cgroup v1 root: cpuacct.usage and usage_in_bytes less total_inactive_file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kite-nodestats-'));
  try {
    await mkdir(join(dir, 'cpuacct'));
    await mkdir(join(dir, 'memory'));
    await writeFile(join(dir, 'cpuacct', 'cpuacct.usage'), '14351352610280\n');
    await writeFile(join(dir, 'memory', 'memory.usage_in_bytes'), '2528845824\n');
    await writeFile(join(dir, 'memory', 'memory.stat'), 'inactive_file 8192\ntotal_inactive_file 707121152\n');
    const clock = new FakeClock(1_000);
    const s = await new CgroupNodeStats({ clock, cgroupRoot: dir, procRoot: join(dir, 'none') }).read();
    assert.deepEqual(s, { cpu: { time: 1_000, usageCoreNanoSeconds: 14351352610280 }, memory: { time: 1_000, workingSetBytes: 2528845824 - 707121152 } });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('without v1 controllers: cpu.stat (v2) and /proc/meminfo', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kite-nodestats-'));
  try {
    await writeFile(join(dir, 'cpu.stat'), 'usage_usec 5000\nuser_usec 1\n');
    await mkdir(join(dir, 'proc'));
    await writeFile(join(dir, 'proc', 'meminfo'), 'MemTotal:       1000 kB\nMemFree:         100 kB\nInactive(file):  100 kB\n');
    const s = await new CgroupNodeStats({ clock: new FakeClock(2), cgroupRoot: dir, procRoot: join(dir, 'proc') }).read();
    assert.deepEqual(s, { cpu: { time: 2, usageCoreNanoSeconds: 5_000_000 }, memory: { time: 2, workingSetBytes: 800 * 1024 } });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('nothing readable: no figures rather than zeros', async () => {
  assert.deepEqual(await new CgroupNodeStats({ clock: new FakeClock(), cgroupRoot: '/nonexistent-kite', procRoot: '/nonexistent-kite' }).read(), {});
});
