// The scheduler on its own thread: filtering and scoring thousands of nodes must not stall the API
// server's event loop, and a second core is there to use. It talks to the API like any client.
import { parentPort, workerData } from 'node:worker_threads';
import { Client } from '../client/client.js';
import { RestClient, type RestConfig } from '../client/rest.js';
import { realClock } from '../util/clock.js';
import { newLogger } from '../util/log.js';
import { Scheduler } from './scheduler.js';

/** Messages between the thread that starts the scheduler and this one. */
export type SchedulerWorkerMessage = 'stop' | 'stopped';

const rest = new RestClient((workerData as { rest: RestConfig }).rest);
const scheduler = new Scheduler({ client: new Client(rest), clock: realClock, logger: newLogger('scheduler') });
scheduler.start();

parentPort!.on('message', (m: SchedulerWorkerMessage) => {
  if (m !== 'stop') return;
  void scheduler.stop().finally(() => {
    rest.close();
    parentPort!.postMessage('stopped' satisfies SchedulerWorkerMessage);
  });
});
