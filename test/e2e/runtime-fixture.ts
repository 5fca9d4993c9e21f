// A node's runtime for e2e tests that drive CRI directly: a registry with the built images, a
// real containerd with kite's config and a CNI bridge network, and a CRI client on it, all in a
// temp data dir with the bridge, subnet and cgroup root the test names (so tests never collide
// with each other or with a kite running on the machine), and all gone after stop().
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry, ensureImages } from '../../src/images/index.js';
import { Containerd } from '../../src/kubelet/containerd/containerd.js';
import { writeCniConfig } from '../../src/kubelet/network/cni.js';
import { recordIpForward, resetPodNetwork } from '../../src/kubelet/network/cleanup.js';
import { removePodCgroups } from '../../src/kubelet/cm/cgroups.js';
import { CriRuntime } from '../../src/kubelet/runtime/cri/client.js';

export const sandboxImage = 'registry.k8s.io/pause:3.10';

export interface TestRuntimeOptions {
  /** Short: the temp dir holds containerd's socket, whose path must fit a unix socket address. */
  name: string;
  network: { name: string; bridge: string; subnet: string };
  cgroupRoot: string;
  /** The images to push (ensureImages' `only`); unset pushes them all. */
  images?: string[];
}

export interface TestRuntime {
  dir: string;
  registry: Registry;
  containerd: Containerd;
  /** What containerd.start() said: 'started' unless one was left running in this dir. */
  containerdStart: Awaited<ReturnType<Containerd['start']>>;
  cri: CriRuntime;
  /** Removes every pod, then containerd, the registry, the network, the cgroups and the dir. */
  stop(): Promise<{ busyCgroups: string[] }>;
}

export async function startTestRuntime(opts: TestRuntimeOptions): Promise<TestRuntime> {
  const dir = await mkdtemp(join(tmpdir(), `kite-${opts.name}-`));
  const network = { ...opts.network, ipamDataDir: join(dir, 'ipam') };
  let registry: Registry | undefined;
  let containerd: Containerd | undefined;
  let cri: CriRuntime | undefined;
  const stop = async (): Promise<{ busyCgroups: string[] }> => {
    if (cri) {
      // Pods first: their shims outlive containerd.
      for (const sb of await cri.listPodSandbox().catch(() => [])) {
        await cri.stopPodSandbox(sb.id).catch(() => {});
        await cri.removePodSandbox(sb.id).catch(() => {});
      }
      cri.close();
    }
    await containerd?.stop();
    await registry?.stop();
    await resetPodNetwork({ dataDir: dir, containerdDataDir: join(dir, 'ctd'), network });
    const { busy } = await removePodCgroups(opts.cgroupRoot);
    await rm(dir, { recursive: true, force: true });
    return { busyCgroups: busy };
  };
  try {
    registry = new Registry({ dataDir: join(dir, 'registry') });
    await registry.start();
    await ensureImages({ cacheDir: join(dir, 'cache'), registry, ...(opts.images ? { only: opts.images } : {}) });
    containerd = new Containerd({ dataDir: join(dir, 'ctd'), registryHost: registry.host, sandboxImage });
    await recordIpForward(dir);
    await writeCniConfig(containerd.paths.cniConfDir, network);
    const containerdStart = await containerd.start();
    cri = new CriRuntime({ endpoint: `unix://${containerd.socket}` });
    await cri.waitForReady(Date.now() + 10_000);
    return { dir, registry, containerd, containerdStart, cri, stop };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}
