// The node's runtime environment end to end: images built into a temp cache and pushed to a real
// docker-registry, a real containerd started in a temp data dir with kite's config and CNI network,
// a real CRI pull through hosts.toml, and everything gone afterwards.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Containerd } from '../../src/kubelet/containerd/containerd.js';
import { mountsUnder } from '../../src/kubelet/network/cleanup.js';
import { podCgroupParent } from '../../src/kubelet/cm/cgroups.js';
import type { CriRuntime } from '../../src/kubelet/runtime/cri/client.js';
import { RuntimeError } from '../../src/kubelet/runtime/types.js';
import { sandboxImage, startTestRuntime, type TestRuntime } from './runtime-fixture.js';

const isRoot = process.getuid?.() === 0;
// Names of this test's own: they must not collide with a kite running on the machine.
const network = { name: 'kite-e2e-rt', bridge: 'kite-e2e0', subnet: '10.217.250.0/24' };
const cgroupRoot = '/kite-e2e-runtime-env';

describe('runtime environment', { skip: isRoot ? false : 'needs root (containerd, bridges, cgroups)' }, () => {
  let runtime: TestRuntime;
  let dir: string;
  let containerd: Containerd;
  let cri: CriRuntime;

  before(async () => {
    runtime = await startTestRuntime({ name: 'rt', network, cgroupRoot });
    ({ dir, containerd, cri } = runtime);
    assert.equal(runtime.containerdStart, 'started');
  });

  after(async () => {
    if (runtime) assert.deepEqual(await runtime.stop(), { busyCgroups: [] });
  });

  it('a second start adopts the running containerd', async () => {
    const again = new Containerd({ dataDir: join(dir, 'ctd'), registryHost: runtime.registry.host, sandboxImage });
    assert.equal(await again.start(), 'adopted');
    assert.equal(again.processId, containerd.processId);
  });

  it('the CRI plugin is up with the network ready', async () => {
    const { status } = await cri.status();
    const cond = (t: string) => status.conditions?.find((c) => c.type === t)?.status;
    assert.equal(cond('RuntimeReady'), true);
    assert.equal(cond('NetworkReady'), true);
  });

  it('pulls busybox:1.35 from the local registry through hosts.toml', async () => {
    const ref = await cri.pullImage({ image: 'busybox:1.35' });
    assert.match(ref, /^sha256:[0-9a-f]{64}$/);
    const img = await cri.imageStatus({ image: 'docker.io/library/busybox:1.35' });
    assert.ok(img?.repo_tags?.includes('docker.io/library/busybox:1.35'));
  });

  it('a tag the registry lacks fails NOT_FOUND, as against a real registry', async () => {
    await assert.rejects(cri.pullImage({ image: 'busybox:0.0-missing' }), (err: unknown) => {
      assert.ok(err instanceof RuntimeError);
      assert.equal(err.code, 'NOT_FOUND');
      return true;
    });
    await assert.rejects(cri.pullImage({ image: 'quay.io/nobody/nothing:1' }), (err: unknown) => err instanceof RuntimeError && err.code === 'NOT_FOUND');
  });

  it('runs a sandbox on the kite bridge with the pause image and a pod cgroup', async () => {
    const uid = 'e2e-0000-runtime-env';
    const config = {
      metadata: { name: 'rt', uid, namespace: 'default', attempt: 0 },
      hostname: 'rt',
      log_directory: join(dir, 'logs', uid),
      linux: { cgroup_parent: podCgroupParent('BestEffort', uid, cgroupRoot) },
    };
    const id = await cri.runPodSandbox(config);
    const st = await cri.podSandboxStatus(id);
    assert.equal(st.status?.state, 'SANDBOX_READY');
    assert.match(st.status?.network?.ip ?? '', /^10\.217\.250\.\d+$/);
    // The host reaches the pod over the bridge (it is the gateway).
    execFileSync('busybox', ['ping', '-c', '1', '-W', '2', st.status!.network!.ip!]);
    assert.ok(existsSync(`/sys/fs/cgroup/memory${podCgroupParent('BestEffort', uid, cgroupRoot)}`));
    await cri.stopPodSandbox(id);
    await cri.removePodSandbox(id);
    assert.deepEqual(mountsUnder(await readFile('/proc/self/mountinfo', 'utf8'), join(containerd.paths.state, 'netns')), []);
  });
});
