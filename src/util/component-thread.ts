// Components that run beside the API server in `kite server` (scheduler, controllers) each get a
// worker thread: their work never stalls the API server's event loop, and the second core is used.
// They reach the API over HTTPS like any client, so the thread boundary carries only the config.
import { Worker, parentPort, workerData } from 'node:worker_threads';
import type { RestConfig } from '../client/rest.js';

export interface ThreadComponent {
  start(): void;
  stop(): Promise<void>;
}

type Message = 'stop' | 'stopped';

/** In the worker's entry file: builds the component from the API config and runs it until told to stop. */
export function runInThread(make: (rest: RestConfig) => ThreadComponent): void {
  const component = make((workerData as { rest: RestConfig }).rest);
  component.start();
  parentPort!.on('message', (m: Message) => {
    if (m !== 'stop') return;
    void component.stop().finally(() => parentPort!.postMessage('stopped' satisfies Message));
  });
}

/** Starts a worker entry file with the API config. */
export function startThread(entry: URL, rest: RestConfig, onError: (err: Error) => void): Worker {
  const worker = new Worker(entry, { workerData: { rest } });
  worker.on('error', onError);
  return worker;
}

/** Asks the component to stop cleanly (work in flight finishes), then ends the thread. */
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
