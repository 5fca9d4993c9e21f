// Events, core/v1 and events.k8s.io/v1 alike: upstream converts both to one internal Event and
// prints that, so events.k8s.io Events are mapped onto the core shape first.
import type { StoredObject } from '../../api/meta.js';
import type { CoreEvent, EventsV1Event } from '../../api/types.js';
import { humanDurationSince } from '../../api/duration.js';
import { column, nameColumn, printer, wide, type PrintedRow } from './printer.js';

type Event = CoreEvent & StoredObject;

/** "component, host" from the source, falling back to the reporting controller and instance. */
export function formatEventSource(e: CoreEvent): string {
  const component = e.source?.component || e.reportingComponent || '';
  const instance = e.source?.host || e.reportingInstance || '';
  return instance ? `${component}, ${instance}` : component;
}

function printEvent(e: Event, now: number): PrintedRow {
  const firstSeen = e.firstTimestamp ? humanDurationSince(e.firstTimestamp, now) : humanDurationSince(e.eventTime, now);
  let lastSeen = e.lastTimestamp ? humanDurationSince(e.lastTimestamp, now) : firstSeen;
  let count = e.count ?? 0;
  if (e.series) {
    lastSeen = humanDurationSince(e.series.lastObservedTime, now);
    count = e.series.count ?? 0;
  } else if (count === 0) {
    count = 1; // events.k8s.io singletons carry no count
  }
  const kind = (e.involvedObject?.kind ?? '').toLowerCase();
  const target = e.involvedObject?.name ? `${kind}/${e.involvedObject.name}` : kind;
  return {
    cells: [
      lastSeen,
      e.type ?? '',
      e.reason ?? '',
      target,
      e.involvedObject?.fieldPath ?? '',
      formatEventSource(e),
      (e.message ?? '').trim(),
      firstSeen,
      count,
      e.metadata.name,
    ],
  };
}

const eventColumns = [
  column('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
  column('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future'),
  column('Reason', 'string', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
  column('Object', 'string', 'The object that this event is about.'),
  wide(
    'Subobject',
    'string',
    'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
  ),
  wide('Source', 'string', 'The component reporting this event. Should be a short machine understandable string.'),
  column('Message', 'string', 'A human-readable description of the status of this operation.'),
  wide('First Seen', 'string', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)'),
  wide('Count', 'string', 'The number of times this event has occurred.'),
  { ...nameColumn, priority: 1 },
];

export const eventPrinter = printer<CoreEvent>(eventColumns, printEvent);

export const eventsV1Printer = printer<EventsV1Event>(eventColumns, (e, now) =>
  printEvent(
    {
      metadata: e.metadata,
      involvedObject: e.regarding ?? {},
      type: e.type,
      reason: e.reason,
      message: e.note,
      source: e.deprecatedSource,
      reportingComponent: e.reportingController,
      reportingInstance: e.reportingInstance,
      firstTimestamp: e.deprecatedFirstTimestamp,
      lastTimestamp: e.deprecatedLastTimestamp,
      eventTime: e.eventTime,
      count: e.deprecatedCount,
      series: e.series,
    },
    now,
  ),
);
