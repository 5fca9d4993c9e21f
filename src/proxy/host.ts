// The host side of the node's service proxy: the service range routed into the node's own bridge
// (never the default route; DNAT happens on the way, the reject rule catches the rest), the
// bridge-nf-call-iptables switch that makes bridged pod-to-pod replies pass conntrack (un-DNAT of
// a Service connection between two pods of one bridge), and what `kite reset` removes.
//
// Several nodes on one machine each add the route on their own bridge with their own metric (from
// their pod subnet), so the lowest-metric node serves host→ClusterIP traffic and a node's reset
// (its bridge gone, its route with it) leaves the others' routes in place.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { recordSysctl, restoreSysctl } from '../util/sysctl.js';
import type { Nftables } from './nftables.js';
import { proxyTableFamily, proxyTableName } from './plan.js';

const run = promisify(execFile);

export const bridgeNfCallIptables = '/proc/sys/net/bridge/bridge-nf-call-iptables';
const bridgeNfRecord = 'bridge-nf-call-iptables.before-kite';

/** The route metric of a node's service-range route: 1024 plus the pod subnet's network number above its last octet. */
export function serviceRouteMetric(podSubnet: string): number {
  const o = podSubnet.split('/')[0].split('.').map(Number);
  return 1024 + ((o[1] << 8) | o[2]);
}

function stderrOf(err: unknown): string {
  return String((err as { stderr?: string }).stderr ?? (err as Error).message ?? '');
}

/** `ip route replace <serviceCIDR> dev <bridge> metric <m>`: idempotent, and only this node's route. */
export async function ensureServiceRoute(serviceCIDR: string, bridge: string, podSubnet: string): Promise<void> {
  await run('ip', ['route', 'replace', serviceCIDR, 'dev', bridge, 'metric', String(serviceRouteMetric(podSubnet))]);
}

export async function deleteServiceRoute(serviceCIDR: string, bridge: string, podSubnet: string): Promise<void> {
  try {
    await run('ip', ['route', 'del', serviceCIDR, 'dev', bridge, 'metric', String(serviceRouteMetric(podSubnet))]);
  } catch (err) {
    if (!/No such process|Cannot find device|does not exist/.test(stderrOf(err))) throw err;
  }
}

/**
 * Bridged traffic must pass the ip hooks (br_netfilter, bridge-nf-call-iptables=1) or a pod's reply
 * to another pod of the same bridge skips the un-DNAT. Returns false when br_netfilter is absent.
 */
export async function ensureBridgeNetfilter(dataDir: string, procFile = bridgeNfCallIptables): Promise<boolean> {
  let value: string;
  try {
    value = (await readFile(procFile, 'utf8')).trim();
  } catch {
    return false;
  }
  if (value === '1') return true;
  await recordSysctl(dataDir, procFile, bridgeNfRecord);
  await writeFile(procFile, '1\n');
  return true;
}

/** The proxy half of `kite reset` for one node: its table, its route, the switch it turned on. */
export async function resetServiceProxy(opts: { dataDir: string; bridge: string; podSubnet: string; serviceCIDR: string; nft: Nftables }): Promise<void> {
  const table = proxyTableName(opts.bridge);
  // add-then-delete: no error whether or not the table exists.
  await opts.nft.apply(`add table ${proxyTableFamily} ${table}\ndelete table ${proxyTableFamily} ${table}\n`);
  await deleteServiceRoute(opts.serviceCIDR, opts.bridge, opts.podSubnet);
  await restoreSysctl(opts.dataDir, bridgeNfCallIptables, bridgeNfRecord);
}
