// The controller manager's thread entry: informers on every resource stay off the API server's loop.
import { realClock } from '../util/clock.js';
import { newLogger } from '../util/log.js';
import { runInThread } from '../client/component-thread.js';
import { ControllerManager, type ControllerManagerConfig } from './manager.js';

const logger = newLogger('controller-manager');
runInThread({
  leaseName: 'kube-controller-manager',
  logger,
  make: (rest, options) => new ControllerManager({ ...(options as ControllerManagerConfig | undefined), rest, clock: realClock, logger }),
});
