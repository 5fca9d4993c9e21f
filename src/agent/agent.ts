// A kite node: joins the cluster with a bootstrap token (TLS bootstrap: its own client and serving
// certificates, no shared admin credentials), then runs its node daemons as one group: the
// container runtime, the service proxy and NetworkPolicy enforcement (on a pod network of kite's
// own), the node-local cluster DNS on the pod bridge's gateway, then the kubelet (started in that
// order, stopped in reverse). The proxy, policy and DNS share the node's client. `kite agent` runs
// one; `kite up` runs one beside the API server.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { ServiceGroup, type Service } from '../util/lifecycle.js';
import { Client } from '../client/client.js';
import { RestClient } from '../client/rest.js';
import { SharedInformerFactory } from '../client/factory.js';
import { ClusterDns } from '../dns/cluster-dns.js';
import type { Upstream } from '../dns/server.js';
import { bootstrapKubeletCredentials } from '../kubelet/bootstrap/bootstrap.js';
import { CriRuntime } from '../kubelet/runtime/cri/client.js';
import { defaultKubeletConfig, type KubeletConfig } from '../kubelet/config.js';
import { Kubelet } from '../kubelet/kubelet.js';
import { BatchingTimelineRecorder, noTimeline, type TimelineRecorder } from '../client/timeline/recorder.js';
import type { PodNetworkOptions } from '../kubelet/network/cni.js';
import { NodeServiceProxy } from '../proxy/service.js';
import { NftCommand } from '../proxy/nftables.js';
import { NetworkPolicyEnforcer } from '../proxy/networkpolicy/enforcer.js';
import { NodeRuntime } from './node-runtime.js';

export interface AgentOptions {
  server: string;
  token?: string;
  caFile?: string;
  dataDir: string;
  nodeName?: string;
  nodeIP?: string;
  kubeletPort?: number;
  criEndpoint?: string;
  registryHost: string;
  network?: PodNetworkOptions;
  cgroupRoot?: string;
  /** Settings from a KubeletConfiguration file (--config). */
  kubeletConfig?: Partial<KubeletConfig>;
  /** Where cluster DNS sends names outside the cluster domain; none: SERVFAIL. */
  clusterDnsUpstream?: Upstream;
  /** Record the pod timeline's kubelet steps (default true); false: the kubelet records none. */
  podTimeline?: boolean;
  clock: Clock;
  logger: Logger;
}

/** Node names are lowercase DNS subdomains; a host name may not be. */
export function defaultNodeName(): string {
  return hostname().toLowerCase();
}

export class Agent implements Service {
  readonly name = 'kite-agent';
  private daemons?: ServiceGroup;
  private client?: Client;
  private informers?: SharedInformerFactory;
  private kubelet?: Kubelet;
  private config?: KubeletConfig;

  constructor(private readonly opts: AgentOptions) {}

  get nodeName(): string {
    return this.config?.nodeName ?? this.opts.nodeName ?? defaultNodeName();
  }

  /** The port the kubelet's HTTPS API listens on. */
  get kubeletPort(): number {
    return this.kubelet?.port ?? 0;
  }

  async start(): Promise<void> {
    const { opts } = this;
    const nodeName = opts.nodeName ?? defaultNodeName();
    const nodeIP = opts.nodeIP ?? '127.0.0.1';
    await mkdir(opts.dataDir, { recursive: true, mode: 0o700 });
    const credentials = await bootstrapKubeletCredentials({
      server: opts.server,
      token: opts.token,
      caFile: opts.caFile,
      dataDir: opts.dataDir,
      nodeName,
      nodeIP,
      clock: opts.clock,
    });
    opts.logger.info({ kubeconfig: credentials.kubeconfigPath }, 'node credentials ready');

    const cfg = defaultKubeletConfig({
      ...opts.kubeletConfig,
      nodeName,
      nodeIP,
      rootDir: join(opts.dataDir, 'kubelet'),
      podLogsDir: join(opts.dataDir, 'pod-logs'),
      ...(opts.kubeletPort !== undefined ? { port: opts.kubeletPort } : {}),
      ...(opts.cgroupRoot ? { cgroupRoot: opts.cgroupRoot } : {}),
    });
    this.config = cfg;
    const nodeRuntime = new NodeRuntime({
      dataDir: opts.dataDir,
      nodeName,
      criEndpoint: opts.criEndpoint,
      registryHost: opts.registryHost,
      sandboxImage: cfg.podInfraContainerImage,
      network: opts.network,
      cgroupRoot: cfg.cgroupRoot,
      clock: opts.clock,
      logger: opts.logger,
    });
    // The runtime's socket is known once it runs: the kubelet's CRI client is made then.
    let cri: CriRuntime | undefined;
    // The kubelet's timeline steps go in batches on a client of their own, off its pod status writes.
    let timelineRest: RestClient | undefined;
    let timeline: BatchingTimelineRecorder | undefined;
    const kubelet: Service = {
      name: 'kubelet',
      start: async () => {
        cri = new CriRuntime({ endpoint: nodeRuntime.endpoint });
        await cri.waitForReady(opts.clock.now() + 30_000);
        if (opts.podTimeline !== false) {
          timelineRest = new RestClient(credentials.rest);
          timeline = new BatchingTimelineRecorder({ rest: timelineRest, clock: opts.clock, logger: opts.logger });
        }
        const recorder: TimelineRecorder = timeline ?? noTimeline;
        this.kubelet = new Kubelet({ cfg, rest: credentials.rest, caPem: credentials.caPem, serving: credentials.serving, runtime: cri, clock: opts.clock, logger: opts.logger, timeline: recorder });
        await this.kubelet.start();
      },
      stop: async () => {
        await this.kubelet?.stop();
        // What the kubelet recorded last (a pod's final steps) is sent before the client closes.
        await timeline?.stop();
        timelineRest?.close();
        cri?.close();
      },
    };
    const client = (this.client = new Client(new RestClient(credentials.rest)));
    const informers = (this.informers = new SharedInformerFactory({
      client,
      clock: opts.clock,
      onError: (err, resource) => opts.logger.warn({ err, resource }, 'node informer'),
    }));
    // The proxy needs the bridge the runtime made; with an external CRI endpoint there is none of kite's.
    let proxy: NodeServiceProxy | undefined;
    const serviceProxy: Service = {
      name: 'kube-proxy',
      start: async () => {
        const net = nodeRuntime.podNetwork;
        const gateway = nodeRuntime.gateway;
        if (!net || !gateway) return;
        proxy = new NodeServiceProxy({ client, dataDir: opts.dataDir, nodeName, bridge: net.bridge, podSubnet: net.subnet, gateway, clock: opts.clock, logger: opts.logger });
        await proxy.start();
      },
      stop: async () => {
        await proxy?.stop();
      },
    };
    // Served where the node's pods reach it: the bridge's gateway (none with an external runtime).
    let dns: ClusterDns | undefined;
    const clusterDns: Service = {
      name: 'cluster-dns',
      start: async () => {
        const address = nodeRuntime.gateway;
        if (!address) {
          opts.logger.info('no pod bridge of our own: cluster DNS not started');
          return;
        }
        dns = new ClusterDns({ informers, address, domain: cfg.clusterDomain, upstream: opts.clusterDnsUpstream, node: { name: nodeName, client, address }, clock: opts.clock, logger: opts.logger });
        try {
          await dns.start();
        } catch (err) {
          // Port 53 taken on the gateway: the node still runs its pods (as a crash-looping CoreDNS
          // pod would leave it), and no kube-dns slice points at this node.
          opts.logger.error({ err, address }, 'cluster DNS could not start');
          await dns.stop();
          dns = undefined;
        }
      },
      stop: async () => {
        await dns?.stop();
      },
    };
    // Policy needs the node's own bridge: none with an external runtime's network.
    let enforcer: NetworkPolicyEnforcer | undefined;
    const networkPolicy: Service = {
      name: 'network-policy',
      start: async () => {
        const bridge = nodeRuntime.podNetwork?.bridge;
        if (!bridge) return;
        enforcer = new NetworkPolicyEnforcer({ client, nodeName: cfg.nodeName, bridge, nft: new NftCommand(), clock: opts.clock, logger: opts.logger });
        await enforcer.start();
      },
      stop: async () => {
        await enforcer?.stop();
      },
    };
    this.daemons = new ServiceGroup('node', [nodeRuntime, serviceProxy, networkPolicy, clusterDns, kubelet]);
    await this.daemons.start();
  }

  /**
   * Stops the node daemons in reverse; containers keep running (a restarted agent adopts them) unless
   * shutdownGracePeriod is set: then the kubelet first terminates the pods (graceful node shutdown),
   * while the proxy and DNS still serve them.
   */
  async stop(): Promise<void> {
    await this.kubelet?.shutdownNode().catch((err: unknown) => this.opts.logger.error({ err }, 'graceful node shutdown'));
    await this.daemons?.stop();
    await this.informers?.shutdown();
    this.client?.close();
  }
}
