// Cron schedules as upstream's CronJob reads them: robfig/cron v3's standard parser (five fields,
// the @-descriptors, @every, an optional TZ=/CRON_TZ= prefix) with its error messages, which the
// API returns verbatim, and its Next() walk over wall-clock fields in a time zone (DST gaps and
// repeats handled as Go's time.Date does). Time zones are the IANA ones the runtime's Intl knows.
// No npm cron library reproduces robfig's messages and its day-of-month/day-of-week rule together.

/** Go's zero time.Time (0001-01-01T00:00:00Z), which Next returns when nothing matches within five years. */
export const ZERO_TIME = -62135596800000;

export interface CronSchedule {
  /** The first activation strictly after t (ms since the epoch, whole seconds), or ZERO_TIME. */
  next(t: number): number;
}

// ---- time zones ----

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The process's own zone: Go's time.Local. */
export const localZone = (): string => new Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';

/**
 * Go's time.LoadLocation: "" and "UTC" are UTC, "Local" the process's zone, anything else an IANA
 * name (case as the database spells it). Returns the zone, or the error Go's would say.
 */
export function loadLocation(name: string): { zone: string } | { error: string } {
  if (name === '' || name === 'UTC') return { zone: 'UTC' };
  if (name === 'Local') return { zone: localZone() };
  let resolved: string | undefined;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return { error: `unknown time zone ${name}` };
  }
  // Intl ignores case; Go's lookup does not.
  if (resolved !== name && resolved?.toLowerCase() === name.toLowerCase()) return { error: `unknown time zone ${name}` };
  return { zone: name };
}

function wallOf(zone: string, t: number): Wall {
  if (zone === 'UTC') {
    const d = new Date(t);
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
  }
  const w: Record<string, number> = {};
  let bc = false;
  for (const p of formatter(zone).formatToParts(t)) {
    if (p.type === 'era') bc = p.value.startsWith('B');
    else if (p.type !== 'literal') w[p.type] = Number(p.value);
  }
  return { year: bc ? 1 - w.year! : w.year!, month: w.month!, day: w.day!, hour: w.hour!, minute: w.minute!, second: w.second! };
}

/** Wall fields read as if they were UTC (Date.UTC without its two-digit-year quirk), normalizing overflow. */
function wallAsUTC(w: Wall): number {
  const d = new Date(0);
  d.setUTCFullYear(w.year, w.month - 1, w.day);
  d.setUTCHours(w.hour, w.minute, w.second, 0);
  return d.getTime();
}

const offsetAt = (zone: string, t: number): number => (zone === 'UTC' ? 0 : wallAsUTC(wallOf(zone, t)) - Math.floor(t / 1000) * 1000);

/** Go's time.Date in a zone: a wall time in a DST gap or repeat takes the offset Go's lookup gives. */
function dateIn(zone: string, w: Wall): number {
  const unix = wallAsUTC(w);
  let offset = offsetAt(zone, unix);
  if (offset !== 0) {
    const other = offsetAt(zone, unix - offset);
    if (other !== offset) offset = other;
  }
  return unix - offset;
}

const weekday = (w: Wall): number => new Date(wallAsUTC({ ...w, hour: 0, minute: 0, second: 0 })).getUTCDay();

/** RFC 3339 with the zone's offset, as Go's Format(time.RFC3339): "Z" for UTC. */
export function rfc3339In(t: number, zone: string): string {
  const offset = offsetAt(zone, t);
  const w = wallOf(zone, t);
  const p = (n: number, l = 2) => String(n).padStart(l, '0');
  const stamp = `${p(w.year, 4)}-${p(w.month)}-${p(w.day)}T${p(w.hour)}:${p(w.minute)}:${p(w.second)}`;
  if (offset === 0) return `${stamp}Z`;
  const m = Math.abs(offset) / 60_000;
  return `${stamp}${offset < 0 ? '-' : '+'}${p(Math.floor(m / 60))}:${p(m % 60)}`;
}

// ---- parsing ----

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const SECONDS: Bounds = { min: 0, max: 59 };
const MINUTES: Bounds = { min: 0, max: 59 };
const HOURS: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTHS: Bounds = {
  min: 1,
  max: 12,
  names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 },
};
const DOW: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } };

/** One field's allowed values, and robfig's star bit (the field began with * or ? and had no step above 1). */
interface FieldSet {
  bits: Set<number>;
  star: boolean;
}

const INT64_MAX = 2n ** 63n - 1n;

/** robfig's mustParseInt over Go's strconv.Atoi. */
function mustParseInt(expr: string): bigint {
  if (!/^[+-]?[0-9]+$/.test(expr)) throw new Error(`failed to parse int from ${expr}: strconv.Atoi: parsing ${goQuote(expr)}: invalid syntax`);
  const n = BigInt(expr);
  if (n > INT64_MAX || n < -INT64_MAX - 1n) throw new Error(`failed to parse int from ${expr}: strconv.Atoi: parsing ${goQuote(expr)}: value out of range`);
  if (n < 0n) throw new Error(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function parseIntOrName(expr: string, names: Record<string, number> | undefined): bigint {
  const named = names && Object.hasOwn(names, expr.toLowerCase()) ? names[expr.toLowerCase()] : undefined;
  return named !== undefined ? BigInt(named) : mustParseInt(expr);
}

function getRange(expr: string, r: Bounds, into: FieldSet): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0]!.split('-');
  const singleDigit = lowAndHigh.length === 1;
  let start: bigint;
  let end: bigint;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = BigInt(r.min);
    end = BigInt(r.max);
    star = true;
  } else {
    start = parseIntOrName(lowAndHigh[0]!, r.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1]!, r.names);
    else throw new Error(`too many hyphens: ${expr}`);
  }
  let step: bigint;
  if (rangeAndStep.length === 1) step = 1n;
  else if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1]!);
    // "N/step" means "N-max/step".
    if (singleDigit) end = BigInt(r.max);
    if (step > 1n) star = false;
  } else throw new Error(`too many slashes: ${expr}`);
  if (start < BigInt(r.min)) throw new Error(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
  if (end > BigInt(r.max)) throw new Error(`end of range (${end}) above maximum (${r.max}): ${expr}`);
  if (start > end) throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0n) throw new Error(`step of range should be a positive number: ${expr}`);
  for (let i = start; i <= end; i += step) into.bits.add(Number(i));
  into.star ||= star;
}

function getField(field: string, r: Bounds): FieldSet {
  const set: FieldSet = { bits: new Set(), star: false };
  for (const part of field.split(',').filter((p) => p !== '')) getRange(part, r, set);
  return set;
}

const all = (r: Bounds): FieldSet => getField('*', r);
const only = (r: Bounds, v: number): FieldSet => getField(String(v), r);

interface Spec {
  second: FieldSet;
  minute: FieldSet;
  hour: FieldSet;
  dom: FieldSet;
  month: FieldSet;
  dow: FieldSet;
}

/** Go's %q for the strings these messages quote (printable ASCII as is). */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

const durationUnits: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration in milliseconds, with its error messages. */
function parseGoDuration(s: string): number {
  const invalid = () => new Error(`time: invalid duration ${goQuote(s)}`);
  let rest = s;
  let sign = 1;
  if (rest[0] === '-' || rest[0] === '+') {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw invalid();
  let total = 0;
  while (rest !== '') {
    const m = /^([0-9]*)(\.[0-9]*)?/.exec(rest)!;
    if (m[0] === '' || m[0] === '.') throw invalid();
    rest = rest.slice(m[0].length);
    const unit = /^[^0-9.]*/.exec(rest)![0];
    if (unit === '') throw new Error(`time: missing unit in duration ${goQuote(s)}`);
    const scale = Object.hasOwn(durationUnits, unit) ? durationUnits[unit] : undefined;
    if (scale === undefined) throw new Error(`time: unknown unit ${goQuote(unit)} in duration ${goQuote(s)}`);
    rest = rest.slice(unit.length);
    total += Number(m[0]) * scale;
    // Go's Duration is an int64 of nanoseconds.
    if (total * 1e6 > 2 ** 63) throw invalid();
  }
  return sign * total;
}

function parseDescriptor(descriptor: string, zone: string): CronSchedule {
  const star = (r: Bounds) => all(r);
  const base = { second: only(SECONDS, 0), minute: only(MINUTES, 0), hour: only(HOURS, 0) };
  const specs: Record<string, Spec> = {
    '@yearly': { ...base, dom: only(DOM, 1), month: only(MONTHS, 1), dow: star(DOW) },
    '@monthly': { ...base, dom: only(DOM, 1), month: all(MONTHS), dow: star(DOW) },
    '@weekly': { ...base, dom: star(DOM), month: all(MONTHS), dow: only(DOW, 0) },
    '@daily': { ...base, dom: star(DOM), month: all(MONTHS), dow: star(DOW) },
    '@hourly': { ...base, hour: all(HOURS), dom: star(DOM), month: all(MONTHS), dow: star(DOW) },
  };
  specs['@annually'] = specs['@yearly']!;
  specs['@midnight'] = specs['@daily']!;
  if (Object.hasOwn(specs, descriptor)) return specSchedule(specs[descriptor]!, zone);
  const every = '@every ';
  if (descriptor.startsWith(every)) {
    let delay: number;
    try {
      delay = parseGoDuration(descriptor.slice(every.length));
    } catch (err) {
      throw new Error(`failed to parse duration ${descriptor}: ${(err as Error).message}`, { cause: err });
    }
    return constantDelay(delay);
  }
  throw new Error(`unrecognized descriptor: ${descriptor}`);
}

/** robfig's Every: at least a second, rounded down to whole seconds. */
function constantDelay(ms: number): CronSchedule {
  const delay = Math.max(1000, ms) - (Math.max(1000, ms) % 1000);
  return { next: (t) => t - (((t % 1000) + 1000) % 1000) + delay };
}

/**
 * cron.ParseStandard: "TZ=Zone " or "CRON_TZ=Zone " first (else the process's zone), then a
 * descriptor or five fields (minute hour day-of-month month day-of-week). Throws robfig's message.
 */
export function parseStandard(input: string): CronSchedule {
  if (input.length === 0) throw new Error('empty spec string');
  let spec = input;
  let zone = localZone();
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    const name = spec.slice(spec.indexOf('=') + 1, space < 0 ? undefined : space);
    const loc = loadLocation(name);
    if ('error' in loc) throw new Error(`provided bad location ${name}: ${loc.error}`);
    zone = loc.zone;
    spec = space < 0 ? '' : spec.slice(space).trim();
  }
  if (spec.startsWith('@')) return parseDescriptor(spec, zone);
  const fields = spec.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) throw new Error(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const [minute, hour, dom, month, dow] = fields as [string, string, string, string, string];
  return specSchedule(
    { second: only(SECONDS, 0), minute: getField(minute, MINUTES), hour: getField(hour, HOURS), dom: getField(dom, DOM), month: getField(month, MONTHS), dow: getField(dow, DOW) },
    zone,
  );
}

/** robfig's dayMatches: with a star in either day field both must match, else either may. */
function dayMatches(s: Spec, w: Wall): boolean {
  const domMatch = s.dom.bits.has(w.day);
  const dowMatch = s.dow.bits.has(weekday(w));
  return s.dom.star || s.dow.star ? domMatch && dowMatch : domMatch || dowMatch;
}

/** robfig's SpecSchedule.Next: field by field from the month down, wrapping to the next year. */
function specSchedule(s: Spec, zone: string): CronSchedule {
  const HOUR = 3_600_000;
  return {
    next(from: number): number {
      let t = Math.floor(from / 1000) * 1000 + 1000;
      let added = false;
      const yearLimit = wallOf(zone, t).year + 5;
      wrap: for (;;) {
        let w = wallOf(zone, t);
        if (w.year > yearLimit) return ZERO_TIME;
        while (!s.month.bits.has(w.month)) {
          if (!added) {
            added = true;
            t = dateIn(zone, { ...w, day: 1, hour: 0, minute: 0, second: 0 });
            w = wallOf(zone, t);
          }
          t = dateIn(zone, { ...w, month: w.month + 1 });
          w = wallOf(zone, t);
          if (w.month === 1) continue wrap;
        }
        while (!dayMatches(s, w)) {
          if (!added) {
            added = true;
            t = dateIn(zone, { ...w, hour: 0, minute: 0, second: 0 });
            w = wallOf(zone, t);
          }
          t = dateIn(zone, { ...w, day: w.day + 1 });
          w = wallOf(zone, t);
          // A DST change may leave the day not starting at midnight.
          if (w.hour !== 0) {
            t += w.hour > 12 ? (24 - w.hour) * HOUR : -w.hour * HOUR;
            w = wallOf(zone, t);
          }
          if (w.day === 1) continue wrap;
        }
        while (!s.hour.bits.has(w.hour)) {
          if (!added) {
            added = true;
            t = dateIn(zone, { ...w, minute: 0, second: 0 });
          }
          t += HOUR;
          w = wallOf(zone, t);
          if (w.hour === 0) continue wrap;
        }
        while (!s.minute.bits.has(w.minute)) {
          if (!added) {
            added = true;
            t = Math.floor(t / 60_000) * 60_000;
          }
          t += 60_000;
          w = wallOf(zone, t);
          if (w.minute === 0) continue wrap;
        }
        while (!s.second.bits.has(w.second)) {
          if (!added) {
            added = true;
            t = Math.floor(t / 1000) * 1000;
          }
          t += 1000;
          w = wallOf(zone, t);
          if (w.second === 0) continue wrap;
        }
        return t;
      }
    },
  };
}
