// The namespace controller: for each namespace marked for deletion, delete its content, wait for it
// to go (pods end gracefully), then finalize the namespace. Level-triggered: sync(name) is idempotent.
import type { Namespace } from 'kubernetes-types/core/v1.js';
import { findResource } from '../../api/resources.js';
import type { Client } from '../../client/client.js';
import type { SharedInformerFactory } from '../../client/factory.js';
import type { Indexer } from '../../client/indexer.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { QueueController } from '../kit/controller.js';
import { deleteContent, finalize, finalizerKubernetes, updateConditions } from './deleter.js';

export interface NamespaceControllerOptions {
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
  /** How soon to look again while content remains (upstream estimates from grace periods). */
  recheckMs?: number;
  /** Upstream's --concurrent-namespace-syncs (default 10). */
  workers?: number;
}

export class NamespaceController {
  private readonly namespaces: Indexer<Namespace>;
  private readonly controller: QueueController;

  constructor(private readonly opts: NamespaceControllerOptions) {
    const informer = opts.informers.informerFor<Namespace>(findResource('', 'v1', 'namespaces')!);
    this.namespaces = informer.indexer;
    this.controller = new QueueController({
      name: 'namespace',
      clock: opts.clock,
      logger: opts.logger,
      sources: [informer],
      workers: opts.workers ?? 10,
      sync: async (name) => ((await this.sync(name)) ? (opts.recheckMs ?? 1000) : undefined),
    });
    const enqueue = (ns: Namespace) => {
      if (ns.metadata?.deletionTimestamp) this.controller.enqueue(ns.metadata.name!);
    };
    informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, ns) => enqueue(ns) });
  }

  start(): void {
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  /** Returns true when content remains and the namespace must be looked at again. */
  async sync(name: string): Promise<boolean> {
    const ns = this.namespaces.getByKey(name);
    if (!ns?.metadata?.deletionTimestamp || !ns.spec?.finalizers?.includes(finalizerKubernetes)) return false;
    const result = await deleteContent(this.opts.client, name);
    await updateConditions(this.opts.client, ns, result, this.opts.clock);
    if (!result.done) return true;
    await finalize(this.opts.client, ns);
    return false;
  }
}
