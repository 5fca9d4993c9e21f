// Cluster IPs as IPAddress objects, as upstream 1.33's ipallocator (MultiCIDRServiceAllocator): an
// address is taken by creating the IPAddress named by it, and storage's create-if-absent is the lock,
// so API servers sharing one store never hand out the same address. Addresses come from the
// ServiceCIDRs that are not being deleted (and are Ready, or not yet judged); dynamic ones are picked
// at random from the upper band of a range, leaving the low band (KEP-3070) to requested addresses.
import type { IPAddress, ServiceCIDR } from '../../../api/types.js';
import { addrAt, formatAddr, masked, parseAddr, parsePrefix, prefixContains, prefixSize, type Addr, type IPFamily, type Prefix } from '../../../api/netip.js';
import { hasStatusCode } from '../../../api/errors.js';
import { ipAddressManagedByLabel, ipAllocatorName } from '../../../api/network.js';

export const ipFamilyLabel = 'ipaddress.kubernetes.io/ip-family';
export const defaultServiceCIDRName = 'kubernetes';

/** Upstream's allocator errors, whose text reaches users inside "failed to allocate IP …". */
export class AllocationError extends Error {}
export const errAllocated = () => new AllocationError('provided IP is already allocated');
export const errFull = () => new AllocationError('range is full');
export const errMismatchedNetwork = () => new AllocationError('the provided network does not match the current range');
const errNotInRange = (ip: string, cidr: string) => new AllocationError(`the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${cidr}`);

/** What the allocator reads and writes: the ServiceCIDRs, and IPAddress objects by name. */
export interface IPAddressBackend {
  serviceCIDRs(): Promise<ServiceCIDR[]>;
  /** Whether the IPAddress is known to exist (a cache; create is the real test). */
  known(name: string): boolean;
  /** Creates it; false when it already exists. */
  create(ip: IPAddress): Promise<boolean>;
  /** Deletes it if it is the one of that Service. */
  delete(name: string, owner: ServiceRef): Promise<void>;
}

/** The service a taken address belongs to. */
export interface ServiceRef {
  namespace: string;
  name: string;
}

/** KEP-3070's static band: min(max(16, size/16), 256) addresses at the bottom of the range. */
export function rangeOffset(size: bigint): bigint {
  if (size <= 16n) return 0n;
  const offset = size / 16n;
  return offset < 16n ? 16n : offset > 256n ? 256n : offset;
}

/** The first and last usable address: not the network address, and for IPv4 not the broadcast one. */
export function usableRange(p: Prefix): { first: bigint; last: bigint } {
  const base = masked(p).addr.value;
  const size = prefixSize(p);
  const last = base + size - (p.addr.family === 'IPv4' ? 2n : 1n);
  return { first: base + 1n, last };
}

function isReady(cidr: ServiceCIDR): boolean {
  const ready = cidr.status?.conditions?.find((c) => c.type === 'Ready');
  // No verdict yet (the controller has not run): assume Ready, as upstream does.
  return ready === undefined || ready.status === 'True';
}

export function ipAddressFor(ip: string, family: IPFamily, svc: ServiceRef): IPAddress {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IPAddress',
    metadata: { name: ip, labels: { [ipFamilyLabel]: family, [ipAddressManagedByLabel]: ipAllocatorName } },
    spec: { parentRef: { group: '', resource: 'services', namespace: svc.namespace, name: svc.name } },
  } as unknown as IPAddress;
}

const randomBelow = (n: bigint): bigint => {
  // n is at most 2^128: enough random bits, then the remainder (the bias is negligible here).
  let r = 0n;
  for (let i = 0; i < 5; i++) r = (r << 32n) | BigInt(Math.floor(Math.random() * 2 ** 32));
  return r % n;
};

export class ClusterIPAllocator {
  constructor(private readonly backend: IPAddressBackend) {}

  /** The prefixes allocations may use, the default ServiceCIDR's first. */
  async prefixes(family?: IPFamily): Promise<Prefix[]> {
    const cidrs = (await this.backend.serviceCIDRs()).filter((c) => !c.metadata?.deletionTimestamp && isReady(c));
    cidrs.sort((a, b) => Number(b.metadata?.name === defaultServiceCIDRName) - Number(a.metadata?.name === defaultServiceCIDRName));
    const out: Prefix[] = [];
    for (const c of cidrs) {
      for (const text of c.spec?.cidrs ?? []) {
        const p = parsePrefix(text);
        if (p && (!family || p.addr.family === family)) out.push(masked(p));
      }
    }
    return out;
  }

  /** The families some usable ServiceCIDR serves, the default one's first. */
  async families(): Promise<IPFamily[]> {
    return [...new Set((await this.prefixes()).map((p) => p.addr.family))];
  }

  /** Takes a requested address. A dry run only checks that it is in range. */
  async allocate(svc: ServiceRef, ip: string, dryRun: boolean): Promise<void> {
    const addr = parseAddr(ip);
    if (!addr) throw errMismatchedNetwork();
    const prefix = (await this.prefixes(addr.family)).find((p) => prefixContains(p, addr));
    if (!prefix) throw errMismatchedNetwork();
    const { first, last } = usableRange(prefix);
    if (addr.value < first || addr.value > last) throw errNotInRange(ip, `${formatAddr(prefix.addr)}/${prefix.bits}`);
    if (dryRun) return;
    if (!(await this.backend.create(ipAddressFor(formatAddr(addr), addr.family, svc)))) throw errAllocated();
  }

  /**
   * Takes a free address of the family: from a random point of the upper band first, then of the
   * lower one; an address another server took a moment ago is skipped. A dry run takes nothing and
   * answers the range's network address, as upstream's.
   */
  async allocateNext(svc: ServiceRef, family: IPFamily, dryRun: boolean): Promise<string> {
    const prefixes = await this.prefixes(family);
    if (dryRun) {
      if (!prefixes[0]) throw errFull();
      return formatAddr(prefixes[0].addr);
    }
    for (const prefix of prefixes) {
      const { first, last } = usableRange(prefix);
      if (last < first) continue;
      const offset = rangeOffset(last - first + 1n);
      const upper = await this.allocateFrom(svc, prefix, first + offset, last);
      if (upper) return upper;
      if (offset > 0n) {
        const lower = await this.allocateFrom(svc, prefix, first, first + offset - 1n);
        if (lower) return lower;
      }
    }
    throw errFull();
  }

  private async allocateFrom(svc: ServiceRef, prefix: Prefix, from: bigint, to: bigint): Promise<string | undefined> {
    const span = to - from + 1n;
    const start = randomBelow(span);
    for (let i = 0n; i < span; i++) {
      const addr: Addr = { family: prefix.addr.family, value: from + ((start + i) % span) };
      const name = formatAddr(addr);
      if (this.backend.known(name)) continue;
      if (await this.backend.create(ipAddressFor(name, addr.family, svc))) return name;
    }
    return undefined;
  }

  /**
   * Gives an address back: only the IPAddress naming this Service (another may hold it after a
   * repair found the address given twice). Releasing one not held is no error, as upstream's.
   */
  async release(ip: string, owner: ServiceRef): Promise<void> {
    try {
      await this.backend.delete(ip, owner);
    } catch (err) {
      if (!hasStatusCode(err, 404, 409)) throw err;
    }
  }
}

/** The n-th address of a prefix (the kubernetes Service takes the first, kube-dns the tenth). */
export function indexedAddress(cidr: string, n: number): string {
  const p = parsePrefix(cidr);
  if (!p) throw new Error(`invalid CIDR "${cidr}"`);
  return formatAddr(addrAt(p, BigInt(n)));
}
