// The pod timelines' thread entry (thread.ts): the store and everything that feeds or reads it, at
// the lowest CPU priority, answering the API server over the thread's port.
import { readlinkSync } from 'node:fs';
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { realClock } from '../../util/clock.js';
import { newLogger } from '../../util/log.js';
import { nameThisThread } from '../../util/threadname.js';
import { servePodTimelines, timelinePort, type TimelineThreadOptions } from './thread.js';

nameThisThread('pod-timelines');
const logger = newLogger('kube-apiserver');
try {
  // Linux gives each thread its own nice value; /proc/thread-self names this one ("PID/task/TID").
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').at(-1)), constants.priority.PRIORITY_LOW);
} catch (err) {
  logger.debug({ err }, 'the pod timeline thread keeps the normal CPU priority');
}
await servePodTimelines(timelinePort(parentPort!), workerData as TimelineThreadOptions, realClock, logger);
