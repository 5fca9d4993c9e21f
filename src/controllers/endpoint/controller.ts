// The Endpoints controller (upstream's pkg/controller/endpoint, "endpoints-controller"): the legacy
// v1 Endpoints object of every Service with a selector, named as the Service: ready pods in
// addresses, the others in notReadyAddresses (terminating pods left out unless
// publishNotReadyAddresses), repacked by port (subsets.ts), at most 1,000 addresses (the
// over-capacity annotation says when it cut), the Service's labels plus the headless and 1.33's
// managed-by labels, and the last-change-trigger-time annotation. A deleted Service's Endpoints
// are deleted; at start every existing Endpoints is looked at once, so leftovers go too.
import type { EndpointAddress, EndpointPort, EndpointSubset, Endpoints, Pod, Service } from 'kubernetes-types/core/v1.js';
import { hasStatusCode } from '../../api/errors.js';
import { findResource } from '../../api/resources.js';
import { rfc3339 } from '../../api/time.js';
import { deepEqual } from '../../api/validation/meta.js';
import { isIPv6 } from '../../api/validation/names.js';
import { waitForCacheSync, type EventSource } from '../../client/factory.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, splitMetaNamespaceKey } from '../../client/indexer.js';
import type { Lister } from '../../client/lister.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';
import { controllerEvents } from '../kit/events.js';
import { hasStatusCause, involvedObject, NAMESPACE_TERMINATING_CAUSE } from '../kit/podcontrol.js';
import type { EventBroadcaster, EventRecorder } from '../../client/record/recorder.js';
import { isPodReady } from '../kit/pods.js';
import { addEndpointIndexes, endpointsFromSelector, findPort, LAST_CHANGE_TRIGGER_TIME, podEventHandler, selectedPods, shouldPodBeInEndpoints, shouldSetHostname, TriggerTimeTracker } from '../endpointslice/endpointutil.js';
import { LABEL_HEADLESS } from '../endpointslice/reconciler.js';
import { countAddresses, MAX_CAPACITY, repackSubsets, truncateSubsets } from './subsets.js';

/** v1.EndpointsOverCapacity and its value when the controller cut the addresses. */
export const OVER_CAPACITY = 'endpoints.kubernetes.io/over-capacity';
const TRUNCATED = 'truncated';
/** The label 1.33's controller marks its Endpoints with, and its value. */
export const LABEL_MANAGED_BY = 'endpoints.kubernetes.io/managed-by';
export const CONTROLLER_NAME = 'endpoint-controller';
/** Leader-election Endpoints (from before Leases) have no Service and are never deleted. */
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
/** --concurrent-endpoint-syncs default. */
export const DEFAULT_CONCURRENT_ENDPOINT_SYNCS = 5;
/** maxRetries: a Service failing this often is dropped until its next change. */
const MAX_RETRIES = 15;

const servicesInfo = findResource('', 'v1', 'services')!;
const podsInfo = findResource('', 'v1', 'pods')!;
const endpointsInfo = findResource('', 'v1', 'endpoints')!;

export type EndpointsControllerOptions = ControllerOptions;

export class EndpointsController {
  private readonly services: Lister<Service>;
  private readonly pods: Lister<Pod>;
  private readonly endpoints: Lister<Endpoints>;
  private readonly controller: QueueController;
  private readonly triggerTimes = new TriggerTimeTracker();
  /** Service key → the resourceVersion this controller replaced (a cache still holding it is behind). */
  private readonly staleVersions = new Map<string, string>();
  private readonly abort = new AbortController();
  private readonly recorder: EventRecorder;
  private readonly events?: EventBroadcaster;
  private readonly sources: readonly EventSource<never>[];

  constructor(private readonly opts: EndpointsControllerOptions) {
    const { informers } = opts;
    const serviceInformer = informers.informerFor<Service>(servicesInfo);
    const podInformer = informers.informerFor<Pod>(podsInfo);
    const endpointsInformer = informers.informerFor<Endpoints>(endpointsInfo);
    this.services = informers.lister(servicesInfo);
    this.pods = informers.lister(podsInfo);
    addEndpointIndexes(informers);
    this.endpoints = informers.lister(endpointsInfo);
    ({ recorder: this.recorder, events: this.events } = controllerEvents(opts, 'endpoint-controller'));
    this.controller = new QueueController({
      name: 'endpoint',
      clock: opts.clock,
      logger: opts.logger,
      sources: [serviceInformer, podInformer, endpointsInformer],
      sync: (key) => this.syncService(key),
      workers: opts.workers ?? DEFAULT_CONCURRENT_ENDPOINT_SYNCS,
      onError: (err, key) => {
        if (this.controller.queue.numRequeues(key) < MAX_RETRIES) return 'retry';
        opts.logger.info({ err, service: key }, 'Dropping service out of the queue');
        return 'drop';
      },
    });
    const enqueue = (obj: Service | Endpoints | DeletedFinalStateUnknown<Service | Endpoints>) => this.controller.enqueue(metaNamespaceKeyFunc(obj));
    serviceInformer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, cur) => enqueue(cur), onDelete: enqueue });
    endpointsInformer.addEventHandler({ onDelete: enqueue });
    podInformer.addEventHandler(podEventHandler(this.services, (key) => this.controller.enqueue(key)));
    this.sources = [serviceInformer, podInformer, endpointsInformer];
  }

  start(): void {
    this.controller.start();
    // checkLeftoverEndpoints: Endpoints whose Service went while the controller was down.
    void waitForCacheSync(this.abort.signal, ...this.sources).then((synced) => {
      if (!synced) return;
      for (const ep of this.endpoints.list()) if (!ep.metadata?.annotations?.[LEADER_ANNOTATION]) this.controller.enqueue(metaNamespaceKeyFunc(ep));
    });
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.controller.stop();
    await this.events?.stop();
  }

  private async syncService(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const client = this.opts.client.resource<Endpoints>(endpointsInfo).namespace(namespace);
    const service = this.services.namespace(namespace).get(name);
    if (!service) {
      try {
        await client.delete(name);
      } catch (err) {
        if (!hasStatusCode(err, 404)) throw err;
      }
      this.triggerTimes.deleteService(namespace, name);
      this.staleVersions.delete(key);
      return;
    }
    if (!endpointsFromSelector(service)) return;

    const pods = selectedPods(this.pods, service);
    const triggerTime = this.triggerTimes.compute(service, pods);
    const subsets = repackSubsets(podSubsets(service, pods));

    const current = this.endpoints.namespace(namespace).get(name);
    if (current && this.staleVersions.get(key) === current.metadata?.resourceVersion) {
      throw new Error(`endpoints informer cache is out of date, resource version ${current.metadata?.resourceVersion} already processed for endpoints ${key}`);
    }
    const serviceLabels = service.metadata?.labels ?? {};
    if (
      current &&
      deepEqual(current.subsets ?? [], subsets) &&
      sameLabels(withoutOwnLabels(current.metadata?.labels), serviceLabels) &&
      capacityAnnotationCorrect(current)
    ) {
      return;
    }
    const annotations = { ...current?.metadata?.annotations };
    if (triggerTime) annotations[LAST_CHANGE_TRIGGER_TIME] = rfc3339(triggerTime);
    else delete annotations[LAST_CHANGE_TRIGGER_TIME];
    const [kept, truncated] = truncateSubsets(subsets);
    if (truncated) annotations[OVER_CAPACITY] = TRUNCATED;
    else delete annotations[OVER_CAPACITY];
    const labels: Record<string, string> = { ...serviceLabels, [LABEL_MANAGED_BY]: CONTROLLER_NAME };
    if (!service.spec?.clusterIP || service.spec.clusterIP === 'None') labels[LABEL_HEADLESS] = '';
    else delete labels[LABEL_HEADLESS];
    const desired: Endpoints = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { ...(current?.metadata ?? { name, namespace }), labels, annotations },
      subsets: kept,
    };
    const failed = (reason: string, message: string) => this.recorder.event(involvedObject(desired), 'Warning', reason, message);
    if (!current) {
      try {
        await client.create(desired);
      } catch (err) {
        // A namespace being deleted takes no new objects; retrying cannot help.
        if (hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) return;
        failed('FailedToCreateEndpoint', `Failed to create endpoint for service ${namespace}/${name}: ${(err as Error).message}`);
        throw err;
      }
      return;
    }
    let updated: Endpoints;
    try {
      updated = await client.update(desired);
    } catch (err) {
      failed('FailedToUpdateEndpoint', `Failed to update endpoint ${namespace}/${name}: ${(err as Error).message}`);
      throw err;
    }
    if (updated.metadata?.resourceVersion !== current.metadata?.resourceVersion) this.staleVersions.set(key, current.metadata!.resourceVersion!);
  }
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

/** The labels the controller adds itself, left out when comparing with the Service's. */
function withoutOwnLabels(labels: Record<string, string> | undefined): Record<string, string> {
  const { [LABEL_HEADLESS]: _h, [LABEL_MANAGED_BY]: _m, ...rest } = labels ?? {};
  return rest;
}

/** capacityAnnotationSetCorrectly: over capacity needs truncating; under it, no annotation. */
function capacityAnnotationCorrect(ep: Endpoints): boolean {
  if (countAddresses(ep.subsets ?? []) > MAX_CAPACITY) return false;
  return ep.metadata?.annotations?.[OVER_CAPACITY] === undefined;
}

/** One subset per pod and Service port (a headless Service without ports: one per pod). */
function podSubsets(service: Service, pods: readonly Pod[]): EndpointSubset[] {
  const tolerateUnready = !!service.spec?.publishNotReadyAddresses;
  const subsets: EndpointSubset[] = [];
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, tolerateUnready)) continue;
    const address = podAddress(service, pod);
    if (!address) continue;
    const ready = tolerateUnready || isPodReady(pod);
    const add = (ports: EndpointPort[]) => subsets.push(ready ? { addresses: [address], ports } : { notReadyAddresses: [address], ports });
    const servicePorts = service.spec?.ports ?? [];
    if (servicePorts.length === 0) {
      if (service.spec?.clusterIP === 'None') add([]);
      continue;
    }
    for (const sp of servicePorts) {
      const port = findPort(pod, sp);
      if (port === undefined) continue;
      add([{ ...(sp.name ? { name: sp.name } : {}), port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol !== undefined ? { appProtocol: sp.appProtocol } : {}) }]);
    }
  }
  return subsets;
}

/** podToEndpointAddressForService: the pod's IP of the Service's (first) family. */
function podAddress(service: Service, pod: Pod): EndpointAddress | undefined {
  let v6: boolean;
  const families = service.spec?.ipFamilies ?? [];
  if (families.length) v6 = families[0] === 'IPv6';
  else if (service.spec?.clusterIP && service.spec.clusterIP !== 'None') v6 = isIPv6(service.spec.clusterIP);
  else v6 = isIPv6(pod.status?.podIP ?? '');
  const ips = pod.status?.podIPs?.length ? pod.status.podIPs.map((p) => p.ip ?? '') : [pod.status?.podIP ?? ''];
  const ip = ips.find((i) => i && isIPv6(i) === v6);
  if (!ip) return undefined;
  const address: EndpointAddress = {
    ip,
    nodeName: pod.spec?.nodeName ?? '',
    targetRef: { kind: 'Pod', namespace: pod.metadata?.namespace, name: pod.metadata?.name, uid: pod.metadata?.uid },
  };
  if (shouldSetHostname(pod, service)) address.hostname = pod.spec!.hostname;
  return address;
}
