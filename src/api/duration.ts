// Human-readable durations as kubectl shows them (AGE, LAST SEEN, "3 (2m ago)"), with the same
// thresholds as apimachinery's util/duration so kite's columns read exactly like upstream's.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Clock skew of up to two seconds (exclusive) reads as "0s"; anything further back is "<invalid>". */
function skew(ms: number): string | undefined {
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  return undefined;
}

/** One unit of precision: "45s", "10m", "5h", "3d", "2y". */
export function shortHumanDuration(ms: number): string {
  const skewed = skew(ms);
  if (skewed !== undefined) return skewed;
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.trunc(ms / HOUR);
  if (hours < 24) return `${hours}h`;
  if (hours < 24 * 365) return `${Math.trunc(hours / 24)}d`;
  return `${Math.trunc(ms / DAY / 365)}y`;
}

/** About two or three significant figures: "90s", "2m30s", "10m", "3h5m", "5d3h", "2y10d". */
export function humanDuration(ms: number): string {
  const skewed = skew(ms);
  if (skewed !== undefined) return skewed;
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

/** humanDuration from an RFC 3339 timestamp to now (ms since the epoch); "<unknown>" when unset. */
export function humanDurationSince(timestamp: string | undefined, now: number): string {
  const t = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

const durationUnits: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.Duration.String() for whole milliseconds: "0s", "500ms", "10s", "1m20s", "5m0s", "1h0m0s". */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** "1h2m3s", "500ms", "30s" (Go's time.ParseDuration for the usual units) as milliseconds. */
export function parseDuration(s: string): number {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * durationUnits[m[2]!]!;
    end = re.lastIndex;
  }
  if (end === 0 || end !== s.length) throw new Error(`invalid duration ${JSON.stringify(s)}`);
  return total;
}
