import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../util/clock.js';
import { HostEvictionStats, diskUsage } from './summary.js';

const Mi = 1024 * 1024;

function write(path: string, text: string | Buffer): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

describe('host eviction stats', () => {
  it('reads memory, the pods cgroup, nodefs, imagefs, pids and per-pod disk and processes', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kite-evstats-'));
    try {
      const sys = join(root, 'sys');
      const proc = join(root, 'proc');
      const rootDir = join(root, 'kubelet');
      const logs = join(root, 'logs');
      // cgroup v1: the pods' cgroup root /kite uses 300Mi, 100Mi of it inactive file pages.
      write(join(sys, 'memory/kite/memory.usage_in_bytes'), `${300 * Mi}\n`);
      write(join(sys, 'memory/kite/memory.stat'), `cache 1\ntotal_inactive_file ${100 * Mi}\n`);
      write(join(sys, 'pids/kite/besteffort/podu1/pids.current'), '7\n');
      write(join(proc, 'sys/kernel/pid_max'), '4194304\n');
      write(join(proc, 'sys/kernel/threads-max'), '1000\n');
      write(join(proc, 'loadavg'), '0.10 0.20 0.30 2/345 6789\n');
      write(join(rootDir, 'pods/u1/volumes/kubernetes.io~empty-dir/data/fill'), Buffer.alloc(64 * 1024, 1));
      write(join(logs, 'default_p_u1/c/0.log'), Buffer.alloc(8 * 1024, 1));
      const stats = new HostEvictionStats({
        clock: new FakeClock(),
        pods: {
          getCPUAndMemoryStats: () =>
            Promise.resolve({
              node: { nodeName: 'n', memory: { time: 0, workingSetBytes: 900 * Mi } },
              pods: [{ podRef: { name: 'p', namespace: 'default', uid: 'u1' }, containers: [{ name: 'c', startTime: 0, memory: { time: 0, workingSetBytes: 5 * Mi } }], memory: { time: 0, workingSetBytes: 5 * Mi } }],
            }),
        },
        node: { read: () => Promise.resolve({}) },
        runtime: { imageFsInfo: () => Promise.resolve({ image_filesystems: [{ timestamp: '0', fs_id: { mountpoint: root } }] }) },
        memoryCapacity: () => Promise.resolve(1000 * Mi),
        allocatableMemory: () => Promise.resolve(999 * Mi),
        rootDir,
        podLogsDir: logs,
        cgroupRoot: '/kite',
        sysCgroup: sys,
        proc,
      });
      const s = await stats.get();
      const fs = statfsSync(root);
      assert.deepEqual(s.memory, { capacityBytes: 1000 * Mi, workingSetBytes: 900 * Mi });
      assert.deepEqual(s.allocatableMemory, { capacityBytes: 999 * Mi, workingSetBytes: 200 * Mi });
      assert.equal(s.nodeFs?.capacityBytes, fs.blocks * fs.bsize);
      assert.equal(s.imageFs?.inodes, fs.files);
      assert.deepEqual(s.pids, { maxPID: 1000, running: 345 });
      const pod = s.pods[0]!;
      assert.equal(pod.processes, 7);
      assert.equal(pod.memory, 5 * Mi);
      assert.ok(pod.disk! >= 72 * 1024, `disk ${pod.disk}`);
      assert.ok(pod.containers[0]!.disk! >= 8 * 1024 && pod.containers[0]!.disk! < 64 * 1024, `container disk ${pod.containers[0]!.disk}`);
      assert.equal(pod.containers[0]!.memory, 5 * Mi);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('du of a missing directory is nothing; a file counts its blocks and inode', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kite-du-'));
    try {
      assert.deepEqual(await diskUsage(join(root, 'missing')), { bytes: 0, inodes: 0 });
      write(join(root, 'd/f'), Buffer.alloc(4096, 1));
      const u = await diskUsage(join(root, 'd'));
      assert.equal(u.inodes, 2);
      assert.ok(u.bytes >= 4096);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
