// A pod timeline laid out for people: rows with an offset from the first step, a duration, and the
// lane they belong to (API, scheduling, kubelet setup, one lane per init container run one after
// another, one per app container run side by side, endpoints, termination), with the waits
// between steps (queueing, gates, pull queue, back-off) as rows of their own. Pure and free of
// node: imports: the terminal waterfall (`kite timeline`) and the web console both draw from it.
import type { PodTimeline, TimelineStep, TimelineStepName } from './types.js';

export type LaneKind = 'api' | 'scheduling' | 'kubelet' | 'init' | 'container' | 'endpoints' | 'termination';

export interface WaterfallLane {
  /** 'api', 'scheduling', 'kubelet', 'init/<name>', 'container/<name>', 'endpoints', 'termination'. */
  id: string;
  kind: LaneKind;
  label: string;
}

/** The waits shown as rows of their own. */
export type GapKind = 'queueing' | 'gated' | 'unschedulable' | 'pull-queue' | 'back-off';

export interface WaterfallRow {
  /** ms from the timeline's first step to this row's start. */
  offsetMs: number;
  /** ms from start to end (0 for an instant; up to the last step for one still under way). */
  durationMs: number;
  /** The step, or 'Wait' for a gap row. */
  step: TimelineStepName | 'Wait';
  gap?: GapKind;
  component: string;
  container?: string;
  detail: string;
  lane: string;
  /** A series' count (restarts, back-offs, probe failures, repeated attempts). */
  count?: number;
  /** Begun and not ended. */
  ongoing?: boolean;
}

export interface Waterfall {
  /** ms since the epoch of the first step (0 without steps). */
  startMs: number;
  /** ms from the first step to the end of the last row (now, for steps under way; a back-off's next start). */
  spanMs: number;
  lanes: WaterfallLane[];
  /** In time order (ties keep the recorded order). */
  rows: WaterfallRow[];
}

/** Microseconds since the epoch of a step time (RFC 3339, any fraction), NaN when unparsable. */
export function stepMicros(time: string | undefined): number {
  if (!time) return NaN;
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(time);
  if (!m) return NaN;
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  const fraction = Number(((m[2] ?? '') + '000000').slice(0, 6));
  return seconds * 1000 + fraction;
}

/** ms since the epoch of a step time (with its microseconds as the fraction). */
export function stepMillis(time: string | undefined): number {
  return stepMicros(time) / 1000;
}

const apiSteps = new Set<TimelineStepName>(['RequestReceived', 'Authenticated', 'Authorized', 'Admission', 'Persisted', 'CreatedByController']);
const schedulingSteps = new Set<TimelineStepName>(['SchedulingQueued', 'SchedulingGated', 'SchedulingUngated', 'SchedulingAttempt', 'Nominated', 'Bound']);
const endpointSteps = new Set<TimelineStepName>(['EndpointAdded', 'EndpointTerminating', 'EndpointRemoved']);
const terminationSteps = new Set<TimelineStepName>(['DeleteRequested', 'PreStop', 'SIGTERM', 'SIGKILL', 'SandboxRemoved', 'VolumesRemoved', 'CgroupsRemoved', 'StatusFinal', 'FinalizerRemoved', 'Deleted']);

/** The lane of a step: the pod-level phase, or the container's own lane. */
export function laneOf(step: TimelineStep): WaterfallLane {
  if (apiSteps.has(step.step)) return { id: 'api', kind: 'api', label: 'API' };
  if (schedulingSteps.has(step.step)) return { id: 'scheduling', kind: 'scheduling', label: 'scheduling' };
  if (endpointSteps.has(step.step)) return { id: 'endpoints', kind: 'endpoints', label: 'endpoints' };
  if (terminationSteps.has(step.step)) return { id: 'termination', kind: 'termination', label: 'termination' };
  if (step.container) {
    return step.containerType === 'init'
      ? { id: `init/${step.container}`, kind: 'init', label: `init ${step.container}` }
      : { id: `container/${step.container}`, kind: 'container', label: step.container };
  }
  return { id: 'kubelet', kind: 'kubelet', label: 'kubelet' };
}

const laneOrder: LaneKind[] = ['api', 'scheduling', 'kubelet', 'init', 'container', 'endpoints', 'termination'];

/** When a step is over: its end, else a series' last time, else its start. */
export function stepEndMicros(step: TimelineStep): number {
  const end = stepMicros(step.end);
  if (!Number.isNaN(end)) return end;
  const last = stepMicros(step.lastTime);
  return Number.isNaN(last) ? stepMicros(step.start) : last;
}

function attr(step: TimelineStep, name: string): string | number | boolean | undefined {
  return step.attributes?.[name];
}

/** The one-line detail of a step when its recorder gave none. */
function defaultDetail(step: TimelineStep): string {
  if (step.detail) return step.detail;
  const s = step.scheduling;
  if (s) return s.node ? `${s.feasible}/${s.nodes} nodes fit; chose ${s.node}` : (s.message ?? `${s.feasible}/${s.nodes} nodes fit`);
  const parts: string[] = [];
  for (const [k, v] of Object.entries(step.attributes ?? {})) parts.push(`${k}=${String(v)}`);
  return parts.join(' ');
}

/** Lays a timeline out as rows; `nowMs` ends the rows of steps still under way. */
export function waterfall(timeline: PodTimeline, nowMs?: number): Waterfall {
  const steps = timeline.steps
    .map((step, i) => ({ step, i, start: stepMicros(step.start) }))
    .filter((s) => !Number.isNaN(s.start))
    .sort((a, b) => a.start - b.start || a.i - b.i);
  if (steps.length === 0) return { startMs: 0, spanMs: 0, lanes: [], rows: [] };
  const origin = steps[0]!.start;
  let latest = Math.max(...steps.map((s) => stepEndMicros(s.step)));
  if (nowMs !== undefined) latest = Math.max(latest, nowMs * 1000);
  const rows: { row: WaterfallRow; at: number; order: number }[] = [];
  const lanes = new Map<string, WaterfallLane>();
  const push = (row: Omit<WaterfallRow, 'offsetMs' | 'durationMs'>, from: number, to: number, order: number, laneInfo?: WaterfallLane) => {
    if (laneInfo) lanes.set(laneInfo.id, laneInfo);
    rows.push({ row: { offsetMs: (from - origin) / 1000, durationMs: Math.max(0, to - from) / 1000, ...row }, at: from, order });
  };
  const wait = (gap: GapKind, step: TimelineStep, detail: string, from: number, to: number, order: number) => {
    const lane = laneOf(step);
    if (to > from) push({ step: 'Wait', gap, component: step.component, container: step.container, detail, lane: lane.id }, from, to, order - 0.5, lane);
  };

  let queuedAt: number | undefined;
  let gatedAt: number | undefined;
  let unschedulableAt: number | undefined;
  for (const { step, i, start } of steps) {
    const lane = laneOf(step);
    // A step whose recorder gave a begin but no end yet is still under way: it runs to now.
    const ongoing = !step.end && step.count === undefined && beginsAndEnds.has(step.step);
    const end = ongoing ? latest : stepEndMicros(step);
    if (step.step === 'SchedulingAttempt' || step.step === 'Bound') {
      if (queuedAt !== undefined) wait('queueing', step, 'waiting in the scheduling queue', queuedAt, start, i);
      if (unschedulableAt !== undefined) wait('unschedulable', step, 'unschedulable: waiting for a cluster change', unschedulableAt, start, i);
      queuedAt = undefined;
      unschedulableAt = step.scheduling?.result === 'Unschedulable' ? end : undefined;
    }
    if (step.step === 'SchedulingQueued' && queuedAt === undefined && unschedulableAt === undefined) queuedAt = start;
    if (step.step === 'SchedulingGated') gatedAt = start;
    if (step.step === 'SchedulingUngated' && gatedAt !== undefined) {
      wait('gated', step, `held by scheduling gates ${String(attr(step, 'gates') ?? '')}`.trim(), gatedAt, start, i);
      gatedAt = undefined;
      queuedAt = start;
    }
    if (step.step === 'ImagePull') {
      const waitMs = Number(attr(step, 'waitMs') ?? 0);
      if (waitMs > 0) wait('pull-queue', step, 'queued for the image pull', start, start + waitMs * 1000, i);
    }
    if (step.step === 'BackOff') {
      // The back-off runs from its latest start to the next attempt.
      const from = stepEndMicros(step);
      const next = stepMicros(String(attr(step, 'nextStart') ?? ''));
      const delay = Number(attr(step, 'delayMs') ?? NaN);
      const to = !Number.isNaN(next) ? next : !Number.isNaN(delay) ? from + delay * 1000 : from;
      push({ step: 'BackOff', gap: 'back-off', component: step.component, container: step.container, detail: defaultDetail(step), lane: lane.id, count: step.count }, start, Math.max(to, from), i, lane);
      continue;
    }
    push({ step: step.step, component: step.component, container: step.container, detail: defaultDetail(step), lane: lane.id, count: step.count, ...(ongoing ? { ongoing } : {}) }, start, end, i, lane);
  }
  // Still gated, queued or unschedulable: the wait runs to now.
  const last: TimelineStep = { step: 'SchedulingQueued', component: 'default-scheduler', start: '' };
  if (gatedAt !== undefined) wait('gated', last, 'held by scheduling gates', gatedAt, latest, steps.length);
  if (queuedAt !== undefined) wait('queueing', last, 'waiting in the scheduling queue', queuedAt, latest, steps.length);
  if (unschedulableAt !== undefined) wait('unschedulable', last, 'unschedulable: waiting for a cluster change', unschedulableAt, latest, steps.length);

  rows.sort((a, b) => a.at - b.at || a.order - b.order);
  const laneList = [...lanes.values()].sort((a, b) => laneOrder.indexOf(a.kind) - laneOrder.indexOf(b.kind));
  const spanMs = Math.max((latest - origin) / 1000, ...rows.map((r) => r.row.offsetMs + r.row.durationMs));
  return { startMs: origin / 1000, spanMs, lanes: laneList, rows: rows.map((r) => r.row) };
}

/** Steps recorded with a start when they begin and an end when they finish. */
const beginsAndEnds = new Set<TimelineStepName>(['ImagePull', 'PostStart', 'PreStop']);

export interface RelaySegment {
  /** The step that ends the interval. */
  step: TimelineStepName;
  component: string;
  container?: string;
  /** Microseconds since the epoch; the interval is [startUs, endUs). */
  startUs: number;
  endUs: number;
  durationMs: number;
}

/**
 * The relay from RequestReceived to Ready as back-to-back intervals, each ending when a step
 * completes and attributed to it. The durations are non-negative and, in microseconds, add up
 * exactly to Ready − RequestReceived. Before Ready it ends at the latest step so far; without
 * RequestReceived it starts at the first step.
 */
export function relaySegments(timeline: PodTimeline): RelaySegment[] {
  const received = timeline.steps.find((s) => s.step === 'RequestReceived');
  const ready = timeline.steps.find((s) => s.step === 'Ready');
  const done = timeline.steps
    .map((step, i) => ({ step, i, at: stepEndMicros(step) }))
    .filter((s) => !Number.isNaN(s.at))
    .sort((a, b) => a.at - b.at || a.i - b.i);
  if (done.length === 0) return [];
  const from = received ? stepMicros(received.start) : Math.min(...timeline.steps.map((s) => stepMicros(s.start)).filter((t) => !Number.isNaN(t)));
  const to = ready ? stepEndMicros(ready) : done[done.length - 1]!.at;
  const segments: RelaySegment[] = [];
  let prev = from;
  for (const { step, at } of done) {
    if (at <= from || at > to) continue;
    segments.push({ step: step.step, component: step.component, container: step.container, startUs: prev, endUs: at, durationMs: (at - prev) / 1000 });
    prev = at;
    if (ready && step === ready) break;
  }
  return segments;
}
