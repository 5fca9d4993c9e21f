// The clusterrole-aggregation controller (pkg/controller/clusterroleaggregation): a ClusterRole with
// an aggregationRule gets as rules the rules of every other ClusterRole its selectors match, in
// selector order then by name, each rule once. Any ClusterRole change requeues every aggregated one.
import type { ClusterRole, PolicyRule } from '../../api/types.js';
import { labelSelectorAsSelector } from '../../api/labels.js';
import { findResource } from '../../api/resources.js';
import { hasStatusCode } from '../../api/errors.js';
import type { Client } from '../../client/client.js';
import type { SharedInformerFactory } from '../../client/factory.js';
import type { Indexer } from '../../client/indexer.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { QueueController } from '../kit/controller.js';

const clusterRolesResource = findResource('rbac.authorization.k8s.io', 'v1', 'clusterroles')!;

/** The rules role aggregates from roles, or undefined when it has no aggregationRule. */
export function aggregatedRules(role: ClusterRole, roles: readonly ClusterRole[]): PolicyRule[] | undefined {
  const selectors = role.aggregationRule?.clusterRoleSelectors;
  if (!selectors) return undefined;
  const byName = [...roles].sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
  const rules: PolicyRule[] = [];
  const seen = new Set<string>();
  const visited = new Set<string>();
  for (const sel of selectors) {
    const selector = labelSelectorAsSelector(sel);
    for (const other of byName) {
      const name = other.metadata!.name!;
      if (name === role.metadata?.name || visited.has(name) || !selector.matches(other.metadata?.labels ?? {})) continue;
      visited.add(name);
      for (const r of other.rules ?? []) {
        const key = JSON.stringify(r);
        if (seen.has(key)) continue;
        seen.add(key);
        rules.push(r);
      }
    }
  }
  return rules;
}

export interface ClusterRoleAggregationOptions {
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
}

export class ClusterRoleAggregationController {
  private readonly roles: Indexer<ClusterRole>;
  private readonly controller: QueueController;

  constructor(private readonly opts: ClusterRoleAggregationOptions) {
    const informer = opts.informers.informerFor<ClusterRole>(clusterRolesResource);
    this.roles = informer.indexer;
    this.controller = new QueueController({
      name: 'ClusterRoleAggregator',
      clock: opts.clock,
      logger: opts.logger,
      sources: [informer],
      workers: 5,
      sync: (key) => this.sync(key),
    });
    // A change anywhere may change what any aggregated role gathers.
    const enqueueAll = () => {
      for (const r of this.roles.list()) if (r.aggregationRule) this.controller.enqueue(r.metadata!.name!);
    };
    informer.addEventHandler({ onAdd: enqueueAll, onUpdate: enqueueAll, onDelete: enqueueAll });
  }

  start(): void {
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  async sync(name: string): Promise<void> {
    const role = this.roles.getByKey(name);
    const rules = role && aggregatedRules(role, this.roles.list());
    if (!role || !rules || JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) return;
    try {
      await this.opts.client.resource<ClusterRole>(clusterRolesResource).update({ ...role, rules });
    } catch (err) {
      // A newer version is on its way through the informer, which queues the role again.
      if (!hasStatusCode(err, 404, 409)) throw err;
    }
  }
}
