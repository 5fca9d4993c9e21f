// The node's heartbeat Lease, as upstream's pkg/kubelet/nodelease over component-helpers' lease
// controller: kube-node-lease/<node>, held by the node, renewed every quarter of its duration,
// owned by the Node (so it goes with it). Failures back off (200 ms doubling to 7 s) and never stop it.
import type { Lease } from '../../api/types.js';
import type { Client } from '../../client/client.js';
import { hasStatusCode } from '../../api/errors.js';
import { microTime } from '../../api/time.js';
import type { Clock } from '../../util/clock.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** Upstream renews at this share of the lease duration (40 s → 10 s). */
export const RENEW_INTERVAL_FRACTION = 0.25;
const BACKOFF_START_MS = 200;
const BACKOFF_MAX_MS = 7_000;
const MAX_UPDATE_RETRIES = 5;

export interface LeaseClient {
  get(name: string): Promise<Lease>;
  create(lease: Lease): Promise<Lease>;
  update(lease: Lease): Promise<Lease>;
}

export function leaseClient(client: Client): LeaseClient {
  const leases = client.resource('leases.coordination.k8s.io').namespace(NODE_LEASE_NAMESPACE);
  return { get: (name) => leases.get(name), create: (lease) => leases.create(lease), update: (lease) => leases.update(lease) };
}

export interface NodeLeaseControllerOptions {
  client: LeaseClient;
  nodeName: string;
  leaseDurationSeconds: number;
  clock: Clock;
  /** The Node's UID once it is registered, for the owner reference; the lease is made without one until then. */
  nodeUID: () => string | undefined;
  onError?: (err: unknown) => void;
}

export class NodeLeaseController {
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private latest?: Lease;

  constructor(private readonly opts: NodeLeaseControllerOptions) {}

  get renewIntervalMs(): number {
    return this.opts.leaseDurationSeconds * 1000 * RENEW_INTERVAL_FRACTION;
  }

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    let backoff = BACKOFF_START_MS;
    try {
      for (;;) {
        let ok = true;
        try {
          await this.sync();
          backoff = BACKOFF_START_MS;
        } catch (err) {
          ok = false;
          this.opts.onError?.(err);
        }
        await this.opts.clock.sleep(ok ? this.renewIntervalMs : backoff, signal);
        if (!ok) backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      }
    } catch {
      // Aborted: stop() was called.
    }
  }

  /** Makes sure the lease exists, then renews it; an update that conflicts is retried on a fresh read. */
  async sync(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const current = this.latest ?? (await this.getOrCreate());
      if (current === 'created') return;
      try {
        this.latest = await this.opts.client.update(this.renewed(current));
        return;
      } catch (err) {
        this.latest = undefined;
        if (!hasStatusCode(err, 409) || attempt + 1 >= MAX_UPDATE_RETRIES) throw err;
      }
    }
  }

  /** The stored lease, or 'created' when there was none and a renewed one was just made. */
  private async getOrCreate(): Promise<Lease | 'created'> {
    try {
      return await this.opts.client.get(this.opts.nodeName);
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err;
    }
    this.latest = await this.opts.client.create(this.renewed({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.opts.nodeName, namespace: NODE_LEASE_NAMESPACE } }));
    return 'created';
  }

  private renewed(base: Lease): Lease {
    const lease = structuredClone(base);
    lease.spec = { ...lease.spec, holderIdentity: this.opts.nodeName, leaseDurationSeconds: this.opts.leaseDurationSeconds, renewTime: microTime(this.opts.clock.now()) };
    const uid = this.opts.nodeUID();
    if (uid && !lease.metadata?.ownerReferences?.length) {
      lease.metadata = { ...lease.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.opts.nodeName, uid }] };
    }
    return lease;
  }
}
