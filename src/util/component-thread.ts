// Components that run beside the API server in `kite server` (scheduler, controllers) each get a
// worker thread: their work never stalls the API server's event loop, and the second core is used.
// The thread boundary carries only the component's config; the thread's own side (leader election,
// then the component) is client/component-thread.ts.
import { Worker } from 'node:worker_threads';

/** What the parent and the thread tell each other: stop, and the component's metrics asked for and answered. */
export type ThreadMessage = 'stop' | 'stopped' | { metricsRequest: number } | { metricsResponse: number; text: string };

let metricsRequests = 0;

/**
 * The component's Prometheus text (the scheduler's SLI), for the API server's /metrics: kite server runs the
 * scheduler as a thread, where upstream's kube-scheduler serves its own. Empty when the thread does not
 * answer within the bound (not leading, stopping).
 */
export function threadMetrics(worker: Worker, timeoutMs = 2_000): Promise<string> {
  const id = ++metricsRequests;
  return new Promise((resolve) => {
    const done = (text: string) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      resolve(text);
    };
    const onMessage = (m: ThreadMessage) => {
      if (typeof m === 'object' && 'metricsResponse' in m && m.metricsResponse === id) done(m.text);
    };
    const timer = setTimeout(() => done(''), timeoutMs);
    worker.on('message', onMessage);
    worker.postMessage({ metricsRequest: id } satisfies ThreadMessage);
  });
}

/** Starts a worker entry file with the API config and the component's own options (structured-cloneable). */
export function startThread(entry: URL, rest: unknown, onError: (err: Error) => void, options?: unknown): Worker {
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
    worker.once('message', (m: ThreadMessage) => m === 'stopped' && done());
    worker.once('exit', done);
    worker.postMessage('stop' satisfies ThreadMessage);
  });
  await worker.terminate();
}
