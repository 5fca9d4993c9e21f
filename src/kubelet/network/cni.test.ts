import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cniConflist, cniConfigFileName, resolvePodNetwork, writeCniConfig } from './cni.js';
import { mountsUnder, recordIpForward, removeIpamState, restoreIpForward } from './cleanup.js';

describe('cniConflist', () => {
  it('is a bridge with host-local, the gateway for the host, no masquerade, routes only to services and pods', () => {
    assert.deepEqual(cniConflist(), {
      cniVersion: '0.4.0',
      name: 'kite',
      plugins: [
        {
          type: 'bridge',
          bridge: 'kite0',
          isGateway: true,
          isDefaultGateway: false,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: '10.217.0.0/24' }]], routes: [{ dst: '10.96.0.0/12' }, { dst: '10.217.0.0/16' }], dataDir: '/var/lib/cni/networks' },
        },
      ],
    });
  });

  it('takes the bridge, subnet, name and lease folder per node, and portmap without SNAT on request', () => {
    const c = cniConflist({ name: 'kite-b', bridge: 'kite1', subnet: '10.217.1.0/24', ipamDataDir: '/data/ipam', hostPorts: true }) as { name: string; plugins: any[] };
    assert.equal(c.name, 'kite-b');
    assert.equal(c.plugins[0].bridge, 'kite1');
    assert.deepEqual(c.plugins[0].ipam.ranges, [[{ subnet: '10.217.1.0/24' }]]);
    assert.equal(c.plugins[0].ipam.dataDir, '/data/ipam');
    assert.deepEqual(c.plugins[1], { type: 'portmap', capabilities: { portMappings: true }, snat: false });
    assert.equal(cniConfigFileName({ name: 'kite-b' }), '10-kite-b.conflist');
  });

  it('rejects names Linux or the subnet syntax would refuse', () => {
    assert.throws(() => resolvePodNetwork({ bridge: 'a-very-long-bridge-name' }));
    assert.throws(() => resolvePodNetwork({ name: '../x' }));
    assert.throws(() => resolvePodNetwork({ subnet: '10.217.0.0' }));
  });

  it('writes the conflist into the conf dir', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kite-cni-'));
    try {
      const file = await writeCniConfig(join(dir, 'net.d'));
      assert.equal(file, join(dir, 'net.d', '10-kite.conflist'));
      assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), cniConflist());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('cleanup', () => {
  it('restores ip_forward to its value before kite, recorded once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kite-cni-'));
    try {
      const proc = join(dir, 'ip_forward');
      await writeFile(proc, '0\n');
      await recordIpForward(dir, proc);
      await writeFile(proc, '1\n'); // the bridge plugin turned it on
      await recordIpForward(dir, proc); // a restarted kite must not record its own change
      assert.equal(await restoreIpForward(dir, proc), '0');
      assert.equal(await readFile(proc, 'utf8'), '0\n');
      assert.equal(await restoreIpForward(dir, proc), undefined, 'forgotten after restoring');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('removes the network\'s leases and cached results only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kite-cni-'));
    try {
      const results = join(dir, 'results');
      await writeCniConfig(join(dir, 'networks', 'kite')); // any file inside the lease folder
      await writeCniConfig(join(dir, 'networks', 'other'));
      await writeCniConfig(results, { name: 'kite' });
      await writeFile(join(results, 'kite-abc-eth0'), '{}');
      await writeFile(join(results, 'other-abc-eth0'), '{}');
      await removeIpamState({ ipamDataDir: join(dir, 'networks') }, results);
      assert.deepEqual(await readdir(join(dir, 'networks')), ['other']);
      assert.deepEqual((await readdir(results)).sort(), ['10-kite.conflist', 'other-abc-eth0']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('finds mounts under a dir, deepest first', () => {
    const mi = [
      '1 0 0:1 / /data/ctd/state/netns/cni-1 rw - nsfs nsfs rw',
      '2 0 0:2 / /data/ctd/state/t/k8s.io/abc/rootfs rw - overlay overlay rw',
      '3 0 0:3 / /data/ctd2/x rw - tmpfs tmpfs rw',
      '4 0 0:4 / /data/ctd/root/sand\\040box/shm rw - tmpfs shm rw',
    ].join('\n');
    assert.deepEqual(mountsUnder(mi, '/data/ctd/'), ['/data/ctd/state/t/k8s.io/abc/rootfs', '/data/ctd/state/netns/cni-1', '/data/ctd/root/sand box/shm']);
  });
});
