// The node side of the simulator: registers sim-0..sim-N-1 from a template and keeps each node's
// Lease in kube-node-lease renewed every 10 s as the kubelet does. Renewals are spread over the
// interval on one deadline heap and share the process's request limiter, so 5,000 nodes make a
// steady 500 writes/s rather than bursts. Node status itself is played by the node stages.
import type { Lease, Node } from '../api/types.js';
import { microTime } from '../api/time.js';
import { hasStatusCode } from '../api/errors.js';
import { isObject } from '../api/patch/json.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { builtinFunctions } from './expr.js';
import type { Limiter } from './limiter.js';
import { nodeIP } from './runtime.js';
import type { Template } from './template.js';
import { DueQueue } from './wheel.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** The kubelet's defaults: renew every 10 s; a lease lasts 40 s. */
export const LEASE_RENEW_INTERVAL_MS = 10_000;
export const LEASE_DURATION_SECONDS = 40;

/** The writes the node side makes. */
export interface NodeApi {
  createNode(node: Node): Promise<Node>;
  getNode(name: string): Promise<Node>;
  createLease(lease: Lease): Promise<Lease>;
  getLease(name: string): Promise<Lease>;
  updateLease(lease: Lease): Promise<Lease>;
}

export interface NodeFleetOptions {
  count: number;
  /** The index of the first node (default 0): a second simulator adds nodes sim-<first>.. beside a running one. */
  first?: number;
  /** Rendered per node with root { name, index } and nodeIP(index). */
  template: Template;
  /** Fills in what the node reports at registration (its status), given the rendered template. */
  prepare?: (node: Node) => Node;
  api: NodeApi;
  limiter: Limiter;
  clock: Clock;
  logger: Logger;
  random?: () => number;
}

export const nodeName = (index: number): string => `sim-${index}`;

export class NodeFleet {
  readonly names: readonly string[];
  private readonly index: Map<string, number>;
  private readonly uids: (string | undefined)[];
  private readonly leases: (Lease | undefined)[];
  private readonly renewing = new Set<number>();
  // Nodes whose kubelet plays dead: no Lease renewals.
  private readonly silent = new Set<number>();
  private readonly first: number;
  private readonly wheel: DueQueue<number>;
  private readonly abort = new AbortController();
  private readonly random: () => number;

  constructor(private readonly opts: NodeFleetOptions) {
    const first = (this.first = opts.first ?? 0);
    this.names = Array.from({ length: opts.count }, (_, i) => nodeName(first + i));
    this.index = new Map(this.names.map((n, i) => [n, first + i]));
    this.uids = new Array(opts.count);
    this.leases = new Array(opts.count);
    this.wheel = new DueQueue(opts.clock, (i) => this.renew(i));
    this.random = opts.random ?? Math.random;
    // A template that cannot render fails here, before anything is registered.
    if (opts.count > 0) this.render(0);
  }

  /** The index of a simulated node, or undefined for any other node name. */
  nodeIndex(name: string): number | undefined {
    return this.index.get(name);
  }

  /** Node i as the template describes it; a template without metadata.name gets the fleet's name. */
  render(i: number): Node {
    const name = this.names[i]!;
    const node = this.opts.template({ root: { name, index: this.index.get(name)! }, now: this.opts.clock.now(), fns: fleetFunctions });
    if (!isObject(node) || (node.kind !== undefined && node.kind !== 'Node')) throw new Error('the node template must be a Node manifest');
    if (node.metadata === undefined || node.metadata === null) node.metadata = {};
    if (!isObject(node.metadata)) throw new Error('the node template\'s metadata must be an object');
    const given = node.metadata.name;
    if (given === undefined || given === null || given === '') node.metadata.name = name;
    else if (given !== name) throw new Error(`the node template names node ${this.index.get(name)} ${JSON.stringify(given)}: nodes are named sim-<index>; leave metadata.name out or use "{{ .name }}"`);
    return node as Node;
  }

  /** Registers every node (an existing one is adopted); each starts its lease renewals once registered. */
  async register(): Promise<void> {
    await Promise.all(this.names.map((_, i) => this.registerOne(i)));
  }

  /** Stops or resumes a node's Lease renewals; a resumed node renews at once. */
  setHeartbeat(name: string, beating: boolean): void {
    const global = this.index.get(name);
    if (global === undefined) return;
    const i = global - this.first;
    if (!beating) {
      this.silent.add(i);
      this.wheel.cancel(i);
    } else if (this.silent.delete(i) && this.uids[i] !== undefined) {
      this.wheel.schedule(i, this.opts.clock.now());
    }
  }

  stop(): void {
    this.abort.abort();
    this.wheel.stop();
  }

  private async registerOne(i: number): Promise<void> {
    const rendered = this.render(i);
    const node = this.opts.prepare ? this.opts.prepare(rendered) : rendered;
    for (let backoffMs = 1000; !this.abort.signal.aborted; backoffMs = Math.min(backoffMs * 2, 30_000)) {
      try {
        const created = await this.opts.limiter.run(async () => {
          try {
            return await this.opts.api.createNode(node);
          } catch (err) {
            if (!hasStatusCode(err, 409)) throw err;
            return this.opts.api.getNode(this.names[i]!);
          }
        });
        this.uids[i] = created.metadata?.uid;
        // The Lease exists from registration on, as the kubelet's does (a heartbeat stopped before the
        // first renewal still leaves one to age); the next renewal lands anywhere in the interval, which
        // spreads the fleet's renewals evenly.
        if (!this.silent.has(i)) this.writeLeaseLimited(i);
        this.wheel.schedule(i, this.opts.clock.now() + Math.floor(this.random() * LEASE_RENEW_INTERVAL_MS));
        return;
      } catch (err) {
        this.opts.logger.warn({ err, node: this.names[i] }, 'node registration failed; retrying');
        try {
          await this.opts.clock.sleep(backoffMs, this.abort.signal);
        } catch {
          return;
        }
      }
    }
  }

  private renew(i: number): void {
    if (this.silent.has(i)) return;
    this.wheel.schedule(i, this.opts.clock.now() + LEASE_RENEW_INTERVAL_MS);
    this.writeLeaseLimited(i);
  }

  private writeLeaseLimited(i: number): void {
    // A renewal still waiting for the server is not doubled up.
    if (this.renewing.has(i)) return;
    this.renewing.add(i);
    this.opts.limiter
      .run(() => this.writeLease(i), 'lease')
      .catch((err: unknown) => this.opts.logger.warn({ err, node: this.names[i] }, 'lease renewal failed'))
      .finally(() => this.renewing.delete(i));
  }

  private async writeLease(i: number): Promise<void> {
    const name = this.names[i]!;
    const spec = { holderIdentity: name, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: microTime(this.opts.clock.now()) };
    let lease = this.leases[i];
    if (!lease) {
      try {
        this.leases[i] = await this.opts.api.createLease({
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace: NODE_LEASE_NAMESPACE, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: this.uids[i] ?? '' }] },
          spec,
        });
        return;
      } catch (err) {
        if (!hasStatusCode(err, 409)) throw err;
        lease = await this.opts.api.getLease(name);
      }
    }
    try {
      this.leases[i] = await this.opts.api.updateLease({ ...lease, spec: { ...lease.spec, ...spec } });
    } catch (err) {
      if (!hasStatusCode(err, 409)) {
        // Gone (e.g. deleted by hand): create it again next time.
        if (hasStatusCode(err, 404)) this.leases[i] = undefined;
        throw err;
      }
      // Someone else wrote it: renew on top of the current version, once, as the kubelet retries.
      const current = await this.opts.api.getLease(name);
      this.leases[i] = await this.opts.api.updateLease({ ...current, spec: { ...current.spec, ...spec } });
    }
  }
}

const fleetFunctions = { ...builtinFunctions, nodeIP: (_env: unknown, index: unknown) => nodeIP(Number(index)) };
