// The controller manager: runs the controllers against the API server through the client, as
// kube-controller-manager does. (Leader election joins when several API servers share one etcd.)
import { Client } from '../client/client.js';
import { RestClient, type RestConfig } from '../client/rest.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { NamespaceController } from './namespace/controller.js';
import { GarbageCollector } from './garbagecollector/garbagecollector.js';

export interface ControllerManagerOptions {
  rest: RestConfig;
  clock: Clock;
  logger: Logger;
}

export class ControllerManager {
  private readonly rest: RestClient;
  private readonly namespaces: NamespaceController;
  private readonly garbageCollector: GarbageCollector;

  constructor(opts: ControllerManagerOptions) {
    this.rest = new RestClient(opts.rest);
    const client = new Client(this.rest);
    this.namespaces = new NamespaceController({ client, clock: opts.clock, logger: opts.logger.child({ controller: 'namespace' }) });
    this.garbageCollector = new GarbageCollector({ client, clock: opts.clock, logger: opts.logger.child({ controller: 'garbagecollector' }) });
  }

  start(): void {
    this.namespaces.start();
    this.garbageCollector.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.namespaces.stop(), this.garbageCollector.stop()]);
    this.rest.close();
  }
}
