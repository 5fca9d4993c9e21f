// The node's service proxy as the agent runs it: the table first (so the reject rule is in place
// before anything is routed to the service range), then the host route; on stop the rules stay, as
// kube-proxy leaves them, so running pods keep reaching Services while the agent restarts.
import { defaultClusterCIDR, defaultServiceCIDR } from '../api/network.js';
import type { Client } from '../client/client.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { Service } from '../util/lifecycle.js';
import { ensureBridgeNetfilter, ensureServiceRoute } from './host.js';
import { NftCommand, type Nftables } from './nftables.js';
import { Proxier, type ProxierOptions } from './proxier.js';

export interface NodeServiceProxyOptions {
  client: Pick<Client, 'resource'>;
  dataDir: string;
  nodeName: string;
  bridge: string;
  podSubnet: string;
  gateway: string;
  clock: Clock;
  logger: Logger;
  nft?: Nftables;
  serviceCIDR?: string;
  minSyncIntervalMs?: number;
  onSync?: ProxierOptions['onSync'];
}

export class NodeServiceProxy implements Service {
  readonly name = 'kube-proxy';
  private proxier?: Proxier;

  constructor(private readonly opts: NodeServiceProxyOptions) {}

  async start(): Promise<void> {
    const { opts } = this;
    const serviceCIDR = opts.serviceCIDR ?? defaultServiceCIDR;
    if (!(await ensureBridgeNetfilter(opts.dataDir))) {
      opts.logger.warn('br_netfilter is absent: Service connections between two pods of one node will not work');
    }
    this.proxier = new Proxier({
      client: opts.client,
      node: { nodeName: opts.nodeName, bridge: opts.bridge, gateway: opts.gateway, serviceCIDR, clusterCIDR: defaultClusterCIDR },
      nft: opts.nft ?? new NftCommand(),
      clock: opts.clock,
      logger: opts.logger,
      minSyncIntervalMs: opts.minSyncIntervalMs,
      onSync: opts.onSync,
    });
    await this.proxier.start();
    await ensureServiceRoute(serviceCIDR, opts.bridge, opts.podSubnet);
    opts.logger.info({ bridge: opts.bridge, serviceCIDR }, 'service proxy ready');
  }

  async stop(): Promise<void> {
    await this.proxier?.stop();
  }
}
