// Services: the registry allocates the cluster IP (from the service CIDR) and node ports, and keeps
// them across updates that omit them, as upstream's service REST does.
import { findResource } from '../../../api/resources.js';
import type { StoredObject } from '../../../api/meta.js';
import type { Service, ServicePort } from '../../../api/types.js';
import type { ResourceStrategy } from '../strategy.js';
import { genericStrategy } from './generic.js';

const info = findResource('', 'v1', 'services')!;

export interface ServiceAllocations {
  /** Cluster IPs and node ports already taken by other services. */
  inUse(): { clusterIPs: Set<string>; nodePorts: Set<number> };
}

/** The default service CIDR 10.96.0.0/12; .1 is kept for the kubernetes service. */
const cidrBase = (10 << 24) | (96 << 16);
const cidrSize = 1 << 20;
export const kubernetesServiceIP = '10.96.0.1';
const nodePortRange = { min: 30000, max: 32767 };

function ipFromOffset(offset: number): string {
  const n = cidrBase + offset;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

function pickFree<T>(taken: Set<T>, candidate: () => T, what: string): T {
  for (let i = 0; i < 1000; i++) {
    const c = candidate();
    if (!taken.has(c)) return c;
  }
  throw new Error(`no free ${what} left`);
}

function spec(obj: StoredObject): Service['spec'] & Record<string, unknown> {
  obj.spec ??= {};
  return obj.spec as Service['spec'] & Record<string, unknown>;
}

const wantsNodePorts = (type: string | undefined) => type === 'NodePort' || type === 'LoadBalancer';

export function serviceStrategy(alloc: ServiceAllocations): ResourceStrategy {
  const base = genericStrategy(info);
  return {
    ...base,
    returnDeletedObject: true,
    prepareForCreate(obj) {
      obj.status = { loadBalancer: {} };
    },
    async beforeCreate(obj) {
      const s = spec(obj);
      const used = alloc.inUse();
      if (s.type !== 'ExternalName') {
        if (!s.clusterIP) {
          s.clusterIP = pickFree(used.clusterIPs, () => ipFromOffset(2 + Math.floor(Math.random() * (cidrSize - 3))), 'cluster IP');
        }
        s.clusterIPs ??= [s.clusterIP];
        s.ipFamilies ??= ['IPv4'];
        s.ipFamilyPolicy ??= 'SingleStack';
      }
      if (wantsNodePorts(s.type)) {
        for (const p of (s.ports ?? []) as ServicePort[]) {
          if (p.nodePort) continue;
          const port = pickFree(used.nodePorts, () => nodePortRange.min + Math.floor(Math.random() * (nodePortRange.max - nodePortRange.min + 1)), 'node port');
          (p as { nodePort?: number }).nodePort = port;
          used.nodePorts.add(port);
        }
      }
    },
    prepareForUpdate(obj, old) {
      obj.status = old.status;
      const s = spec(obj);
      const o = (old.spec ?? {}) as NonNullable<Service['spec']>;
      // Allocated values the request left out stay as they were.
      if (!s.clusterIP && o.clusterIP && s.type !== 'ExternalName') {
        s.clusterIP = o.clusterIP;
        s.clusterIPs ??= o.clusterIPs;
      }
      if (s.clusterIP && !s.clusterIPs) s.clusterIPs = o.clusterIPs;
      s.ipFamilies ??= o.ipFamilies;
      s.ipFamilyPolicy ??= o.ipFamilyPolicy;
      if (wantsNodePorts(s.type) && wantsNodePorts(o.type)) {
        for (const p of (s.ports ?? []) as ServicePort[]) {
          const before = o.ports?.find((q) => q.port === p.port && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP'));
          if (!p.nodePort && before?.nodePort) (p as { nodePort?: number }).nodePort = before.nodePort;
        }
      }
    },
  };
}
