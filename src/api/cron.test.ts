import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadLocation, parseStandard, rfc3339In, ZERO_TIME } from './cron.js';

const at = (s: string) => Date.parse(s);
const iso = (t: number) => new Date(t).toISOString().replace('.000Z', 'Z');

function nexts(spec: string, from: string, n = 3): string[] {
  const s = parseStandard(spec);
  const out: string[] = [];
  for (let t = at(from), i = 0; i < n; i++) out.push(iso((t = s.next(t))));
  return out;
}

void test('next times as robfig/cron computes them', () => {
  const cases: [string, string, string[]][] = [
    ['TZ=UTC */1 * * * *', '2026-01-01T10:00:30Z', ['2026-01-01T10:01:00Z', '2026-01-01T10:02:00Z', '2026-01-01T10:03:00Z']],
    ['TZ=UTC */15 9-10 * * *', '2026-01-01T10:40:00Z', ['2026-01-01T10:45:00Z', '2026-01-02T09:00:00Z', '2026-01-02T09:15:00Z']],
    // A day-of-month and a day-of-week, neither a star: either one matches (13th or a Friday).
    ['TZ=UTC 0 9 13 * 5', '2026-03-01T00:00:00Z', ['2026-03-06T09:00:00Z', '2026-03-13T09:00:00Z', '2026-03-20T09:00:00Z']],
    // "*/2" has no star bit (a step above 1 clears it): still either one.
    ['TZ=UTC 0 0 */2 * mon', '2026-03-01T00:00:00Z', ['2026-03-02T00:00:00Z', '2026-03-03T00:00:00Z', '2026-03-05T00:00:00Z']],
    // A star in one of them: both must match.
    ['TZ=UTC 0 0 * * MON', '2026-03-01T00:00:00Z', ['2026-03-02T00:00:00Z', '2026-03-09T00:00:00Z', '2026-03-16T00:00:00Z']],
    ['TZ=UTC 0 12 1 jan,jul *', '2026-03-01T00:00:00Z', ['2026-07-01T12:00:00Z', '2027-01-01T12:00:00Z', '2027-07-01T12:00:00Z']],
    ['TZ=UTC @yearly', '2026-03-01T00:00:00Z', ['2027-01-01T00:00:00Z', '2028-01-01T00:00:00Z', '2029-01-01T00:00:00Z']],
    ['TZ=UTC @weekly', '2026-03-01T00:00:00Z', ['2026-03-08T00:00:00Z', '2026-03-15T00:00:00Z', '2026-03-22T00:00:00Z']],
    ['TZ=UTC @hourly', '2026-03-01T00:30:00Z', ['2026-03-01T01:00:00Z', '2026-03-01T02:00:00Z', '2026-03-01T03:00:00Z']],
    ['@every 1m30s', '2026-03-01T00:00:10.500Z', ['2026-03-01T00:01:40Z', '2026-03-01T00:03:10Z', '2026-03-01T00:04:40Z']],
    // 02:30 does not exist in New York on 8 March 2026 (DST starts): that day is skipped, as robfig does.
    ['TZ=America/New_York 30 2 * * *', '2026-03-07T12:00:00Z', ['2026-03-09T06:30:00Z', '2026-03-10T06:30:00Z', '2026-03-11T06:30:00Z']],
    ['CRON_TZ=Asia/Kolkata 0 0 * * *', '2026-03-07T12:00:00Z', ['2026-03-07T18:30:00Z', '2026-03-08T18:30:00Z', '2026-03-09T18:30:00Z']],
  ];
  for (const [spec, from, want] of cases) assert.deepEqual(nexts(spec, from), want, spec);
});

void test('a schedule that never fires gives the zero time', () => {
  assert.equal(parseStandard('TZ=UTC 59 23 31 2 *').next(at('2026-01-01T00:00:00Z')), ZERO_TIME);
});

void test("parse errors carry robfig's messages", () => {
  const cases: [string, string][] = [
    ['', 'empty spec string'],
    ['x', 'expected exactly 5 fields, found 1: [x]'],
    ['* * * * * *', 'expected exactly 5 fields, found 6: [* * * * * *]'],
    ['61 * * * *', 'end of range (61) above maximum (59): 61'],
    ['* 0-24 * * *', 'end of range (24) above maximum (23): 0-24'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['* * * * 7', 'end of range (7) above maximum (6): 7'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
    ['1/2/3 * * * *', 'too many slashes: 1/2/3'],
    ['a * * * *', 'failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax'],
    ['* * * foo *', 'failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax'],
    ['@foo', 'unrecognized descriptor: @foo'],
    ['@every 5', 'failed to parse duration @every 5: time: missing unit in duration "5"'],
    ['@every 5y', 'failed to parse duration @every 5y: time: unknown unit "y" in duration "5y"'],
    ['TZ=Mars/Olympus * * * * *', 'provided bad location Mars/Olympus: unknown time zone Mars/Olympus'],
  ];
  for (const [spec, message] of cases) assert.throws(() => parseStandard(spec), { message }, spec);
});

void test('time zones: IANA names with their case, RFC 3339 with the offset', () => {
  assert.deepEqual(loadLocation('Europe/Berlin'), { zone: 'Europe/Berlin' });
  assert.deepEqual(loadLocation(''), { zone: 'UTC' });
  assert.deepEqual(loadLocation('europe/berlin'), { error: 'unknown time zone europe/berlin' });
  assert.deepEqual(loadLocation('Nowhere/Town'), { error: 'unknown time zone Nowhere/Town' });
  assert.equal(rfc3339In(at('2026-07-01T10:00:00Z'), 'Europe/Berlin'), '2026-07-01T12:00:00+02:00');
  assert.equal(rfc3339In(at('2026-07-01T10:00:00Z'), 'UTC'), '2026-07-01T10:00:00Z');
  assert.equal(rfc3339In(at('2026-07-01T10:00:00Z'), 'America/St_Johns'), '2026-07-01T07:30:00-02:30');
});
