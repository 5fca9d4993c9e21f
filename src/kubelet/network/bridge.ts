// The node's pod bridge, made before containerd's first pod so that what listens on the pods'
// gateway address (the API server's advertised address, the node's cluster DNS) can bind it at
// start. The CNI bridge plugin then finds the bridge it would have made, gateway address included.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ResolvedPodNetwork } from './cni.js';

const run = promisify(execFile);

/** The subnet's first host address, which the bridge plugin gives the bridge (isGateway). */
export function gatewayOf(subnet: string): string {
  const [ip, bits] = subnet.split('/');
  const octets = ip.split('.').map(Number);
  const n = ((octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]) >>> 0;
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  const first = ((n & mask) + 1) >>> 0;
  return [first >>> 24, (first >>> 16) & 255, (first >>> 8) & 255, first & 255].join('.');
}

interface IpAddrInfo {
  ifname: string;
  addr_info?: { family: string; local: string; prefixlen: number }[];
}

/** Creates the bridge with the gateway address and brings it up; what already exists is kept. */
export async function ensureBridge(net: Pick<ResolvedPodNetwork, 'bridge' | 'subnet'>): Promise<string> {
  const gateway = gatewayOf(net.subnet);
  const prefix = Number(net.subnet.split('/')[1]);
  let links: IpAddrInfo[];
  try {
    links = JSON.parse((await run('ip', ['-j', 'addr', 'show', 'dev', net.bridge])).stdout) as IpAddrInfo[];
  } catch (err) {
    if (!/does not exist/.test(String((err as { stderr?: string }).stderr ?? ''))) throw err;
    await run('ip', ['link', 'add', net.bridge, 'type', 'bridge']);
    links = [];
  }
  const has = links.some((l) => (l.addr_info ?? []).some((a) => a.family === 'inet' && a.local === gateway && a.prefixlen === prefix));
  if (!has) await run('ip', ['addr', 'add', `${gateway}/${prefix}`, 'dev', net.bridge]);
  await run('ip', ['link', 'set', net.bridge, 'up']);
  return gateway;
}
