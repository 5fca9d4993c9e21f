// The namespace controller: for each namespace marked for deletion, delete its content, wait for it
// to go (pods end gracefully), then finalize the namespace. Level-triggered: sync(name) is idempotent.
import type { Namespace } from 'kubernetes-types/core/v1.js';
import type { Client } from '../../client/client.js';
import { SharedInformer } from '../../client/informer.js';
import { RateLimitingQueue } from '../../client/workqueue.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { deleteContent, finalize, finalizerKubernetes, updateConditions } from './deleter.js';

export interface NamespaceControllerOptions {
  client: Client;
  clock: Clock;
  logger: Logger;
  /** How soon to look again while content remains (upstream estimates from grace periods). */
  recheckMs?: number;
}

export class NamespaceController {
  private readonly informer: SharedInformer<Namespace>;
  private readonly queue: RateLimitingQueue<string>;
  private worker?: Promise<void>;

  constructor(private readonly opts: NamespaceControllerOptions) {
    this.informer = new SharedInformer<Namespace>(opts.client.resource<Namespace>('', 'v1', 'namespaces'), {
      clock: opts.clock,
      onError: (err) => opts.logger.warn({ err }, 'namespace informer'),
    });
    this.queue = new RateLimitingQueue<string>({ clock: opts.clock });
    const enqueue = (ns: Namespace) => {
      if (ns.metadata?.deletionTimestamp) this.queue.add(ns.metadata.name!);
    };
    this.informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, ns) => enqueue(ns) });
  }

  start(): void {
    this.informer.start();
    this.worker = this.work();
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.informer.stop();
    await this.worker;
  }

  private work(): Promise<void> {
    return this.queue.runWorker(
      async (name) => ((await this.sync(name)) ? (this.opts.recheckMs ?? 1000) : undefined),
      (err, name) => {
        this.opts.logger.warn({ err, namespace: name }, 'namespace sync failed');
        return 'retry';
      },
    );
  }

  /** Returns true when content remains and the namespace must be looked at again. */
  async sync(name: string): Promise<boolean> {
    const ns = this.informer.indexer.getByKey(name);
    if (!ns?.metadata?.deletionTimestamp || !ns.spec?.finalizers?.includes(finalizerKubernetes)) return false;
    const result = await deleteContent(this.opts.client, name);
    await updateConditions(this.opts.client, ns, result, this.opts.clock);
    if (!result.done) return true;
    await finalize(this.opts.client, ns);
    return false;
  }
}
