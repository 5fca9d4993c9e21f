// A periodic call on the injected clock (the clock only has one-shot timers).
import type { Clock, Timer } from '../util/clock.js';

/** Calls fn every ms until the returned timer is cancelled. */
export function every(clock: Clock, ms: number, fn: () => void): Timer {
  let timer: Timer;
  let cancelled = false;
  const tick = () => {
    if (cancelled) return;
    fn();
    if (!cancelled) timer = clock.setTimer(ms, tick);
  };
  timer = clock.setTimer(ms, tick);
  return {
    cancel: () => {
      cancelled = true;
      timer.cancel();
    },
  };
}
