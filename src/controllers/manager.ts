// The controller manager: runs the controllers against the API server through the client, as
// kube-controller-manager does. (Leader election joins when several API servers share one etcd.)
import { Client } from '../client/client.js';
import { RestClient, type RestConfig } from '../client/rest.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { NamespaceController } from './namespace/controller.js';

export interface ControllerManagerOptions {
  rest: RestConfig;
  clock: Clock;
  logger: Logger;
}

export class ControllerManager {
  private readonly rest: RestClient;
  private readonly namespaces: NamespaceController;

  constructor(opts: ControllerManagerOptions) {
    this.rest = new RestClient({ ...opts.rest, userAgent: 'kite-controller-manager/v1.33.0' });
    const client = new Client(this.rest);
    this.namespaces = new NamespaceController({ client, clock: opts.clock, logger: opts.logger.child({ controller: 'namespace' }) });
  }

  start(): void {
    this.namespaces.start();
  }

  async stop(): Promise<void> {
    await this.namespaces.stop();
    this.rest.close();
  }
}
