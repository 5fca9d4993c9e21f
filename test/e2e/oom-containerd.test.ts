// Who the kernel's OOM killer takes first, on real containerd (`kite up` on bridge kite-oom): the
// kubelet gives each container upstream's oom_score_adj by QoS class — BestEffort 1000, Burstable
// 1000 − 1000 × memory request / node memory (2..999), Guaranteed −997 — and this test reads back
// what each container's process really has in /proc/1/oom_score_adj.
//
// What really happens here: kite's containerd runs with restrict_oom_score_adj = true (the sandbox
// lacks CAP_SYS_RESOURCE, so a score below containerd's own would make runc fail), and containerd
// then raises any score below its own to its own. BestEffort and Burstable are above it and arrive
// unchanged; Guaranteed's −997 arrives as containerd's own score (0 unless kite was started with
// another), so it still ranks below both others for the OOM killer, but no longer below
// processes of the host at 0.
//
// A container killed by the kernel for going over its memory limit shows OOMKilled: that is
// test/e2e/kubelet.test.ts ("shows an OOM kill as OOMKilled").
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseQuantity } from '../../src/api/quantity.js';
import { kubectl, kubectlOk } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';

const pod = (name: string, resources: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: c
    image: busybox:1.35
    command: ['sleep', '3600']
${resources}
`;

const pods: Record<string, string> = {
  besteffort: '',
  burstable: `    resources:
      requests:
        memory: 256Mi
      limits:
        memory: 512Mi`,
  guaranteed: `    resources:
      requests:
        cpu: 100m
        memory: 64Mi
      limits:
        cpu: 100m
        memory: 64Mi`,
};

/** containerd's own oom_score_adj: the floor restrict_oom_score_adj clamps to. */
function containerdScore(dataDir: string): number {
  const find = (dir: string): string | undefined => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isFile() && e.name === 'containerd.pid') return join(dir, e.name);
      if (e.isDirectory() && !['io.containerd.content.v1.content', 'io.containerd.snapshotter.v1.overlayfs', 'registry'].includes(e.name)) {
        const found = find(join(dir, e.name));
        if (found) return found;
      }
    }
    return undefined;
  };
  const pidFile = find(dataDir);
  assert.ok(pidFile, 'containerd.pid under the data dir');
  return Number(readFileSync(`/proc/${readFileSync(pidFile, 'utf8').trim()}/oom_score_adj`, 'utf8').trim());
}

describe('OOM score by QoS class on containerd', { skip }, () => {
  let cluster: KiteCluster;

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-oom', '--pod-cidr', '10.217.252.0/24', '--cgroup-root', '/kite-oom'] });
    for (const [name, resources] of Object.entries(pods)) kubectlOk(cluster, ['apply', '-f', '-'], pod(name, resources));
    kubectlOk(cluster, ['wait', '--for=condition=Ready', ...Object.keys(pods).map((n) => `pod/${n}`), '--timeout=180s']);
  });

  after(async () => {
    await stopAndReset(cluster);
  });

  it('each container process has its QoS class score, clamped to containerd\'s own from below', () => {
    const memory = parseQuantity(kubectlOk(cluster, ['get', 'node', cluster.nodeName, '-o', 'jsonpath={.status.capacity.memory}'])).toNumber();
    const floor = containerdScore(cluster.dataDir);
    const burstable = Math.min(999, Math.max(3, 1000 - Math.trunc((1000 * 256 * 1024 * 1024) / memory)));
    const want: Record<string, number> = { besteffort: 1000, burstable: Math.max(burstable, floor), guaranteed: Math.max(-997, floor) };
    const got: Record<string, number> = {};
    for (const name of Object.keys(pods)) {
      const r = kubectl(cluster, ['exec', name, '--', 'cat', '/proc/1/oom_score_adj']);
      assert.equal(r.code, 0, r.stderr);
      got[name] = Number(r.stdout.trim());
    }
    assert.deepEqual(got, want);
    assert.deepEqual(
      Object.keys(pods).map((n) => kubectlOk(cluster, ['get', 'pod', n, '-o', 'jsonpath={.status.qosClass}'])),
      ['BestEffort', 'Burstable', 'Guaranteed'],
    );
    // The order the OOM killer goes by: BestEffort first, Guaranteed last.
    assert.ok(got.besteffort! > got.burstable! && got.burstable! > got.guaranteed!, JSON.stringify(got));
  });
});
