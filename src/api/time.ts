// The wire forms of metav1.Time (whole seconds) and metav1.MicroTime (microseconds), in UTC.

// Both are made for every stored write and every pod timeline step, thousands a second, and their
// text up to the second changes once a second: the last second's is kept.
let lastSecond = NaN;
let lastSecondText = '';

/** The time of `ms` (truncated to whole milliseconds, as Date does) split into its second's text and the milliseconds past it. */
function split(ms: number): { secondText: string; millis: number } {
  const t = Math.trunc(ms);
  // What Date cannot hold (NaN, beyond ±8.64e15 ms) is a RangeError, as toISOString makes it.
  if (!(Math.abs(t) <= 8.64e15)) throw new RangeError(`Invalid time value: ${ms}`);
  const second = Math.floor(t / 1000);
  if (second !== lastSecond) {
    lastSecondText = new Date(second * 1000).toISOString().slice(0, -5);
    lastSecond = second;
  }
  return { secondText: lastSecondText, millis: t - second * 1000 };
}

/** metav1.Time: RFC 3339 with whole seconds, e.g. 2026-01-01T00:00:00Z. */
export function rfc3339(ms: number): string {
  return `${split(ms).secondText}Z`;
}

/** metav1.MicroTime: RFC 3339 with six fractional digits, e.g. 2026-01-01T00:00:00.123000Z. */
export function microTime(ms: number): string {
  const { secondText, millis } = split(ms);
  return `${secondText}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}000Z`;
}
