// The loop the certificate controllers share, as upstream's certificates.CertificateController: an
// informer on CertificateSigningRequests, a rate-limited queue of names, and a handler per request.
// Handlers are level-triggered: they look at the request as it is and do nothing when done.
import type { Client, ResourceClient } from '../../client/client.js';
import { SharedInformer } from '../../client/informer.js';
import { RateLimitingQueue } from '../../client/workqueue.js';
import type { CertificateSigningRequest } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';

export type CsrClient = ResourceClient<CertificateSigningRequest>;

export function csrClient(client: Client): CsrClient {
  return client.resource<CertificateSigningRequest>('certificates.k8s.io', 'v1', 'certificatesigningrequests');
}

export interface CertificateControllerOptions {
  csrs: CsrClient;
  clock: Clock;
  logger: Logger;
  handler: (csr: CertificateSigningRequest) => Promise<void>;
}

export class CertificateController {
  private readonly informer: SharedInformer<CertificateSigningRequest>;
  private readonly queue: RateLimitingQueue<string>;
  private worker?: Promise<void>;

  constructor(private readonly opts: CertificateControllerOptions) {
    this.informer = new SharedInformer<CertificateSigningRequest>(opts.csrs, {
      clock: opts.clock,
      onError: (err) => opts.logger.warn({ err }, 'csr informer'),
    });
    this.queue = new RateLimitingQueue<string>({ clock: opts.clock });
    const enqueue = (csr: CertificateSigningRequest) => this.queue.add(csr.metadata!.name!);
    this.informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, csr) => enqueue(csr) });
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
      async (name) => {
        const csr = this.informer.indexer.getByKey(name);
        if (csr) await this.opts.handler(structuredClone(csr));
      },
      (err, name) => {
        this.opts.logger.warn({ err, csr: name }, 'certificate signing request sync failed');
        return 'retry';
      },
    );
  }
}
