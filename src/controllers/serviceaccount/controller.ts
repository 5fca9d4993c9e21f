// The ServiceAccounts controller, as upstream's pkg/controller/serviceaccount/serviceaccounts_controller.go:
// every active namespace has a `default` ServiceAccount, made again when it is deleted.
import type { Namespace, ServiceAccount } from '../../api/types.js';
import { hasStatusCode } from '../../api/errors.js';
import { findResource } from '../../api/resources.js';
import { unwrapDeleted, type Indexer } from '../../client/indexer.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';

export const defaultServiceAccountName = 'default';

const namespacesResource = findResource('', 'v1', 'namespaces')!;
const serviceAccountsResource = findResource('', 'v1', 'serviceaccounts')!;

export type ServiceAccountsControllerOptions = Omit<ControllerOptions, 'recorder'>;

export class ServiceAccountsController {
  private readonly namespaces: Indexer<Namespace>;
  private readonly serviceAccounts: Indexer<ServiceAccount>;
  private readonly controller: QueueController;

  constructor(private readonly opts: ServiceAccountsControllerOptions) {
    const nsInformer = opts.informers.informerFor<Namespace>(namespacesResource);
    const saInformer = opts.informers.informerFor<ServiceAccount>(serviceAccountsResource);
    this.namespaces = nsInformer.indexer;
    this.serviceAccounts = saInformer.indexer;
    this.controller = new QueueController({ name: 'serviceaccount', clock: opts.clock, logger: opts.logger, sources: [nsInformer, saInformer], sync: (ns) => this.sync(ns), workers: opts.workers });
    const onNamespace = (ns: Namespace) => this.controller.enqueue(ns.metadata!.name!);
    nsInformer.addEventHandler({ onAdd: onNamespace, onUpdate: (_old, cur) => onNamespace(cur) });
    saInformer.addEventHandler({
      onDelete: (obj) => {
        const sa = unwrapDeleted(obj);
        if (sa.metadata?.name === defaultServiceAccountName) this.controller.enqueue(sa.metadata.namespace ?? '');
      },
    });
  }

  start(): void {
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  async sync(namespace: string): Promise<void> {
    const ns = this.namespaces.getByKey(namespace);
    // Nothing is made in a namespace on its way out.
    if (!ns || ns.status?.phase !== 'Active' || ns.metadata?.deletionTimestamp) return;
    if (this.serviceAccounts.getByKey(`${namespace}/${defaultServiceAccountName}`)) return;
    try {
      await this.opts.client.resource<ServiceAccount>(serviceAccountsResource).namespace(namespace).create({ metadata: { name: defaultServiceAccountName } });
    } catch (err) {
      // Already there (the cache is behind), or the namespace started terminating meanwhile.
      if (!hasStatusCode(err, 409) && !hasStatusCode(err, 403)) throw err;
    }
  }
}
