import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scaledValueFromIntOrPercent } from './intstr.js';

test('an IntOrString scales as upstream: integers as they are, percentages rounded up or down', () => {
  const cases: [number | string | undefined, number, boolean, number][] = [
    [3, 10, true, 3],
    ['25%', 10, true, 3],
    ['25%', 10, false, 2],
    ['100%', 7, true, 7],
    ['0%', 7, true, 0],
    [undefined, 5, true, 0],
  ];
  for (const [value, total, roundUp, want] of cases) assert.equal(scaledValueFromIntOrPercent(value, total, roundUp), want, `${value} of ${total}`);
  assert.throws(() => scaledValueFromIntOrPercent('abc', 10, true), { message: 'invalid value for IntOrString: invalid value "abc"' });
  assert.throws(() => scaledValueFromIntOrPercent('1.5%', 10, true), /invalid value "1.5%"/);
});
