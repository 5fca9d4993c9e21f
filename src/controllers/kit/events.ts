import type { Client } from '../../client/client.js';
import { clientEventSink, EventBroadcaster, type EventRecorder } from '../../client/record/recorder.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';

export interface ControllerEvents {
  recorder: EventRecorder;
  /** Set when the controller made its own broadcaster; its stop() stops it. */
  events?: EventBroadcaster;
}

/** The recorder the options give, else one for `component` over a broadcaster to the API's events. */
export function controllerEvents(opts: { client: Client; clock: Clock; logger: Logger; recorder?: EventRecorder }, component: string): ControllerEvents {
  if (opts.recorder) return { recorder: opts.recorder };
  const events = new EventBroadcaster({ sink: clientEventSink(opts.client), clock: opts.clock, logger: opts.logger });
  return { recorder: events.newRecorder({ component }), events };
}
