// The scheduler's thread entry: filtering and scoring thousands of nodes stays off the API server's loop.
import { Client } from '../client/client.js';
import { RestClient } from '../client/rest.js';
import { realClock } from '../util/clock.js';
import { newLogger } from '../util/log.js';
import { runInThread } from '../client/component-thread.js';
import { service } from '../util/lifecycle.js';
import { BatchingTimelineRecorder } from '../client/timeline/recorder.js';
import { Scheduler } from './scheduler.js';

const logger = newLogger('scheduler');
runInThread({
  leaseName: 'kube-scheduler',
  logger,
  make: (config, options) => {
    const rest = new RestClient(config);
    // kite server passes --pod-timeline: off, the scheduler records nothing.
    const timeline = (options as { podTimeline?: boolean } | undefined)?.podTimeline === false ? undefined : new BatchingTimelineRecorder({ rest, clock: realClock, logger });
    const scheduler = new Scheduler({ client: new Client(rest), clock: realClock, logger, timeline });
    const component = service(
      'kube-scheduler',
      () => scheduler.start(),
      async () => {
        await scheduler.stop();
        await timeline?.stop();
        rest.close();
      },
    );
    return { ...component, metrics: () => scheduler.metrics.registry.metrics() };
  },
});
