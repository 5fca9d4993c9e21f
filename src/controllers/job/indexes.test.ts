import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { completionIndex, firstPendingIndexes, OrderedIntervals, podGenerateNameWithIndex } from './indexes.js';

test('OrderedIntervals: parse, merge and print as upstream ("0-2,4,6,7")', () => {
  const cases: { text: string; completions: number; add: number[]; want: string; total: number }[] = [
    { text: '', completions: 5, add: [], want: '', total: 0 },
    { text: '', completions: 10, add: [0, 1, 2, 4, 6, 7], want: '0-2,4,6,7', total: 6 },
    { text: '1,3-5', completions: 10, add: [2], want: '1-5', total: 5 },
    // Out of order is not valid input: merging keeps the first interval, as upstream's.
    { text: '3-5,1', completions: 10, add: [], want: '3-5', total: 3 },
    { text: '0-8', completions: 4, add: [], want: '0-3', total: 4 },
    { text: '2,x,4-y,6', completions: 7, add: [], want: '2,6', total: 2 },
    { text: '1,5', completions: 3, add: [], want: '1', total: 1 },
    { text: '7', completions: 10, add: [7, 8], want: '7,8', total: 2 },
  ];
  for (const c of cases) {
    const got = OrderedIntervals.parse(c.text, c.completions).withOrderedIndexes(c.add);
    assert.equal(got.toString(), c.want, c.text);
    assert.equal(got.total(), c.total, c.text);
  }
  const s = OrderedIntervals.parse('1,3-5', 10);
  assert.deepEqual([0, 1, 2, 3, 5, 6].map((i) => s.has(i)), [false, true, false, true, true, false]);
  assert.equal(s.merge(OrderedIntervals.parse('0,6-7', 10)).toString(), '0,1,3-7');
});

test('firstPendingIndexes skips those succeeded, running or failed', () => {
  const cases: [string, number, number, number[]][] = [
    ['', 3, 3, [0, 1, 2]],
    ['0,2', 5, 4, [1, 3]],
    ['1-3', 2, 6, [0, 4]],
    ['0-4', 3, 5, []],
  ];
  for (const [nonPending, count, completions, want] of cases) assert.deepEqual(firstPendingIndexes(OrderedIntervals.parse(nonPending, completions), count, completions), want, nonPending);
});

test('completionIndex: the annotation, or -1 when absent, invalid or negative', () => {
  const pod = (v?: string): Pod => ({ metadata: v === undefined ? {} : { annotations: { 'batch.kubernetes.io/job-completion-index': v } } });
  assert.deepEqual([pod('3'), pod(), pod('x'), pod('-1'), pod('0')].map(completionIndex), [3, -1, -1, -1, 0]);
});

test('podGenerateNameWithIndex cuts long Job names so the suffix still fits', () => {
  assert.equal(podGenerateNameWithIndex('pi', 4), 'pi-4-');
  const long = podGenerateNameWithIndex('a'.repeat(60), 12);
  assert.equal(long.length, 58);
  assert.ok(long.endsWith('a-12-'));
});
