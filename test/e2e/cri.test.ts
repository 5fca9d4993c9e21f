// The CRI client against the real containerd: a pod's whole life through RuntimeService and
// ImageService (pull, sandbox, container, exec, logs, stop with a grace period, removal), errors as
// containerd words them, and the floor measurement. Everything runs in a temp data dir with a
// bridge, subnet and cgroup root of this test's own, and is gone afterwards.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { podCgroupParent } from '../../src/kubelet/cm/cgroups.js';
import type { CriRuntime } from '../../src/kubelet/runtime/cri/client.js';
import { measureFloor } from '../../src/kubelet/runtime/cri/floor.js';
import { RuntimeError, type ContainerConfig, type PodSandboxConfig } from '../../src/kubelet/runtime/types.js';
import { realClock } from '../../src/util/clock.js';
import { startTestRuntime, type TestRuntime } from './runtime-fixture.js';

const isRoot = process.getuid?.() === 0;
const network = { name: 'kite-e2e-cri', bridge: 'kite-e2e1', subnet: '10.217.251.0/24' };
const cgroupRoot = '/kite-e2e-cri';
const busybox = 'docker.io/library/busybox:1.35';

describe('CRI client on containerd', { skip: isRoot ? false : 'needs root (containerd, bridges, cgroups)' }, () => {
  let runtime: TestRuntime;
  let dir: string;
  let cri: CriRuntime;

  before(async () => {
    runtime = await startTestRuntime({ name: 'cri', network, cgroupRoot, images: ['pause', 'busybox'] });
    ({ dir, cri } = runtime);
  });

  after(async () => {
    await runtime?.stop();
  });

  it('reports its version and ready conditions', async () => {
    const v = await cri.version();
    assert.equal(v.runtime_name, 'containerd');
    assert.equal(v.runtime_api_version, 'v1');
    const { status } = await cri.status();
    const cond = (t: string) => status.conditions.find((c) => c.type === t)?.status;
    assert.equal(cond('RuntimeReady'), true);
    assert.equal(cond('NetworkReady'), true);
  });

  it('pulls busybox and reports its status', async () => {
    assert.equal(await cri.imageStatus({ image: busybox }), undefined);
    const ref = await cri.pullImage({ image: busybox });
    assert.match(ref, /^sha256:[0-9a-f]{64}$/);
    const img = await cri.imageStatus({ image: busybox });
    assert.equal(img!.id, ref);
    assert.ok(img!.repo_tags.includes(busybox));
    assert.equal(typeof img!.size, 'number');
    assert.ok(img!.size > 0);
  });

  it("fails a pull of a missing image NOT_FOUND with containerd's message", async () => {
    const err = await cri.pullImage({ image: 'docker.io/library/nope:1' }).catch((e: unknown) => e);
    assert.ok(err instanceof RuntimeError, String(err));
    assert.equal(err.code, 'NOT_FOUND');
    assert.match(err.message, /^failed to pull and unpack image "docker\.io\/library\/nope:1": .*not found/);
  });

  it('runs a pod through its whole life', async () => {
    const uid = '0b8d3a5e-cri0-4e2e-9d6b-000000000001';
    const logDirectory = join(dir, 'pods', `default_hello_${uid}`);
    const sandboxConfig: PodSandboxConfig = {
      metadata: { name: 'hello', uid, namespace: 'default', attempt: 0 },
      hostname: 'hello',
      log_directory: logDirectory,
      labels: { 'io.kubernetes.pod.uid': uid },
      linux: {
        cgroup_parent: podCgroupParent('BestEffort', uid, cgroupRoot),
        security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } },
      },
    };
    const sandboxId = await cri.runPodSandbox(sandboxConfig);
    const sb = await cri.podSandboxStatus(sandboxId, true);
    assert.equal(sb.status.state, 'SANDBOX_READY');
    assert.equal(sb.status.metadata.uid, uid);
    assert.match(sb.status.network!.ip, /^10\.217\.251\.\d+$/);
    assert.ok(JSON.parse(sb.info!.info!), 'verbose info is JSON');
    assert.match(sb.status.created_at, /^\d{19}$/);

    const containerConfig: ContainerConfig = {
      metadata: { name: 'app', attempt: 0 },
      image: { image: busybox },
      command: ['sh', '-c', 'echo hello; sleep 3600'],
      log_path: 'app/0.log',
      labels: { 'io.kubernetes.container.name': 'app' },
      linux: {
        resources: { memory_limit_in_bytes: 64 * 1024 * 1024, cpu_shares: 2 },
        // As the kubelet sets it: the container's own PID namespace, so sh is PID 1 (the CRI default, POD, shares pause's).
        security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } },
      },
    };
    const containerId = await cri.createContainer(sandboxId, containerConfig, sandboxConfig);
    assert.equal((await cri.containerStatus(containerId)).state, 'CONTAINER_CREATED');
    await cri.startContainer(containerId);

    const running = await cri.containerStatus(containerId);
    assert.equal(running.state, 'CONTAINER_RUNNING');
    assert.match(running.started_at, /^\d{19}$/);
    assert.equal(running.finished_at, '0');
    assert.equal(running.log_path, join(logDirectory, 'app/0.log'));
    assert.match(running.image_ref, /^docker\.io\/library\/busybox@sha256:/);
    assert.deepEqual(running.labels, { 'io.kubernetes.container.name': 'app' });
    assert.equal(running.resources?.linux?.memory_limit_in_bytes, 64 * 1024 * 1024);

    const listed = await cri.listContainers({ pod_sandbox_id: sandboxId, state: { state: 'CONTAINER_RUNNING' } });
    assert.deepEqual(listed.map((c) => c.id), [containerId]);

    const [stats] = await cri.listContainerStats({ id: containerId });
    assert.equal(stats!.attributes.id, containerId);
    assert.equal(typeof stats!.memory!.working_set_bytes!.value, 'number');
    const fs = await cri.imageFsInfo();
    // containerd samples usage periodically, so a fresh one may still say 0.
    assert.equal(typeof fs.image_filesystems[0]!.used_bytes!.value, 'number');
    assert.match(fs.image_filesystems[0]!.fs_id.mountpoint, /overlayfs/);

    const exec = await cri.execSync(containerId, ['sh', '-c', 'echo out; echo err >&2; exit 3'], 10);
    assert.equal(exec.stdout.toString(), 'out\n');
    assert.equal(exec.stderr.toString(), 'err\n');
    assert.equal(exec.exit_code, 3);

    const log = await waitForFile(join(logDirectory, 'app/0.log'), /hello/);
    assert.match(log, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+(Z|[+-]\d\d:\d\d) stdout F hello$/m);

    // sh as PID 1 has no TERM handler, so TERM does nothing: the grace period runs out and SIGKILL ends it.
    await cri.stopContainer(containerId, 1);
    const exited = await cri.containerStatus(containerId);
    assert.equal(exited.state, 'CONTAINER_EXITED');
    assert.equal(exited.exit_code, 137);
    assert.equal(exited.reason, 'Error');
    assert.ok(BigInt(exited.finished_at) > BigInt(exited.started_at));

    await cri.removeContainer(containerId);
    await assert.rejects(cri.containerStatus(containerId), (err: unknown) => err instanceof RuntimeError && err.code === 'NOT_FOUND');
    await cri.stopPodSandbox(sandboxId);
    assert.equal((await cri.podSandboxStatus(sandboxId)).status.state, 'SANDBOX_NOTREADY');
    await cri.removePodSandbox(sandboxId);
    assert.deepEqual(await cri.listPodSandbox({ id: sandboxId }), []);
  });

  it('measures the floor and leaves no pods behind', async () => {
    const samples = await measureFloor(cri, { image: busybox, podsDir: join(dir, 'floor'), count: 2, cgroupRoot });
    assert.equal(samples.podStartMs.length, 2);
    assert.equal(samples.teardownMs.length, 2);
    const floorPods = (await cri.listPodSandbox()).filter((sb) => sb.metadata.namespace === 'kite-floor');
    assert.deepEqual(floorPods, []);
  });
});

async function waitForFile(path: string, want: RegExp): Promise<string> {
  let text = '';
  for (let i = 0; i < 100; i++) {
    text = await readFile(path, 'utf8').catch(() => '');
    if (want.test(text)) return text;
    await realClock.sleep(50);
  }
  assert.fail(`${path} never matched ${want}: ${JSON.stringify(text)}`);
}
