// The pod's timeline as a Gantt waterfall: one lane per phase (API server, scheduling, kubelet,
// endpoints, termination) and per container, one row per step, the bar at its offset from the
// first step. The wait before a step since the previous one in its lane ended is drawn as a dotted
// gap (queueing, back-off), a series (restarts, probe failures) spans its first to its last time.
// Every row is a button: hover or focus shows its details, Escape closes them.
import { useEffect, useState } from 'preact/hooks';
import type { TimelineStep, TimelineStepName } from '../../src/api/timeline/types.js';

const phaseLanes: [string, readonly TimelineStepName[]][] = [
  ['API server', ['RequestReceived', 'Authenticated', 'Authorized', 'Admission', 'Persisted', 'CreatedByController']],
  ['Scheduling', ['SchedulingQueued', 'SchedulingGated', 'SchedulingUngated', 'SchedulingAttempt', 'Nominated', 'Bound']],
  ['Kubelet', ['KubeletAdmitted', 'KubeletRejected', 'VolumesReady', 'SandboxCreated', 'PodIPAssigned', 'ContainersReady', 'Ready']],
  ['Endpoints', ['EndpointAdded', 'EndpointTerminating', 'EndpointRemoved']],
  ['Termination', ['DeleteRequested', 'SandboxRemoved', 'VolumesRemoved', 'CgroupsRemoved', 'StatusFinal', 'FinalizerRemoved', 'Deleted']],
];
const laneOfStep = new Map(phaseLanes.flatMap(([lane, steps]) => steps.map((s) => [s, lane] as const)));

export interface Lane {
  title: string;
  steps: TimelineStep[];
}

/** Phase lanes in relay order with the containers' lanes (init first, by first step) after the kubelet's. */
export function lanesOf(steps: readonly TimelineStep[]): Lane[] {
  const byTitle = new Map<string, TimelineStep[]>();
  for (const s of steps) {
    const title = s.container ? `${s.containerType === 'init' ? 'init container' : 'container'} ${s.container}` : (laneOfStep.get(s.step) ?? 'Kubelet');
    byTitle.set(title, [...(byTitle.get(title) ?? []), s]);
  }
  const containers = [...byTitle.keys()]
    .filter((t) => t.startsWith('init container ') || t.startsWith('container '))
    .sort((a, b) => Number(b.startsWith('init')) - Number(a.startsWith('init')) || startMs(byTitle.get(a)![0]!) - startMs(byTitle.get(b)![0]!));
  const order = ['API server', 'Scheduling', 'Kubelet', ...containers, 'Endpoints', 'Termination'];
  return order.filter((t) => byTitle.has(t)).map((title) => ({ title, steps: byTitle.get(title)!.sort((a, b) => startMs(a) - startMs(b)) }));
}

const startMs = (s: TimelineStep) => Date.parse(s.start);
/** Where a step's bar ends: its end, a series' last time, else its start (an instant). */
const endMs = (s: TimelineStep) => Date.parse(s.end ?? s.lastTime ?? s.start);

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

function label(s: TimelineStep): string {
  const probe = s.attributes?.probe;
  return `${s.step}${probe ? ` (${String(probe)})` : ''}${s.count && s.count > 1 ? ` ×${s.count}` : ''}`;
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);

export function Waterfall({ steps }: { steps: readonly TimelineStep[] }) {
  const [selected, setSelected] = useState<TimelineStep>();
  useEffect(() => {
    const close = (e: KeyboardEvent) => e.key === 'Escape' && setSelected(undefined);
    addEventListener('keydown', close);
    return () => removeEventListener('keydown', close);
  }, []);
  if (steps.length === 0) return <p class="muted">No steps recorded yet.</p>;
  const t0 = Math.min(...steps.map(startMs));
  const span = Math.max(1, Math.max(...steps.map(endMs)) - t0);
  const pct = (ms: number) => `${((ms - t0) / span) * 100}%`;
  const width = (a: number, b: number) => `${Math.max(0, ((b - a) / span) * 100)}%`;
  return (
    <div class="waterfall">
      <div class="axis" aria-hidden="true">
        <span>0</span>
        <span>{formatMs(span / 2)}</span>
        <span>{formatMs(span)}</span>
      </div>
      {lanesOf(steps).map((lane) => {
        let previousEnd: number | undefined;
        return (
          <section class="lane" key={lane.title} aria-label={lane.title}>
            <h3>{lane.title}</h3>
            <ol>
              {lane.steps.map((s, i) => {
                const start = startMs(s);
                const end = endMs(s);
                const gapFrom = previousEnd !== undefined && previousEnd < start ? previousEnd : undefined;
                previousEnd = Math.max(previousEnd ?? end, end);
                const duration = end - start;
                const summary = `${label(s)}: +${formatMs(start - t0)}${duration > 0 ? `, ${formatMs(duration)}` : ''}${gapFrom !== undefined ? `, after a ${formatMs(start - gapFrom)} wait` : ''}${s.detail ? ` — ${s.detail}` : ''}`;
                return (
                  <li key={`${s.step}-${i}`}>
                    <button
                      type="button"
                      class={`step${selected === s ? ' selected' : ''}${s.count && s.count > 1 ? ' series' : ''}${/Failed|Rejected|BackOff|SIGKILL/.test(s.step) ? ' failed' : ''}`}
                      title={summary}
                      aria-label={summary}
                      data-step={s.step}
                      onMouseEnter={() => setSelected(s)}
                      onFocus={() => setSelected(s)}
                      onClick={() => setSelected(s)}
                    >
                      <span class="offset">+{formatMs(start - t0)}</span>
                      <span class="name">{label(s)}</span>
                      <span class="track">
                        {gapFrom !== undefined && <span class="gap" style={{ left: pct(gapFrom), width: width(gapFrom, start) }} />}
                        <span class={duration > 0 ? 'bar' : 'bar instant'} style={{ left: pct(start), width: width(start, end) }} />
                      </span>
                      <span class="duration">{duration > 0 ? formatMs(duration) : ''}</span>
                    </button>
                  </li>
                );
              })}
            </ol>
          </section>
        );
      })}
      {selected && (
        <aside class="details" aria-live="polite">
          <button type="button" class="close" onClick={() => setSelected(undefined)} aria-label="Close details">
            ×
          </button>
          <h4>{label(selected)}</h4>
          <dl>
            <dt>Recorded by</dt>
            <dd>{selected.component}</dd>
            <dt>Start</dt>
            <dd>
              {clock(startMs(selected))} (+{formatMs(startMs(selected) - t0)})
            </dd>
            {selected.end && (
              <>
                <dt>End</dt>
                <dd>
                  {clock(Date.parse(selected.end))} ({formatMs(Date.parse(selected.end) - startMs(selected))})
                </dd>
              </>
            )}
            {selected.lastTime && (
              <>
                <dt>Last</dt>
                <dd>
                  {clock(Date.parse(selected.lastTime))} ({selected.count ?? 1} times)
                </dd>
              </>
            )}
            {selected.container && (
              <>
                <dt>Container</dt>
                <dd>
                  {selected.container} ({selected.containerType ?? 'regular'})
                </dd>
              </>
            )}
            {selected.detail && (
              <>
                <dt>Detail</dt>
                <dd>{selected.detail}</dd>
              </>
            )}
            {Object.entries(selected.attributes ?? {}).map(([k, v]) => (
              <>
                <dt>{k}</dt>
                <dd>{String(v)}</dd>
              </>
            ))}
          </dl>
        </aside>
      )}
    </div>
  );
}
