// The ReplicationController controller: as upstream's pkg/controller/replication, the ReplicaSet
// controller's sync run over ReplicationControllers, whose selector is a plain map of labels.
import { findResource } from '../../api/resources.js';
import { selectorFromSet } from '../../api/labels.js';
import { ReplicaSetController, type ReplicaSetControllerOptions, type ReplicatedKind } from '../replicaset/replicaset.js';

export const replicationControllerKind: ReplicatedKind = {
  resource: findResource('', 'v1', 'replicationcontrollers')!,
  apiVersion: 'v1',
  kind: 'ReplicationController',
  queueName: 'replicationmanager',
  component: 'replication-controller',
  selector: (rc) => selectorFromSet((rc.spec?.selector ?? {}) as Record<string, string>),
};

/** Upstream's ReplicationManager; --concurrent-rc-syncs is `workers` (default 5). */
export class ReplicationManager extends ReplicaSetController {
  constructor(opts: ReplicaSetControllerOptions) {
    super(opts, replicationControllerKind);
  }
}
