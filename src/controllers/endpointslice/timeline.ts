// The EndpointSlice controller's pod timeline steps: a pod's endpoint added to a slice (again when
// it turns ready), terminating, removed — each recorded once the controller's write of the slice
// succeeded. What was last written per Service and pod UID is kept here; a Service's first sync
// after a start takes the slices as they are, so a restart does not announce old endpoints again.
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { TimelinePodRef, TimelineStepName } from '../../api/timeline/types.js';
import { stepTime, type TimelineRecorder } from '../../client/timeline/recorder.js';
import type { Clock } from '../../util/clock.js';

export const TIMELINE_COMPONENT = 'endpointslice-controller';

interface EndpointState {
  slice: string;
  ready: boolean;
  terminating: boolean;
}

/** The pods a slice's endpoints stand for, with their conditions (upstream: ready unset means ready). */
function podEndpoints(slice: EndpointSlice | undefined): { pod: TimelinePodRef; ready: boolean; terminating: boolean }[] {
  const out: { pod: TimelinePodRef; ready: boolean; terminating: boolean }[] = [];
  for (const ep of slice?.endpoints ?? []) {
    const ref = ep.targetRef;
    if (ref?.kind !== 'Pod' || !ref.uid) continue;
    out.push({ pod: { namespace: ref.namespace ?? '', name: ref.name ?? '', uid: ref.uid }, ready: ep.conditions?.ready ?? true, terminating: ep.conditions?.terminating ?? false });
  }
  return out;
}

export class EndpointTimeline {
  /** Service key → pod UID → what the last successful write says about its endpoint. */
  private readonly byService = new Map<string, Map<string, EndpointState>>();

  constructor(
    private readonly recorder: TimelineRecorder,
    private readonly clock: Clock,
  ) {}

  /** Before planning a sync: the first time a Service is seen, its slices are taken as already recorded. */
  seed(serviceKey: string, slices: readonly EndpointSlice[]): void {
    if (this.byService.has(serviceKey)) return;
    const state = new Map<string, EndpointState>();
    for (const slice of slices) for (const ep of podEndpoints(slice)) state.set(ep.pod.uid, { slice: slice.metadata?.name ?? '', ready: ep.ready, terminating: ep.terminating });
    this.byService.set(serviceKey, state);
  }

  /** A slice was created or updated: `before` is its previous version (none for a create). */
  written(serviceKey: string, service: string, before: EndpointSlice | undefined, after: EndpointSlice): void {
    const state = this.stateOf(serviceKey);
    const slice = after.metadata?.name ?? '';
    const now = stepTime(this.clock.now());
    const present = new Set<string>();
    for (const { pod, ready, terminating } of podEndpoints(after)) {
      present.add(pod.uid);
      const prev = state.get(pod.uid);
      if (!prev || (ready && !prev.ready)) {
        this.record(pod, 'EndpointAdded', now, slice, service, { ready }, `added to EndpointSlice ${slice} of Service ${service} (${ready ? 'ready' : 'not ready'})`);
      }
      if (terminating && !prev?.terminating) this.record(pod, 'EndpointTerminating', now, slice, service, {}, `endpoint terminating in EndpointSlice ${slice} of Service ${service}`);
      state.set(pod.uid, { slice, ready, terminating });
    }
    for (const { pod } of podEndpoints(before)) if (!present.has(pod.uid)) this.removed(state, pod, slice, service, now);
  }

  /** A slice was deleted. */
  deleted(serviceKey: string, service: string, slice: EndpointSlice): void {
    const state = this.stateOf(serviceKey);
    const now = stepTime(this.clock.now());
    for (const { pod } of podEndpoints(slice)) this.removed(state, pod, slice.metadata?.name ?? '', service, now);
  }

  /** The Service is gone (its slices go with it through the garbage collector). */
  forget(serviceKey: string): void {
    this.byService.delete(serviceKey);
  }

  private stateOf(serviceKey: string): Map<string, EndpointState> {
    let state = this.byService.get(serviceKey);
    if (!state) this.byService.set(serviceKey, (state = new Map()));
    return state;
  }

  /** Only when the endpoint's last write was in this slice: one that moved to another slice stays. */
  private removed(state: Map<string, EndpointState>, pod: TimelinePodRef, slice: string, service: string, now: string): void {
    if (state.get(pod.uid)?.slice !== slice) return;
    state.delete(pod.uid);
    this.record(pod, 'EndpointRemoved', now, slice, service, {}, `removed from EndpointSlice ${slice} of Service ${service}`);
  }

  private record(pod: TimelinePodRef, step: TimelineStepName, start: string, slice: string, service: string, extra: Record<string, boolean>, detail: string): void {
    this.recorder.record(pod, { step, component: TIMELINE_COMPONENT, start, detail, attributes: { slice, service, ...extra } });
  }
}
