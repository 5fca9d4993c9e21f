// The EndpointSlice controller (upstream's pkg/controller/endpointslice): for every Service with a
// selector it keeps discovery.k8s.io/v1 EndpointSlices of the pods the selector picks, planned by
// reconciler.ts. Services without a selector (their slices are the user's) and ExternalName
// Services are left alone; a deleted Service's slices go with it through the garbage collector
// (they are owned by it). Pods, Services and the controller's own slices queue the Service.
import type { Node, Pod, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { hasStatusCode } from '../../api/errors.js';
import { findResource } from '../../api/resources.js';
import type { ResourceClient } from '../../client/client.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, splitMetaNamespaceKey, unwrapDeleted } from '../../client/indexer.js';
import type { Lister } from '../../client/lister.js';
import { BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter } from '../../client/workqueue.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';
import { controllerEvents } from '../kit/events.js';
import { hasStatusCause, involvedObject, NAMESPACE_TERMINATING_CAUSE } from '../kit/podcontrol.js';
import type { EventBroadcaster, EventRecorder } from '../../client/record/recorder.js';
import { addEndpointIndexes, endpointsFromSelector, podEventHandler, selectedPods, TriggerTimeTracker } from './endpointutil.js';
import { CONTROLLER_NAME, DEFAULT_MAX_ENDPOINTS_PER_SLICE, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, reconcile } from './reconciler.js';
import { EndpointSliceTracker } from './tracker.js';
import { EndpointTimeline } from './timeline.js';
import { noTimeline, type TimelineRecorder } from '../../client/timeline/recorder.js';

/** --concurrent-service-endpoint-syncs default. */
export const DEFAULT_CONCURRENT_SYNCS = 5;
/** Upstream's defaultSyncBackOff and maxSyncBackOff for failed syncs. */
const SYNC_BACKOFF_MS = 1000;
const MAX_SYNC_BACKOFF_MS = 1000_000;

const servicesInfo = findResource('', 'v1', 'services')!;
const podsInfo = findResource('', 'v1', 'pods')!;
const nodesInfo = findResource('', 'v1', 'nodes')!;
const slicesInfo = findResource('discovery.k8s.io', 'v1', 'endpointslices')!;

/** The slices' index by the `<namespace>/<service>` their service-name label names. */
const BY_SERVICE = 'endpointslice-service';

export interface EndpointSliceControllerOptions extends ControllerOptions {
  /** --max-endpoints-per-slice (default 100). */
  maxEndpointsPerSlice?: number;
  /** --concurrent-service-endpoint-syncs (default 5). */
  workers?: number;
  /** Where pods' endpoint steps go (default none). */
  timeline?: TimelineRecorder;
}

const managedByController = (slice: EndpointSlice) => slice.metadata?.labels?.[LABEL_MANAGED_BY] === CONTROLLER_NAME;
const serviceKeyOfSlice = (slice: EndpointSlice) => `${slice.metadata?.namespace ?? ''}/${slice.metadata?.labels?.[LABEL_SERVICE_NAME] ?? ''}`;

export class EndpointSliceController {
  private readonly services: Lister<Service>;
  private readonly pods: Lister<Pod>;
  private readonly nodes: Lister<Node>;
  private readonly slices: Lister<EndpointSlice>;
  private readonly controller: QueueController;
  private readonly tracker = new EndpointSliceTracker();
  private readonly triggerTimes = new TriggerTimeTracker();
  private readonly maxEndpointsPerSlice: number;
  private readonly recorder: EventRecorder;
  private readonly events?: EventBroadcaster;
  private readonly timeline: EndpointTimeline;

  constructor(private readonly opts: EndpointSliceControllerOptions) {
    const { informers } = opts;
    const serviceInformer = informers.informerFor<Service>(servicesInfo);
    const podInformer = informers.informerFor<Pod>(podsInfo);
    const nodeInformer = informers.informerFor<Node>(nodesInfo);
    const sliceInformer = informers.informerFor<EndpointSlice>(slicesInfo);
    informers.addIndexers<EndpointSlice>(slicesInfo, { [BY_SERVICE]: (s) => (s.metadata?.labels?.[LABEL_SERVICE_NAME] ? [serviceKeyOfSlice(s)] : []) });
    this.services = informers.lister(servicesInfo);
    this.pods = informers.lister(podsInfo);
    addEndpointIndexes(informers);
    this.nodes = informers.lister(nodesInfo);
    this.slices = informers.lister(slicesInfo);
    this.maxEndpointsPerSlice = opts.maxEndpointsPerSlice ?? DEFAULT_MAX_ENDPOINTS_PER_SLICE;
    this.timeline = new EndpointTimeline(opts.timeline ?? noTimeline, opts.clock);
    ({ recorder: this.recorder, events: this.events } = controllerEvents(opts, 'endpoint-slice-controller'));
    this.controller = new QueueController({
      name: 'endpointslice',
      clock: opts.clock,
      logger: opts.logger,
      sources: [serviceInformer, podInformer, nodeInformer, sliceInformer],
      sync: (key) => this.syncService(key),
      workers: opts.workers ?? DEFAULT_CONCURRENT_SYNCS,
      rateLimiter: new MaxOfRateLimiter<string>(new ItemExponentialFailureRateLimiter(SYNC_BACKOFF_MS, MAX_SYNC_BACKOFF_MS), new BucketRateLimiter(10, 100, opts.clock)),
    });

    const enqueueService = (svc: Service | DeletedFinalStateUnknown<Service>) => this.controller.enqueue(metaNamespaceKeyFunc(svc));
    serviceInformer.addEventHandler({ onAdd: enqueueService, onUpdate: (_old, cur) => enqueueService(cur), onDelete: enqueueService });

    podInformer.addEventHandler(podEventHandler(this.services, (key) => this.controller.enqueue(key)));

    const sliceChanged = (slice: EndpointSlice) => {
      const key = serviceKeyOfSlice(slice);
      if (managedByController(slice) && this.tracker.shouldSync(slice)) this.controller.enqueue(key);
    };
    sliceInformer.addEventHandler({
      onAdd: sliceChanged,
      onUpdate: (old, cur) => {
        // A slice handed to or taken from this controller concerns its Service either way.
        if (managedByController(old) !== managedByController(cur)) this.controller.enqueue(serviceKeyOfSlice(cur));
        else sliceChanged(cur);
      },
      onDelete: (obj) => {
        const slice = unwrapDeleted(obj);
        const key = serviceKeyOfSlice(slice);
        const unexpected = managedByController(slice) && this.tracker.has(slice) && this.tracker.handleDeletion(slice);
        if (unexpected) this.controller.enqueue(key);
      },
    });
  }

  start(): void {
    this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    await this.events?.stop();
  }

  private client(namespace: string): ResourceClient<EndpointSlice> {
    return this.opts.client.resource<EndpointSlice>(slicesInfo).namespace(namespace);
  }

  private async syncService(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const service = this.services.namespace(namespace).get(name);
    if (!service) {
      // Its slices are owned by it: the garbage collector removes them.
      this.triggerTimes.deleteService(namespace, name);
      this.tracker.deleteService(key);
      this.timeline.forget(key);
      return;
    }
    if (!endpointsFromSelector(service)) return;

    const pods = selectedPods(this.pods, service);
    // Planned from the cache with this controller's own writes not seen there yet laid over it.
    const slices = this.tracker.current(key, this.slices.byIndex(BY_SERVICE, key).filter(managedByController));
    this.timeline.seed(key, slices);
    const triggerTime = this.triggerTimes.compute(service, pods);
    const plan = reconcile({
      service,
      pods,
      existing: slices.filter((s) => !s.metadata?.deletionTimestamp),
      node: (n) => this.nodes.get(n),
      maxEndpointsPerSlice: this.maxEndpointsPerSlice,
      triggerTime,
    });
    try {
      await this.apply(key, service, slices, plan);
    } catch (err) {
      // A namespace being deleted takes no new objects; its Services are going too.
      if (hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) return;
      const message = `Error updating Endpoint Slices for Service ${namespace}/${name}: ${(err as Error).message}`;
      this.recorder.event(involvedObject({ ...service, apiVersion: 'v1', kind: 'Service' }), 'Warning', 'FailedToUpdateEndpointSlices', message);
      throw err;
    }
  }

  /** The plan's writes: creates, updates, then deletes; then the pods it left out fail the sync. */
  private async apply(key: string, service: Service, current: readonly EndpointSlice[], plan: ReturnType<typeof reconcile>): Promise<void> {
    const client = this.client(service.metadata!.namespace!);
    const name = service.metadata!.name!;
    const before = new Map(current.map((s) => [s.metadata?.name, s]));
    for (const slice of plan.create) {
      const created = await client.create(slice);
      this.tracker.update(created);
      this.timeline.written(key, name, undefined, created);
    }
    for (const slice of plan.update) {
      const updated = await client.update(slice);
      this.tracker.update(updated);
      this.timeline.written(key, name, before.get(slice.metadata?.name), updated);
    }
    for (const slice of plan.delete) {
      try {
        await client.delete(slice.metadata!.name!);
      } catch (err) {
        if (!hasStatusCode(err, 404)) throw err;
      }
      this.tracker.expectDeletion(slice);
      this.timeline.deleted(key, name, slice);
    }
    if (plan.errors.length > 0) throw new Error(plan.errors.join(', '));
  }
}
