// The pod's timeline as a Gantt waterfall, drawn from the shared layout (api/timeline/waterfall.ts):
// one section per lane (phases, each container), one row per step at its offset from the first
// step, the waits (queueing, gates, pull queue, back-off) as dotted rows of their own. Every row is
// a button: hover or focus shows its details, Escape closes them.
import { useEffect, useState } from 'preact/hooks';
import type { PodTimeline } from '../../src/api/timeline/types.js';
import { waterfall, type WaterfallRow } from '../../src/api/timeline/waterfall.js';

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

function label(r: WaterfallRow): string {
  const what = r.step === 'Wait' ? `Wait: ${r.gap ?? ''}` : r.step;
  return `${what}${r.count && r.count > 1 ? ` ×${r.count}` : ''}`;
}

function rowClass(r: WaterfallRow, selected: boolean): string {
  const classes = ['step'];
  if (selected) classes.push('selected');
  if (r.gap) classes.push('gap');
  if (r.count && r.count > 1) classes.push('series');
  if (r.ongoing) classes.push('ongoing');
  if (/Failed|Rejected|SIGKILL/.test(r.step)) classes.push('failed');
  return classes.join(' ');
}

export function Waterfall({ timeline, now }: { timeline: PodTimeline; now: number | undefined }) {
  const [selected, setSelected] = useState<WaterfallRow>();
  useEffect(() => {
    const close = (e: KeyboardEvent) => e.key === 'Escape' && setSelected(undefined);
    addEventListener('keydown', close);
    return () => removeEventListener('keydown', close);
  }, []);
  const w = waterfall(timeline, now);
  if (w.rows.length === 0) return <p class="muted">No steps recorded yet.</p>;
  const span = Math.max(1, w.spanMs);
  const pct = (ms: number) => `${(ms / span) * 100}%`;
  return (
    <div class="waterfall">
      <div class="axis" aria-hidden="true">
        <span>0</span>
        <span>{formatMs(span / 2)}</span>
        <span>{formatMs(span)}</span>
      </div>
      {w.lanes.map((lane) => (
        <section class="lane" key={lane.id} aria-label={`lane ${lane.label}`}>
          <h3>{lane.label}</h3>
          <ol>
            {w.rows
              .filter((r) => r.lane === lane.id)
              .map((r, i) => {
                const summary = `${label(r)}: +${formatMs(r.offsetMs)}${r.durationMs > 0 ? `, ${formatMs(r.durationMs)}` : ''}${r.ongoing ? ' (under way)' : ''}${r.detail ? ` — ${r.detail}` : ''}`;
                return (
                  <li key={`${r.step}-${i}`}>
                    <button
                      type="button"
                      class={rowClass(r, selected === r)}
                      title={summary}
                      aria-label={summary}
                      data-step={r.step}
                      onMouseEnter={() => setSelected(r)}
                      onFocus={() => setSelected(r)}
                      onClick={() => setSelected(r)}
                    >
                      <span class="offset">+{formatMs(r.offsetMs)}</span>
                      <span class="name">{label(r)}</span>
                      <span class="track">
                        <span class={r.durationMs > 0 ? 'bar' : 'bar instant'} style={{ left: pct(r.offsetMs), width: pct(r.durationMs) }} />
                      </span>
                      <span class="duration">{r.durationMs > 0 ? formatMs(r.durationMs) : ''}</span>
                    </button>
                  </li>
                );
              })}
          </ol>
        </section>
      ))}
      {selected && (
        <aside class="details" aria-live="polite">
          <button type="button" class="close" onClick={() => setSelected(undefined)} aria-label="Close details">
            ×
          </button>
          <h4>{label(selected)}</h4>
          <dl>
            <dt>Recorded by</dt>
            <dd>{selected.component}</dd>
            <dt>At</dt>
            <dd>
              {new Date(w.startMs + selected.offsetMs).toISOString().slice(11, 23)} (+{formatMs(selected.offsetMs)})
            </dd>
            <dt>Took</dt>
            <dd>
              {formatMs(selected.durationMs)}
              {selected.ongoing ? ', still under way' : ''}
            </dd>
            {selected.container && (
              <>
                <dt>Container</dt>
                <dd>{selected.container}</dd>
              </>
            )}
            {selected.count !== undefined && (
              <>
                <dt>Times</dt>
                <dd>{selected.count}</dd>
              </>
            )}
            {selected.detail && (
              <>
                <dt>Detail</dt>
                <dd>{selected.detail}</dd>
              </>
            )}
          </dl>
        </aside>
      )}
    </div>
  );
}
