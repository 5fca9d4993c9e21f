// The pod's API status from what the runtime reports, as upstream's generateAPIPodStatus
// (kubelet_pods.go) with getPhase, convertToAPIContainerStatuses and the condition generators of
// pkg/kubelet/status/generate.go (1.33, SidecarContainers on). Pure: the caller passes the last
// start failures per container (the kubelet's reasonCache), probe results and the time.
import type { Container, ContainerStatus, Pod, PodCondition, PodStatus } from '../../api/types.js';
import { withPodCondition } from '../../api/pod/conditions.js';
import { qosClass } from '../../api/pod/qos.js';
import { isRestartableInitContainer } from '../../api/pod/status.js';
import { rfc3339 } from '../../api/time.js';
import { podSandboxChanged, shouldContainerBeRestarted } from '../kuberuntime/planner.js';
import type { ContainerRuntimeStatus, PodRuntimeState } from '../kuberuntime/runtime-state.js';

type ContainerState = NonNullable<ContainerStatus['state']>;

/** Why the last start of a container failed (CrashLoopBackOff, ErrImagePull, CreateContainerConfigError ...). */
export interface StartFailure {
  reason: string;
  message: string;
}

/** The prober's view; absent results mean "no probe": started and ready once running. */
export interface ContainerProbeStatus {
  started?(containerId: string, container: Container): boolean | undefined;
  ready?(containerId: string, container: Container): boolean | undefined;
}

export interface GenerateInput {
  pod: Pod;
  state: PodRuntimeState;
  /** Last start failure per container name. */
  startFailures?: ReadonlyMap<string, StartFailure>;
  probes?: ContainerProbeStatus;
  nodeIP: string;
  now: number;
  /** The pod worker is terminating or has terminated the pod: stopped containers will not restart. */
  podIsTerminal?: boolean;
  /** The CRI runtime name prefixing container IDs. */
  runtimeName?: string;
}

export const CONTAINER_CREATING = 'ContainerCreating';
export const POD_INITIALIZING = 'PodInitializing';
export const CONTAINER_STATUS_UNKNOWN = 'ContainerStatusUnknown';
/** Condition reasons of pkg/kubelet/status. */
export const UNKNOWN_CONTAINER_STATUSES = 'UnknownContainerStatuses';
export const POD_COMPLETED = 'PodCompleted';
export const POD_FAILED = 'PodFailed';
export const CONTAINERS_NOT_READY = 'ContainersNotReady';
export const CONTAINERS_NOT_INITIALIZED = 'ContainersNotInitialized';
export const READINESS_GATES_NOT_READY = 'ReadinessGatesNotReady';

/** Conditions the kubelet owns (kubetypes.PodConditionByKubelet); others in pod.status are kept as they are. */
const KUBELET_CONDITIONS = new Set(['PodScheduled', 'Ready', 'Initialized', 'ContainersReady', 'PodReadyToStartContainers']);

/** Go's %s of a []string: "[a b]". */
const goList = (names: string[]): string => `[${names.join(' ')}]`;

function convertContainerStatus(cs: ContainerRuntimeStatus, spec: Container, old: ContainerStatus | undefined, runtimeName: string): ContainerStatus {
  const containerID = `${runtimeName}://${cs.id}`;
  const status: ContainerStatus = { name: cs.name, image: cs.image || (spec.image ?? ''), imageID: cs.imageRef, containerID, restartCount: cs.restartCount, ready: false, state: {}, lastState: {} };
  switch (cs.state) {
    case 'CONTAINER_RUNNING':
      status.state = { running: { startedAt: rfc3339(cs.startedAt ?? cs.createdAt) } };
      break;
    case 'CONTAINER_CREATED':
      status.state = { waiting: {} };
      break;
    case 'CONTAINER_EXITED':
      status.state = {
        terminated: {
          exitCode: cs.exitCode,
          ...(cs.reason ? { reason: cs.reason } : {}),
          ...(cs.message ? { message: cs.message } : {}),
          ...(cs.startedAt !== undefined ? { startedAt: rfc3339(cs.startedAt) } : {}),
          finishedAt: rfc3339(cs.finishedAt ?? cs.createdAt),
          containerID,
        },
      };
      break;
    default:
      if (old?.state?.running) {
        // It ran and is gone without a word: call it terminated, not "never ran".
        status.state = { terminated: { exitCode: 137, reason: CONTAINER_STATUS_UNKNOWN, message: 'The container could not be located when the pod was terminated' } };
        status.restartCount = (old.restartCount ?? 0) + 1;
      } else {
        status.state = { waiting: {} };
      }
  }
  return status;
}

/** convertToAPIContainerStatuses for one list (init or regular). */
function convertStatuses(input: GenerateInput, specs: Container[], oldStatuses: ContainerStatus[] | undefined, isInit: boolean): ContainerStatus[] {
  const { pod, state } = input;
  const runtimeName = input.runtimeName ?? 'containerd';
  const hasInit = (pod.spec?.initContainers ?? []).length > 0;
  const defaultWaiting: ContainerState = { waiting: { reason: hasInit ? POD_INITIALIZING : CONTAINER_CREATING } };
  const old = new Map((oldStatuses ?? []).map((s) => [s.name, s]));
  const statuses = new Map<string, ContainerStatus>();

  for (const c of specs) {
    const o = old.get(c.name);
    if (o?.state?.terminated) statuses.set(c.name, structuredClone(o));
    else statuses.set(c.name, { name: c.name, image: c.image ?? '', imageID: '', ready: false, restartCount: o?.restartCount ?? 0, state: defaultWaiting, lastState: structuredClone(o?.lastState ?? {}) });
  }

  // A container that was running and vanished from the runtime terminated, even if we can't say how.
  for (const c of specs) {
    if (state.containers.some((s) => s.name === c.name && s.state === 'CONTAINER_CREATED')) continue;
    const o = old.get(c.name);
    if (!o || o.state?.terminated || !o.state?.running) continue;
    const st = statuses.get(c.name)!;
    if (st.state?.waiting?.reason !== defaultWaiting.waiting!.reason || st.lastState?.terminated) continue;
    st.lastState = { terminated: { exitCode: 137, reason: CONTAINER_STATUS_UNKNOWN, message: 'The container could not be located when the pod was deleted.  The container used to be Running' } };
    if (!pod.metadata?.deletionTimestamp) st.restartCount = (st.restartCount ?? 0) + 1;
  }

  // The newest attempt is the state, the one before it the last state.
  const seen = new Map<string, number>();
  for (const cs of state.containers) {
    const spec = specs.find((c) => c.name === cs.name);
    if (!spec) continue;
    const n = seen.get(cs.name) ?? 0;
    if (n >= 2) continue;
    const converted = convertContainerStatus(cs, spec, old.get(cs.name), runtimeName);
    if (n === 0) statuses.set(cs.name, converted);
    else statuses.get(cs.name)!.lastState = converted.state;
    seen.set(cs.name, n + 1);
  }

  // Containers about to be (re)started whose last start failed show why they wait.
  for (const c of specs) {
    if (isInit) {
      const latest = state.containers.find((s) => s.name === c.name);
      if (latest?.state === 'CONTAINER_EXITED' && latest.exitCode === 0) continue;
    }
    if (!shouldContainerBeRestarted(c, pod, state)) continue;
    const failure = input.startFailures?.get(c.name);
    if (!failure) continue;
    const st = statuses.get(c.name)!;
    if (st.state?.terminated) st.lastState = st.state;
    st.state = { waiting: { reason: failure.reason, ...(failure.message ? { message: failure.message } : {}) } };
  }

  // Started and ready, as the prober manager's UpdatePodStatus sets them.
  const result = specs.map((c) => statuses.get(c.name)!);
  for (const [i, st] of result.entries()) {
    const c = specs[i]!;
    const id = (st.containerID ?? '').replace(/^[^:]*:\/\//, '');
    const running = Boolean(st.state?.running);
    const started = running && (c.startupProbe ? (input.probes?.started?.(id, c) ?? false) : true);
    st.started = started;
    st.ready = false;
    if (isInit && !isRestartableInitContainer(c)) {
      st.ready = st.state?.terminated?.exitCode === 0;
      continue;
    }
    if (started) st.ready = c.readinessProbe ? (input.probes?.ready?.(id, c) ?? false) : true;
  }
  return isInit ? result : result.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** getPhase (kubelet_pods.go). */
export function getPhase(pod: Pod, statuses: ContainerStatus[], podIsTerminal: boolean, podHasInitialized: boolean): string {
  const spec = pod.spec;
  const byName = new Map(statuses.map((s) => [s.name, s]));
  let pendingRegularInit = 0;
  let pendingRestartableInit = 0;
  let failedInitialization = 0;
  for (const c of spec?.initContainers ?? []) {
    if (isRestartableInitContainer(c)) continue;
    const s = byName.get(c.name);
    if (!s) pendingRegularInit++;
    else if (s.state?.running) pendingRegularInit++;
    else if (s.state?.terminated) {
      if ((s.state.terminated.exitCode ?? 0) !== 0) failedInitialization++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) {
        if ((s.lastState.terminated.exitCode ?? 0) !== 0) failedInitialization++;
      } else pendingRegularInit++;
    } else pendingRegularInit++;
  }

  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of spec?.initContainers ?? []) {
    if (!isRestartableInitContainer(c)) continue;
    const s = byName.get(c.name);
    if (!s) {
      unknown++;
    } else if (s.state?.running) {
      if (!s.started) pendingRestartableInit++;
      running++;
    } else if (s.state?.terminated) {
      // A stopped sidecar does not decide the phase.
    } else if (s.state?.waiting) {
      if (!s.lastState?.terminated) {
        pendingRestartableInit++;
        waiting++;
      }
    } else {
      pendingRestartableInit++;
      unknown++;
    }
  }
  for (const c of spec?.containers ?? []) {
    const s = byName.get(c.name);
    if (!s) unknown++;
    else if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if ((s.state.terminated.exitCode ?? 0) === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }

  const policy = spec?.restartPolicy ?? 'Always';
  if (failedInitialization > 0 && policy === 'Never') return 'Failed';
  if (pendingRegularInit > 0 || (pendingRestartableInit > 0 && !podHasInitialized) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (podIsTerminal) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function condition(type: string, ok: boolean, reason?: string, message?: string): PodCondition {
  return { type, status: ok ? 'True' : 'False', ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

function initializedCondition(pod: Pod, statuses: ContainerStatus[], phase: string): PodCondition {
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const unknown: string[] = [];
  const incomplete: string[] = [];
  for (const c of pod.spec?.initContainers ?? []) {
    const s = byName.get(c.name);
    if (!s) unknown.push(c.name);
    else if (isRestartableInitContainer(c)) {
      if (!s.started) incomplete.push(c.name);
    } else if (!s.state?.terminated || (s.state.terminated.exitCode ?? 0) !== 0) incomplete.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return condition('Initialized', true, POD_COMPLETED);
  const regular = new Set((pod.spec?.containers ?? []).map((c) => c.name));
  if (statuses.some((s) => regular.has(s.name) && (s.state?.running || s.state?.terminated))) return condition('Initialized', true);
  const messages: string[] = [];
  if (unknown.length) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (incomplete.length) messages.push(`containers with incomplete status: ${goList(incomplete)}`);
  return messages.length ? condition('Initialized', false, CONTAINERS_NOT_INITIALIZED, messages.join(', ')) : condition('Initialized', true);
}

function containersReadyCondition(pod: Pod, statuses: ContainerStatus[], phase: string): PodCondition {
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const unknown: string[] = [];
  const unready: string[] = [];
  const counted = [...(pod.spec?.initContainers ?? []).filter(isRestartableInitContainer), ...(pod.spec?.containers ?? [])];
  for (const c of counted) {
    const s = byName.get(c.name);
    if (!s) unknown.push(c.name);
    else if (!s.ready) unready.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return condition('ContainersReady', false, POD_COMPLETED);
  if (phase === 'Failed' && unknown.length === 0) return condition('ContainersReady', false, POD_FAILED);
  const messages: string[] = [];
  if (unknown.length) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (unready.length) messages.push(`containers with unready status: ${goList(unready)}`);
  return messages.length ? condition('ContainersReady', false, CONTAINERS_NOT_READY, messages.join(', ')) : condition('ContainersReady', true);
}

function readyCondition(pod: Pod, conditions: PodCondition[], containersReady: PodCondition): PodCondition {
  if (containersReady.status !== 'True') return { ...containersReady, type: 'Ready' };
  const messages: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = conditions.find((x) => x.type === gate.conditionType);
    if (!c) messages.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    else if (c.status !== 'True') messages.push(`the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`);
  }
  return messages.length ? condition('Ready', false, READINESS_GATES_NOT_READY, messages.join(', ')) : condition('Ready', true);
}

/** generateAPIPodStatus: the status the kubelet wants the API server to show for this pod. */
export function generateAPIPodStatus(input: GenerateInput): PodStatus {
  const { pod, state, now } = input;
  const old = pod.status ?? {};
  const initStatuses = convertStatuses(input, pod.spec?.initContainers ?? [], old.initContainerStatuses, true);
  const containerStatuses = convertStatuses(input, pod.spec?.containers ?? [], old.containerStatuses, false);
  const all = [...containerStatuses, ...initStatuses];

  const latestSandbox = state.sandboxes[0];
  const podHasInitialized = latestSandbox !== undefined && state.containers.some((c) => c.sandboxId === latestSandbox.id && (pod.spec?.containers ?? []).some((s) => s.name === c.name));
  let phase = getPhase(pod, all, input.podIsTerminal ?? false, podHasInitialized);
  // A terminal phase the API server already shows is final.
  if ((old.phase === 'Succeeded' || old.phase === 'Failed') && phase !== old.phase) phase = old.phase;

  const ts = rfc3339(now);
  const kept = (old.conditions ?? []).filter((c) => !KUBELET_CONDITIONS.has(c.type));
  const conditions: PodCondition[] = [...kept];
  conditions.push(condition('PodReadyToStartContainers', !podSandboxChanged(pod, state).changed));
  conditions.push(initializedCondition(pod, [...initStatuses, ...containerStatuses], phase));
  const containersReady = containersReadyCondition(pod, all, phase);
  conditions.push(readyCondition(pod, conditions, containersReady));
  conditions.push(containersReady);
  conditions.push(condition('PodScheduled', true));

  // Transition times move only when a condition's status does.
  let merged: PodStatus = { conditions: old.conditions };
  for (const c of conditions) merged = withPodCondition(merged, { lastProbeTime: null, lastTransitionTime: ts, ...c } as PodCondition);
  const byType = new Map((merged.conditions ?? []).map((c) => [c.type, c]));

  const hostNetwork = Boolean(pod.spec?.hostNetwork);
  const sandboxIPs = latestSandbox?.state === 'SANDBOX_READY' ? latestSandbox.ips : [];
  const ips = hostNetwork ? [input.nodeIP] : sandboxIPs;
  const status: PodStatus = {
    phase,
    conditions: conditions.map((c) => byType.get(c.type)!),
    hostIP: input.nodeIP,
    hostIPs: [{ ip: input.nodeIP }],
    startTime: old.startTime ?? ts,
    ...(old.reason ? { reason: old.reason } : {}),
    ...(old.message ? { message: old.message } : {}),
    ...(old.nominatedNodeName ? { nominatedNodeName: old.nominatedNodeName } : {}),
    qosClass: old.qosClass ?? qosClass(pod),
  };
  if (ips.length) {
    status.podIP = ips[0];
    status.podIPs = ips.map((ip) => ({ ip }));
  } else if (old.podIP) {
    // A stopped pod keeps showing the address it had.
    status.podIP = old.podIP;
    status.podIPs = old.podIPs;
  }
  if (initStatuses.length) status.initContainerStatuses = initStatuses;
  status.containerStatuses = containerStatuses;
  return status;
}
