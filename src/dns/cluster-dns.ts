// Cluster DNS on a node: the resolver over the shared informers' caches of Services, EndpointSlices
// and Namespaces (as CoreDNS's kubernetes plugin watches them), served by a DnsServer on the node's
// gateway address, and the node's own EndpointSlice of the `kube-dns` Service, so the node's
// proxy (internalTrafficPolicy: Local) sends the node's pods to this server through 10.96.0.10.
import type { EndpointSlice, Namespace, Node, Service as KubeService } from '../api/types.js';
import { resourceNamed } from '../api/kinds.js';
import { unlessNotFound } from '../api/errors.js';
import type { Client } from '../client/client.js';
import type { SharedInformerFactory } from '../client/factory.js';
import type { SharedInformer } from '../client/informer.js';
import { metaNamespaceKeyFunc } from '../client/indexer.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { Service } from '../util/lifecycle.js';
import { Resolver, clusterIPs, canonicalIP, type ClusterView } from './resolver.js';
import { DnsServer, type Upstream } from './server.js';

export const serviceNameLabel = 'kubernetes.io/service-name';
export const managedByLabel = 'endpointslice.kubernetes.io/managed-by';
/**
 * The managed-by value of the slices the agents keep for kube-dns (a label value may hold no "/":
 * named like upstream's endpointslice-controller.k8s.io).
 */
export const clusterDnsManager = 'cluster-dns.kite.io';
/** How long start() waits for the caches, as CoreDNS waits for the API before serving (then serves anyway). */
const startupSyncMs = 5000;
/** How often a node's DNS looks for its Node object to own its slice, until the kubelet has registered it. */
const ownerPollMs = 2000;
export const dnsNamespace = 'kube-system';
export const dnsServiceName = 'kube-dns';

const serviceByIP = 'dns/clusterIP';
const sliceByService = 'dns/service';
const sliceByAddress = 'dns/address';

/** The resolver's view of the cluster: lookups on the shared informers' indexers. */
export class InformerClusterView implements ClusterView {
  private readonly services: SharedInformer<KubeService>;
  private readonly slices: SharedInformer<EndpointSlice>;
  private readonly namespaces: SharedInformer<Namespace>;
  private modified: number;

  constructor(informers: SharedInformerFactory, clock: Clock) {
    const servicesInfo = resourceNamed('services');
    const slicesInfo = resourceNamed('endpointslices.discovery.k8s.io');
    this.services = informers.informerFor<KubeService>(servicesInfo);
    this.slices = informers.informerFor<EndpointSlice>(slicesInfo);
    this.namespaces = informers.informerFor<Namespace>(resourceNamed('namespaces'));
    informers.addIndexers<KubeService>(servicesInfo, { [serviceByIP]: (s) => clusterIPs(s) });
    informers.addIndexers<EndpointSlice>(slicesInfo, {
      [sliceByService]: (s) => {
        const service = s.metadata?.labels?.[serviceNameLabel];
        return service ? [`${s.metadata?.namespace}/${service}`] : [];
      },
      [sliceByAddress]: (s) => [...new Set((s.endpoints ?? []).flatMap((e) => (e.addresses ?? []).map(canonicalIP)))],
    });
    this.modified = Math.floor(clock.now() / 1000);
    const touch = () => {
      this.modified = Math.floor(clock.now() / 1000);
    };
    // Resyncs redeliver the same object: no change for the serial.
    const handler = { onAdd: touch, onUpdate: (a: unknown, b: unknown) => a !== b && touch(), onDelete: touch };
    this.services.addEventHandler(handler);
    this.slices.addEventHandler(handler);
    this.namespaces.addEventHandler(handler);
  }

  service(namespace: string, name: string): KubeService | undefined {
    return this.services.indexer.getByKey(`${namespace}/${name}`);
  }

  endpointSlices(namespace: string, serviceName: string): EndpointSlice[] {
    return this.slices.indexer.byIndex(sliceByService, `${namespace}/${serviceName}`);
  }

  servicesByIP(ip: string): KubeService[] {
    return this.services.indexer.byIndex(serviceByIP, ip);
  }

  endpointSlicesByIP(ip: string): EndpointSlice[] {
    return this.slices.indexer.byIndex(sliceByAddress, ip);
  }

  namespaceExists(namespace: string): boolean {
    return this.namespaces.indexer.getByKey(namespace) !== undefined;
  }

  synced(): boolean {
    return this.services.hasSynced() && this.slices.hasSynced() && this.namespaces.hasSynced();
  }

  serial(): number {
    return this.modified;
  }
}

export interface ClusterDnsOptions {
  informers: SharedInformerFactory;
  /** Where to listen: the node's gateway address. */
  address: string;
  /** Default 53. */
  port?: number;
  domain?: string;
  upstream?: Upstream;
  /**
   * The node whose kube-dns EndpointSlice this server keeps, and the address it advertises there
   * (the listening address on a node); none in benchmarks.
   */
  node?: { name: string; client: Client; address: string };
  clock: Clock;
  logger?: Logger;
}

/**
 * The node's cluster DNS: serves once the caches have synced, or after startupSyncMs without them
 * (absent names are SERVFAIL until they sync).
 */
export class ClusterDns implements Service {
  readonly name = 'cluster-dns';
  private server?: DnsServer;
  private endpoints?: NodeDnsEndpoints;

  constructor(private readonly opts: ClusterDnsOptions) {}

  get port(): number {
    return this.server?.port ?? 0;
  }

  async start(): Promise<void> {
    const { opts } = this;
    const view = new InformerClusterView(opts.informers, opts.clock);
    const resolver = new Resolver({ view, domain: opts.domain, localAddresses: [opts.address] });
    this.server = new DnsServer({ address: opts.address, port: opts.port ?? 53, resolver, upstream: opts.upstream, logger: opts.logger });
    await this.server.start();
    if (opts.node) {
      this.endpoints = new NodeDnsEndpoints({ ...opts.node, informers: opts.informers, clock: opts.clock, logger: opts.logger });
      this.endpoints.start();
    }
    opts.informers.start();
    const giveUp = new AbortController();
    const timer = opts.clock.setTimer(startupSyncMs, () => giveUp.abort());
    if (!(await opts.informers.waitForCacheSync(giveUp.signal))) opts.logger?.warn('cluster DNS serving before the API caches synced');
    timer.cancel();
    opts.logger?.info({ address: opts.address, port: this.server.port, upstream: opts.upstream }, 'cluster DNS serving');
  }

  async stop(): Promise<void> {
    this.endpoints?.stop();
    await this.server?.stop();
  }
}

/** The EndpointSlice that makes this node's DNS server an endpoint of kube-dns. */
export function nodeDnsEndpointSlice(nodeName: string, address: string): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${dnsServiceName}-${nodeName}`,
      namespace: dnsNamespace,
      labels: { [serviceNameLabel]: dnsServiceName, [managedByLabel]: clusterDnsManager },
    },
    addressType: address.includes(':') ? 'IPv6' : 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true, serving: true, terminating: false }, nodeName }],
    ports: [
      { name: 'dns', port: 53, protocol: 'UDP' },
      { name: 'dns-tcp', port: 53, protocol: 'TCP' },
    ],
  };
}

/** Whether the slice carries what we want of it (other labels, owners and fields may be added by others). */
function holds(have: EndpointSlice, want: EndpointSlice): boolean {
  const labels = have.metadata?.labels ?? {};
  const owners = have.metadata?.ownerReferences ?? [];
  const [ep] = have.endpoints ?? [];
  const wantEp = want.endpoints[0]!;
  const port = (p: { name?: string; port?: number; protocol?: string }) => `${p.name}/${p.port}/${p.protocol ?? 'TCP'}`;
  return (
    Object.entries(want.metadata!.labels!).every(([k, v]) => labels[k] === v) &&
    (want.metadata!.ownerReferences ?? []).every((w) => owners.some((o) => o.uid === w.uid)) &&
    have.addressType === want.addressType &&
    have.endpoints?.length === 1 &&
    ep!.addresses.length === 1 &&
    ep!.addresses[0] === wantEp.addresses[0] &&
    ep!.nodeName === wantEp.nodeName &&
    ep!.conditions?.ready === true &&
    ep!.conditions.serving === true &&
    ep!.conditions.terminating === false &&
    (have.ports ?? []).map(port).sort().join() === want.ports!.map(port).sort().join()
  );
}

interface NodeDnsEndpointsOptions {
  name: string;
  client: Client;
  address: string;
  informers: SharedInformerFactory;
  clock: Clock;
  logger?: Logger;
}

/**
 * Keeps kube-system/kube-dns-<node>: written at start, rewritten when someone changes or deletes it
 * (seen through the shared EndpointSlice informer), retried with backoff when the API is away.
 * The Node owns it once it is registered (the kubelet registers it after DNS starts, so until then
 * it is looked for every few seconds): deleting the Node lets the garbage collector remove it.
 */
class NodeDnsEndpoints {
  private want: EndpointSlice;
  private readonly key: string;
  private running = false;
  private again = false;
  private stopped = false;
  private retry?: Timer;
  private backoffMs = 0;
  private unregister?: () => void;

  constructor(private readonly opts: NodeDnsEndpointsOptions) {
    this.want = nodeDnsEndpointSlice(opts.name, opts.address);
    this.key = `${dnsNamespace}/${this.want.metadata!.name}`;
  }

  start(): void {
    const informer = this.opts.informers.informerFor<EndpointSlice>(resourceNamed('endpointslices.discovery.k8s.io'));
    this.unregister = informer.addEventHandler({
      onUpdate: (_old, cur) => metaNamespaceKeyFunc(cur) === this.key && !holds(cur, this.want) && this.sync(),
      onDelete: (s) => metaNamespaceKeyFunc(s) === this.key && this.sync(),
    });
    this.sync();
  }

  stop(): void {
    this.stopped = true;
    this.retry?.cancel();
    this.unregister?.();
  }

  private sync(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.ensure().then(
      (owned) => {
        this.backoffMs = 0;
        if (!owned) this.retry = this.opts.clock.setTimer(ownerPollMs, () => this.sync());
        this.finish();
      },
      (err: unknown) => {
        this.backoffMs = Math.min(30_000, Math.max(500, this.backoffMs * 2));
        this.opts.logger?.warn({ err: err instanceof Error ? err.message : err, retryMs: this.backoffMs }, 'cluster DNS EndpointSlice');
        this.retry = this.opts.clock.setTimer(this.backoffMs, () => this.sync());
        this.finish();
      },
    );
  }

  private finish(): void {
    this.running = false;
    if (this.again) {
      this.again = false;
      this.sync();
    }
  }

  /** Writes the slice if it differs; whether it names its Node as owner. */
  private async ensure(): Promise<boolean> {
    if (!this.want.metadata!.ownerReferences) {
      const node = (await unlessNotFound(this.opts.client.resource('nodes').get(this.opts.name))) as Node | undefined;
      const uid = node?.metadata?.uid;
      if (uid) this.want = { ...this.want, metadata: { ...this.want.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.opts.name, uid }] } };
    }
    const owned = !!this.want.metadata!.ownerReferences;
    const slices = this.opts.client.resource('endpointslices.discovery.k8s.io').namespace(dnsNamespace);
    const have = (await unlessNotFound(slices.get(this.want.metadata!.name!))) as EndpointSlice | undefined;
    if (!have) {
      await slices.create(this.want);
      return owned;
    }
    if (holds(have, this.want)) return owned;
    const owners = (have.metadata?.ownerReferences ?? []).filter((o) => !(o.kind === 'Node' && o.name === this.opts.name));
    await slices.update({
      ...have,
      metadata: {
        ...have.metadata,
        labels: { ...have.metadata?.labels, ...this.want.metadata!.labels },
        ownerReferences: owned ? [...owners, ...this.want.metadata!.ownerReferences!] : have.metadata?.ownerReferences,
      },
      addressType: this.want.addressType,
      endpoints: this.want.endpoints,
      ports: this.want.ports,
    });
    return owned;
  }
}

