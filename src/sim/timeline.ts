// The kubelet-side timeline steps a simulated node's status write stands for. Stages are data
// (stages/*.json), so the steps are read off the status they wrote: what changed between the pod
// the stage saw and the pod the API server returned. A stage that admits the pod and starts its
// containers in one write gives each of those steps, all at the write's time.
import type { ContainerStatus, Pod } from '../api/types.js';
import type { TimelineStep, TimelineStepName } from '../api/timeline/types.js';
import { stepTime } from '../client/timeline/recorder.js';

type ContainerType = NonNullable<TimelineStep['containerType']>;
type StepFields = Pick<TimelineStep, 'container' | 'containerType' | 'detail' | 'attributes' | 'count'>;
type AddStep = (step: TimelineStepName, fields?: StepFields) => void;

const conditionTrue = (pod: Pod, type: string) => pod.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
const isTerminal = (phase: string | undefined) => phase === 'Succeeded' || phase === 'Failed';

/** The steps of one status write on node `node`, in the order the kubelet would take them. */
export function kubeletSteps(node: string, before: Pod, after: Pod, nowMs: number): TimelineStep[] {
  const component = `kubelet/${node}`;
  const start = stepTime(nowMs);
  const steps: TimelineStep[] = [];
  // Fields set one by one: spreading partial steps into new objects took most of this function's time.
  const add: AddStep = (step, fields) => {
    const s: TimelineStep = { step, component, start };
    if (fields?.container !== undefined) s.container = fields.container;
    if (fields?.containerType !== undefined) s.containerType = fields.containerType;
    if (fields?.detail !== undefined) s.detail = fields.detail;
    if (fields?.attributes !== undefined) s.attributes = fields.attributes;
    if (fields?.count) {
      s.count = fields.count;
      s.lastTime = start;
    }
    steps.push(s);
  };
  const was = before.status ?? {};
  const now = after.status ?? {};

  if (!was.startTime && now.startTime) {
    add('KubeletAdmitted', { detail: `admitted on ${node}` });
    if (!after.spec?.hostNetwork) add('SandboxCreated');
  }
  if (!was.podIP && now.podIP) add('PodIPAssigned', { detail: `IP ${now.podIP}`, attributes: { ip: now.podIP } });

  const containers = (type: ContainerType, b: ContainerStatus[] | undefined, a: ContainerStatus[] | undefined) => {
    const old = new Map((b ?? []).map((c) => [c.name, c]));
    for (const c of a ?? []) containerSteps(type, old.get(c.name), c, add, after.metadata?.deletionTimestamp !== undefined);
  };
  containers('init', was.initContainerStatuses, now.initContainerStatuses);
  containers('regular', was.containerStatuses, now.containerStatuses);

  if (!conditionTrue(before, 'ContainersReady') && conditionTrue(after, 'ContainersReady')) add('ContainersReady');
  if (!conditionTrue(before, 'Ready') && conditionTrue(after, 'Ready')) add('Ready');
  if (!isTerminal(was.phase) && isTerminal(now.phase)) add('StatusFinal', { detail: `phase ${now.phase}`, attributes: { phase: now.phase! } });
  return steps;
}

function containerSteps(
  containerType: ContainerType,
  was: ContainerStatus | undefined,
  now: ContainerStatus,
  add: AddStep,
  deleting: boolean,
): void {
  const container = now.name;
  const running = now.state?.running;
  if (running && (!was?.state?.running || was.state.running.startedAt !== running.startedAt)) {
    add('ContainerCreated', { container, containerType });
    add('ContainerStarted', { container, containerType });
  }
  // A crash-looping container goes from running straight to waiting: its exit is in lastState.
  const last = now.lastState?.terminated;
  const exited = now.state?.terminated ?? (last && last.finishedAt !== was?.lastState?.terminated?.finishedAt ? last : undefined);
  if (exited && !was?.state?.terminated) {
    // A deleting pod's running containers are stopped: SIGTERM, then their exit.
    if (deleting && was?.state?.running) add('SIGTERM', { container, containerType });
    add('ContainerExited', { container, containerType, detail: `exit ${exited.exitCode}${exited.reason ? ` (${exited.reason})` : ''}`, attributes: { exitCode: exited.exitCode, reason: exited.reason ?? '' } });
  }
  const restarts = now.restartCount ?? 0;
  // Series: the API server keeps one row per container, its count the restartCount.
  if (restarts > (was?.restartCount ?? 0)) add('ContainerRestarted', { container, containerType, count: restarts, detail: `restarted ${restarts} time(s)` });
  const waiting = now.state?.waiting;
  if (waiting?.reason && waiting.reason !== was?.state?.waiting?.reason) {
    if (waiting.reason === 'CrashLoopBackOff' || waiting.reason === 'ImagePullBackOff') {
      const count = waiting.reason === 'CrashLoopBackOff' ? Math.max(restarts, 1) : undefined;
      add('BackOff', { container, containerType, count, detail: waiting.message ?? waiting.reason, attributes: { reason: waiting.reason } });
    } else if (waiting.reason === 'ErrImagePull') {
      add('ImagePullFailed', { container, containerType, detail: waiting.message ?? waiting.reason, attributes: { error: waiting.message ?? waiting.reason } });
    }
  }
}
