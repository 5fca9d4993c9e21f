// What the timeline store tells about new steps, beside keeping them: the OTLP exporter is one.
import type { PodTimeline, TimelineStep } from '../../api/timeline/types.js';

export interface TimelineSink {
  /** Called after steps were merged into a timeline (added: the new or replaced steps). Must not throw or block. */
  stepsRecorded(timeline: PodTimeline, added: readonly TimelineStep[]): void;
}
