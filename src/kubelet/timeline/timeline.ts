// The kubelet's part of the pod timeline (timeline.kite.dev): the steps it performs for a pod, as
// `kubelet/<node>`, sent through the injected TimelineRecorder. It keeps a little per-pod memory
// so that one-off steps (volumes ready, Ready, status final) are recorded once, retries become
// counted series (restarts, back-offs, probe failures, pull errors) and a container's exit is
// recorded once however many syncs read it. The same times feed the pod start-up SLIs
// (upstream's pod_startup_latency_tracker): creation → all containers running seen on the watch,
// less the image pulls for the SLI.
import type { Pod, PodStatus } from '../../api/types.js';
import type { TimelinePodRef, TimelineStep, TimelineStepName } from '../../api/timeline/types.js';
import { isPodPhaseTerminal } from '../../api/pod/status.js';
import { stepTime, type TimelineRecorder } from '../../client/timeline/recorder.js';
import type { Clock } from '../../util/clock.js';
import type { PodRuntimeState } from '../kuberuntime/runtime-state.js';

/** What a step carries beyond its name, component and times. */
export type StepFields = Pick<TimelineStep, 'container' | 'containerType' | 'detail' | 'attributes'>;

/** Where the start-up SLIs go (the kubelet's /metrics). */
export interface PodStartMetrics {
  observePodStart(sliSeconds: number, totalSeconds: number): void;
}

export interface KubeletTimelineConfig {
  recorder: TimelineRecorder;
  nodeName: string;
  clock: Clock;
  metrics?: PodStartMetrics;
}

interface Series {
  first: number;
  count: number;
  /** The occurrence last counted (a back-off's retry time): the same one seen again is not counted twice. */
  occurrence?: string | number;
}

interface PodRecord {
  once: Set<string>;
  series: Map<string, Series>;
  /** Container IDs whose exit was recorded. */
  exited: Set<string>;
  /** The kubelet's watch has shown the pod. */
  watched: boolean;
  /** The pod start-up tracking: set when the watch first showed the pod before it started. */
  startup?: { pullStart?: number; pullEnd?: number; observed: boolean };
}

/** Which kind of container a name is in the pod's spec. */
export function containerType(pod: Pod, name: string): 'init' | 'regular' {
  return (pod.spec?.initContainers ?? []).some((c) => c.name === name) ? 'init' : 'regular';
}

function podRefOf(pod: Pod): TimelinePodRef {
  return { namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' };
}

/** Forgotten pods remembered as such, so that a clean-up repeated after housekeeping forgot the pod records nothing. */
const maxForgotten = 1000;

export class KubeletTimeline {
  readonly component: string;
  private readonly pods = new Map<string, PodRecord>();
  /** UIDs of pods the kubelet is done with, oldest first (a Set keeps insertion order). */
  private readonly forgotten = new Set<string>();

  constructor(private readonly config: KubeletTimelineConfig) {
    this.component = `kubelet/${config.nodeName}`;
  }

  now(): number {
    return this.config.clock.now();
  }

  private podRecord(uid: string): PodRecord {
    let r = this.pods.get(uid);
    if (!r) {
      r = { once: new Set(), series: new Map(), exited: new Set(), watched: false };
      // A forgotten pod's record is not kept again: it records nothing (send) and would never be forgotten.
      if (!this.forgotten.has(uid)) this.pods.set(uid, r);
    }
    return r;
  }

  private send(pod: Pod, step: TimelineStepName, startMs: number, endMs: number | undefined, fields: StepFields, extra?: Pick<TimelineStep, 'count' | 'lastTime'>): void {
    if (!pod.metadata?.uid || this.forgotten.has(pod.metadata.uid)) return;
    const s: TimelineStep = { step, component: this.component, start: stepTime(startMs), ...fields, ...extra };
    if (endMs !== undefined) s.end = stepTime(Math.max(startMs, endMs));
    this.config.recorder.record(podRefOf(pod), s);
  }

  /** A step that happened at one moment (now unless given). */
  instant(pod: Pod, step: TimelineStepName, fields: StepFields = {}, at = this.now()): void {
    this.send(pod, step, at, undefined, fields);
  }

  /** A step that began at startMs and ended now (or at endMs). */
  span(pod: Pod, step: TimelineStepName, startMs: number, fields: StepFields = {}, endMs = this.now()): void {
    this.send(pod, step, startMs, endMs, fields);
    if (step === 'ImagePull') {
      const st = this.pods.get(pod.metadata?.uid ?? '')?.startup;
      if (st && !st.observed && !fields.attributes?.present) {
        st.pullStart = Math.min(st.pullStart ?? startMs, startMs);
        st.pullEnd = Math.max(st.pullEnd ?? endMs, endMs);
      }
    }
  }

  /** A step recorded only the first time `key` comes up for the pod: an instant, or a span given its end. */
  once(pod: Pod, key: string, step: TimelineStepName, fields: StepFields = {}, at = this.now(), endMs?: number): void {
    const r = this.podRecord(pod.metadata?.uid ?? '');
    if (r.once.has(key)) return;
    r.once.add(key);
    this.send(pod, step, at, endMs, fields);
  }

  /**
   * One more occurrence of a counted series (per step, container and probe kind): the step is sent
   * with its first time, the count and the last time, and replaces the stored one. An `occurrence`
   * equal to the last one counted is not counted again; `count`, when the caller knows it (a
   * restart count), replaces the kubelet's own.
   */
  series(pod: Pod, step: TimelineStepName, fields: StepFields, occurrence?: string | number, count?: number): void {
    const r = this.podRecord(pod.metadata?.uid ?? '');
    const key = `${step}/${fields.container ?? ''}/${String(fields.attributes?.probe ?? '')}`;
    const now = this.now();
    let s = r.series.get(key);
    if (s && occurrence !== undefined && s.occurrence === occurrence) return;
    if (!s) r.series.set(key, (s = { first: now, count: 0 }));
    s.count = count ?? s.count + 1;
    s.occurrence = occurrence;
    this.send(pod, step, s.first, undefined, fields, { count: s.count, lastTime: stepTime(now) });
  }

  /** Records ContainerExited for each container attempt the runtime reports exited for the first time. */
  containersObserved(pod: Pod, state: PodRuntimeState): void {
    if (!pod.metadata?.uid) return;
    const r = this.podRecord(pod.metadata.uid);
    for (const c of state.containers) {
      if (c.state !== 'CONTAINER_EXITED' || r.exited.has(c.id)) continue;
      r.exited.add(c.id);
      const detail = `exited with code ${c.exitCode}${c.reason ? ` (${c.reason})` : ''}`;
      this.instant(pod, 'ContainerExited', { container: c.name, containerType: containerType(pod, c.name), detail, attributes: { exitCode: c.exitCode, reason: c.reason } }, c.finishedAt ?? this.now());
    }
  }

  /** The status manager wrote a status: the first ContainersReady, Ready and terminal phase it says. */
  statusWritten(pod: Pod, status: PodStatus): void {
    for (const type of ['ContainersReady', 'Ready'] as const) {
      if (status.conditions?.some((c) => c.type === type && c.status === 'True')) this.once(pod, type, type);
    }
    if (isPodPhaseTerminal(status.phase)) this.once(pod, 'StatusFinal', 'StatusFinal', { detail: `phase ${status.phase}`, attributes: { phase: status.phase ?? '' } });
  }

  /**
   * The pod as the kubelet's watch shows it (upstream's ObservedPodOnWatch): a pod first seen
   * before it started is tracked; the first time the watch shows all its containers running, the
   * start-up SLIs are observed from its creation time.
   */
  observedOnWatch(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    if (!uid || isPodPhaseTerminal(pod.status?.phase)) return;
    const r = this.podRecord(uid);
    if (!r.watched) {
      r.watched = true;
      if (!pod.status?.startTime) r.startup = { observed: false };
      return;
    }
    const st = r.startup;
    const statuses = pod.status?.containerStatuses ?? [];
    const allRunning = statuses.length > 0 && statuses.length === (pod.spec?.containers.length ?? 0) && statuses.every((c) => c.state?.running);
    if (!st || st.observed || !allRunning) return;
    st.observed = true;
    const created = Date.parse(pod.metadata?.creationTimestamp ?? '');
    if (!Number.isFinite(created)) return;
    const total = (this.now() - created) / 1000;
    const pulling = st.pullStart !== undefined && st.pullEnd !== undefined ? (st.pullEnd - st.pullStart) / 1000 : 0;
    this.config.metrics?.observePodStart(total - pulling, total);
  }

  /**
   * The pod is gone from the kubelet: forget what was remembered for it, and record nothing more for
   * it (its worker may still finish a clean-up it had started: its steps were recorded the first time).
   */
  forgetPod(uid: string): void {
    this.pods.delete(uid);
    this.forgotten.add(uid);
    if (this.forgotten.size > maxForgotten) this.forgotten.delete(this.forgotten.values().next().value!);
  }
}
