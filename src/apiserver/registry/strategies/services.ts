// Services: the registry allocates cluster IPs (IPAddress objects in the ServiceCIDRs) and node
// ports as a transaction around the write, keeps them across updates that omit them, drops the
// fields a type change leaves behind, and releases what a service no longer holds, as upstream's
// service REST (pkg/registry/core/service/storage) does.
import { findResource } from '../../../api/resources.js';
import type { StoredObject } from '../../../api/meta.js';
import type { Service, ServicePort } from '../../../api/types.js';
import { internalError, invalid as invalidObject } from '../../../api/errors.js';
import { invalid, Path, type FieldError } from '../../../api/field.js';
import { familyOf, type IPFamily } from '../../../api/netip.js';
import type { Allocation, ResourceStrategy } from '../strategy.js';
import { AllocationError, type ClusterIPAllocator, type ServiceRef } from '../service/ipallocator.js';
import type { NodePortAllocator } from '../service/portallocator.js';
import { genericStrategy } from './generic.js';

const info = findResource('', 'v1', 'services')!;

export interface ServiceAllocators {
  clusterIPs: ClusterIPAllocator;
  nodePorts: NodePortAllocator;
}

type Spec = NonNullable<Service['spec']>;

function spec(obj: StoredObject): Spec & Record<string, unknown> {
  obj.spec ??= {};
  return obj.spec as Spec & Record<string, unknown>;
}

/** upstream's needsClusterIP: anything but ExternalName and headless. */
const needsClusterIP = (s: Spec | undefined): boolean => !!s && s.type !== 'ExternalName' && s.clusterIP !== 'None';

/** The real cluster IPs a service holds (not "None", not an ExternalName's leftovers). */
export function heldClusterIPs(s: Spec | undefined): string[] {
  if (!s || s.type === 'ExternalName') return [];
  const ips = s.clusterIPs?.length ? s.clusterIPs : s.clusterIP ? [s.clusterIP] : [];
  return ips.filter((ip) => ip !== 'None' && ip !== '');
}

const wantsNodePorts = (s: Spec | undefined): boolean =>
  !!s && (s.type === 'NodePort' || (s.type === 'LoadBalancer' && s.allocateLoadBalancerNodePorts !== false));

/** The node ports a service holds: its ports' and its health check's. */
export function heldNodePorts(s: Spec | undefined): number[] {
  if (!s) return [];
  const ports = (s.ports ?? []).map((p) => p.nodePort ?? 0);
  if (s.healthCheckNodePort) ports.push(s.healthCheckNodePort);
  return [...new Set(ports.filter((p) => p > 0))];
}

const portsPath = Path.root('spec').child('ports');

/** A field error on the service as a 422, the way upstream's allocators report a bad request. */
const invalidService = (obj: StoredObject, err: FieldError) => invalidObject('Service', '', obj.metadata.name ?? '', [err]);

/** Upstream's dropTypeDependentFields: what the old type allocated and the new one may not have, unless the user changed it. */
function dropTypeDependentFields(s: Spec, o: Spec): void {
  if (needsClusterIP(o) && s.type === 'ExternalName') {
    const same = (s.clusterIP ?? '') === (o.clusterIP ?? '') && JSON.stringify(s.clusterIPs ?? []) === JSON.stringify(o.clusterIPs ?? []);
    if (same) {
      delete s.clusterIP;
      delete s.clusterIPs;
    }
    if (JSON.stringify(s.ipFamilies ?? []) === JSON.stringify(o.ipFamilies ?? [])) delete s.ipFamilies;
    if (s.ipFamilyPolicy === o.ipFamilyPolicy) delete s.ipFamilyPolicy;
  }
  if (wantsNodePorts(o) && !wantsNodePorts(s)) {
    for (const p of (s.ports ?? []) as ServicePort[]) {
      const before = o.ports?.find((q) => q.port === p.port && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP'));
      if (p.nodePort && before?.nodePort === p.nodePort) delete (p as { nodePort?: number }).nodePort;
    }
  }
  if (o.healthCheckNodePort && s.healthCheckNodePort === o.healthCheckNodePort && !(s.type === 'LoadBalancer' && s.externalTrafficPolicy === 'Local')) {
    delete s.healthCheckNodePort;
  }
  if (s.type !== 'LoadBalancer') {
    if (s.allocateLoadBalancerNodePorts === o.allocateLoadBalancerNodePorts) delete s.allocateLoadBalancerNodePorts;
    if (s.loadBalancerClass === o.loadBalancerClass) delete s.loadBalancerClass;
  }
  const externallyAccessible = s.type === 'NodePort' || s.type === 'LoadBalancer' || (s.externalIPs?.length ?? 0) > 0;
  if (!externallyAccessible && s.externalTrafficPolicy === o.externalTrafficPolicy) delete s.externalTrafficPolicy;
  if (s.type === 'ExternalName' && s.internalTrafficPolicy === o.internalTrafficPolicy) delete s.internalTrafficPolicy;
}

/** Takes cluster IPs and node ports for one write; what it took goes back on revert, what the old object held and the new one does not on commit. */
class ServiceAllocation implements Allocation {
  readonly takenIPs: string[] = [];
  readonly takenPorts: number[] = [];
  releaseIPs: string[] = [];
  releasePorts: number[] = [];

  constructor(
    private readonly alloc: ServiceAllocators,
    private readonly owner: ServiceRef,
  ) {}

  /** Best effort: what fails to go back (storage unreachable) is freed by the repair loop after its grace. */
  private async releaseAll(ips: string[], ports: number[]): Promise<void> {
    for (const ip of ips) await this.alloc.clusterIPs.release(ip, this.owner).catch(() => undefined);
    for (const port of ports) await this.alloc.nodePorts.release(port, this.owner).catch(() => undefined);
  }

  commit(): Promise<void> {
    return this.releaseAll(this.releaseIPs, this.releasePorts);
  }

  revert(): Promise<void> {
    return this.releaseAll(this.takenIPs, this.takenPorts);
  }
}

const ipFamiliesPath = Path.root('spec').child('ipFamilies');

/**
 * upstream's initIPFamilyFields: the families from the request, else from its IPs, else the
 * cluster's primary; the policy SingleStack (RequireDualStack when two families are asked for, and
 * for a headless Service without selector, which serves every family the cluster has).
 */
function initIPFamilyFields(obj: StoredObject, configured: IPFamily[]): void {
  const s = spec(obj);
  if (s.type === 'ExternalName') return;
  const requested = s.clusterIPs?.length ? s.clusterIPs : s.clusterIP ? [s.clusterIP] : [];
  const headlessSelectorless = requested[0] === 'None' && Object.keys(s.selector ?? {}).length === 0;
  let families = [...((s.ipFamilies ?? []) as IPFamily[])];
  if (families.length === 0) families = requested.filter((ip) => ip !== 'None').map((ip) => familyOf(ip) ?? 'IPv4');
  if (families.length === 0 && configured[0]) families = [configured[0]];
  const policy = s.ipFamilyPolicy ?? (headlessSelectorless || families.length === 2 ? 'RequireDualStack' : 'SingleStack');
  if (!headlessSelectorless) {
    families.forEach((f, i) => {
      if (!configured.includes(f)) throw invalidService(obj, invalid(ipFamiliesPath.index(i), f, 'not configured on this cluster'));
    });
    if (policy === 'RequireDualStack' && configured.length < 2) {
      throw invalidService(obj, invalid(Path.root('spec').child('ipFamilyPolicy'), policy, 'this cluster is not configured for dual-stack services'));
    }
  }
  if (policy !== 'SingleStack') families = [...families, ...configured.filter((f) => !families.includes(f))].slice(0, 2);
  else families = families.slice(0, 1);
  s.ipFamilies = families;
  s.ipFamilyPolicy = policy;
}

async function allocateClusterIPs(alloc: ServiceAllocators, txn: ServiceAllocation, obj: StoredObject, dryRun: boolean): Promise<void> {
  const s = spec(obj);
  const ref = { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
  const requested = s.clusterIPs?.length ? s.clusterIPs : s.clusterIP ? [s.clusterIP] : [];
  const ips: string[] = [];
  for (const [i, family] of ((s.ipFamilies ?? []) as IPFamily[]).entries()) {
    const ip = requested[i];
    try {
      if (ip) {
        await alloc.clusterIPs.allocate(ref, ip, dryRun);
        ips.push(ip);
      } else {
        ips.push(await alloc.clusterIPs.allocateNext(ref, family, dryRun));
      }
      if (!dryRun) txn.takenIPs.push(ips[ips.length - 1]!);
    } catch (err) {
      if (!(err instanceof AllocationError)) throw err;
      if (!ip) throw internalError(`failed to allocate a serviceIP: ${err.message}`);
      throw invalidService(obj, invalid(Path.root('spec').child('clusterIPs'), requested, `failed to allocate IP ${ip}: ${err.message}`));
    }
  }
  s.clusterIP = ips[0];
  s.clusterIPs = ips;
}

/** Upstream's initNodePorts/updateNodePorts: ports held before stay, requested ones are taken, the rest allocated; one node port may serve a port number over several protocols. */
async function allocateNodePorts(alloc: ServiceAllocators, txn: ServiceAllocation, obj: StoredObject, held: Set<number>, dryRun: boolean): Promise<void> {
  const s = spec(obj);
  const ref = { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '', uid: obj.metadata.uid };
  const wanted = wantsNodePorts(s);
  const inThisService = new Set<number>();
  const ports = (s.ports ?? []) as ServicePort[];
  // The claims, read once for the whole Service (it may have hundreds of ports).
  let taken: Set<number> | undefined;
  const next = async () => alloc.nodePorts.allocateNext(ref, dryRun, dryRun ? undefined : (taken ??= await alloc.nodePorts.taken()));
  for (const [i, p] of ports.entries()) {
    const mutable = p as { nodePort?: number };
    if (!p.nodePort && !wanted) continue;
    if (!p.nodePort) {
      // Another entry with the same port number (another protocol) shares its node port.
      const sibling = ports.find((q) => q !== p && q.port === p.port && q.nodePort);
      if (sibling) {
        mutable.nodePort = sibling.nodePort;
        continue;
      }
    }
    const port = p.nodePort ?? 0;
    if (port && (held.has(port) || inThisService.has(port))) {
      inThisService.add(port);
      continue;
    }
    try {
      if (port) await alloc.nodePorts.allocate(ref, port, dryRun);
      else mutable.nodePort = await next();
    } catch (err) {
      if (!(err instanceof AllocationError)) throw err;
      if (!port) throw internalError(`failed to allocate a nodePort: ${err.message}`);
      throw invalidService(obj, invalid(portsPath.index(i).child('nodePort'), port, err.message));
    }
    inThisService.add(mutable.nodePort!);
    if (!dryRun) txn.takenPorts.push(mutable.nodePort!);
  }
  // A LoadBalancer with externalTrafficPolicy Local gets a health check node port too.
  if (s.type !== 'LoadBalancer' || s.externalTrafficPolicy !== 'Local') return;
  const requested = s.healthCheckNodePort ?? 0;
  if (requested && (held.has(requested) || inThisService.has(requested))) return;
  try {
    if (requested) await alloc.nodePorts.allocate(ref, requested, dryRun);
    else s.healthCheckNodePort = await next();
  } catch (err) {
    if (!(err instanceof AllocationError)) throw err;
    if (!requested) throw internalError(`failed to allocate a nodePort: ${err.message}`);
    throw invalidService(obj, invalid(Path.root('spec').child('healthCheckNodePort'), requested, err.message));
  }
  if (!dryRun) txn.takenPorts.push(s.healthCheckNodePort!);
}

export function serviceStrategy(alloc: ServiceAllocators): ResourceStrategy {
  const base = genericStrategy(info);
  return {
    ...base,
    returnDeletedObject: true,
    prepareForCreate(obj) {
      obj.status = { loadBalancer: {} };
      // upstream's normalizeClusterIPs: a lone clusterIP ("None" too) is also the list.
      const s = spec(obj);
      if (s.clusterIP && !s.clusterIPs?.length) s.clusterIPs = [s.clusterIP];
    },
    prepareForUpdate(obj, old) {
      obj.status = old.status;
      const s = spec(obj);
      const o = (old.spec ?? {}) as Spec;
      // upstream's patchAllocatedValues: allocated values the request left out stay as they were.
      if (needsClusterIP(o) && needsClusterIP(s)) {
        if (!s.clusterIP && o.clusterIP) s.clusterIP = o.clusterIP;
        if (!s.clusterIPs?.length && o.clusterIPs?.length && s.clusterIP === o.clusterIP) s.clusterIPs = o.clusterIPs;
      }
      // Families once settled stay (headless ones too) until the Service becomes an ExternalName.
      if (s.type !== 'ExternalName' && o.type !== 'ExternalName') {
        if (!s.ipFamilies?.length && o.ipFamilies?.length) s.ipFamilies = o.ipFamilies;
        s.ipFamilyPolicy ??= o.ipFamilyPolicy;
      }
      if (wantsNodePorts(s) && wantsNodePorts(o)) {
        for (const p of (s.ports ?? []) as ServicePort[]) {
          const before = o.ports?.find((q) => q.port === p.port && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP'));
          if (!p.nodePort && before?.nodePort) (p as { nodePort?: number }).nodePort = before.nodePort;
        }
      }
      if (s.healthCheckNodePort === undefined && o.healthCheckNodePort && s.type === 'LoadBalancer' && s.externalTrafficPolicy === 'Local') {
        s.healthCheckNodePort = o.healthCheckNodePort;
      }
      dropTypeDependentFields(s, o);
    },
    async allocate(obj, old, dryRun) {
      const txn = new ServiceAllocation(alloc, { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' });
      const s = spec(obj);
      const o = old?.spec as Spec | undefined;
      try {
        const oldIPs = heldClusterIPs(o);
        // A new Service, or one leaving ExternalName: its families are settled now.
        if (!o?.ipFamilies?.length || o.type === 'ExternalName') initIPFamilyFields(obj, await alloc.clusterIPs.families());
        if (needsClusterIP(s) && oldIPs.length === 0) await allocateClusterIPs(alloc, txn, obj, dryRun);
        const newIPs = new Set(heldClusterIPs(s));
        txn.releaseIPs = oldIPs.filter((ip) => !newIPs.has(ip));
        const oldPorts = heldNodePorts(o);
        await allocateNodePorts(alloc, txn, obj, new Set(oldPorts), dryRun);
        const newPorts = new Set(heldNodePorts(s));
        txn.releasePorts = oldPorts.filter((p) => !newPorts.has(p));
      } catch (err) {
        await txn.revert();
        throw err;
      }
      return txn;
    },
    async afterDelete(obj) {
      const s = obj.spec as Spec | undefined;
      const txn = new ServiceAllocation(alloc, { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' });
      txn.releaseIPs = heldClusterIPs(s);
      txn.releasePorts = heldNodePorts(s);
      await txn.commit();
    },
  };
}
