// The loop the certificate controllers share, as upstream's certificates.CertificateController: the
// process's informer on CertificateSigningRequests, a rate-limited queue of names per controller,
// and a handler per request. Handlers are level-triggered: they look at the request as it is and do
// nothing when done.
import { findResource } from '../../api/resources.js';
import type { Client, ResourceClient } from '../../client/client.js';
import type { SharedInformerFactory } from '../../client/factory.js';
import type { CertificateSigningRequest } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { QueueController } from '../kit/controller.js';

export type CsrClient = ResourceClient<CertificateSigningRequest>;

export const csrResource = findResource('certificates.k8s.io', 'v1', 'certificatesigningrequests')!;

export function csrClient(client: Client): CsrClient {
  return client.resource<CertificateSigningRequest>(csrResource);
}

export interface CertificateControllerOptions {
  /** For logs: csrapproving, csrsigning. */
  name: string;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
  handler: (csr: CertificateSigningRequest) => Promise<void>;
}

export class CertificateController {
  private readonly controller: QueueController;

  constructor(opts: CertificateControllerOptions) {
    const informer = opts.informers.informerFor<CertificateSigningRequest>(csrResource);
    this.controller = new QueueController({
      name: opts.name,
      clock: opts.clock,
      logger: opts.logger,
      sources: [informer],
      sync: async (name) => {
        const csr = informer.indexer.getByKey(name);
        if (csr) await opts.handler(structuredClone(csr));
      },
    });
    const enqueue = (csr: CertificateSigningRequest) => this.controller.enqueue(csr.metadata!.name!);
    informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, csr) => enqueue(csr) });
  }

  start(): void {
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }
}
