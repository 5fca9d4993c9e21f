// TCP socket probes (upstream's pkg/probe/tcp): a connection that opens succeeds and is closed at
// once; a refused or timed-out one fails with Go's dial error text.
import * as net from 'node:net';
import type { Clock } from '../../util/clock.js';
import { dialErrorText, joinHostPort } from './goformat.js';
import type { ProbeOutcome } from './probe.js';

export function tcpProbe(host: string, port: number, opts: { clock: Clock; timeoutMs: number; signal?: AbortSignal }): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const finish = (outcome: ProbeOutcome) => {
      timer.cancel();
      opts.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(outcome);
    };
    const timer = opts.clock.setTimer(opts.timeoutMs, () => finish({ result: 'failure', output: `dial tcp ${addr}: i/o timeout` }));
    const onAbort = () => finish({ result: 'failure', output: `dial tcp ${addr}: operation was canceled` });
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => finish({ result: 'success', output: '' }));
    socket.once('error', (err) => finish({ result: 'failure', output: dialErrorText(addr, err) }));
  });
}
