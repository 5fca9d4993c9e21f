// The container runtime a kite agent runs on: its own supervised containerd with the node's CNI
// bridge, or an existing CRI endpoint it was pointed at. The node's choices (network, cgroup root,
// runtime) are recorded in the agent's data dir, so `kite reset` undoes exactly what was made.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { writeFileAtomic } from '../util/file.js';
import { Containerd } from '../kubelet/containerd/containerd.js';
import { Supervisor } from '../kubelet/containerd/supervisor.js';
import { writeCniConfig, resolvePodNetwork, type PodNetworkOptions, type ResolvedPodNetwork } from '../kubelet/network/cni.js';
import { recordIpForward, resetPodNetwork, unmountAllUnder } from '../kubelet/network/cleanup.js';
import { ensureBridge } from '../kubelet/network/bridge.js';
import { removePodCgroups } from '../kubelet/cm/cgroups.js';
import { defaultServiceCIDR } from '../api/network.js';
import { resetServiceProxy } from '../proxy/host.js';
import { NftCommand } from '../proxy/nftables.js';
import type { Service } from '../util/lifecycle.js';
import { deletePolicyTable, policyTableName } from '../proxy/networkpolicy/planner.js';

/** What an agent made on this machine, written before anything is made. */
export interface NodeRecord {
  nodeName: string;
  /** Set when kite runs its own containerd; absent for an external --cri-endpoint. */
  network?: ResolvedPodNetwork;
  cgroupRoot: string;
  criEndpoint: string;
  ownContainerd: boolean;
}

const recordFile = (dataDir: string) => join(dataDir, 'node.json');
export const containerdDir = (dataDir: string) => join(dataDir, 'containerd');

export async function readNodeRecord(dataDir: string): Promise<NodeRecord | undefined> {
  try {
    return JSON.parse(await readFile(recordFile(dataDir), 'utf8')) as NodeRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export interface NodeRuntimeOptions {
  dataDir: string;
  nodeName: string;
  /** An existing runtime's socket; kite then starts no containerd of its own. */
  criEndpoint?: string;
  /** The local registry containerd pulls every image from (host:port on loopback). */
  registryHost: string;
  sandboxImage: string;
  network?: PodNetworkOptions;
  cgroupRoot: string;
  clock: Clock;
  logger: Logger;
}

export class NodeRuntime implements Service {
  readonly name = 'container-runtime';
  private supervisor?: Supervisor;
  private endpointPath = '';
  private gatewayAddress?: string;
  private network?: ResolvedPodNetwork;

  constructor(private readonly opts: NodeRuntimeOptions) {}

  /** The CRI socket path. */
  get endpoint(): string {
    return this.endpointPath;
  }

  /** The pod bridge's address (the pods' gateway), once started with a network of kite's own. */
  get gateway(): string | undefined {
    return this.gatewayAddress;
  }

  /** The node's own pod network (bridge and subnet), once started with one. */
  get podNetwork(): ResolvedPodNetwork | undefined {
    return this.network;
  }

  async start(): Promise<void> {
    const { opts } = this;
    const external = opts.criEndpoint?.replace(/^unix:\/\//, '');
    const network = external ? undefined : resolvePodNetwork(opts.network);
    const containerd = external
      ? undefined
      : new Containerd({ dataDir: containerdDir(opts.dataDir), registryHost: opts.registryHost, sandboxImage: opts.sandboxImage, clock: opts.clock });
    const record: NodeRecord = {
      nodeName: opts.nodeName,
      network,
      cgroupRoot: opts.cgroupRoot,
      criEndpoint: external ?? containerd!.socket,
      ownContainerd: !external,
    };
    await writeFileAtomic(recordFile(opts.dataDir), JSON.stringify(record, null, 2) + '\n');
    this.endpointPath = record.criEndpoint;
    if (!containerd) return;
    await recordIpForward(opts.dataDir);
    this.gatewayAddress = await ensureBridge(network!);
    this.network = network;
    await writeCniConfig(containerd.paths.cniConfDir, network);
    const how = await containerd.start();
    opts.logger.info({ socket: containerd.socket, how, pid: containerd.processId }, 'containerd ready');
    this.supervisor = new Supervisor(containerd, {
      clock: opts.clock,
      onEvent: (e) => opts.logger.warn({ event: e }, 'containerd supervision'),
    });
    this.supervisor.start();
  }

  /** Stops watching containerd; containerd and the pods keep running, as they do when a kubelet stops. */
  async stop(): Promise<void> {
    await this.supervisor?.stop();
  }
}

/**
 * The host half of `kite reset` for one node, after its pods are stopped over CRI: containerd, its
 * mounts, the pods' volume mounts, the service proxy's table and route, the bridge, IPAM state, ip_forward, its NetworkPolicy table and the pods' cgroups.
 */
export async function resetNodeHost(dataDir: string, record: NodeRecord, clock: Clock): Promise<{ busyCgroups: string[] }> {
  if (record.ownContainerd) {
    const containerd = new Containerd({ dataDir: containerdDir(dataDir), registryHost: '127.0.0.1:0', sandboxImage: '', clock });
    await containerd.stop();
    if (record.network) {
      const { bridge, subnet } = record.network;
      await resetServiceProxy({ dataDir, bridge, podSubnet: subnet, serviceCIDR: defaultServiceCIDR, nft: new NftCommand() });
    }
    await resetPodNetwork({ dataDir, containerdDataDir: containerdDir(dataDir), network: record.network });
    if (record.network) await removePolicyTable(record.network.bridge);
  }
  // The pods' volumes (tmpfs emptyDirs, secrets) of pods that still existed: the data dir goes next.
  await unmountAllUnder(join(dataDir, 'kubelet'));
  const { busy } = await removePodCgroups(record.cgroupRoot);
  return { busyCgroups: busy };
}

/** Deletes the node's policy table (only that one); nothing to do without nft or the table. */
async function removePolicyTable(bridge: string): Promise<void> {
  try {
    await new NftCommand().apply(deletePolicyTable(policyTableName(bridge)));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
