import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState } from '../../framework/cycle-state.js';
import { makeNode, makePod } from '../../testing/builders.js';
import { nodeInfo } from '../../testing/plugins.js';
import { ERR_REASON, NodeName } from './nodename.js';

describe('NodeName', () => {
  const cases = [
    { name: 'no node name fits any node', pod: makePod().obj(), want: undefined },
    { name: 'the named node fits', pod: makePod().nodeName('node-1').obj(), want: undefined },
    { name: 'another node does not', pod: makePod().nodeName('node-2').obj(), want: ['UnschedulableAndUnresolvable', ERR_REASON] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const s = new NodeName().filter(new CycleState(), c.pod, nodeInfo(makeNode().name('node-1').obj()));
      assert.deepEqual(s && [s.code, s.message()], c.want);
    });
  }
});
