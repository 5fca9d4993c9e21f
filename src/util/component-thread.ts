// Components that run beside the API server in `kite server` (scheduler, controllers) each get a
// worker thread: their work never stalls the API server's event loop, and the second core is used.
// They reach the API like any client, over the API server's loopback socket (plain HTTP, a token
// per component), so the thread boundary carries only the config.
// Each runs only while it holds its Lease in kube-system, so several kite servers on one etcd
// have one active scheduler and one controller manager, as upstream's leader election gives.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Worker, parentPort, workerData } from 'node:worker_threads';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { Client } from '../client/client.js';
import { LeaderElector, LeaseLock } from '../client/leaderelection.js';
import { RestClient, type RestConfig } from '../client/rest.js';
import type { Logger } from './log.js';

export interface ThreadComponent {
  start(): void;
  stop(): Promise<void>;
}

type Message = 'stop' | 'stopped';

export interface ThreadOptions {
  /** The Lease in kube-system that decides which instance runs (kube-scheduler, kube-controller-manager). */
  leaseName: string;
  logger: Logger;
  /** Builds a fresh component for each term of leadership; options are what startThread was given. */
  make: (rest: RestConfig, options: unknown) => ThreadComponent;
}

const leaseNamespace = 'kube-system';

/** In the worker's entry file: campaigns for the lease, runs the component while leading, until told to stop. */
export function runInThread(opts: ThreadOptions): void {
  const { rest, options } = workerData as { rest: RestConfig; options: unknown };
  const leaseRest = new RestClient(rest);
  const leases = new Client(leaseRest).resource<Lease>('coordination.k8s.io', 'v1', 'leases').namespace(leaseNamespace);
  const identity = `${hostname()}_${randomUUID()}`;
  const stopping = new AbortController();
  let term: Promise<void> = Promise.resolve();
  const elector = new LeaderElector({
    lock: new LeaseLock(leases, leaseNamespace, opts.leaseName, identity),
    releaseOnCancel: true,
    onError: (err) => opts.logger.debug({ err }, 'leader election'),
    callbacks: {
      onStartedLeading: (leading) => {
        opts.logger.info({ lease: opts.leaseName, identity }, 'became leader');
        const component = opts.make(rest, options);
        component.start();
        term = new Promise<void>((resolve) => leading.addEventListener('abort', () => resolve(), { once: true })).then(() => component.stop());
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
  parentPort!.on('message', (m: Message) => {
    if (m !== 'stop') return;
    stopping.abort();
    void campaign.finally(() => {
      leaseRest.close();
      parentPort!.postMessage('stopped' satisfies Message);
    });
  });
}

/** Starts a worker entry file with the API config and the component's own options (structured-cloneable). */
export function startThread(entry: URL, rest: RestConfig, onError: (err: Error) => void, options?: unknown): Worker {
  const worker = new Worker(entry, { workerData: { rest, options } });
  worker.on('error', onError);
  return worker;
}

/** Asks the component to stop cleanly (work in flight finishes, the lease is released), then ends the thread. */
export async function stopThread(worker: Worker, graceMs = 10_000): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, graceMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    worker.once('message', (m: Message) => m === 'stopped' && done());
    worker.once('exit', done);
    worker.postMessage('stop' satisfies Message);
  });
  await worker.terminate();
}
