// kite's PodTimeline columns (no upstream counterpart): the pod, its node, how many steps were
// kept, the last one, and how long the pod took from its first step to Ready.
import type { PodTimeline } from '../../api/timeline/types.js';
import { humanDuration } from '../../api/duration.js';
import { age, ageColumn, column, printer, wide } from './printer.js';

/** A short span: "350ms", "1.2s" under a minute, then kubectl's human form ("2m30s"). */
export function shortSpan(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  return humanDuration(ms);
}

/** From the first step to the Ready one; "<none>" before Ready. */
export function readyAfter(t: PodTimeline): string {
  const ready = t.steps.find((s) => s.step === 'Ready');
  const first = t.steps[0];
  if (!ready || !first) return '<none>';
  return shortSpan(Date.parse(ready.start) - Date.parse(first.start));
}

export const podTimelinePrinter = printer<PodTimeline>(
  [
    column('Name', 'string', "The pod's UID.", { format: 'name' }),
    column('Pod', 'string', "The pod's name."),
    column('Node', 'string', 'The node the pod was bound to.'),
    column('Steps', 'integer', 'How many steps are kept.'),
    column('Last', 'string', 'The latest step.'),
    column('Ready-After', 'string', "From the pod's first step to Ready."),
    ageColumn,
    wide('Owner', 'string', "The pod's controller."),
  ],
  (t, now) => ({
    cells: [
      t.metadata.name,
      t.pod.name,
      t.pod.nodeName || '<none>',
      t.steps.length,
      t.steps.at(-1)?.step ?? '<none>',
      readyAfter(t),
      age(t, now),
      t.pod.owner ? `${t.pod.owner.kind}/${t.pod.owner.name}` : '<none>',
    ],
  }),
);
