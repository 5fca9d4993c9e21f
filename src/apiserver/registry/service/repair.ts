// The API server's allocation repair loops, as upstream's ipallocator/controller/repairip.go and
// portallocator/controller/repair.go: every Service's cluster IPs have their IPAddress and its node
// ports their claim (re-made when missing, with a Warning event), and what the allocators hold for
// no Service is given back once it is older than a grace period (a create in flight holds its IP
// and ports a moment before its Service is stored). Every API server runs it; the writes it makes
// are creates-if-absent and deletes, so several at once agree.
import type { IPAddress, Service } from '../../../api/types.js';
import type { StoredObject } from '../../../api/meta.js';
import { StatusError } from '../../../api/errors.js';
import { familyOf, parseAddr, parsePrefix, prefixContains, type Prefix } from '../../../api/netip.js';
import { EventBroadcaster, type EventRecorder, type InvolvedObject } from '../../../client/record/recorder.js';
import type { Clock } from '../../../util/clock.js';
import type { Logger } from '../../../util/log.js';
import { Periodic } from '../../../util/periodic.js';
import type { Registries } from '../registries.js';
import { heldClusterIPs, heldNodePorts } from '../strategies/services.js';
import { ipAddressManagedByLabel, ipAllocatorName } from '../../../api/network.js';
import { defaultServiceCIDRName, ipAddressFor } from './ipallocator.js';
import { formatPortRange } from './portallocator.js';

/** Upstream's: a Service create holds its IPAddress up to the request timeout before the Service exists. */
export const leakGracePeriodMs = 60_000;
const repairIntervalMs = 3 * 60_000;

const systemWrite = { dryRun: false, user: { name: 'system:apiserver', groups: ['system:masters'] }, subresource: '' };

const serviceRef = (svc: StoredObject): InvolvedObject => ({ kind: 'Service', apiVersion: 'v1', namespace: svc.metadata.namespace, name: svc.metadata.name, uid: svc.metadata.uid });
const ipRef = (ip: StoredObject): InvolvedObject => ({ kind: 'IPAddress', apiVersion: 'networking.k8s.io/v1', name: ip.metadata.name, uid: ip.metadata.uid });

export interface RepairOptions {
  registries: Registries;
  clock: Clock;
  logger: Logger;
  /** For tests; default: events written through the registries. */
  recorder?: EventRecorder;
}

export class ServiceAllocationRepair {
  private readonly loop: Periodic;
  private readonly events?: EventBroadcaster;
  private readonly ipEvents: EventRecorder;
  private readonly portEvents: EventRecorder;

  constructor(private readonly opts: RepairOptions) {
    const { registries, clock, logger } = opts;
    if (opts.recorder) {
      this.ipEvents = this.portEvents = opts.recorder;
    } else {
      const events = registries.of('', 'events');
      this.events = new EventBroadcaster({
        clock,
        logger,
        sink: {
          create: async (e) => (await events.create(e.metadata?.namespace ?? 'default', e as never, systemWrite)) as never,
          patch: async (e, patch) =>
            (await events.update(e.metadata?.namespace ?? 'default', e.metadata?.name ?? '', (cur) => ({ ...cur!, ...(patch as object) }), systemWrite)).object as never,
        },
      });
      this.ipEvents = this.events.newRecorder({ component: 'ipallocator-repair-controller' });
      this.portEvents = this.events.newRecorder({ component: 'portallocator-repair-controller' });
    }
    this.loop = new Periodic({ clock, periodMs: repairIntervalMs, run: () => this.runOnce(), onError: (err) => logger.warn({ err }, 'service allocation repair failed') });
  }

  /** One pass now, then every few minutes. */
  start(): void {
    void this.runOnce().catch((err: unknown) => this.opts.logger.warn({ err }, 'service allocation repair failed'));
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.events?.stop();
  }

  async runOnce(): Promise<void> {
    await this.repairIPs();
    await this.repairNodePorts();
  }

  /** Every ServiceCIDR's prefixes (deleting ones too: their addresses are still in range). */
  private async serviceCIDRPrefixes(): Promise<Prefix[]> {
    const { registries } = this.opts;
    let cidrs = registries.cachedList('servicecidrs.networking.k8s.io');
    if (cidrs.length === 0) {
      // A first start on etcd: the cache may not have the default ServiceCIDR made a moment ago.
      const live = await registries.lookup('servicecidrs.networking.k8s.io', '', defaultServiceCIDRName);
      cidrs = live ? [live] : [];
    }
    return cidrs.flatMap((c) => (c.spec?.cidrs ?? []).map(parsePrefix).filter((p): p is Prefix => p !== undefined));
  }

  private async repairIPs(): Promise<void> {
    const { registries, clock } = this.opts;
    const ipRegistry = registries.of('networking.k8s.io', 'ipaddresses');
    const services = registries.cachedList('services') as (Service & StoredObject)[];
    const byKey = new Map(services.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
    const prefixes = await this.serviceCIDRPrefixes();
    const inServiceCIDR = (ip: string) => {
      const addr = parseAddr(ip);
      return addr !== undefined && prefixes.some((p) => prefixContains(p, addr));
    };
    for (const svc of services) {
      for (const ip of heldClusterIPs(svc.spec)) {
        const family = familyOf(ip) ?? 'IPv4';
        if (!inServiceCIDR(ip)) {
          this.ipEvents.event(serviceRef(svc), 'Warning', 'ClusterIPOutOfRange', `Cluster IP [${family}]: ${ip} is not within any configured Service CIDR; please recreate service`);
          continue;
        }
        const current = await registries.lookup('ipaddresses.networking.k8s.io', '', ip);
        const want = ipAddressFor(ip, family, { namespace: svc.metadata.namespace!, name: svc.metadata.name! });
        if (!current) {
          // The cache may still hold a Service deleted (and its address released) a moment ago.
          if (!(await this.stillHolds(svc, (spec) => heldClusterIPs(spec).includes(ip)))) continue;
          this.ipEvents.event(serviceRef(svc), 'Warning', 'ClusterIPNotAllocated', `Cluster IP [${family}]: ${ip} is not allocated; repairing`);
          await this.createIgnoringExists(want);
          continue;
        }
        const ref = current.spec?.parentRef;
        if (ref?.namespace === svc.metadata.namespace && ref?.name === svc.metadata.name && ref?.resource === 'services' && !ref.group) continue;
        const other = ref ? byKey.get(`${ref.namespace}/${ref.name}`) : undefined;
        if (other && heldClusterIPs(other.spec).includes(ip)) {
          this.ipEvents.event(serviceRef(svc), 'Warning', 'ClusterIPAlreadyAllocated', `Cluster IP [${family}]:${ip} was assigned to multiple services; please recreate service`);
          continue;
        }
        this.ipEvents.event(serviceRef(svc), 'Warning', 'ClusterIPNotAllocated', `the ClusterIP [${family}]: ${ip} for Service ${svc.metadata.namespace}/${svc.metadata.name} has a wrong reference; repairing`);
        await ipRegistry.delete('', ip, { preconditions: { uid: current.metadata.uid } }, systemWrite).catch(() => undefined);
        await this.createIgnoringExists(want);
      }
    }
    for (const ip of registries.cachedList('ipaddresses.networking.k8s.io') as (IPAddress & StoredObject)[]) {
      if (ip.metadata.labels?.[ipAddressManagedByLabel] !== ipAllocatorName) continue;
      const ref = ip.spec?.parentRef;
      const name = ip.metadata.name!;
      const age = clock.now() - Date.parse(ip.metadata.creationTimestamp ?? '');
      // A Service being created (or updated from ExternalName) holds its address before it is stored.
      if (!(age > leakGracePeriodMs)) continue;
      let why: [string, string] | undefined;
      if (ref?.group || ref?.resource !== 'services') {
        why = ['IPAddressNotAllocated', `IPAddress ${name} appears to have been modified, not referencing a Service: cleaning up`];
      } else {
        const svc = byKey.get(`${ref.namespace}/${ref.name}`) ?? (await registries.lookup('services', ref.namespace ?? '', ref.name ?? ''));
        if (!svc) why = ['IPAddressNotAllocated', `IPAddress: ${name} for Service ${ref.namespace}/${ref.name} appears to have leaked: cleaning up`];
        else if (!heldClusterIPs(svc.spec).includes(name)) why = ['IPAddressWrongReference', `IPAddress: ${name} for Service ${ref.namespace}/${ref.name} has a wrong reference; cleaning up`];
      }
      if (!why) continue;
      this.ipEvents.event(ipRef(ip), 'Warning', why[0], why[1]);
      await ipRegistry.delete('', name, { preconditions: { uid: ip.metadata.uid } }, systemWrite).catch(() => undefined);
    }
  }

  /** A live read: the Service (the same one) still exists and holds what the check asks about. */
  private async stillHolds(svc: StoredObject, holds: (spec: Service['spec']) => boolean): Promise<boolean> {
    try {
      const live = await this.opts.registries.read('services', svc.metadata.namespace ?? '', svc.metadata.name ?? '');
      return live.metadata.uid === svc.metadata.uid && holds(live.spec);
    } catch (err) {
      if (err instanceof StatusError && err.code === 404) return false;
      throw err;
    }
  }

  private async createIgnoringExists(ip: IPAddress): Promise<void> {
    try {
      await this.opts.registries.of('networking.k8s.io', 'ipaddresses').create('', ip as never, systemWrite);
    } catch (err) {
      if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
    }
  }

  private async repairNodePorts(): Promise<void> {
    const { registries, clock } = this.opts;
    const ports = registries.nodePorts;
    const claims = await ports.claims();
    const holders = new Map<number, StoredObject>();
    for (const svc of registries.cachedList('services') as (Service & StoredObject)[]) {
      for (const port of heldNodePorts(svc.spec)) {
        if (!ports.contains(port)) {
          this.portEvents.event(serviceRef(svc), 'Warning', 'PortOutOfRange', `Port ${port} is not within the port range ${formatPortRange(ports.range)}; please recreate service`);
          continue;
        }
        const claim = claims.get(port);
        const first = holders.get(port);
        if (first && first !== svc) {
          this.portEvents.event(serviceRef(svc), 'Warning', 'PortAlreadyAllocated', `Port ${port} was assigned to multiple services; please recreate service`);
          continue;
        }
        holders.set(port, svc);
        if (!claim) {
          if (!(await this.stillHolds(svc, (spec) => heldNodePorts(spec).includes(port)))) continue;
          this.portEvents.event(serviceRef(svc), 'Warning', 'PortNotAllocated', `Port ${port} is not allocated; repairing`);
          await ports.allocate({ namespace: svc.metadata.namespace!, name: svc.metadata.name!, uid: svc.metadata.uid }, port, false).catch(() => undefined);
        }
      }
    }
    for (const [port, claim] of claims) {
      if (holders.has(port) || !(clock.now() - claim.time > leakGracePeriodMs)) continue;
      // The holder may be a Service this cache has not seen yet.
      const svc = claim.name ? await registries.lookup('services', claim.namespace, claim.name) : undefined;
      if (svc && heldNodePorts(svc.spec).includes(port)) continue;
      this.opts.logger.info({ port }, 'the node port appears to have leaked: cleaning up');
      await ports.release(port);
    }
  }
}
