// The thread side of a component that runs beside the API server (util/component-thread.ts starts
// the thread): it reaches the API like any client, over the API server's loopback socket (plain
// HTTP, a token per component), and runs only while it holds its Lease in kube-system, so several
// kite servers on one etcd have one active scheduler and one controller manager, as upstream's
// leader election gives.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { ThreadMessage } from '../util/component-thread.js';
import type { Service } from '../util/lifecycle.js';
import type { Logger } from '../util/log.js';
import { nameThisThread } from '../util/threadname.js';
import { Client } from './client.js';
import { LeaderElector, LeaseLock } from './leaderelection.js';
import { RestClient, type RestConfig } from './rest.js';

export interface ThreadOptions {
  /** The Lease in kube-system that decides which instance runs (kube-scheduler, kube-controller-manager). */
  leaseName: string;
  logger: Logger;
  /** Builds a fresh component for each term of leadership; options are what startThread was given. */
  make: (rest: RestConfig, options: unknown) => ThreadComponent;
}

/** A component, and its Prometheus text if it keeps metrics (threadMetrics asks for it). */
export interface ThreadComponent extends Service {
  metrics?(): Promise<string>;
}

const leaseNamespace = 'kube-system';

/** In the worker's entry file: campaigns for the lease, runs the component while leading, until told to stop. */
export function runInThread(opts: ThreadOptions): void {
  nameThisThread(opts.leaseName);
  const { rest, options } = workerData as { rest: RestConfig; options: unknown };
  const leaseRest = new RestClient(rest);
  const leases = new Client(leaseRest).resource('leases.coordination.k8s.io').namespace(leaseNamespace);
  const identity = `${hostname()}_${randomUUID()}`;
  const stopping = new AbortController();
  let term: Promise<void> = Promise.resolve();
  let current: ThreadComponent | undefined;
  const elector = new LeaderElector({
    lock: new LeaseLock(leases, leaseNamespace, opts.leaseName, identity),
    releaseOnCancel: true,
    onError: (err) => opts.logger.debug({ err }, 'leader election'),
    callbacks: {
      onStartedLeading: (leading) => {
        opts.logger.info({ lease: opts.leaseName, identity }, 'became leader');
        const component = opts.make(rest, options);
        current = component;
        const started = component.start().catch((err: unknown) => opts.logger.error({ err, component: component.name }, 'start failed'));
        term = new Promise<void>((resolve) => leading.addEventListener('abort', () => resolve(), { once: true })).then(async () => {
          await started;
          if (current === component) current = undefined;
          await component.stop();
        });
      },
      onStoppedLeading: () => opts.logger.info({ lease: opts.leaseName, identity }, 'leading stopped'),
    },
  });
  const campaign = (async () => {
    // A term that ends by losing the lease is followed by a new campaign.
    while (!stopping.signal.aborted) {
      await elector.run(stopping.signal);
      await term;
    }
  })();
  parentPort!.on('message', (m: ThreadMessage) => {
    if (typeof m === 'object' && 'metricsRequest' in m) {
      const id = m.metricsRequest;
      void (current?.metrics?.() ?? Promise.resolve('')).then(
        (text) => parentPort!.postMessage({ metricsResponse: id, text } satisfies ThreadMessage),
        () => parentPort!.postMessage({ metricsResponse: id, text: '' } satisfies ThreadMessage),
      );
      return;
    }
    if (m !== 'stop') return;
    stopping.abort();
    void campaign.finally(() => {
      leaseRest.close();
      parentPort!.postMessage('stopped' satisfies ThreadMessage);
    });
  });
}

