// The pod network of a kite node: one Linux bridge with host-local IPAM, written as the single CNI
// config containerd's CRI plugin loads. The bridge is the pods' gateway, so the host reaches pod IPs
// directly; there is no masquerade and no route out: pods have routes only to the service range
// and the cluster's pod range (other nodes' bridges on this machine), both via their gateway.
import { join } from 'node:path';
import { defaultClusterCIDR, defaultServiceCIDR } from '../../api/network.js';
import { writeFileAtomic } from '../../util/file.js';

export interface PodNetworkOptions {
  /** The CNI network name (host-local keeps its leases under <ipam data dir>/<name>). */
  name?: string;
  /** The Linux bridge; project-specific so it never collides with docker0, cni0 or podman0. */
  bridge?: string;
  /**
   * The pods' subnet. 10.217.0.0/24 is clear of docker (172.17/16 and its pools), podman
   * (10.88/16, 10.89.x/24), flannel and kind (10.244/16), k3s (10.42/16) and the service range 10.96/12.
   */
  subnet?: string;
  /** host-local's lease folder; its default is /var/lib/cni/networks. */
  ipamDataDir?: string;
  /** Add the portmap plugin for hostPort (DNAT only, no SNAT: reachable on the node's IPs, not on 127.0.0.1). */
  hostPorts?: boolean;
}

export const defaultPodNetwork = { name: 'kite', bridge: 'kite0', subnet: '10.217.0.0/24' } as const;
export const defaultIpamDataDir = '/var/lib/cni/networks';

export interface ResolvedPodNetwork {
  name: string;
  bridge: string;
  subnet: string;
  ipamDataDir: string;
  hostPorts: boolean;
}

export function resolvePodNetwork(opts: PodNetworkOptions = {}): ResolvedPodNetwork {
  const net = {
    name: opts.name ?? defaultPodNetwork.name,
    bridge: opts.bridge ?? defaultPodNetwork.bridge,
    subnet: opts.subnet ?? defaultPodNetwork.subnet,
    ipamDataDir: opts.ipamDataDir ?? defaultIpamDataDir,
    hostPorts: opts.hostPorts ?? false,
  };
  // Linux interface names are at most 15 bytes.
  if (!/^[A-Za-z0-9_.-]{1,15}$/.test(net.bridge)) throw new Error(`invalid bridge name ${JSON.stringify(net.bridge)}`);
  if (!/^[A-Za-z0-9_.-]+$/.test(net.name)) throw new Error(`invalid CNI network name ${JSON.stringify(net.name)}`);
  if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(net.subnet)) throw new Error(`invalid pod subnet ${JSON.stringify(net.subnet)}`);
  return net;
}

/** The CNI network configuration list (cniVersion 0.4.0, which the Debian plugins 1.1.1 and containerd 1.6 both speak). */
export function cniConflist(opts: PodNetworkOptions = {}): Record<string, unknown> {
  const net = resolvePodNetwork(opts);
  const plugins: Record<string, unknown>[] = [
    {
      type: 'bridge',
      bridge: net.bridge,
      isGateway: true,
      isDefaultGateway: false,
      ipMasq: false,
      hairpinMode: true,
      ipam: {
        type: 'host-local',
        ranges: [[{ subnet: net.subnet }]],
        // No default route: nothing but Services and pods (of any node) is reachable from a pod.
        routes: [{ dst: defaultServiceCIDR }, { dst: defaultClusterCIDR }],
        dataDir: net.ipamDataDir,
      },
    },
  ];
  if (net.hostPorts) plugins.push({ type: 'portmap', capabilities: { portMappings: true }, snat: false });
  return { cniVersion: '0.4.0', name: net.name, plugins };
}

/** The file name in containerd's conf_dir (max_conf_num = 1: the only file there). */
export function cniConfigFileName(opts: PodNetworkOptions = {}): string {
  return `10-${resolvePodNetwork(opts).name}.conflist`;
}

/** Writes the conflist into confDir; containerd's CRI plugin picks it up (NetworkReady turns true). */
export async function writeCniConfig(confDir: string, opts: PodNetworkOptions = {}): Promise<string> {
  const file = join(confDir, cniConfigFileName(opts));
  await writeFileAtomic(file, JSON.stringify(cniConflist(opts), null, 2) + '\n');
  return file;
}
