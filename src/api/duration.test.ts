import { test } from 'node:test';
import assert from 'node:assert/strict';
import { humanDuration, humanDurationSince, shortHumanDuration } from './duration.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;
const y = 365 * d;

void test('humanDuration follows upstream thresholds', () => {
  const cases: [number, string][] = [
    [-2 * s, '<invalid>'],
    [-1999, '0s'], // less than two seconds of skew
    [-1 * s, '0s'],
    [0, '0s'],
    [5 * s, '5s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [2 * m + 30 * s, '2m30s'],
    [9 * m + 59 * s, '9m59s'],
    [10 * m + 30 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [3 * h + 5 * m, '3h5m'],
    [7 * h + 59 * m, '7h59m'],
    [8 * h + 30 * m, '8h'],
    [47 * h, '47h'],
    [2 * d, '2d'],
    [5 * d + 3 * h, '5d3h'],
    [7 * d + 23 * h, '7d23h'],
    [8 * d + 5 * h, '8d'],
    [729 * d, '729d'],
    [2 * y, '2y'],
    [2 * y + 10 * d, '2y10d'],
    [7 * y + 364 * d, '7y364d'],
    [8 * y + 100 * d, '8y'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms}ms`);
});

void test('shortHumanDuration keeps one unit', () => {
  const cases: [number, string][] = [
    [-5 * s, '<invalid>'],
    [-1 * s, '0s'],
    [59 * s, '59s'],
    [60 * s, '1m'],
    [59 * m + 59 * s, '59m'],
    [23 * h + 59 * m, '23h'],
    [364 * d, '364d'],
    [365 * d, '1y'],
    [3 * y + 200 * d, '3y'],
  ];
  for (const [ms, want] of cases) assert.equal(shortHumanDuration(ms), want, `${ms}ms`);
});

void test('humanDurationSince parses RFC 3339 and reports unset or unparsable times as <unknown>', () => {
  const now = Date.parse('2025-01-01T00:10:00Z');
  const cases: [string | undefined, string][] = [
    ['2025-01-01T00:00:00Z', '10m'],
    ['2025-01-01T00:07:30.500000Z', '2m29s'],
    ['2025-01-01T02:00:00+02:00', '10m'],
    [undefined, '<unknown>'],
    ['', '<unknown>'],
    ['yesterday', '<unknown>'],
  ];
  for (const [ts, want] of cases) assert.equal(humanDurationSince(ts, now), want, String(ts));
});
