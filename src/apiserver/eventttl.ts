// Events expire an hour after they were last recorded, as upstream's --event-ttl (which rides on
// etcd leases) makes them: a sweeper deletes the expired ones from storage on the injected clock.
import type { StoredObject } from '../api/meta.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { hasStatusCode } from '../api/errors.js';
import type { Registries } from './registry/registries.js';

export const eventTTLMs = 60 * 60 * 1000;
const sweepIntervalMs = 60 * 1000;
const systemUser = { name: 'system:apiserver', groups: ['system:masters'] };

/** When the event was last recorded: the latest of its timestamps. */
export function lastRecorded(ev: StoredObject): number {
  const series = ev.series as { lastObservedTime?: string } | undefined;
  const times = [ev.lastTimestamp, ev.eventTime, series?.lastObservedTime, ev.metadata.creationTimestamp]
    .filter((t): t is string => typeof t === 'string')
    .map((t) => Date.parse(t))
    .filter((t) => !Number.isNaN(t));
  return times.length ? Math.max(...times) : 0;
}

export class EventSweeper {
  private timer?: Timer;

  constructor(
    private readonly registries: Registries,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = this.clock.setTimer(sweepIntervalMs, () => void this.sweep().finally(() => this.start()));
  }

  stop(): void {
    this.timer?.cancel();
  }

  async sweep(): Promise<number> {
    const events = this.registries.of('', 'events');
    const cutoff = this.clock.now() - eventTTLMs;
    let removed = 0;
    for (const ev of this.registries.cachedList('events')) {
      if (lastRecorded(ev) > cutoff) continue;
      try {
        await events.delete(ev.metadata.namespace ?? '', ev.metadata.name!, { preconditions: { resourceVersion: ev.metadata.resourceVersion } }, { dryRun: false, user: systemUser, subresource: '' });
        removed++;
      } catch (err) {
        // Recorded again meanwhile (a newer resourceVersion), or already gone.
        if (!hasStatusCode(err, 409, 404)) this.logger.warn({ err }, 'event expiry failed');
      }
    }
    return removed;
  }
}
