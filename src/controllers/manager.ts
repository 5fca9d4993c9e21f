// The controller manager: runs the enabled controllers against the API server through the client,
// as kube-controller-manager does: one shared informer factory for all of them (one watch per
// resource), and one client per controller identity. It runs only while it holds its Lease.
import { Client } from '../client/client.js';
import { SharedInformerFactory } from '../client/factory.js';
import { RestClient, type RestConfig } from '../client/rest.js';
import { BatchingTimelineRecorder, noTimeline, type TimelineRecorder } from '../client/timeline/recorder.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { Service } from '../util/lifecycle.js';
import type { NodeLifecycleConfig } from './nodelifecycle/controller.js';
import { controllerDescriptors, defaultControllers, isControllerEnabled, validateControllers, type RunnableController } from './descriptors.js';

/** What `kite server` hands the controller manager's thread besides the API config. */
export interface ControllerManagerConfig {
  /** The CA that signs approved CSRs (kube-controller-manager's --cluster-signing-{cert,key}-file); no signer without them. */
  clusterSigningCertFile?: string;
  clusterSigningKeyFile?: string;
  /** --root-ca-file: the CA the root-ca-certificate-publisher puts in every namespace's kube-root-ca.crt. */
  rootCAFile?: string;
  /** --service-account-private-key-file: signs the legacy tokens of service-account-token Secrets. */
  serviceAccountPrivateKeyFile?: string;
  /** kube-controller-manager's --controllers: `*`, `name`, `-name` (default `*`). */
  controllers?: readonly string[];
  /** --terminated-pod-gc-threshold (default 12500). */
  terminatedPodGCThreshold?: number;
  /** --horizontal-pod-autoscaler-sync-period in ms (default 15 s). */
  horizontalPodAutoscalerSyncPeriodMs?: number;
  /** --resource-quota-sync-period in ms (default 5 min). */
  resourceQuotaSyncPeriodMs?: number;
  /** --max-endpoints-per-slice (default 100). */
  maxEndpointsPerSlice?: number;
  /** The node lifecycle controller's flags. */
  nodeLifecycle?: Partial<NodeLifecycleConfig>;
  /** A token per controller identity (its service account's); a controller without one uses the manager's. */
  serviceAccountTokens?: Readonly<Record<string, string>>;
  /** Record pods' timeline steps (kite server's --pod-timeline; default true). */
  podTimeline?: boolean;
}

/**
 * The client config of one controller identity, as upstream's client builder makes it: the base user
 * agent with "/<identity>" appended, and the identity's own credentials when it has them.
 */
export function controllerRestConfig(base: RestConfig, identity: string, tokens: Readonly<Record<string, string>> = {}): RestConfig {
  const token = Object.hasOwn(tokens, identity) ? tokens[identity] : base.token;
  return { ...base, token, userAgent: `${base.userAgent ?? 'kite'}/${identity}` };
}

export interface ControllerManagerOptions extends ControllerManagerConfig {
  rest: RestConfig;
  clock: Clock;
  logger: Logger;
}

export class ControllerManager implements Service {
  readonly name = 'kube-controller-manager';
  private readonly rests: RestClient[] = [];
  private readonly timelines: BatchingTimelineRecorder[] = [];
  private readonly informers: SharedInformerFactory;
  private readonly controllers: { name: string; controller: RunnableController }[] = [];

  constructor(opts: ControllerManagerOptions) {
    const enabled = validateControllers(opts.controllers ?? defaultControllers);
    const restFor = (identity: string) => {
      const rest = new RestClient(controllerRestConfig(opts.rest, identity, opts.serviceAccountTokens));
      this.rests.push(rest);
      return rest;
    };
    this.informers = new SharedInformerFactory({
      client: new Client(restFor('shared-informers')),
      clock: opts.clock,
      onError: (err, resource) => opts.logger.warn({ err, resource }, 'informer'),
    });
    const clients = new Map<string, { client: Client; timeline: TimelineRecorder }>();
    for (const d of controllerDescriptors) {
      if (!isControllerEnabled(d, enabled)) {
        opts.logger.info({ controller: d.name }, 'Warning: controller is disabled');
        continue;
      }
      let identity = clients.get(d.identity);
      if (!identity) {
        const rest = restFor(d.identity);
        let timeline: TimelineRecorder = noTimeline;
        if (opts.podTimeline !== false) {
          // Sends nothing (no timer, no request) unless the controller records a step.
          const batching = new BatchingTimelineRecorder({ rest, clock: opts.clock, logger: opts.logger.child({ identity: d.identity }) });
          this.timelines.push(batching);
          timeline = batching;
        }
        clients.set(d.identity, (identity = { client: new Client(rest), timeline }));
      }
      const logger = opts.logger.child({ controller: d.name });
      const controller = d.init({ ...opts, client: identity.client, timeline: identity.timeline, informers: this.informers, logger });
      if (controller) this.controllers.push({ name: d.name, controller });
      else logger.info('Skipping controller');
    }
  }

  /** The controllers that run, by name. */
  names(): string[] {
    return this.controllers.map((c) => c.name);
  }

  async start(): Promise<void> {
    // Controllers register their handlers first; the informers start once, after all of them.
    for (const { controller } of this.controllers) controller.start();
    this.informers.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.controllers.map(({ controller }) => controller.stop()));
    await Promise.all(this.timelines.map((t) => t.stop()));
    await this.informers.shutdown();
    for (const rest of this.rests) rest.close();
  }
}
