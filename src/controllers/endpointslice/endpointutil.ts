// What the EndpointSlice and Endpoints controllers share, as upstream's pkg/controller/util/endpoint:
// which pods back a Service, the pod port a Service port resolves to, when a pod change matters to
// endpoints, the hostname rule, and the last-change-trigger-time bookkeeping.
import type { Pod, Service, ServicePort } from 'kubernetes-types/core/v1.js';
import { selectorFromSet, type Selector } from '../../api/labels.js';
import { isPodPhaseTerminal } from '../../api/pod/status.js';
import { findResource } from '../../api/resources.js';
import type { SharedInformerFactory } from '../../client/factory.js';
import { unwrapDeleted } from '../../client/indexer.js';
import type { ResourceEventHandler } from '../../client/informer.js';
import type { Lister } from '../../client/lister.js';
import { isPodReady } from '../kit/pods.js';

/** v1.EndpointsLastChangeTriggerTime: when the change the endpoints reflect happened. */
export const LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';

/**
 * ShouldPodBeInEndpoints: the pod has an IP and has not finished; a terminating pod counts only
 * when includeTerminating (the EndpointSlice controller keeps them, the Endpoints controller only
 * with publishNotReadyAddresses).
 */
export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  if (isPodPhaseTerminal(pod.status?.phase)) return false;
  if (!pod.status?.podIP && !pod.status?.podIPs?.length) return false;
  return includeTerminating || !pod.metadata?.deletionTimestamp;
}

/**
 * Whether the endpoint controllers keep endpoints for the Service: ExternalName Services get none,
 * and Services without a selector have the endpoints their users write.
 */
export const endpointsFromSelector = (service: Service): boolean =>
  service.spec?.type !== 'ExternalName' && !!service.spec?.selector && Object.keys(service.spec.selector).length > 0;

/** ShouldSetHostname: the pod names a hostname and its subdomain is this Service (same namespace). */
export function shouldSetHostname(pod: Pod, service: Service): boolean {
  return !!pod.spec?.hostname && pod.spec.subdomain === service.metadata?.name && pod.metadata?.namespace === service.metadata?.namespace;
}

/**
 * podutil.FindPort: a numeric targetPort as it is; a named one is the container port of that name
 * and the Service port's protocol, in the regular containers then the restartable init containers
 * (sidecars); undefined when no container has it.
 */
export function findPort(pod: Pod, servicePort: ServicePort): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  if (/^[0-9]+$/.test(target)) return Number(target);
  const protocol = servicePort.protocol ?? 'TCP';
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  for (const c of [...(pod.spec?.containers ?? []), ...sidecars]) {
    for (const p of c.ports ?? []) if (p.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
  }
  return undefined;
}

const POD_LABEL_INDEX = 'endpoints-pod-label';
const SERVICE_SELECTOR_INDEX = 'endpoints-service-selector';
const podsInfo = findResource('', 'v1', 'pods')!;
const servicesInfo = findResource('', 'v1', 'services')!;
/** The factories whose informers have the indexes (both endpoint controllers share them). */
const indexed = new WeakSet<SharedInformerFactory>();

const labelKeys = (namespace: string | undefined, labels: Record<string, string> | undefined) => Object.entries(labels ?? {}).map(([k, v]) => `${namespace ?? ''}/${k}=${v}`);

/**
 * Indexes the factory's pods by `<namespace>/<key>=<value>` of each label and its Services by each
 * pair of their selector, so neither side scans the other (selectedPods, podServiceKeys).
 */
export function addEndpointIndexes(informers: SharedInformerFactory): void {
  if (indexed.has(informers)) return;
  indexed.add(informers);
  informers.addIndexers<Pod>(podsInfo, { [POD_LABEL_INDEX]: (p) => labelKeys(p.metadata?.namespace, p.metadata?.labels) });
  informers.addIndexers<Service>(servicesInfo, { [SERVICE_SELECTOR_INDEX]: (s) => labelKeys(s.metadata?.namespace, s.spec?.selector) });
}

/**
 * The pods of the namespace the Service's selector picks (a lister list with the selector, but
 * through the label index: only the pods with the selector's first label are looked at).
 */
export function selectedPods(pods: Lister<Pod>, service: Service): Pod[] {
  const set = service.spec?.selector ?? {};
  const [first] = Object.entries(set);
  if (!first) return [];
  const sel = serviceSelector(service)!;
  return pods.byIndex(POD_LABEL_INDEX, `${service.metadata?.namespace ?? ''}/${first[0]}=${first[1]}`).filter((p) => sel.matches(p.metadata?.labels ?? {}));
}

/** Each cached Service's parsed selector (upstream's ServiceSelectorCache); a new object (an update) parses again. */
const selectors = new WeakMap<Service, Selector>();

function serviceSelector(svc: Service): Selector | undefined {
  const set = svc.spec?.selector;
  // A Service without a selector gets no endpoints from the controllers (an empty one selects nothing).
  if (!set || Object.keys(set).length === 0) return undefined;
  let sel = selectors.get(svc);
  if (!sel) selectors.set(svc, (sel = selectorFromSet(set)));
  return sel;
}

/**
 * The Services of the pod's namespace whose selector matches its labels (GetPodServiceMemberships):
 * only those whose selector has one of the pod's labels are looked at.
 */
export function podServiceKeys(services: Lister<Service>, pod: Pod): Set<string> {
  const ns = pod.metadata?.namespace ?? '';
  const labels = pod.metadata?.labels ?? {};
  const keys = new Set<string>();
  for (const key of labelKeys(ns, labels)) {
    for (const svc of services.byIndex(SERVICE_SELECTOR_INDEX, key)) {
      if (serviceSelector(svc)?.matches(labels)) keys.add(`${ns}/${svc.metadata?.name}`);
    }
  }
  return keys;
}

const sameStrings = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) => {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b ?? {}).length && ka.every((k) => a![k] === b?.[k]);
};

/**
 * podEndpointsChanged: [whether what endpoints show of the pod changed, whether its Service
 * membership may have (labels, hostname or subdomain)].
 */
export function podEndpointsChanged(old: Pod, cur: Pod): [boolean, boolean] {
  const membership = !sameStrings(old.metadata?.labels, cur.metadata?.labels) || old.spec?.hostname !== cur.spec?.hostname || old.spec?.subdomain !== cur.spec?.subdomain;
  if (old.metadata?.deletionTimestamp !== cur.metadata?.deletionTimestamp) return [true, membership];
  if (isPodReady(old) !== isPodReady(cur)) return [true, membership];
  const oldIPs = (old.status?.podIPs ?? []).map((p) => p.ip);
  const curIPs = (cur.status?.podIPs ?? []).map((p) => p.ip);
  if (oldIPs.length !== curIPs.length || oldIPs.some((ip, i) => ip !== curIPs[i])) return [true, membership];
  if ((old.status?.podIP ?? '') !== (cur.status?.podIP ?? '')) return [true, membership];
  return [false, membership];
}

/** The Service keys a pod update concerns (GetServicesToUpdateOnPodChange). */
export function servicesToUpdateOnPodChange(services: Lister<Service>, old: Pod, cur: Pod): Set<string> {
  if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return new Set();
  const [changed, membership] = podEndpointsChanged(old, cur);
  if (!changed && !membership) return new Set();
  const keys = podServiceKeys(services, cur);
  if (membership) {
    const before = podServiceKeys(services, old);
    // Only the Services the pod joined or left, unless what endpoints show of it changed too.
    if (!changed) return new Set([...keys, ...before].filter((k) => keys.has(k) !== before.has(k)));
    for (const k of before) keys.add(k);
  }
  return keys;
}

/** The pod events of an endpoints controller: each enqueues the keys of the Services they concern. */
export function podEventHandler(services: Lister<Service>, enqueue: (serviceKey: string) => void): ResourceEventHandler<Pod> {
  const enqueueAll = (keys: Set<string>) => {
    for (const k of keys) enqueue(k);
  };
  return {
    onAdd: (pod) => enqueueAll(podServiceKeys(services, pod)),
    onUpdate: (old, cur) => enqueueAll(servicesToUpdateOnPodChange(services, old, cur)),
    onDelete: (obj) => enqueueAll(podServiceKeys(services, unwrapDeleted(obj))),
  };
}

interface ServiceTriggerState {
  /** The Ready condition's transition time of each pod at the last sync. */
  pods: Map<string, number>;
  service: number;
}

/**
 * Upstream's TriggerTimeTracker: the time of the earliest change (a pod's Ready transition or the
 * Service's creation) not yet reflected in the Service's endpoints; the Service's creation time on
 * its first sync; 0 when nothing changed.
 */
export class TriggerTimeTracker {
  private readonly states = new Map<string, ServiceTriggerState>();

  compute(service: Service, pods: readonly Pod[]): number {
    const key = `${service.metadata?.namespace}/${service.metadata?.name}`;
    const known = this.states.get(key);
    const next: ServiceTriggerState = { pods: new Map(), service: 0 };
    const times: number[] = [];
    for (const pod of pods) {
      const t = podTriggerTime(pod);
      if (!t) continue;
      next.pods.set(pod.metadata?.name ?? '', t);
      if (t > (known?.pods.get(pod.metadata?.name ?? '') ?? 0)) times.push(t);
    }
    const created = Date.parse(service.metadata?.creationTimestamp ?? '') || 0;
    if (created) {
      next.service = created;
      if (created > (known?.service ?? 0)) times.push(created);
    }
    this.states.set(key, next);
    if (!known) return created;
    return times.length ? Math.min(...times) : 0;
  }

  deleteService(namespace: string, name: string): void {
    this.states.delete(`${namespace}/${name}`);
  }
}

function podTriggerTime(pod: Pod): number {
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  return Date.parse(ready?.lastTransitionTime ?? '') || 0;
}
