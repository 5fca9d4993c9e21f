import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { restoreSysctl } from '../util/sysctl.js';
import { ensureBridgeNetfilter, serviceRouteMetric } from './host.js';

describe('host', () => {
  it('gives each node\'s service route its own metric from its pod subnet', () => {
    assert.equal(serviceRouteMetric('10.217.0.0/24'), 1024 + (217 << 8));
    assert.equal(serviceRouteMetric('10.217.240.0/24'), 56816);
    assert.equal(serviceRouteMetric('10.217.241.0/24'), 56817);
  });

  it('turns bridge-nf-call-iptables on, recording the old value for reset; leaves it alone when on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kite-proxy-host-'));
    try {
      const proc = join(dir, 'bridge-nf-call-iptables');
      assert.equal(await ensureBridgeNetfilter(dir, join(dir, 'absent')), false, 'br_netfilter absent');
      await writeFile(proc, '0\n');
      assert.equal(await ensureBridgeNetfilter(dir, proc), true);
      assert.equal(await readFile(proc, 'utf8'), '1\n');
      assert.equal(await restoreSysctl(dir, proc, 'bridge-nf-call-iptables.before-kite'), '0');
      assert.equal(await readFile(proc, 'utf8'), '0\n');
      await writeFile(proc, '1\n');
      assert.equal(await ensureBridgeNetfilter(dir, proc), true);
      assert.equal(await restoreSysctl(dir, proc, 'bridge-nf-call-iptables.before-kite'), undefined, 'nothing recorded when it was already on');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
