// The kubelet-side timeline steps a simulated node's status write stands for. Stages are data
// (stages/*.json), so the steps are read off the status they wrote: what changed between the pod
// the stage saw and the pod the API server returned. A stage that admits the pod and starts its
// containers in one write gives each of those steps, all at the write's time.
import type { ContainerStatus, Pod } from '../api/types.js';
import type { TimelineStep } from '../api/timeline/types.js';
import { stepTime } from '../client/timeline/recorder.js';

type ContainerType = NonNullable<TimelineStep['containerType']>;

const conditionTrue = (pod: Pod, type: string) => pod.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
const isTerminal = (phase: string | undefined) => phase === 'Succeeded' || phase === 'Failed';

/** The steps of one status write on node `node`, in the order the kubelet would take them. */
export function kubeletSteps(node: string, before: Pod, after: Pod, nowMs: number): TimelineStep[] {
  const component = `kubelet/${node}`;
  const start = stepTime(nowMs);
  const steps: TimelineStep[] = [];
  const add = (step: Omit<TimelineStep, 'component' | 'start'>) => steps.push(step.count ? { ...step, component, start, lastTime: start } : { ...step, component, start });
  const was = before.status ?? {};
  const now = after.status ?? {};

  if (!was.startTime && now.startTime) {
    add({ step: 'KubeletAdmitted', detail: `admitted on ${node}` });
    if (!after.spec?.hostNetwork) add({ step: 'SandboxCreated' });
  }
  if (!was.podIP && now.podIP) add({ step: 'PodIPAssigned', detail: `IP ${now.podIP}`, attributes: { ip: now.podIP } });

  const containers = (type: ContainerType, b: ContainerStatus[] | undefined, a: ContainerStatus[] | undefined) => {
    const old = new Map((b ?? []).map((c) => [c.name, c]));
    for (const c of a ?? []) containerSteps(type, old.get(c.name), c, add, after.metadata?.deletionTimestamp !== undefined);
  };
  containers('init', was.initContainerStatuses, now.initContainerStatuses);
  containers('regular', was.containerStatuses, now.containerStatuses);

  if (!conditionTrue(before, 'ContainersReady') && conditionTrue(after, 'ContainersReady')) add({ step: 'ContainersReady' });
  if (!conditionTrue(before, 'Ready') && conditionTrue(after, 'Ready')) add({ step: 'Ready' });
  if (!isTerminal(was.phase) && isTerminal(now.phase)) add({ step: 'StatusFinal', detail: `phase ${now.phase}`, attributes: { phase: now.phase! } });
  return steps;
}

function containerSteps(
  containerType: ContainerType,
  was: ContainerStatus | undefined,
  now: ContainerStatus,
  add: (step: Omit<TimelineStep, 'component' | 'start'>) => void,
  deleting: boolean,
): void {
  const container = now.name;
  const on = { container, containerType };
  const running = now.state?.running;
  if (running && (!was?.state?.running || was.state.running.startedAt !== running.startedAt)) {
    add({ step: 'ContainerCreated', ...on });
    add({ step: 'ContainerStarted', ...on });
  }
  // A crash-looping container goes from running straight to waiting: its exit is in lastState.
  const last = now.lastState?.terminated;
  const exited = now.state?.terminated ?? (last && last.finishedAt !== was?.lastState?.terminated?.finishedAt ? last : undefined);
  if (exited && !was?.state?.terminated) {
    // A deleting pod's running containers are stopped: SIGTERM, then their exit.
    if (deleting && was?.state?.running) add({ step: 'SIGTERM', ...on });
    add({ step: 'ContainerExited', ...on, detail: `exit ${exited.exitCode}${exited.reason ? ` (${exited.reason})` : ''}`, attributes: { exitCode: exited.exitCode, reason: exited.reason ?? '' } });
  }
  const restarts = now.restartCount ?? 0;
  // Series: the API server keeps one row per container, its count the restartCount.
  if (restarts > (was?.restartCount ?? 0)) add({ step: 'ContainerRestarted', ...on, count: restarts, detail: `restarted ${restarts} time(s)` });
  const waiting = now.state?.waiting;
  if (waiting?.reason && waiting.reason !== was?.state?.waiting?.reason) {
    if (waiting.reason === 'CrashLoopBackOff' || waiting.reason === 'ImagePullBackOff') {
      const count = waiting.reason === 'CrashLoopBackOff' ? { count: Math.max(restarts, 1) } : {};
      add({ step: 'BackOff', ...on, ...count, detail: waiting.message ?? waiting.reason, attributes: { reason: waiting.reason } });
    } else if (waiting.reason === 'ErrImagePull') {
      add({ step: 'ImagePullFailed', ...on, detail: waiting.message ?? waiting.reason, attributes: { error: waiting.message ?? waiting.reason } });
    }
  }
}
