// The controllers kite runs, as kube-controller-manager's NewControllerDescriptors: each has its
// name, aliases (the names before 1.30), whether `*` leaves it off, the identity upstream gives its
// client (--use-service-account-credentials), and an init that builds it on the shared informers.
import type { Client } from '../client/client.js';
import type { TimelineRecorder } from '../client/timeline/recorder.js';
import type { SharedInformerFactory } from '../client/factory.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { CsrApprover } from './certificates/approver/approver.js';
import { CsrSigner } from './certificates/signer/signer.js';
import { CronJobController } from './cronjob/controller.js';
import { DaemonSetController } from './daemonset/daemonset.js';
import { DeploymentController } from './deployment/deployment.js';
import { DisruptionController } from './disruption/disruption.js';
import { EndpointsController } from './endpoint/controller.js';
import { EndpointSliceController } from './endpointslice/controller.js';
import { GarbageCollector } from './garbagecollector/garbagecollector.js';
import { JobController } from './job/job.js';
import { NamespaceController } from './namespace/controller.js';
import { NodeLifecycleController, type NodeLifecycleConfig } from './nodelifecycle/controller.js';
import { PodGCController } from './podgc/controller.js';
import { ReplicaSetController } from './replicaset/replicaset.js';
import { ReplicationManager } from './replicationcontroller/replicationcontroller.js';
import { StatefulSetController } from './statefulset/statefulset.js';
import { TaintEvictionController } from './tainteviction/controller.js';
import { HorizontalController } from './podautoscaler/horizontal.js';
import { TTLAfterFinishedController } from './ttlafterfinished/controller.js';
import { ServiceCIDRController } from './servicecidrs/controller.js';
import { ClusterRoleAggregationController } from './clusterroleaggregation/controller.js';
import { ServiceAccountsController } from './serviceaccount/controller.js';
import { RootCACertPublisher } from './rootcacertpublisher/controller.js';
import { TokensController } from './serviceaccounttoken/controller.js';
import { TokenSigner } from '../apiserver/authn/satoken.js';
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ResourceQuotaController } from './resourcequota/controller.js';
import { ValidatingAdmissionPolicyStatusController } from './validatingadmissionpolicystatus/controller.js';

export interface RunnableController {
  start(): void;
  stop(): Promise<void>;
}

export interface ControllerContext {
  /** This controller's own client (its user agent names its identity). */
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
  clusterSigningCertFile?: string;
  clusterSigningKeyFile?: string;
  /** --root-ca-file (the root-ca-certificate-publisher's CA). */
  rootCAFile?: string;
  /** --service-account-private-key-file (the legacy token signer's key). */
  serviceAccountPrivateKeyFile?: string;
  /** --terminated-pod-gc-threshold (default 12500; 0 turns the terminated-pod rule off). */
  terminatedPodGCThreshold?: number;
  /** --horizontal-pod-autoscaler-sync-period in ms (default 15 s). */
  horizontalPodAutoscalerSyncPeriodMs?: number;
  /** --resource-quota-sync-period in ms (default 5 min). */
  resourceQuotaSyncPeriodMs?: number;
  /** --max-endpoints-per-slice (default 100). */
  maxEndpointsPerSlice?: number;
  /** The node lifecycle flags (--node-monitor-period, --node-eviction-rate, ...); unset ones take upstream's defaults. */
  nodeLifecycle?: Partial<NodeLifecycleConfig>;
  /** Where the controller records pods' timeline steps: a batching recorder on its own client. */
  timeline?: TimelineRecorder;
}

export interface ControllerDescriptor {
  name: string;
  aliases: readonly string[];
  /** Left off by `*`; only `--controllers=name` turns it on. */
  disabledByDefault?: boolean;
  /** The service account upstream's controller runs as (kube-system/<identity>), or its user agent's suffix with rootClient. */
  identity: string;
  /** Runs with the manager's own credentials (upstream's rootClientBuilder), as it must before any token exists. */
  rootClient?: boolean;
  /** The controller, or undefined when what it needs is missing (upstream's "skipping"). */
  init(ctx: ControllerContext): RunnableController | undefined;
}

export const controllerDescriptors: readonly ControllerDescriptor[] = [
  {
    name: 'namespace-controller',
    aliases: ['namespace'],
    identity: 'namespace-controller',
    init: (ctx) => new NamespaceController(ctx),
  },
  {
    name: 'replicaset-controller',
    aliases: ['replicaset'],
    identity: 'replicaset-controller',
    init: (ctx) => new ReplicaSetController(ctx),
  },
  {
    name: 'replicationcontroller-controller',
    aliases: ['replicationcontroller'],
    identity: 'replication-controller',
    init: (ctx) => new ReplicationManager(ctx),
  },
  {
    name: 'cronjob-controller',
    aliases: ['cronjob'],
    identity: 'cronjob-controller',
    init: (ctx) => new CronJobController(ctx),
  },
  {
    name: 'daemonset-controller',
    aliases: ['daemonset'],
    identity: 'daemon-set-controller',
    init: (ctx) => new DaemonSetController(ctx),
  },
  {
    name: 'statefulset-controller',
    aliases: ['statefulset'],
    identity: 'statefulset-controller',
    init: (ctx) => new StatefulSetController(ctx),
  },
  {
    name: 'deployment-controller',
    aliases: ['deployment'],
    identity: 'deployment-controller',
    init: (ctx) => new DeploymentController(ctx),
  },
  {
    name: 'job-controller',
    aliases: ['job'],
    identity: 'job-controller',
    init: (ctx) => new JobController(ctx),
  },
  {
    name: 'ttl-after-finished-controller',
    aliases: ['ttl-after-finished'],
    identity: 'ttl-after-finished-controller',
    init: (ctx) => new TTLAfterFinishedController(ctx),
  },
  {
    name: 'validatingadmissionpolicy-status-controller',
    aliases: ['validatingadmissionpolicy-status'],
    identity: 'validatingadmissionpolicy-status-controller',
    init: (ctx) => new ValidatingAdmissionPolicyStatusController(ctx),
  },
  {
    name: 'garbage-collector-controller',
    aliases: ['garbagecollector'],
    identity: 'generic-garbage-collector',
    init: (ctx) => new GarbageCollector(ctx),
  },
  {
    name: 'pod-garbage-collector-controller',
    aliases: ['podgc'],
    identity: 'pod-garbage-collector',
    init: (ctx) => new PodGCController(ctx),
  },
  {
    name: 'node-lifecycle-controller',
    aliases: ['nodelifecycle'],
    identity: 'node-controller',
    init: (ctx) => new NodeLifecycleController({ ...ctx, config: ctx.nodeLifecycle }),
  },
  {
    name: 'taint-eviction-controller',
    aliases: [],
    // Upstream runs it with the node-controller's client and cluster role.
    identity: 'node-controller',
    init: (ctx) => new TaintEvictionController(ctx),
  },
  {
    name: 'horizontal-pod-autoscaler-controller',
    aliases: ['horizontalpodautoscaling'],
    identity: 'horizontal-pod-autoscaler',
    init: (ctx) => new HorizontalController({ ...ctx, syncPeriodMs: ctx.horizontalPodAutoscalerSyncPeriodMs }),
  },
  {
    name: 'disruption-controller',
    aliases: ['disruption'],
    identity: 'disruption-controller',
    init: (ctx) => new DisruptionController(ctx),
  },
  {
    name: 'endpoints-controller',
    aliases: ['endpoint'],
    identity: 'endpoint-controller',
    init: (ctx) => new EndpointsController(ctx),
  },
  {
    name: 'endpointslice-controller',
    aliases: ['endpointslice'],
    identity: 'endpointslice-controller',
    init: (ctx) => new EndpointSliceController(ctx),
  },
  {
    name: 'resourcequota-controller',
    aliases: ['resourcequota'],
    identity: 'resourcequota-controller',
    init: (ctx) => new ResourceQuotaController({ ...ctx, syncPeriodMs: ctx.resourceQuotaSyncPeriodMs }),
  },
  {
    name: 'service-cidr-controller',
    aliases: [],
    identity: 'service-cidrs-controller',
    init: (ctx) => new ServiceCIDRController(ctx),
  },
  {
    name: 'serviceaccount-controller',
    aliases: ['serviceaccount'],
    identity: 'service-account-controller',
    init: (ctx) => new ServiceAccountsController(ctx),
  },
  {
    name: 'serviceaccount-token-controller',
    aliases: ['serviceaccount-token'],
    identity: 'tokens-controller',
    rootClient: true,
    // Upstream skips it without a private key; its CA is --root-ca-file's.
    init: (ctx) =>
      ctx.serviceAccountPrivateKeyFile
        ? new TokensController({
            ...ctx,
            signer: new TokenSigner(createPrivateKey(readFileSync(ctx.serviceAccountPrivateKeyFile, 'utf8'))),
            rootCA: ctx.rootCAFile ? readFileSync(ctx.rootCAFile, 'utf8') : undefined,
          })
        : undefined,
  },
  {
    name: 'root-ca-certificate-publisher-controller',
    aliases: ['root-ca-cert-publisher'],
    identity: 'root-ca-cert-publisher',
    init: (ctx) => (ctx.rootCAFile ? new RootCACertPublisher({ ...ctx, rootCA: readFileSync(ctx.rootCAFile, 'utf8') }) : undefined),
  },
  {
    name: 'certificatesigningrequest-approving-controller',
    aliases: ['csrapproving'],
    identity: 'certificate-controller',
    init: (ctx) => new CsrApprover(ctx),
  },
  {
    name: 'certificatesigningrequest-signing-controller',
    aliases: ['csrsigning'],
    identity: 'certificate-controller',
    init: (ctx) =>
      ctx.clusterSigningCertFile && ctx.clusterSigningKeyFile ? new CsrSigner({ ...ctx, certFile: ctx.clusterSigningCertFile, keyFile: ctx.clusterSigningKeyFile }) : undefined,
  },
  {
    name: 'clusterrole-aggregation-controller',
    aliases: ['clusterrole-aggregation'],
    identity: 'clusterrole-aggregation-controller',
    init: (ctx) => new ClusterRoleAggregationController(ctx),
  },
];

/** Upstream's default --controllers. */
export const defaultControllers: readonly string[] = ['*'];

/**
 * Checks a --controllers list as kube-controller-manager's Validate does: every name (after an
 * optional "-", aliases allowed) must be known. Returns the list with aliases made canonical.
 */
export function validateControllers(list: readonly string[], descriptors: readonly ControllerDescriptor[] = controllerDescriptors): string[] {
  const canonical = new Map<string, string>();
  for (const d of descriptors) {
    canonical.set(d.name, d.name);
    for (const a of d.aliases) canonical.set(a, d.name);
  }
  return list.map((entry) => {
    if (entry === '*') return entry;
    const disable = entry.startsWith('-');
    const bare = disable ? entry.slice(1) : entry;
    const name = canonical.get(bare);
    if (!name) throw new Error(`"${bare}" is not in the list of known controllers`);
    return disable ? `-${name}` : name;
  });
}

/** Upstream's IsControllerEnabled: an explicit name or -name wins, in order; `*` enables those on by default. */
export function isControllerEnabled(d: ControllerDescriptor, controllers: readonly string[]): boolean {
  let star = false;
  for (const c of controllers) {
    if (c === d.name) return true;
    if (c === `-${d.name}`) return false;
    if (c === '*') star = true;
  }
  return star && !d.disabledByDefault;
}
