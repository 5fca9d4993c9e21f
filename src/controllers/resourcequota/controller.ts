// The resource quota controller (upstream's pkg/controller/resourcequota): keeps each quota's
// status.hard equal to spec.hard and status.used equal to what the namespace holds, measured by the
// same evaluators as the ResourceQuota admission plugin. A quota is recalculated when it is created or
// its spec.hard changes, when a tracked object is deleted or changes what it charges (a pod turning
// Succeeded frees its compute), and every --resource-quota-sync-period for all quotas (the full
// resync that corrects what admission charged for writes that then failed).
import type { ResourceQuota } from 'kubernetes-types/core/v1.js';
import { evaluatorFor, objectCountName, quotaScopeSelectors, type Evaluator } from '../../api/quota/evaluators.js';
import { addUsage, maskUsage, parseResourceList, toResourceList, usageEquals, type Usage } from '../../api/quota/resources.js';
import { Quantity } from '../../api/quantity.js';
import { findResource, resources, type ResourceInfo } from '../../api/resources.js';
import type { EventSource } from '../../client/factory.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, splitMetaNamespaceKey, type MetaObject } from '../../client/indexer.js';
import type { Lister } from '../../client/lister.js';
import { every } from '../../util/periodic.js';
import type { Timer } from '../../util/clock.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';

/** kube-controller-manager's --resource-quota-sync-period default (5m0s). */
export const defaultResourceQuotaSyncPeriodMs = 5 * 60_000;
/** --concurrent-resource-quota-syncs default. */
const defaultWorkers = 5;

/** The resources watched through informers (upstream's monitors); other count/ names are listed live at each sync. */
const watchedResources: readonly ResourceInfo[] = ['pods', 'services', 'configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas'].map(
  (r) => findResource('', 'v1', r)!,
);

/** quota.Equals: the same names with the same values, however they are written. */
const sameList = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) => usageEquals(parseResourceList(a), parseResourceList(b));

export interface ResourceQuotaControllerOptions extends ControllerOptions {
  /** --resource-quota-sync-period in ms. */
  syncPeriodMs?: number;
}

interface Tracked {
  evaluator: Evaluator;
  /** The namespace's objects of the evaluator's resource. */
  list(namespace: string): Promise<object[]>;
}

export class ResourceQuotaController {
  private readonly quotas: Lister<ResourceQuota>;
  private readonly watched: readonly Tracked[];
  private readonly controller: QueueController;
  private readonly syncPeriodMs: number;
  private resync?: Timer;

  constructor(private readonly opts: ResourceQuotaControllerOptions) {
    const { informers } = opts;
    this.syncPeriodMs = opts.syncPeriodMs ?? defaultResourceQuotaSyncPeriodMs;
    const sources: EventSource<never>[] = [];
    const watched: Tracked[] = [];
    for (const info of watchedResources) {
      const informer = informers.informerFor<MetaObject>(info);
      const lister = informers.lister<MetaObject>(info);
      const evaluator = evaluatorFor(info.group, info.resource)!;
      sources.push(informer);
      watched.push({ evaluator, list: async (ns) => lister.namespace(ns).list() });
      if (info.resource === 'resourcequotas') continue;
      informer.addEventHandler({
        onUpdate: (old, cur) => {
          const now = opts.clock.now();
          if (!usageEquals(evaluator.usage(old, now), evaluator.usage(cur, now))) this.replenish(evaluator, cur.metadata?.namespace ?? '');
        },
        onDelete: (obj) => {
          const o = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
          this.replenish(evaluator, o.metadata?.namespace ?? '');
        },
      });
    }
    this.watched = watched;
    const quotaInfo = watchedResources.find((r) => r.resource === 'resourcequotas')!;
    this.quotas = informers.lister<ResourceQuota>(quotaInfo);
    this.controller = new QueueController({
      name: 'resourcequota',
      clock: opts.clock,
      logger: opts.logger,
      sources,
      workers: opts.workers ?? defaultWorkers,
      sync: (key) => this.syncResourceQuota(key),
    });
    const enqueue = (q: ResourceQuota | DeletedFinalStateUnknown<ResourceQuota>) => this.controller.enqueue(metaNamespaceKeyFunc(q));
    informers.informerFor<ResourceQuota>(quotaInfo).addEventHandler({
      onAdd: enqueue,
      // Status writes are this controller's own: only a new spec.hard needs a recalculation.
      onUpdate: (old, cur) => {
        if (!sameList(old.spec?.hard, cur.spec?.hard)) enqueue(cur);
      },
    });
  }

  start(): void {
    this.controller.start();
    this.resync ??= every(this.opts.clock, this.syncPeriodMs, () => {
      for (const q of this.quotas.list()) this.controller.enqueue(metaNamespaceKeyFunc(q));
    });
  }

  async stop(): Promise<void> {
    this.resync?.cancel();
    await this.controller.stop();
  }

  /** A tracked object went away or charges differently: recalculate the namespace's quotas that track its resource. */
  private replenish(evaluator: Evaluator, namespace: string): void {
    for (const q of this.quotas.namespace(namespace).list()) {
      if (evaluator.matchingResources(Object.keys(q.status?.hard ?? {})).length > 0) this.controller.enqueue(metaNamespaceKeyFunc(q));
    }
  }

  /** The evaluators that measure a quota's hard names: the watched ones, then any other served resource's count. */
  private trackersFor(hard: readonly string[]): Tracked[] {
    const out = this.watched.filter((t) => t.evaluator.matchingResources(hard).length > 0);
    for (const name of hard) {
      if (!name.startsWith('count/') || out.some((t) => t.evaluator.matchingResources([name]).length > 0)) continue;
      const info = resources.find((r) => objectCountName(r.group, r.resource) === name && r.namespaced);
      const evaluator = info && evaluatorFor(info.group, info.resource);
      if (!info || !evaluator) continue;
      out.push({ evaluator, list: async (ns) => (await this.opts.client.resource<MetaObject>(info).namespace(ns).list()).items });
    }
    return out;
  }

  /** The namespace's usage of what the quota limits (quota.CalculateUsage). */
  private async calculateUsage(quota: ResourceQuota, hard: readonly string[]): Promise<Usage> {
    const namespace = quota.metadata?.namespace ?? '';
    const selectors = quotaScopeSelectors(quota);
    const now = this.opts.clock.now();
    let total: Usage = new Map();
    for (const { evaluator, list } of this.trackersFor(hard)) {
      const names = evaluator.matchingResources(hard);
      // Every tracked name is reported, zero when nothing uses it.
      let usage: Usage = new Map(names.map((n) => [n, Quantity.fromValue(0)]));
      for (const obj of await list(namespace)) {
        if (!selectors.every((s) => evaluator.matchesScope(s, obj))) continue;
        usage = addUsage(usage, maskUsage(evaluator.usage(obj, now), names));
      }
      total = addUsage(total, usage);
    }
    return total;
  }

  async syncResourceQuota(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const quota = this.quotas.namespace(namespace).get(name);
    if (!quota) return;
    const hardList = (quota.spec?.hard ?? {}) as Record<string, string>;
    const hard = Object.keys(hardList);
    // What cannot be measured keeps its last reported value, as upstream.
    const used = maskUsage(new Map([...parseResourceList(quota.status?.used as Record<string, string> | undefined), ...(await this.calculateUsage(quota, hard))]), hard);
    const status = { hard: { ...hardList }, used: toResourceList(used) };
    const unchanged =
      quota.status?.hard !== undefined &&
      quota.status.used !== undefined &&
      sameList(quota.status.hard, hardList) &&
      usageEquals(parseResourceList(quota.status.used as Record<string, string>), used);
    if (unchanged) return;
    await this.opts.client
      .resource('resourcequotas')
      .namespace(namespace)
      .updateStatus({ ...quota, status });
  }
}
