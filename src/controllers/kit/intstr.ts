// Upstream's intstr.GetScaledValueFromIntOrPercent: an integer as it is, "N%" of total rounded up
// or down; anything else an error with upstream's message.
export function scaledValueFromIntOrPercent(value: number | string | undefined, total: number, roundUp: boolean): number {
  if (value === undefined) return 0;
  if (typeof value === 'number') return value;
  const m = /^(-?\d+)%$/.exec(value);
  if (!m) throw new Error(`invalid value for IntOrString: invalid value "${value}"`);
  const scaled = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}
