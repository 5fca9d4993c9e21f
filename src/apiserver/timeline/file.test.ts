import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rowsOfText, rowsText, type TimelineRow } from './file.js';

test("rowsText: the writer thread's rows survive their one-text form, whatever their strings hold", () => {
  const rows: TimelineRow[] = [
    { uid: 'u1', head: JSON.stringify({ pod: { name: 'web' } }), steps: JSON.stringify([{ step: 'Ready', detail: 'tab\there, newline\nthere' }]), rewrite: true },
    { uid: 'u2\t\n"odd"', head: JSON.stringify({ pod: { name: 'x' } }) },
    { uid: 'u3' },
  ];
  const text = rowsText(rows);
  assert.equal(text.split('\n').length, 3, 'a line per row');
  assert.deepEqual(rowsOfText(text), rows);
  assert.deepEqual(rowsOfText(rowsText([])), []);
});
