// The ValidatingAdmissionPolicy status controller, as upstream's
// pkg/controller/validatingadmissionpolicystatus: each policy generation gets its
// status.observedGeneration and status.typeChecking. kite has no typed CEL environment built from
// the matched kinds' schemas, so typeChecking carries no expression warnings (expressions that do not
// compile at all are refused when the policy is written).
import type { ValidatingAdmissionPolicy } from 'kubernetes-types/admissionregistration/v1.js';
import { hasStatusCode } from '../../api/errors.js';
import { findResource } from '../../api/resources.js';
import type { Client } from '../../client/client.js';
import type { SharedInformerFactory } from '../../client/factory.js';
import { metaNamespaceKeyFunc, type Indexer } from '../../client/indexer.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { QueueController } from '../kit/controller.js';

const policiesResource = findResource('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies')!;

export interface ValidatingAdmissionPolicyStatusControllerOptions {
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
}

/** Whether the policy's status already speaks of its current generation. */
const upToDate = (p: ValidatingAdmissionPolicy) => p.status?.observedGeneration === p.metadata?.generation && p.status?.typeChecking !== undefined;

export class ValidatingAdmissionPolicyStatusController {
  private readonly policies: Indexer<ValidatingAdmissionPolicy>;
  private readonly controller: QueueController;

  constructor(private readonly opts: ValidatingAdmissionPolicyStatusControllerOptions) {
    const informer = opts.informers.informerFor<ValidatingAdmissionPolicy>(policiesResource);
    this.policies = informer.indexer;
    this.controller = new QueueController({
      name: 'validatingadmissionpolicy-status',
      clock: opts.clock,
      logger: opts.logger,
      sources: [informer],
      workers: 1,
      sync: (key) => this.sync(key),
    });
    const enqueue = (p: ValidatingAdmissionPolicy) => {
      if (!upToDate(p)) this.controller.enqueue(metaNamespaceKeyFunc(p));
    };
    informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, cur) => enqueue(cur) });
  }

  start(): void {
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  async sync(key: string): Promise<void> {
    const policy = this.policies.getByKey(key);
    if (!policy || upToDate(policy)) return;
    const status = { ...policy.status, observedGeneration: policy.metadata?.generation, typeChecking: {} };
    try {
      await this.opts.client.resource<ValidatingAdmissionPolicy>(policiesResource).updateStatus({ ...policy, status });
    } catch (err) {
      // A newer version (or none) is on its way through the informer.
      if (!hasStatusCode(err, 404, 409)) throw err;
    }
  }
}
