import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState } from '../../framework/cycle-state.js';
import { QueueingHint } from '../../framework/events.js';
import { makeNode, makePod } from '../../testing/builders.js';
import { nodeInfo } from '../../testing/plugins.js';
import { ERR_REASON, NodePorts } from './nodeports.js';

describe('NodePorts', () => {
  const cases = [
    { name: 'free port', used: [makePod().hostPort(8080)], want: makePod().hostPort(8081), fits: true },
    { name: 'same port and protocol', used: [makePod().hostPort(8080)], want: makePod().hostPort(8080), fits: false },
    { name: 'same port, other protocol', used: [makePod().hostPort(8080, 'UDP')], want: makePod().hostPort(8080), fits: true },
    { name: 'distinct addresses', used: [makePod().hostPort(8080, 'TCP', '10.0.0.1')], want: makePod().hostPort(8080, 'TCP', '10.0.0.2'), fits: true },
    { name: 'wildcard wanted, address used', used: [makePod().hostPort(8080, 'TCP', '10.0.0.1')], want: makePod().hostPort(8080), fits: false },
    { name: 'address wanted, wildcard used', used: [makePod().hostPort(8080, 'TCP', '0.0.0.0')], want: makePod().hostPort(8080, 'TCP', '10.0.0.1'), fits: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pl = new NodePorts();
      const state = new CycleState();
      const pod = c.want.obj();
      assert.deepEqual(pl.preFilter(state, pod), {});
      const s = pl.filter(state, pod, nodeInfo(makeNode().obj(), ...c.used.map((b) => b.obj())));
      assert.equal(s === undefined, c.fits);
      if (s) assert.deepEqual([s.code, s.message()], ['Unschedulable', ERR_REASON]);
    });
  }

  it('skips pods without host ports', () => {
    assert.equal(new NodePorts().preFilter(new CycleState(), makePod().obj()).status?.code, 'Skip');
  });

  it('requeues on the deletion of a pod holding a wanted port only', () => {
    const [podDelete] = new NodePorts().eventsToRegister();
    const pod = makePod().hostPort(8080).obj();
    assert.equal(podDelete!.queueingHintFn!(pod, makePod().hostPort(8080).obj(), undefined), QueueingHint.Queue);
    assert.equal(podDelete!.queueingHintFn!(pod, makePod().hostPort(9090).obj(), undefined), QueueingHint.QueueSkip);
  });
});
