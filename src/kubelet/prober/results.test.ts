import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ResultsManager, type ResultUpdate } from './results.js';

describe('ResultsManager', () => {
  it('announces changes only, and stops announcing once disposed', () => {
    const m = new ResultsManager();
    const seen: ResultUpdate[] = [];
    const sub = m.onChange((u) => seen.push(u));
    m.set('c1', 'Success', 'u1');
    m.set('c1', 'Success', 'u1');
    m.set('c1', 'Failure', 'u1');
    assert.deepEqual(seen, [
      { containerID: 'c1', result: 'Success', podUID: 'u1' },
      { containerID: 'c1', result: 'Failure', podUID: 'u1' },
    ]);
    assert.equal(m.get('c1'), 'Failure');
    m.remove('c1');
    assert.equal(m.get('c1'), undefined);
    sub.dispose();
    m.set('c1', 'Success', 'u1');
    assert.equal(seen.length, 2);
  });
});
