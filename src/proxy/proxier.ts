// The node's service proxy (the agent's kube-proxy, nftables mode): informers on Services and
// EndpointSlices mark Services dirty; a BoundedFrequencyRunner coalesces the changes into syncs.
// A sync replans only the dirty Services and applies the difference (upstream's partial sync); the
// first sync, the one after a failure and one every fullSyncPeriodMs rewrite the whole table in one
// transaction. What was applied last is kept per Service, so the next difference is against what the
// kernel holds.
import type { EndpointSlice, Service as KubeService } from '../api/types.js';
import type { Client } from '../client/client.js';
import { unwrapDeleted } from '../client/indexer.js';
import { SharedInformer } from '../client/informer.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { Service } from '../util/lifecycle.js';
import type { Nftables } from './nftables.js';
import { BoundedFrequencyRunner } from './runner.js';
import { fullScript, partialScript, planService, type ProxyNode, type ServicePlan } from './plan.js';

export interface ProxierOptions {
  client: Pick<Client, 'resource'>;
  node: ProxyNode;
  nft: Nftables;
  clock: Clock;
  logger: Logger;
  /** Changes closer together than this coalesce into one sync (upstream's --min-sync-period). */
  minSyncIntervalMs?: number;
  /** A sync at least this often (upstream's --sync-period). */
  syncPeriodMs?: number;
  /** A full rewrite at least this often (upstream: one hour). */
  fullSyncPeriodMs?: number;
  /** After each applied sync, for logs and the benchmark. */
  onSync?: (info: SyncInfo) => void;
}

export interface SyncInfo {
  full: boolean;
  /** The Services replanned. */
  services: string[];
  durationMs: number;
  scriptBytes: number;
}

const serviceNameLabel = 'kubernetes.io/service-name';
const serviceIndex = 'service';

const keyOf = (o: { metadata?: { namespace?: string; name?: string } }) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

function sliceServiceKey(s: EndpointSlice): string | undefined {
  const svc = s.metadata?.labels?.[serviceNameLabel];
  return svc ? `${s.metadata?.namespace ?? ''}/${svc}` : undefined;
}

export class Proxier implements Service {
  readonly name = 'kube-proxy';
  private readonly services: SharedInformer<KubeService>;
  private readonly slices: SharedInformer<EndpointSlice>;
  private readonly runner: BoundedFrequencyRunner;
  private readonly dirty = new Set<string>();
  /** What the kernel holds, per Service. */
  private applied = new Map<string, ServicePlan>();
  private needFullSync = true;
  private lastFullSync = -Infinity;
  private readonly unregister: (() => void)[] = [];

  constructor(private readonly opts: ProxierOptions) {
    const { client, clock, logger } = opts;
    this.services = new SharedInformer<KubeService>(client.resource('services'), { clock, onError: (err) => logger.warn({ err }, 'service informer') });
    this.slices = new SharedInformer<EndpointSlice>(client.resource('endpointslices.discovery.k8s.io'), {
      clock,
      labelSelector: serviceNameLabel,
      indexers: { [serviceIndex]: (s) => [sliceServiceKey(s) ?? ''] },
      onError: (err) => logger.warn({ err }, 'endpointslice informer'),
    });
    this.runner = new BoundedFrequencyRunner({
      clock,
      minIntervalMs: opts.minSyncIntervalMs ?? 100,
      maxIntervalMs: opts.syncPeriodMs ?? 30_000,
      fn: () => this.sync(),
      onError: (err) => logger.warn({ err }, 'proxy sync'),
    });
  }

  async start(): Promise<void> {
    const mark = (key: string | undefined) => {
      if (!key) return;
      this.dirty.add(key);
      if (this.services.hasSynced() && this.slices.hasSynced()) this.runner.run();
    };
    this.unregister.push(
      this.services.addEventHandler({ onAdd: (s) => mark(keyOf(s)), onUpdate: (_, s) => mark(keyOf(s)), onDelete: (s) => mark(keyOf(unwrapDeleted(s))) }),
      this.slices.addEventHandler({
        onAdd: (s) => mark(sliceServiceKey(s)),
        // A slice whose service-name label changed belongs to two Services.
        onUpdate: (o, s) => {
          mark(sliceServiceKey(o));
          mark(sliceServiceKey(s));
        },
        onDelete: (s) => mark(sliceServiceKey(unwrapDeleted(s))),
      }),
    );
    this.services.start();
    this.slices.start();
    await Promise.all([this.services.waitForSync(), this.slices.waitForSync()]);
    this.runner.start();
    // The first sync writes the whole table before start() returns: pods started after it find their Services.
    await this.sync().catch((err: unknown) => {
      this.opts.logger.warn({ err }, 'proxy sync');
      this.runner.retryAfter(1000);
    });
  }

  async stop(): Promise<void> {
    for (const u of this.unregister.splice(0)) u();
    await this.runner.stop();
    await Promise.all([this.services.stop(), this.slices.stop()]);
  }

  private plan(key: string): ServicePlan | undefined {
    const svc = this.services.indexer.getByKey(key);
    if (!svc) return undefined;
    return planService(svc, this.slices.indexer.byIndex(serviceIndex, key), this.opts.node);
  }

  private async sync(): Promise<void> {
    const { clock, node, nft } = this.opts;
    const started = clock.now();
    const full = this.needFullSync || started - this.lastFullSync >= (this.opts.fullSyncPeriodMs ?? 3_600_000);
    const keys = full ? this.services.indexer.list().map(keyOf) : [...this.dirty];
    this.dirty.clear();
    const next = full ? new Map<string, ServicePlan>() : new Map(this.applied);
    const changes: { old?: ServicePlan; next?: ServicePlan }[] = [];
    for (const key of keys) {
      const plan = this.plan(key);
      if (plan) next.set(key, plan);
      else next.delete(key);
      if (!full) changes.push({ old: this.applied.get(key), next: plan });
    }
    const script = full ? fullScript(node, next.values()) : partialScript(node, changes);
    try {
      if (script) await nft.apply(script);
    } catch (err) {
      // What the kernel holds is unknown now: rewrite it all next time.
      this.needFullSync = true;
      this.runner.retryAfter(1000);
      throw err;
    }
    this.applied = next;
    if (full) {
      this.needFullSync = false;
      this.lastFullSync = started;
    }
    if (script) this.opts.onSync?.({ full, services: keys, durationMs: clock.now() - started, scriptBytes: script.length });
  }
}
