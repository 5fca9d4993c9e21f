// The ServiceCIDR controller, as upstream's pkg/controller/servicecidrs: every ServiceCIDR gets the
// protection finalizer and a Ready condition; a deleted one keeps its finalizer while IPAddresses
// of the allocator lie only in it (Ready=False, reason Terminating), and loses it once none do and
// the deletion has had time to reach every allocator.
import type { IPAddress, ServiceCIDR } from '../../api/types.js';
import { hasStatusCode } from '../../api/errors.js';
import { findResource } from '../../api/resources.js';
import { rfc3339 } from '../../api/time.js';
import { parseAddr, parsePrefix, prefixContains, prefixContainsPrefix, type Addr, type Prefix } from '../../api/netip.js';
import type { Indexer } from '../../client/indexer.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';
import { ipAddressManagedByLabel, ipAllocatorName } from '../../api/network.js';

export const serviceCIDRFinalizer = 'networking.k8s.io/service-cidr-finalizer';
/** How long a deleted ServiceCIDR waits for the API servers' allocators to stop using it. */
export const deletionGracePeriodMs = 10_000;

const serviceCIDRsResource = findResource('networking.k8s.io', 'v1', 'servicecidrs')!;
const ipAddressesResource = findResource('networking.k8s.io', 'v1', 'ipaddresses')!;

export type ServiceCIDRControllerOptions = Omit<ControllerOptions, 'workers' | 'recorder'>;

const prefixesOf = (c: ServiceCIDR): Prefix[] => (c.spec?.cidrs ?? []).map(parsePrefix).filter((p): p is Prefix => p !== undefined);

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export class ServiceCIDRController {
  private readonly cidrs: Indexer<ServiceCIDR>;
  private readonly ips: Indexer<IPAddress>;
  private readonly controller: QueueController;

  constructor(private readonly opts: ServiceCIDRControllerOptions) {
    const cidrInformer = opts.informers.informerFor<ServiceCIDR>(serviceCIDRsResource);
    const ipInformer = opts.informers.informerFor<IPAddress>(ipAddressesResource);
    this.cidrs = cidrInformer.indexer;
    this.ips = ipInformer.indexer;
    this.controller = new QueueController({
      name: 'service-cidr-controller',
      clock: opts.clock,
      logger: opts.logger,
      sources: [cidrInformer, ipInformer],
      sync: (key) => this.sync(key),
    });
    // A change to one ServiceCIDR may unblock the deletion of another it overlaps.
    const onCIDR = (c: ServiceCIDR) => {
      this.controller.enqueue(c.metadata!.name!);
      for (const other of this.overlapping(prefixesOf(c))) this.controller.enqueue(other.metadata!.name!);
    };
    cidrInformer.addEventHandler({ onAdd: onCIDR, onUpdate: (_old, cur) => onCIDR(cur), onDelete: onCIDR });
    const onIP = (ip: IPAddress) => {
      const addr = parseAddr(ip.metadata?.name ?? '');
      if (addr) for (const c of this.containing(addr)) this.controller.enqueue(c.metadata!.name!);
    };
    ipInformer.addEventHandler({ onAdd: onIP, onUpdate: (_old, cur) => onIP(cur), onDelete: onIP });
  }

  start(): void {
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  private containing(addr: Addr): ServiceCIDR[] {
    return this.cidrs.list().filter((c) => prefixesOf(c).some((p) => prefixContains(p, addr)));
  }

  private overlapping(prefixes: Prefix[]): ServiceCIDR[] {
    return this.cidrs.list().filter((c) => prefixesOf(c).some((p) => prefixes.some((q) => prefixContainsPrefix(p, q) || prefixContainsPrefix(q, p))));
  }

  /** upstream's canDeleteCIDR: no allocator IPAddress would be left outside every other ServiceCIDR. */
  canDelete(cidr: ServiceCIDR): boolean {
    const others = this.cidrs.list().filter((c) => c.metadata?.name !== cidr.metadata?.name);
    const mine = prefixesOf(cidr);
    // Every prefix lies inside another ServiceCIDR: all its addresses stay covered.
    if (mine.every((p) => others.some((o) => prefixesOf(o).some((q) => prefixContainsPrefix(q, p))))) return true;
    for (const ip of this.ips.list()) {
      if (ip.metadata?.labels?.[ipAddressManagedByLabel] !== ipAllocatorName) continue;
      const addr = parseAddr(ip.metadata?.name ?? '');
      if (!addr || !mine.some((p) => prefixContains(p, addr))) continue;
      if (!others.some((o) => prefixesOf(o).some((q) => prefixContains(q, addr)))) return false;
    }
    return true;
  }

  async sync(name: string): Promise<number | void> {
    const cidr = this.cidrs.getByKey(name);
    if (!cidr) return;
    const client = this.opts.client.resource<ServiceCIDR>(serviceCIDRsResource);
    const finalizers = cidr.metadata?.finalizers ?? [];
    if (cidr.metadata?.deletionTimestamp) {
      if (!this.canDelete(cidr)) {
        await this.setReady(cidr, 'False', 'There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR', 'Terminating');
        return;
      }
      const wait = Date.parse(cidr.metadata.deletionTimestamp) + deletionGracePeriodMs - this.opts.clock.now();
      if (wait > 0) return wait;
      if (!finalizers.includes(serviceCIDRFinalizer)) return;
      await this.ignoreNotFound(client.patch(name, 'merge', { metadata: { finalizers: finalizers.filter((f) => f !== serviceCIDRFinalizer), resourceVersion: cidr.metadata.resourceVersion } }));
      return;
    }
    if (!finalizers.includes(serviceCIDRFinalizer)) {
      await this.ignoreNotFound(client.patch(name, 'merge', { metadata: { finalizers: [...finalizers, serviceCIDRFinalizer], resourceVersion: cidr.metadata?.resourceVersion } }));
      return;
    }
    await this.setReady(cidr, 'True', 'Kubernetes Service CIDR is ready');
  }

  private async setReady(cidr: ServiceCIDR, status: string, message: string, reason = ''): Promise<void> {
    const conditions = (cidr.status?.conditions ?? []) as Condition[];
    const current = conditions.find((c) => c.type === 'Ready');
    if (current && current.status === status && (current.reason ?? '') === reason && current.message === message) return;
    const lastTransitionTime = current?.status === status && current.lastTransitionTime ? current.lastTransitionTime : rfc3339(this.opts.clock.now());
    const ready: Condition = { type: 'Ready', status, reason, message, lastTransitionTime };
    const next = { ...cidr, status: { ...cidr.status, conditions: [...conditions.filter((c) => c.type !== 'Ready'), ready] } } as ServiceCIDR;
    await this.ignoreNotFound(this.opts.client.resource<ServiceCIDR>(serviceCIDRsResource).updateStatus(next));
  }

  private async ignoreNotFound(p: Promise<unknown>): Promise<void> {
    try {
      await p;
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err;
    }
  }
}
