// Resource arithmetic in plain numbers (millicores, bytes, counts): quantities are parsed once per
// pod and node, so filtering and scoring thousands of nodes never touches a bigint.
import { Quantity } from '../../api/quantity.js';
import { aggregatePodResources, type ResourceMeasure } from '../../api/pod/resources.js';
import type { Container, Pod } from '../../api/types.js';

/** The cpu request assumed for a container that sets none, for scoring spread (upstream's 100m). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
/** The memory request assumed for a container that sets none, for scoring spread (upstream's 200Mi). */
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

type ResourceList = Record<string, string | number> | undefined;

export class Resource {
  milliCPU = 0;
  memory = 0;
  ephemeralStorage = 0;
  /** The node's `pods` allocatable (unused in requests). */
  allowedPodNumber = 0;
  /** Extended resources, hugepages and any other named resource. */
  scalar = new Map<string, number>();

  /** Parses a ResourceList (cpu in millicores, the rest in whole units). */
  static fromList(list: ResourceList): Resource {
    const r = new Resource();
    for (const [name, raw] of Object.entries(list ?? {})) r.addNamed(name, raw);
    return r;
  }

  /** Adds one named quantity from a ResourceList. */
  addNamed(name: string, raw: string | number): void {
    const q = Quantity.from(raw);
    switch (name) {
      case 'cpu':
        this.milliCPU += Number(q.milliValue());
        break;
      case 'memory':
        this.memory += Number(q.value());
        break;
      case 'ephemeral-storage':
        this.ephemeralStorage += Number(q.value());
        break;
      case 'pods':
        this.allowedPodNumber += Number(q.value());
        break;
      default:
        this.scalar.set(name, (this.scalar.get(name) ?? 0) + Number(q.value()));
    }
  }

  add(o: Resource): this {
    this.milliCPU += o.milliCPU;
    this.memory += o.memory;
    this.ephemeralStorage += o.ephemeralStorage;
    this.allowedPodNumber += o.allowedPodNumber;
    for (const [k, v] of o.scalar) this.scalar.set(k, (this.scalar.get(k) ?? 0) + v);
    return this;
  }

  sub(o: Resource): this {
    this.milliCPU -= o.milliCPU;
    this.memory -= o.memory;
    this.ephemeralStorage -= o.ephemeralStorage;
    this.allowedPodNumber -= o.allowedPodNumber;
    for (const [k, v] of o.scalar) this.scalar.set(k, (this.scalar.get(k) ?? 0) - v);
    return this;
  }

  /** Each field becomes the larger of the two (the init-container rule). */
  max(o: Resource): this {
    this.milliCPU = Math.max(this.milliCPU, o.milliCPU);
    this.memory = Math.max(this.memory, o.memory);
    this.ephemeralStorage = Math.max(this.ephemeralStorage, o.ephemeralStorage);
    this.allowedPodNumber = Math.max(this.allowedPodNumber, o.allowedPodNumber);
    for (const [k, v] of o.scalar) this.scalar.set(k, Math.max(this.scalar.get(k) ?? 0, v));
    return this;
  }

  clone(): Resource {
    const r = new Resource();
    r.milliCPU = this.milliCPU;
    r.memory = this.memory;
    r.ephemeralStorage = this.ephemeralStorage;
    r.allowedPodNumber = this.allowedPodNumber;
    r.scalar = new Map(this.scalar);
    return r;
  }

  /** The amount of a resource by its API name (cpu in millicores). */
  get(name: string): number {
    switch (name) {
      case 'cpu':
        return this.milliCPU;
      case 'memory':
        return this.memory;
      case 'ephemeral-storage':
        return this.ephemeralStorage;
      case 'pods':
        return this.allowedPodNumber;
      default:
        return this.scalar.get(name) ?? 0;
    }
  }

  isZero(): boolean {
    if (this.milliCPU !== 0 || this.memory !== 0 || this.ephemeralStorage !== 0) return false;
    if (this.scalar.size === 0) return true;
    for (const v of this.scalar.values()) if (v !== 0) return false;
    return true;
  }
}

function containerRequests(c: Container, nonMissing: boolean): Resource {
  const list = c.resources?.requests as ResourceList;
  const r = Resource.fromList(list);
  if (nonMissing) {
    if (list?.cpu === undefined) r.milliCPU = DEFAULT_MILLI_CPU_REQUEST;
    if (list?.memory === undefined) r.memory = DEFAULT_MEMORY_REQUEST;
  }
  return r;
}

const resourceMeasure: ResourceMeasure<Resource> = { zero: () => new Resource(), add: (into, x) => into.add(x), max: (into, x) => into.max(x) };

/**
 * The pod's effective request (api/pod/resources.ts's rule), plus its overhead. With nonMissing, a
 * container without a cpu or memory request counts the defaults above (used for
 * NodeInfo.nonZeroRequested and scoring, so BestEffort pods still spread).
 */
export function podRequests(pod: Pod, nonMissing = false): Resource {
  const reqs = aggregatePodResources(pod, (c) => containerRequests(c, nonMissing), resourceMeasure);
  if (pod.spec?.overhead) reqs.add(Resource.fromList(pod.spec.overhead as ResourceList));
  return reqs;
}
