// The node status as upstream's pkg/kubelet/nodestatus setters compute it: pure functions from what
// the kubelet knows (machine, runtime, config) to the pieces of NodeStatus, and the conditions with
// their heartbeat and transition times. Events for condition changes are returned, not recorded.
import { Quantity } from '../../api/quantity.js';
import { rfc3339 } from '../../api/time.js';
import type { Node, NodeStatus } from '../../api/types.js';
import type { Image, RuntimeStatus, VersionResponse } from '../runtime/types.js';
import type { KubeletConfig } from '../config.js';
import { NODE_NOT_READY, NODE_READY } from '../events.js';
import type { MachineInfo } from './machine.js';
import { hardEvictionReservation, hardThresholds, type NodePressure } from '../eviction/thresholds.js';
import { versionInfo } from '../../apiserver/version.js';

/** kite's kubelet reports the same build as its API server: v1.33.0+kite.<version>, semver build metadata as k3s does. */
export const KUBELET_VERSION = versionInfo().gitVersion;

export const MAX_IMAGES_IN_NODE_STATUS = 50;
export const MAX_NAMES_PER_IMAGE_IN_NODE_STATUS = 5;

type Condition = NonNullable<NodeStatus['conditions']>[number];

/** The labels the kubelet owns on its Node (upstream's updateDefaultLabels set). */
export function defaultNodeLabels(nodeName: string, machine: Pick<MachineInfo, 'operatingSystem' | 'architecture'>): Record<string, string> {
  return {
    'beta.kubernetes.io/arch': machine.architecture,
    'beta.kubernetes.io/os': machine.operatingSystem,
    'kubernetes.io/arch': machine.architecture,
    'kubernetes.io/hostname': nodeName,
    'kubernetes.io/os': machine.operatingSystem,
  };
}

/** Allocatable memory and ephemeral storage in bytes: capacity less the configured hard eviction thresholds, never below 0. */
export function allocatableBytes(machine: Pick<MachineInfo, 'memoryCapacity' | 'filesystemCapacity'>, cfg: Pick<KubeletConfig, 'evictionHard'>): { memory: number; ephemeralStorage: number } {
  const reserved = hardEvictionReservation(hardThresholds(cfg.evictionHard), { memory: machine.memoryCapacity, ephemeralStorage: machine.filesystemCapacity });
  return { memory: Math.max(0, machine.memoryCapacity - reserved.memory), ephemeralStorage: Math.max(0, machine.filesystemCapacity - reserved.ephemeralStorage) };
}

/** Capacity from the machine, allocatable minus the configured hard eviction thresholds (no reserved resources by default). */
export function machineResources(machine: MachineInfo, cfg: Pick<KubeletConfig, 'maxPods' | 'evictionHard'>): Pick<NodeStatus, 'capacity' | 'allocatable'> {
  const memory = Quantity.fromValue(machine.memoryCapacity, 'BinarySI');
  const storage = Quantity.fromValue(machine.filesystemCapacity, 'BinarySI');
  const allocatable = allocatableBytes(machine, cfg);
  const capacity = {
    cpu: Quantity.fromMilli(machine.numCores * 1000).toString(),
    'ephemeral-storage': storage.toString(),
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    memory: memory.toString(),
    pods: Quantity.fromValue(cfg.maxPods).toString(),
  };
  return {
    capacity,
    allocatable: {
      ...capacity,
      memory: Quantity.fromValue(allocatable.memory, 'BinarySI').toString(),
      'ephemeral-storage': Quantity.fromValue(allocatable.ephemeralStorage, 'BinarySI').toString(),
    },
  };
}

export function nodeInfo(machine: MachineInfo, runtime: VersionResponse): NonNullable<NodeStatus['nodeInfo']> {
  return {
    machineID: machine.machineID,
    systemUUID: machine.systemUUID,
    bootID: machine.bootID,
    kernelVersion: machine.kernelVersion,
    osImage: machine.osImage,
    // The runtime's version parsed as semver prints without its "v": containerd://1.6.20.
    containerRuntimeVersion: `${runtime.runtime_name}://${runtime.runtime_version.replace(/^v/, '')}`,
    kubeletVersion: KUBELET_VERSION,
    // Upstream reports nothing here since 1.31: the field is deprecated.
    kubeProxyVersion: '',
    operatingSystem: machine.operatingSystem,
    architecture: machine.architecture,
  };
}

/** The largest images first, at most 50, each named by its digests then tags (at most 5 names). */
export function nodeImages(images: readonly Image[]): NonNullable<NodeStatus['images']> {
  return [...images]
    .sort((a, b) => b.size - a.size)
    .slice(0, MAX_IMAGES_IN_NODE_STATUS)
    .map((i) => ({ names: [...i.repo_digests, ...i.repo_tags].slice(0, MAX_NAMES_PER_IMAGE_IN_NODE_STATUS), sizeBytes: i.size }));
}

/** Why the node is not ready from the runtime's point of view; empty when it is ready. */
export function runtimeErrors(status: RuntimeStatus | undefined, statusError?: Error): string[] {
  if (statusError || !status) return [`container runtime is down: ${statusError?.message ?? 'no status'}`];
  const errs: string[] = [];
  const runtime = status.conditions.find((c) => c.type === 'RuntimeReady');
  if (!runtime?.status) errs.push(`container runtime not ready: RuntimeReady=false reason:${runtime?.reason ?? ''} message:${runtime?.message ?? ''}`);
  const network = status.conditions.find((c) => c.type === 'NetworkReady');
  if (!network?.status) errs.push(`container runtime network not ready: NetworkReady=false reason:${network?.reason ?? ''} message:${network?.message ?? ''}`);
  return errs;
}

interface WantedCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  /** The event recorded when the condition is new or changes status ("Node n status is now: <event>"). */
  event: string;
}

/** Each pressure condition when the eviction manager reports it, and when not (upstream's MemoryPressureCondition and siblings). */
const PRESSURE_CONDITIONS: Record<NodePressure, [pressure: Omit<WantedCondition, 'type'>, none: Omit<WantedCondition, 'type'>]> = {
  MemoryPressure: [
    { status: 'True', reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available', event: 'NodeHasInsufficientMemory' },
    { status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available', event: 'NodeHasSufficientMemory' },
  ],
  DiskPressure: [
    { status: 'True', reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure', event: 'NodeHasDiskPressure' },
    { status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure', event: 'NodeHasNoDiskPressure' },
  ],
  PIDPressure: [
    { status: 'True', reason: 'KubeletHasInsufficientPID', message: 'kubelet has insufficient PID available', event: 'NodeHasInsufficientPID' },
    { status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available', event: 'NodeHasSufficientPID' },
  ],
};

function wantedConditions(notReady: string[], pressure: ReadonlySet<NodePressure>): WantedCondition[] {
  const ready: WantedCondition =
    notReady.length === 0
      ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', event: NODE_READY }
      : // utilerrors.NewAggregate: one error bare, several bracketed.
        { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: notReady.length === 1 ? notReady[0]! : `[${notReady.join(', ')}]`, event: NODE_NOT_READY };
  const pressures = (Object.keys(PRESSURE_CONDITIONS) as NodePressure[]).map((type): WantedCondition => ({ type, ...PRESSURE_CONDITIONS[type][pressure.has(type) ? 0 : 1] }));
  return [...pressures, ready];
}

/**
 * The conditions for now: every heartbeat is now, a transition time is kept while the status stays;
 * events name the conditions that are new or changed status.
 */
export function nodeConditions(
  current: readonly Condition[] | undefined,
  notReady: string[],
  now: number,
  pressure: ReadonlySet<NodePressure> = new Set(),
): { conditions: Condition[]; events: string[] } {
  const stamp = rfc3339(now);
  const events: string[] = [];
  const conditions = wantedConditions(notReady, pressure).map((w) => {
    const old = current?.find((c) => c.type === w.type);
    const changed = !old || old.status !== w.status;
    if (changed) events.push(w.event);
    return { type: w.type, status: w.status, lastHeartbeatTime: stamp, lastTransitionTime: changed ? stamp : old.lastTransitionTime, reason: w.reason, message: w.message };
  });
  // Conditions others set (NetworkUnavailable, a node problem detector's) are kept.
  const own = new Set(conditions.map((c) => c.type));
  return { conditions: [...(current ?? []).filter((c) => !own.has(c.type)), ...conditions], events };
}

/** nodeStatusHasChanged: any difference besides the conditions' heartbeat times. */
export function nodeStatusHasChanged(a: NodeStatus | undefined, b: NodeStatus): boolean {
  const strip = (s: NodeStatus | undefined) => JSON.stringify({ ...s, conditions: s?.conditions?.map((c) => ({ ...c, lastHeartbeatTime: undefined })) });
  return strip(a) !== strip(b);
}

/** The Node the kubelet registers. */
export function initialNode(name: string, labels: Record<string, string>, status: NodeStatus): Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels, annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } }, spec: {}, status };
}
