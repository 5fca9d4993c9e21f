// Components that run beside the API server in `kite server` (scheduler, controllers) each get a
// worker thread: their work never stalls the API server's event loop, and the second core is used.
// The thread boundary carries only the component's config; the thread's own side (leader election,
// then the component) is client/component-thread.ts.
import { Worker } from 'node:worker_threads';

/** What the parent and the thread tell each other. */
export type ThreadMessage = 'stop' | 'stopped';

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
