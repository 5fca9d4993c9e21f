// The legacy Endpoints object's shape, as upstream's pkg/api/v1/endpoints and the endpoints
// controller build it: one subset per pod and port first, then repacked so that addresses offering
// the same ports share a subset (an address ready on any subset of a port counts as ready there),
// sorted; and cut to 1,000 addresses, ready ones first, each subset keeping its share.
import type { EndpointAddress, EndpointPort, EndpointSubset } from 'kubernetes-types/core/v1.js';

/** maxCapacity: the addresses an Endpoints object holds before it is truncated. */
export const MAX_CAPACITY = 1000;

const addressKey = (a: EndpointAddress) => `${a.ip}\u0000${a.targetRef?.uid ?? ''}`;
const portKey = (p: EndpointPort) => JSON.stringify([p.name ?? '', p.port, p.protocol ?? '', p.appProtocol ?? null]);

/** LessEndpointAddress: by IP (as bytes), then target UID (none first). */
function compareAddresses(a: EndpointAddress, b: EndpointAddress): number {
  if (a.ip !== b.ip) return a.ip < b.ip ? -1 : 1;
  const ua = a.targetRef?.uid;
  const ub = b.targetRef?.uid;
  if (ua === ub) return 0;
  if (ua === undefined) return -1;
  if (ub === undefined) return 1;
  return ua < ub ? -1 : 1;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * RepackSubsets: every address mapped to the ports it offers, then one subset per distinct set of
 * (address, ready) with all its ports. A subset without ports (a headless Service without ports)
 * stays a subset without ports. Sorted: addresses by IP and UID, ports and subsets by their content.
 */
export function repackSubsets(subsets: readonly EndpointSubset[]): EndpointSubset[] {
  const addresses = new Map<string, EndpointAddress>();
  /** Port key → (address key → ready). The portless sentinel is ''. */
  const byPort = new Map<string, { port?: EndpointPort; ready: Map<string, boolean> }>();
  const note = (addr: EndpointAddress, port: EndpointPort | undefined, ready: boolean) => {
    const key = addressKey(addr);
    if (!addresses.has(key)) addresses.set(key, { ...addr });
    const pk = port ? portKey(port) : '';
    let entry = byPort.get(pk);
    if (!entry) byPort.set(pk, (entry = { port, ready: new Map() }));
    if (!entry.ready.get(key)) entry.ready.set(key, ready);
  };
  for (const s of subsets) {
    const ports: (EndpointPort | undefined)[] = s.ports?.length ? s.ports : [undefined];
    for (const port of ports) {
      for (const a of s.addresses ?? []) note(a, port, true);
      for (const a of s.notReadyAddresses ?? []) note(a, port, false);
    }
  }
  // Group ports by the exact set of addresses (with readiness) that offers them.
  const groups = new Map<string, { ready: Map<string, boolean>; ports: EndpointPort[] }>();
  for (const { port, ready } of byPort.values()) {
    const key = [...ready.entries()]
      .sort(([a], [b]) => cmp(a, b))
      .map(([k, r]) => `${k}=${r}`)
      .join(',');
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ready, ports: [] }));
    if (port) g.ports.push(port);
  }
  const out: EndpointSubset[] = [];
  for (const g of groups.values()) {
    const ready: EndpointAddress[] = [];
    const notReady: EndpointAddress[] = [];
    for (const [k, r] of g.ready) (r ? ready : notReady).push(addresses.get(k)!);
    const subset: EndpointSubset = {};
    if (ready.length) subset.addresses = ready.sort(compareAddresses);
    if (notReady.length) subset.notReadyAddresses = notReady.sort(compareAddresses);
    if (g.ports.length) subset.ports = g.ports.sort((a, b) => cmp(portKey(a), portKey(b)));
    out.push(subset);
  }
  return out.sort((a, b) => cmp(JSON.stringify(a), JSON.stringify(b)));
}

export const countAddresses = (subsets: readonly EndpointSubset[]) => subsets.reduce((n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0), 0);

/**
 * truncateEndpoints: past MAX_CAPACITY addresses, not-ready ones go first (each subset keeps its
 * share of the room left, rounded up, the last ones taking what remains); when the ready ones alone
 * are too many, every not-ready address goes and the ready ones are cut the same way. Returns the
 * subsets and whether anything was cut.
 */
export function truncateSubsets(subsets: readonly EndpointSubset[]): [EndpointSubset[], boolean] {
  const totalReady = subsets.reduce((n, s) => n + (s.addresses?.length ?? 0), 0);
  const totalNotReady = subsets.reduce((n, s) => n + (s.notReadyAddresses?.length ?? 0), 0);
  if (totalReady + totalNotReady <= MAX_CAPACITY) return [[...subsets], false];
  const cutReady = totalReady > MAX_CAPACITY;
  const room = cutReady ? MAX_CAPACITY : MAX_CAPACITY - totalReady;
  const total = cutReady ? totalReady : totalNotReady;
  let left = room;
  const out = subsets.map((s) => {
    const inSubset = (cutReady ? s.addresses : s.notReadyAddresses)?.length ?? 0;
    const share = Math.min(Math.ceil((inSubset / total) * room), left);
    if (cutReady) {
      const addresses = (s.addresses ?? []).slice(0, share);
      left -= addresses.length;
      const { notReadyAddresses: _dropped, ...rest } = s;
      return { ...rest, addresses };
    }
    const notReadyAddresses = (s.notReadyAddresses ?? []).slice(0, share);
    left -= notReadyAddresses.length;
    return { ...s, notReadyAddresses };
  });
  return [out.map(withoutEmptyLists), true];
}

/** Empty address lists are left out, as Go's omitempty writes them. */
function withoutEmptyLists(s: EndpointSubset): EndpointSubset {
  const out: EndpointSubset = { ...s };
  if (!out.addresses?.length) delete out.addresses;
  if (!out.notReadyAddresses?.length) delete out.notReadyAddresses;
  return out;
}
