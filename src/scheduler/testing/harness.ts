// Runs a Scheduler against the fake client in virtual time, for end-to-end tests of the loop.
import { pino } from 'pino';
import type { Node, Pod } from '../../api/types.js';
import { FakeClock } from '../../util/clock.js';
import { Scheduler, type SchedulerOptions } from '../scheduler.js';
import { FakeSchedulerClient } from './fake-client.js';

export const silentLogger = pino({ level: 'silent' });

export class Harness {
  readonly client = new FakeSchedulerClient();
  readonly clock = new FakeClock();
  readonly scheduler: Scheduler;

  constructor(opts: Partial<SchedulerOptions> = {}) {
    this.scheduler = new Scheduler({ client: this.client, clock: this.clock, logger: silentLogger, ...opts });
  }

  async start(nodes: Node[] = [], pods: Pod[] = []): Promise<void> {
    for (const n of nodes) this.client.nodes.upsert(n);
    for (const p of pods) this.client.pods.upsert(p);
    await this.scheduler.start();
    await this.settle();
  }

  /** Lets queued work (informer events, scheduling, binding) run without moving the clock. */
  async settle(): Promise<void> {
    for (let i = 0; i < 50; i++) await new Promise<void>((r) => setImmediate(r));
  }

  async advance(ms: number): Promise<void> {
    await this.clock.advance(ms);
    await this.settle();
  }

  pod(key: string): Pod | undefined {
    return this.client.pods.get(key);
  }

  podScheduled(key: string) {
    return this.pod(key)?.status?.conditions?.find((c) => c.type === 'PodScheduled');
  }

  stop(): Promise<void> {
    return this.scheduler.stop();
  }
}
