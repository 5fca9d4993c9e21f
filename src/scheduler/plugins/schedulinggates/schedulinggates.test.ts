import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makePod } from '../../testing/builders.js';
import { SchedulingGates } from './schedulinggates.js';

describe('SchedulingGates', () => {
  const cases = [
    { name: 'no gates', pod: makePod().obj(), want: undefined },
    { name: 'one gate', pod: makePod().schedulingGates('a').obj(), want: 'waiting for scheduling gates: [a]' },
    { name: 'two gates', pod: makePod().schedulingGates('a', 'example.com/b').obj(), want: 'waiting for scheduling gates: [a example.com/b]' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const s = new SchedulingGates().preEnqueue(c.pod);
      assert.equal(s?.message(), c.want);
      if (s) assert.equal(s.code, 'UnschedulableAndUnresolvable');
    });
  }
});
