import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupMounts, isOwnCgroupRoot, podCgroupParent, qosCgroupParent, removePodCgroups, removeCgroup } from './cgroups.js';

describe('podCgroupParent', () => {
  const uid = '5c3e1a2b-0000-4000-8000-000000000001';
  for (const [qos, root, want] of [
    ['Guaranteed', undefined, `/kubepods/pod${uid}`],
    ['Burstable', undefined, `/kubepods/burstable/pod${uid}`],
    ['BestEffort', undefined, `/kubepods/besteffort/pod${uid}`],
    ['Burstable', '/kite-node-a/', `/kite-node-a/burstable/pod${uid}`],
    ['Guaranteed', '/', `/pod${uid}`],
  ] as const) {
    it(`${qos} under ${root ?? 'the default root'}`, () => {
      assert.equal(podCgroupParent(qos, uid, root), want);
    });
  }
  it('rejects a UID that would escape the folder', () => {
    assert.throws(() => podCgroupParent('BestEffort', '../x'));
    assert.throws(() => podCgroupParent('BestEffort', ''));
  });
  it('names the QoS folders', () => {
    assert.equal(qosCgroupParent('Guaranteed'), '/kubepods');
    assert.equal(qosCgroupParent('BestEffort'), '/kubepods/besteffort');
  });
});

describe('cgroupMounts', () => {
  it('finds v1 hierarchies and the v2 mount, and nothing else', async () => {
    const mountinfo = [
      '25 1 0:22 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
      '26 25 0:23 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu',
      '27 25 0:24 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
      '28 25 0:25 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
      '29 1 0:26 / /mnt/with\\040space rw - cgroup cgroup rw,name=x',
      '',
    ].join('\n');
    assert.deepEqual(await cgroupMounts(mountinfo), [
      { mountPoint: '/sys/fs/cgroup/cpu', version: 1 },
      { mountPoint: '/sys/fs/cgroup/memory', version: 1 },
      { mountPoint: '/sys/fs/cgroup/unified', version: 2 },
      { mountPoint: '/mnt/with space', version: 1 },
    ]);
  });
});

describe('removePodCgroups', () => {
  // Plain folders stand in for cgroupfs: the walk is the same (rmdir bottom-up, files ignored).
  it('removes pod folders and the root in every hierarchy, leaving siblings', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kite-cg-'));
    try {
      const mounts = [
        { mountPoint: join(dir, 'cpu'), version: 1 as const },
        { mountPoint: join(dir, 'unified'), version: 2 as const },
      ];
      for (const m of mounts) {
        await mkdir(join(m.mountPoint, 'kubepods/burstable/podA/ctr1'), { recursive: true });
        await mkdir(join(m.mountPoint, 'kubepods/podB'), { recursive: true });
        await mkdir(join(m.mountPoint, 'other'), { recursive: true });
      }
      const { busy } = await removePodCgroups('/kubepods', mounts);
      assert.deepEqual(busy, []);
      for (const m of mounts) assert.deepEqual(await readdir(m.mountPoint), ['other']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports a folder it cannot remove and carries on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kite-cg-'));
    try {
      const mounts = [{ mountPoint: dir, version: 1 as const }];
      await mkdir(join(dir, 'kubepods/podA'), { recursive: true });
      await mkdir(join(dir, 'kubepods/podB'), { recursive: true });
      // A regular file makes rmdir fail with ENOTEMPTY, as a cgroup with tasks fails with EBUSY.
      await writeFile(join(dir, 'kubepods/podA/tasks'), '1');
      const { busy } = await removeCgroup('/kubepods', mounts);
      assert.deepEqual(busy, [join(dir, 'kubepods/podA'), join(dir, 'kubepods')]);
      assert.deepEqual(await readdir(join(dir, 'kubepods')), ['podA']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses the host root', async () => {
    await assert.rejects(removePodCgroups('/', []));
    await assert.rejects(removePodCgroups('/a/../..', []));
  });

  it('is fine when nothing is there', async () => {
    assert.deepEqual(await removePodCgroups('/kubepods', [{ mountPoint: '/nonexistent-kite', version: 2 }]), { busy: [] });
  });
});

it('a cgroup root must be a folder of its own below /', () => {
  for (const ok of ['/kubepods', '/kite-ep', '/a/b']) assert.equal(isOwnCgroupRoot(ok), true, ok);
  for (const bad of ['kite-ep', '/', '//x', '/a/../b', '']) assert.equal(isOwnCgroupRoot(bad), false, bad);
});
