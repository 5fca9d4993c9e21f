import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goFormatFloat, renderText, type MetricDesc } from './prometheus.js';

test('goFormatFloat matches strconv.FormatFloat(f, g, -1, 64)', () => {
  const cases: [number, string][] = [
    [0, '0'],
    [1, '1'],
    [0.5, '0.5'],
    [100, '100'],
    [123456, '123456'],
    [1e6, '1e+06'],
    [12_000_000, '1.2e+07'],
    [11_718_656, '1.1718656e+07'],
    [1712345678.9012, '1.7123456789012e+09'],
    [14351.35261028, '14351.35261028'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [-2.5, '-2.5'],
    [1e21, '1e+21'],
    [NaN, 'NaN'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
  ];
  for (const [f, want] of cases) assert.equal(goFormatFloat(f), want, String(f));
});

const a: MetricDesc = { name: 'b_metric', help: 'Help with \\ and\nnewline', type: 'gauge', stability: 'ALPHA', labels: ['z', 'a'] };
const b: MetricDesc = { name: 'a_total', help: 'Counts', type: 'counter', stability: 'STABLE' };

test('renderText sorts families, label pairs and samples as client_golang does', () => {
  const text = renderText([
    { desc: a, labelValues: ['2', 'y'], value: 3, timestampMs: 1700000000123 },
    { desc: a, labelValues: ['1', 'y"q\\'], value: 12_000_000 },
    { desc: a, labelValues: ['9', 'x'], value: 0 },
    { desc: b, value: 1 },
  ]);
  assert.equal(
    text,
    [
      '# HELP a_total [STABLE] Counts',
      '# TYPE a_total counter',
      'a_total 1',
      '# HELP b_metric [ALPHA] Help with \\\\ and\\nnewline',
      '# TYPE b_metric gauge',
      'b_metric{a="x",z="9"} 0',
      'b_metric{a="y",z="2"} 3 1700000000123',
      'b_metric{a="y\\"q\\\\",z="1"} 1.2e+07',
      '',
    ].join('\n'),
  );
});

test('a family without samples is left out', () => {
  assert.equal(renderText([]), '');
});
