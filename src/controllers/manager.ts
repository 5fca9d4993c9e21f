// The controller manager: runs the controllers against the API server through the client, as
// kube-controller-manager does. (Leader election joins when several API servers share one etcd.)
import { Client } from '../client/client.js';
import { RestClient, type RestConfig } from '../client/rest.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { NamespaceController } from './namespace/controller.js';
import { GarbageCollector } from './garbagecollector/garbagecollector.js';
import { CsrApprover } from './certificates/approver/approver.js';
import { CsrSigner } from './certificates/signer/signer.js';

/** What `kite server` hands the controller manager's thread besides the API config. */
export interface ControllerManagerConfig {
  /** The CA that signs approved CSRs (kube-controller-manager's --cluster-signing-{cert,key}-file); no signer without them. */
  clusterSigningCertFile?: string;
  clusterSigningKeyFile?: string;
}

export interface ControllerManagerOptions extends ControllerManagerConfig {
  rest: RestConfig;
  clock: Clock;
  logger: Logger;
}

export class ControllerManager {
  private readonly rest: RestClient;
  private readonly namespaces: NamespaceController;
  private readonly garbageCollector: GarbageCollector;
  private readonly csrApprover: CsrApprover;
  private readonly csrSigner?: CsrSigner;

  constructor(opts: ControllerManagerOptions) {
    this.rest = new RestClient(opts.rest);
    const client = new Client(this.rest);
    this.namespaces = new NamespaceController({ client, clock: opts.clock, logger: opts.logger.child({ controller: 'namespace' }) });
    this.garbageCollector = new GarbageCollector({ client, clock: opts.clock, logger: opts.logger.child({ controller: 'garbagecollector' }) });
    this.csrApprover = new CsrApprover({ client, clock: opts.clock, logger: opts.logger.child({ controller: 'csrapproving' }) });
    if (opts.clusterSigningCertFile && opts.clusterSigningKeyFile) {
      this.csrSigner = new CsrSigner({
        client,
        clock: opts.clock,
        logger: opts.logger.child({ controller: 'csrsigning' }),
        certFile: opts.clusterSigningCertFile,
        keyFile: opts.clusterSigningKeyFile,
      });
    }
  }

  start(): void {
    this.namespaces.start();
    this.garbageCollector.start();
    this.csrApprover.start();
    this.csrSigner?.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.namespaces.stop(), this.garbageCollector.stop(), this.csrApprover.stop(), this.csrSigner?.stop()]);
    this.rest.close();
  }
}
