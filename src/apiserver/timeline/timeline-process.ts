// The pod timelines' process entry (process.ts): the store and everything that feeds or reads it,
// every thread at the idle CPU policy, answering the API server over the IPC channel. Its options
// are the one argument (JSON). It outlives no parent: when the channel closes (the server stopped
// it, or the server died) it stops its store, so flushes, and exits.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { constants, setPriority } from 'node:os';
import { realClock } from '../../util/clock.js';
import { newLogger } from '../../util/log.js';
import { nameThisThread } from '../../util/threadname.js';
import { servePodTimelines, type TimelinePort, type TimelineProcessOptions } from './process.js';

nameThisThread('pod-timelines');
const logger = newLogger('kube-apiserver');
// The terminal's Ctrl-C reaches the whole process group: the server ends this process, after its last records.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
idleEveryThread();

const port: TimelinePort = {
  postMessage: (message) => {
    if (process.connected) process.send!(message, undefined, undefined, (err: Error | null) => void err);
  },
  onMessage: (listener) => process.on('message', listener),
};
const served = servePodTimelines(port, JSON.parse(process.argv[2]!) as TimelineProcessOptions, realClock, logger);
process.once('disconnect', () => void served.then((stop) => stop()).then(() => process.exit(0), exitFailed));
served.then(() => port.postMessage({ op: 'ready' }), exitFailed);

function exitFailed(err: unknown): void {
  logger.error({ err }, 'the pod timelines failed');
  process.exit(1);
}

/**
 * SCHED_IDLE for every thread there is (threads started later inherit it from their creator), with
 * chrt from util-linux; where that fails, nice 19 for each (Linux gives each thread its own).
 */
function idleEveryThread(): void {
  try {
    execFileSync('chrt', ['--idle', '--all-tasks', '--pid', '0', String(process.pid)], { stdio: 'ignore' });
    return;
  } catch (err) {
    logger.debug({ err }, 'no idle CPU policy for the pod timelines; nice 19 instead');
  }
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      setPriority(Number(tid), constants.priority.PRIORITY_LOW);
    } catch {
      // The thread ended, or /proc is not Linux's: the priority is only a preference.
    }
  }
}
