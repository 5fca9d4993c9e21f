// The CRI container log format the runtime writes, one record per line:
//   <RFC3339Nano timestamp> <stdout|stderr> <F|P>[:more tags] <message>
// F ends a logical line; P is a fragment of a line longer than the runtime's buffer, continued by
// the next record.

export type LogStream = 'stdout' | 'stderr';

/** A timestamp as written (its own UTC offset kept, as Go keeps a parsed time's location) with nanosecond precision. */
export interface LogTime {
  /** Nanoseconds since the epoch. */
  nanos: bigint;
  /** "2026-01-01T00:00:00" part, the digits of the fraction, and the zone ("Z" or "+02:00"). */
  civil: string;
  fraction: string;
  zone: string;
}

export interface LogMessage {
  timestamp: LogTime;
  stream: LogStream;
  partial: boolean;
  /** The message bytes: a full line keeps its trailing newline, a fragment has none. */
  log: Buffer;
}

const timePattern = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

export function parseLogTime(text: string): LogTime {
  const m = timePattern.exec(text);
  const ms = m ? Date.parse(`${m[1]}${m[3]}`) : NaN;
  if (!m || Number.isNaN(ms)) throw new Error(`unexpected timestamp format ${JSON.stringify(text)}`);
  const fraction = m[2] ?? '';
  return { nanos: BigInt(ms) * 1_000_000n + BigInt(fraction.padEnd(9, '0')), civil: m[1]!, fraction, zone: m[3]! };
}

/** RFC3339NanoFixed ("2006-01-02T15:04:05.000000000Z07:00"): what `kubectl logs --timestamps` prints. */
export function formatLogTimeFixed(t: LogTime): string {
  return `${t.civil}.${t.fraction.padEnd(9, '0')}${t.zone}`;
}

/** Parses one record (with or without its newline); throws on a malformed one. */
export function parseCriLine(line: Buffer): LogMessage {
  const sp1 = line.indexOf(0x20);
  if (sp1 < 0) throw new Error(`timestamp is not found in ${JSON.stringify(line.toString())}`);
  const timestamp = parseLogTime(line.subarray(0, sp1).toString('latin1'));
  const sp2 = line.indexOf(0x20, sp1 + 1);
  if (sp2 < 0) throw new Error(`stream type is not found in ${JSON.stringify(line.toString())}`);
  const stream = line.subarray(sp1 + 1, sp2).toString('latin1');
  if (stream !== 'stdout' && stream !== 'stderr') throw new Error(`unexpected stream type ${JSON.stringify(stream)}`);
  const sp3 = line.indexOf(0x20, sp2 + 1);
  if (sp3 < 0) throw new Error(`log format error: timestamp/stream/tag/log ${JSON.stringify(line.toString())}`);
  const tag = line.subarray(sp2 + 1, sp3).toString('latin1').split(':')[0];
  const partial = tag === 'P';
  let end = line.length;
  if (partial && line[end - 1] === 0x0a) end--;
  return { timestamp, stream, partial, log: line.subarray(sp3 + 1, end) };
}

/** One record as the runtime writes it (for fakes and tests): time is RFC3339Nano; every record ends in a newline. */
export function formatCriLine(time: string, stream: LogStream, message: string, partial = false): string {
  return `${time} ${stream} ${partial ? 'P' : 'F'} ${message}\n`;
}
