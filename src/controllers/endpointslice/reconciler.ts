// The EndpointSlice planner, as upstream's staging endpointslice reconciler: from a Service, the
// pods its selector picks and the slices this controller already manages for it, which slices to
// create, update and delete. Endpoints are grouped by their resolved ports (pods whose named
// targetPorts resolve differently go to different slices); endpoints already in a slice stay there,
// new ones fill the slices being updated (fullest first), then the unchanged slice that comes
// closest to full, then new slices of at most maxEndpointsPerSlice. A Service without endpoints
// keeps one empty placeholder slice. Pure: no API calls, no clock.
import type { EndpointConditions, Endpoint, EndpointPort, EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { Node, Pod, Service } from 'kubernetes-types/core/v1.js';
import { isIPv6 } from '../../api/validation/names.js';
import { rfc3339 } from '../../api/time.js';
import { isPodReady } from '../kit/pods.js';
import { findPort, LAST_CHANGE_TRIGGER_TIME, shouldPodBeInEndpoints, shouldSetHostname } from './endpointutil.js';

export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const LABEL_HEADLESS = 'service.kubernetes.io/headless';
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';
/** The managed-by value of this controller's slices. */
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
/** --max-endpoints-per-slice default. */
export const DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100;

export type AddressType = 'IPv4' | 'IPv6';

export interface ReconcileInput {
  service: Service;
  pods: readonly Pod[];
  /** This controller's slices of the Service (label selected), not being deleted. */
  existing: readonly EndpointSlice[];
  node: (name: string) => Node | undefined;
  maxEndpointsPerSlice: number;
  /** The trigger time to record (ms since the epoch); 0 clears the annotation. */
  triggerTime: number;
}

export interface ReconcilePlan {
  /** New slices (generateName set, no name). */
  create: EndpointSlice[];
  /** Changed copies of existing slices (or a create turned into an update of a slice to delete). */
  update: EndpointSlice[];
  delete: EndpointSlice[];
  /** Pods left out and why (their node is not in the cache yet); the Service should be synced again. */
  errors: string[];
}

/** The Service's address types: its ipFamilies, else IPv4 (upstream's getAddressTypesForService, single stack). */
export function addressTypesOf(service: Service): AddressType[] {
  const families = service.spec?.ipFamilies?.filter((f): f is AddressType => f === 'IPv4' || f === 'IPv6') ?? [];
  if (families.length) return families;
  const ip = service.spec?.clusterIP;
  return ip && ip !== 'None' && isIPv6(ip) ? ['IPv6'] : ['IPv4'];
}

/** ownedBy: the slice's controller reference is this Service (by UID). */
export function ownedBy(slice: EndpointSlice, service: Service): boolean {
  return (slice.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === service.metadata?.uid);
}

export function reconcile(input: ReconcileInput): ReconcilePlan {
  const { service } = input;
  const types = addressTypesOf(service);
  const plan: ReconcilePlan = { create: [], update: [], delete: [], errors: [] };
  // Slices of an address type the Service lost, or of an earlier Service of the same name, go.
  const kept: EndpointSlice[] = [];
  for (const slice of input.existing) {
    if (ownedBy(slice, service) && types.includes(slice.addressType as AddressType)) kept.push(slice);
    else plan.delete.push(slice);
  }
  for (const type of types) {
    reconcileAddressType(
      input,
      type,
      kept.filter((s) => s.addressType === type),
      plan,
    );
  }
  // A Service with no endpoints keeps one empty slice of its first address type.
  if (plan.create.length === 0 && input.existing.length === plan.delete.length) {
    const placeholder = newSlice(service, [], types[0]);
    const only = plan.delete.length === 1 ? plan.delete[0] : undefined;
    if (only && ownedBy(only, service) && isPlaceholder(only, placeholder)) plan.delete = [];
    else plan.create.push(placeholder);
  }
  // No new slices while the Service is going away: the garbage collector is deleting them.
  if (service.metadata?.deletionTimestamp) plan.create = [];
  // A slice that would be deleted is reused for one that would be created.
  for (let i = 0; i < plan.delete.length && plan.create.length > 0; ) {
    const doomed = plan.delete[i];
    const fresh = plan.create[plan.create.length - 1];
    if (doomed.addressType === fresh.addressType && ownedBy(doomed, service)) {
      plan.create.pop();
      plan.update.push({ ...fresh, metadata: { ...doomed.metadata, labels: fresh.metadata?.labels, ownerReferences: fresh.metadata?.ownerReferences } });
      plan.delete.splice(i, 1);
    } else {
      i++;
    }
  }
  for (const slice of [...plan.create, ...plan.update]) setTriggerTime(slice, input.triggerTime);
  return plan;
}

function setTriggerTime(slice: EndpointSlice, triggerTime: number): void {
  const annotations = { ...slice.metadata?.annotations };
  if (triggerTime) annotations[LAST_CHANGE_TRIGGER_TIME] = rfc3339(triggerTime);
  else delete annotations[LAST_CHANGE_TRIGGER_TIME];
  slice.metadata = { ...slice.metadata, annotations };
}

/** placeholderSliceCompare: the same ports, address type, endpoints and labels (names and generation aside). */
function isPlaceholder(slice: EndpointSlice, placeholder: EndpointSlice): boolean {
  return (
    slice.addressType === placeholder.addressType &&
    (slice.ports ?? []).length === 0 &&
    (slice.endpoints ?? []).length === 0 &&
    sameLabels(slice.metadata?.labels, placeholder.metadata?.labels)
  );
}

const sameLabels = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) => {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b ?? {}).length && ka.every((k) => a![k] === b?.[k]);
};

interface DesiredGroup {
  ports: EndpointPort[];
  endpoints: Map<string, Endpoint>;
}

function reconcileAddressType(input: ReconcileInput, type: AddressType, existing: EndpointSlice[], plan: ReconcilePlan): void {
  const { service } = input;
  const existingByPorts = new Map<string, EndpointSlice[]>();
  for (const slice of existing) {
    const key = portMapKey(slice.ports ?? []);
    existingByPorts.set(key, [...(existingByPorts.get(key) ?? []), slice]);
  }
  const desired = new Map<string, DesiredGroup>();
  for (const pod of input.pods) {
    if (!shouldPodBeInEndpoints(pod, true)) continue;
    const ports = endpointPorts(service, pod);
    const key = portMapKey(ports);
    const nodeName = pod.spec?.nodeName ?? '';
    const node = nodeName ? input.node(nodeName) : undefined;
    if (nodeName && !node && !service.spec?.publishNotReadyAddresses) {
      plan.errors.push(`skipping Pod ${pod.metadata?.name} for Service ${service.metadata?.namespace}/${service.metadata?.name}: Node ${nodeName} Not Found`);
      continue;
    }
    const endpoint = podToEndpoint(pod, node, service, type);
    if (endpoint.addresses.length === 0) continue;
    let group = desired.get(key);
    if (!group) desired.set(key, (group = { ports: sortPorts(ports), endpoints: new Map() }));
    group.endpoints.set(endpointKey(endpoint), endpoint);
  }
  for (const [key, group] of desired) {
    const r = reconcileByPortMapping(input, existingByPorts.get(key) ?? [], group, type);
    plan.create.push(...r.create);
    plan.update.push(...r.update);
    plan.delete.push(...r.delete);
  }
  for (const [key, slices] of existingByPorts) if (!desired.has(key)) plan.delete.push(...slices);
}

function reconcileByPortMapping(
  input: ReconcileInput,
  existing: EndpointSlice[],
  group: DesiredGroup,
  type: AddressType,
): { create: EndpointSlice[]; update: EndpointSlice[]; delete: EndpointSlice[] } {
  const { service, maxEndpointsPerSlice: max } = input;
  const wanted = group.endpoints;
  const byName = new Map<string, EndpointSlice>();
  const unchanged = new Set<string>();
  const toUpdate = new Set<string>();
  const toDelete = new Set<string>();

  // 1. Keep the endpoints still wanted where they are, with their current form.
  for (const slice of existing) {
    const name = slice.metadata!.name!;
    byName.set(name, slice);
    const kept: Endpoint[] = [];
    let changed = false;
    for (const ep of slice.endpoints ?? []) {
      const key = endpointKey(ep);
      const want = wanted.get(key);
      if (!want) continue;
      kept.push(want);
      if (!endpointsEqualBeyondHash(want, ep)) changed = true;
      wanted.delete(key);
    }
    const [labels, labelsChanged] = sliceLabels(slice, service);
    if (changed || kept.length !== (slice.endpoints ?? []).length) {
      if (kept.length === 0) {
        toDelete.add(name);
      } else {
        byName.set(name, { ...slice, metadata: { ...slice.metadata, labels }, endpoints: kept });
        toUpdate.add(name);
      }
    } else if (labelsChanged) {
      byName.set(name, { ...slice, metadata: { ...slice.metadata, labels } });
      toUpdate.add(name);
    } else {
      unchanged.add(name);
    }
  }

  const pending = [...wanted.values()];
  // 2. Fill the slices being updated anyway, fullest first.
  if (pending.length > 0 && toUpdate.size > 0) {
    const slices = [...toUpdate].map((n) => byName.get(n)!).sort((a, b) => (b.endpoints?.length ?? 0) - (a.endpoints?.length ?? 0));
    for (const slice of slices) {
      while (pending.length > 0 && slice.endpoints!.length < max) slice.endpoints!.push(pending.shift()!);
    }
  }

  // 3. Then the unchanged slice closest to full that takes the rest, else new slices.
  const create: EndpointSlice[] = [];
  while (pending.length > 0) {
    let fill: EndpointSlice | undefined;
    if (pending.length < max && unchanged.size > 0) {
      const target = sliceToFill(
        [...unchanged].map((n) => byName.get(n)!),
        pending.length,
        max,
      );
      if (target) {
        fill = { ...target, endpoints: [...(target.endpoints ?? [])] };
        byName.set(target.metadata!.name!, fill);
      }
    }
    fill ??= newSlice(service, group.ports, type);
    while (pending.length > 0 && fill.endpoints!.length < max) fill.endpoints!.push(pending.shift()!);
    const name = fill.metadata?.name;
    if (name) {
      toUpdate.add(name);
      unchanged.delete(name);
    } else {
      create.push(fill);
    }
  }
  return { create, update: [...toUpdate].map((n) => byName.get(n)!), delete: [...toDelete].map((n) => byName.get(n)!) };
}

/** getSliceToFill: the slice that comes closest to full with n more endpoints (and does not overflow). */
function sliceToFill(slices: EndpointSlice[], n: number, max: number): EndpointSlice | undefined {
  let best: EndpointSlice | undefined;
  let closest = max;
  for (const slice of slices) {
    const diff = max - (n + (slice.endpoints?.length ?? 0));
    if (diff >= 0 && diff < closest) {
      closest = diff;
      best = slice;
      if (diff === 0) break;
    }
  }
  return best;
}

/** newEndpointSlice: generateName `<service>-`, the Service as controller owner, its labels. */
export function newSlice(service: Service, ports: EndpointPort[], type: AddressType): EndpointSlice {
  const meta = service.metadata!;
  const draft: EndpointSlice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      generateName: `${meta.name}-`,
      namespace: meta.namespace,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: meta.name!, uid: meta.uid!, controller: true, blockOwnerDeletion: true }],
    },
    addressType: type,
    ports,
    endpoints: [],
  };
  draft.metadata!.labels = sliceLabels(draft, service)[0];
  return draft;
}

const reservedLabel = (key: string) => key === LABEL_SERVICE_NAME || key === LABEL_MANAGED_BY || key === LABEL_HEADLESS;

/**
 * setEndpointSliceLabels: the Service's labels (the reserved keys aside), the headless label for a
 * clusterIP None Service, service-name and managed-by; and whether the copied labels changed.
 */
export function sliceLabels(slice: EndpointSlice, service: Service): [Record<string, string>, boolean] {
  const current: Record<string, string> = {};
  for (const [k, v] of Object.entries(slice.metadata?.labels ?? {})) if (!reservedLabel(k)) current[k] = v;
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(service.metadata?.labels ?? {})) if (!reservedLabel(k)) labels[k] = v;
  const changed = !sameLabels(current, labels);
  if (service.spec?.clusterIP === 'None') labels[LABEL_HEADLESS] = '';
  labels[LABEL_SERVICE_NAME] = service.metadata!.name!;
  labels[LABEL_MANAGED_BY] = CONTROLLER_NAME;
  return [labels, changed];
}

/** getEndpointPorts: each Service port the pod resolves (a named targetPort it lacks is left out). */
export function endpointPorts(service: Service, pod: Pod): EndpointPort[] {
  const ports: EndpointPort[] = [];
  for (const sp of service.spec?.ports ?? []) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    ports.push({ name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol !== undefined ? { appProtocol: sp.appProtocol } : {}) });
  }
  return ports;
}

const portKey = (p: EndpointPort) => JSON.stringify([p.name ?? '', p.port ?? 0, p.protocol ?? '', p.appProtocol ?? null]);
const sortPorts = (ports: EndpointPort[]) => [...ports].sort((a, b) => (portKey(a) < portKey(b) ? -1 : portKey(a) > portKey(b) ? 1 : 0));
/** NewPortMapKey: the ports as a set. */
const portMapKey = (ports: readonly EndpointPort[]) => sortPorts([...ports]).map(portKey).join(',');

/** hashEndpoint: an endpoint is its addresses, hostname and target pod. */
function endpointKey(ep: Endpoint): string {
  return JSON.stringify([[...ep.addresses].sort(), ep.hostname ?? '', ep.targetRef?.namespace ?? '', ep.targetRef?.name ?? '']);
}

const conditionsEqual = (a: EndpointConditions | undefined, b: EndpointConditions | undefined) =>
  a?.ready === b?.ready && a?.serving === b?.serving && a?.terminating === b?.terminating;

/** endpointsEqualBeyondHash: node, zone, conditions, hints and target reference. */
function endpointsEqualBeyondHash(a: Endpoint, b: Endpoint): boolean {
  return (
    a.nodeName === b.nodeName &&
    a.zone === b.zone &&
    conditionsEqual(a.conditions, b.conditions) &&
    JSON.stringify(a.hints ?? null) === JSON.stringify(b.hints ?? null) &&
    a.targetRef?.kind === b.targetRef?.kind &&
    a.targetRef?.namespace === b.targetRef?.namespace &&
    a.targetRef?.name === b.targetRef?.name &&
    a.targetRef?.uid === b.targetRef?.uid
  );
}

/**
 * podToEndpoint: ready means serving and not terminating (or publishNotReadyAddresses); serving is
 * the pod's Ready condition; terminating its deletionTimestamp.
 */
export function podToEndpoint(pod: Pod, node: Node | undefined, service: Service, type: AddressType): Endpoint {
  const serving = isPodReady(pod);
  const terminating = !!pod.metadata?.deletionTimestamp;
  const ready = !!service.spec?.publishNotReadyAddresses || (serving && !terminating);
  const ips = pod.status?.podIPs?.length ? pod.status.podIPs.map((p) => p.ip ?? '') : [pod.status?.podIP ?? ''];
  const ep: Endpoint = {
    addresses: ips.filter((ip) => ip && (type === 'IPv6') === isIPv6(ip)),
    conditions: { ready, serving, terminating },
    targetRef: { kind: 'Pod', namespace: pod.metadata?.namespace, name: pod.metadata?.name, uid: pod.metadata?.uid },
  };
  if (pod.spec?.nodeName) ep.nodeName = pod.spec.nodeName;
  const zone = node?.metadata?.labels?.[LABEL_TOPOLOGY_ZONE];
  if (zone) ep.zone = zone;
  if (shouldSetHostname(pod, service)) ep.hostname = pod.spec!.hostname;
  return ep;
}
