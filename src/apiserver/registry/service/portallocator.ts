// Node ports, one storage key each under /registry/ranges/servicenodeports/: taking a port is
// creating its key, so API servers sharing one store never hand out the same port (upstream keeps a
// bitmap in one RangeAllocation object updated with compare-and-swap; a key per port gives the same
// guarantee without serialising every allocation on one key). Dynamic ports come from a random point
// of the upper band, the low band (KEP-3668) being left to requested ports.
import { isStorageError, type Store } from '../../../storage/store.js';
import type { ServiceRef } from './ipallocator.js';
import { AllocationError } from './ipallocator.js';

export const nodePortPrefix = '/registry/ranges/servicenodeports/';

export interface PortRange {
  base: number;
  size: number;
}

export const defaultNodePortRange: PortRange = { base: 30000, size: 2768 };

export const formatPortRange = (r: PortRange): string => `${r.base}-${r.base + r.size - 1}`;

/** `--service-node-port-range`: "30000-32767" (or a single port). */
export function parsePortRange(text: string): PortRange {
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(text.trim());
  const lo = m ? Number(m[1]) : NaN;
  const hi = m?.[2] !== undefined ? Number(m[2]) : lo;
  if (!m || lo < 1 || hi > 65535 || hi < lo) throw new Error(`invalid port range "${text}": expected MIN-MAX within 1-65535`);
  return { base: lo, size: hi - lo + 1 };
}

/** min(max(16, size/32), 128) ports at the bottom of the range. */
export function portRangeOffset(size: number): number {
  if (size <= 16) return 0;
  return Math.min(Math.max(16, Math.floor(size / 32)), 128);
}

/** What a port's key holds: whose it is and since when (repair frees leaked ones after a grace). */
export interface NodePortClaim {
  namespace: string;
  name: string;
  uid?: string;
  /** ms since the epoch. */
  time: number;
}

function parseClaim(value: string): NodePortClaim {
  try {
    return JSON.parse(value) as NodePortClaim;
  } catch {
    return { namespace: '', name: '', time: 0 };
  }
}

export class NodePortAllocator {
  constructor(
    private readonly store: Store,
    readonly range: PortRange,
    private readonly now: () => number,
  ) {}

  private errNotInRange(): AllocationError {
    return new AllocationError(`provided port is not in the valid range. The range of valid ports is ${formatPortRange(this.range)}`);
  }

  contains(port: number): boolean {
    return port >= this.range.base && port < this.range.base + this.range.size;
  }

  private async claim(port: number, svc: ServiceRef & { uid?: string }): Promise<boolean> {
    const claim: NodePortClaim = { namespace: svc.namespace, name: svc.name, uid: svc.uid, time: this.now() };
    try {
      await this.store.create(`${nodePortPrefix}${port}`, JSON.stringify(claim));
      return true;
    } catch (err) {
      if (isStorageError(err, 'KeyExists')) return false;
      throw err;
    }
  }

  /** Takes a requested port; a dry run only checks the range. */
  async allocate(svc: ServiceRef & { uid?: string }, port: number, dryRun: boolean): Promise<void> {
    if (!this.contains(port)) throw this.errNotInRange();
    if (dryRun) return;
    if (!(await this.claim(port, svc))) throw new AllocationError('provided port is already allocated');
  }

  /**
   * Takes a free port, upper band first; a dry run takes nothing and answers the range's base, as
   * upstream's. `taken`, the claims read once for a whole write, is kept up to date.
   */
  async allocateNext(svc: ServiceRef & { uid?: string }, dryRun: boolean, taken?: Set<number>): Promise<number> {
    if (dryRun) return this.range.base;
    const offset = portRangeOffset(this.range.size);
    taken ??= await this.taken();
    const bands: [number, number][] = [[this.range.base + offset, this.range.size - offset]];
    if (offset > 0) bands.push([this.range.base, offset]);
    for (const [from, span] of bands) {
      const start = Math.floor(Math.random() * span);
      for (let i = 0; i < span; i++) {
        const port = from + ((start + i) % span);
        if (taken.has(port)) continue;
        taken.add(port);
        if (await this.claim(port, svc)) return port;
      }
    }
    throw new AllocationError('range is full');
  }

  /** Gives a port back: with an owner, only if the claim is that Service's. */
  async release(port: number, owner?: ServiceRef): Promise<void> {
    const key = `${nodePortPrefix}${port}`;
    try {
      const kv = await this.store.get(key);
      if (!kv) return;
      if (owner) {
        const claim = parseClaim(kv.value);
        if (claim.namespace !== owner.namespace || claim.name !== owner.name) return;
      }
      await this.store.delete(key, kv.modRevision);
    } catch (err) {
      // Gone already, or claimed again meanwhile.
      if (!isStorageError(err, 'NotFound') && !isStorageError(err, 'Conflict')) throw err;
    }
  }

  /** Every claimed port with its claim. */
  async claims(): Promise<Map<number, NodePortClaim>> {
    const out = new Map<number, NodePortClaim>();
    let startAfter: string | undefined;
    for (;;) {
      const page = await this.store.list({ prefix: nodePortPrefix, startAfter, limit: 1000 });
      for (const kv of page.items) {
        out.set(Number(kv.key.slice(nodePortPrefix.length)), parseClaim(kv.value));
      }
      if (!page.more || page.items.length === 0) return out;
      startAfter = page.items[page.items.length - 1]!.key;
    }
  }

  async taken(): Promise<Set<number>> {
    return new Set((await this.claims()).keys());
  }
}
