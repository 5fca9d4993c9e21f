// The node agent's thread entry for `kite up`: the kubelet gets an event loop of its own instead of
// sharing the API server's, as it would as a separate process (upstream runs them apart). Only the
// agent's options cross the thread boundary; the kubelet reaches the API over HTTPS as any node.
import { parentPort, workerData } from 'node:worker_threads';
import { realClock } from '../util/clock.js';
import { newLogger } from '../util/log.js';
import { nameThisThread } from '../util/threadname.js';
import { Agent, type AgentOptions } from './agent.js';

/** What `kite up` hands the thread: the agent's options without the clock and the logger. */
export type AgentThreadOptions = Omit<AgentOptions, 'clock' | 'logger'>;

export type AgentThreadMessage = { type: 'joined'; nodeName: string; kubeletPort: number } | { type: 'failed'; message: string } | { type: 'stopped' };

nameThisThread('kubelet');
const agent = new Agent({ ...(workerData as AgentThreadOptions), clock: realClock, logger: newLogger('kubelet') });
const post = (m: AgentThreadMessage) => parentPort!.postMessage(m);

parentPort!.on('message', (m: unknown) => {
  if (m !== 'stop') return;
  void agent.stop().finally(() => post({ type: 'stopped' }));
});

agent.start().then(
  () => post({ type: 'joined', nodeName: agent.nodeName, kubeletPort: agent.kubeletPort }),
  (err: unknown) => post({ type: 'failed', message: err instanceof Error ? err.message : String(err) }),
);
