// The wire forms of metav1.Time (whole seconds) and metav1.MicroTime (microseconds), in UTC.

/** metav1.Time: RFC 3339 with whole seconds, e.g. 2026-01-01T00:00:00Z. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** metav1.MicroTime: RFC 3339 with six fractional digits, e.g. 2026-01-01T00:00:00.123000Z. */
export function microTime(ms: number): string {
  // Called for every timeline step: slicing is cheaper than a regular expression.
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, -1)}000Z`;
}
