// What `kite reset` undoes on the host after containerd is stopped: the pod bridge, the
// ip_forward flag the bridge plugin set, host-local's leases and libcni's cached results, and
// mounts (netns, rootfs, shm) left under containerd's data dir.
import { execFile } from 'node:child_process';
import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { recordSysctl, restoreSysctl } from '../../util/sysctl.js';
import { containerdPaths } from '../containerd/config.js';
import { resolvePodNetwork, type PodNetworkOptions } from './cni.js';

const run = promisify(execFile);

const ipForwardPath = '/proc/sys/net/ipv4/ip_forward';
const ipForwardRecord = 'ip_forward.before-kite';
const cniResultsDir = '/var/lib/cni/results';

/** Deletes the bridge; fine when it does not exist. */
export async function deleteBridge(bridge: string): Promise<boolean> {
  try {
    await run('ip', ['link', 'delete', bridge, 'type', 'bridge']);
    return true;
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? '');
    if (/Cannot find device|does not exist/.test(stderr)) return false;
    throw err;
  }
}

/** net.ipv4.ip_forward, which the bridge plugin sets to 1 for isGateway. */
export const recordIpForward = (dataDir: string, procFile = ipForwardPath) => recordSysctl(dataDir, procFile, ipForwardRecord);
export const restoreIpForward = (dataDir: string, procFile = ipForwardPath) => restoreSysctl(dataDir, procFile, ipForwardRecord);

/** host-local's leases of the network and libcni's cached results for it. */
export async function removeIpamState(opts: PodNetworkOptions = {}, resultsDir = cniResultsDir): Promise<void> {
  const net = resolvePodNetwork(opts);
  await rm(join(net.ipamDataDir, net.name), { recursive: true, force: true });
  const results = await readdir(resultsDir).catch(() => [] as string[]);
  // libcni names them <network>-<containerID>-<ifname>.
  for (const f of results) if (f.startsWith(`${net.name}-`)) await rm(join(resultsDir, f), { force: true });
}

/** Mount points at or below dir, deepest first, from mountinfo text. */
export function mountsUnder(mountinfo: string, dir: string): string[] {
  const prefix = dir.replace(/\/+$/, '');
  const found: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const raw = line.split(' ')[4];
    if (!raw) continue;
    const mp = raw.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (mp === prefix || mp.startsWith(prefix + '/')) found.push(mp);
  }
  return [...new Set(found)].sort((a, b) => b.split('/').length - a.split('/').length || b.localeCompare(a));
}

/** Lazily unmounts everything mounted at or below dir (netns bind mounts, rootfs overlays, shm). */
export async function unmountAllUnder(dir: string): Promise<string[]> {
  const mounts = mountsUnder(await readFile('/proc/self/mountinfo', 'utf8'), dir);
  for (const mp of mounts) {
    await run('umount', ['--lazy', mp]).catch((err: { stderr?: string }) => {
      if (!/not mounted|no mount point/.test(String(err.stderr ?? ''))) throw err;
    });
  }
  return mounts;
}

/**
 * The network half of `kite reset`, run after containerd and its pods are gone: mounts under
 * containerd's data dir (netns under its state dir, rootfs, shm), the bridge, IPAM state, ip_forward.
 */
export async function resetPodNetwork(opts: { dataDir: string; containerdDataDir: string; network?: PodNetworkOptions }): Promise<void> {
  const net = resolvePodNetwork(opts.network);
  await unmountAllUnder(opts.containerdDataDir);
  await rm(join(containerdPaths(opts.containerdDataDir).state, 'netns'), { recursive: true, force: true });
  await deleteBridge(net.bridge);
  await removeIpamState(opts.network);
  await restoreIpForward(opts.dataDir);
}
