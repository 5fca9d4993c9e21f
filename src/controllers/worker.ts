// The controller manager's thread entry: informers on every resource stay off the API server's loop.
import { realClock } from '../util/clock.js';
import { newLogger } from '../util/log.js';
import { runInThread } from '../util/component-thread.js';
import { ControllerManager } from './manager.js';

const logger = newLogger('controller-manager');
runInThread({ leaseName: 'kube-controller-manager', logger, make: (rest) => new ControllerManager({ rest, clock: realClock, logger }) });
