// client-go's flowcontrol token bucket, for limits that try and give up rather than wait: the node
// lifecycle controller's eviction rates and the event correlator's spam filter.
import type { Clock } from './clock.js';

/** TryAccept on a token bucket: starts full, refills at qps (tokens per second); qps ≤ 0 never accepts (NewFakeNeverRateLimiter). */
export class TokenBucket {
  private tokens: number;
  private last: number;
  constructor(
    readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock,
  ) {
    this.tokens = qps > 0 ? burst : 0;
    this.last = clock.now();
  }

  tryAccept(): boolean {
    if (this.qps <= 0) return false;
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
