import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Diagnosis, FitError } from './diagnosis.js';
import { Code, Status } from './status.js';

function diagnosis(statuses: [node: string, reasons: string[]][], extra: Partial<Diagnosis> = {}): Diagnosis {
  const d = new Diagnosis();
  for (const [node, reasons] of statuses) d.nodeToStatus.set(node, new Status(Code.Unschedulable, reasons));
  return Object.assign(d, extra);
}

describe('FitError message', () => {
  const taint = 'node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }';
  const cases: { name: string; nodes: number; d: Diagnosis; absent?: Status; want: string }[] = [
    {
      name: 'reasons counted and sorted',
      nodes: 3,
      d: diagnosis([
        ['a', ['Insufficient cpu']],
        ['b', [taint]],
        ['c', [taint]],
      ]),
      want: `0/3 nodes are available: 1 Insufficient cpu, 2 ${taint}.`,
    },
    {
      name: 'several reasons of one node each count',
      nodes: 2,
      d: diagnosis([
        ['a', ['Insufficient cpu', 'Insufficient memory']],
        ['b', ['Insufficient memory']],
      ]),
      want: '0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory.',
    },
    {
      name: 'sorted as strings, as Go does',
      nodes: 12,
      d: diagnosis([...Array.from({ length: 10 }, (_, i) => [`a${i}`, ['x']] as [string, string[]]), ['b', ['y']], ['c', ['y']]]),
      want: '0/12 nodes are available: 10 x, 2 y.',
    },
    {
      name: 'PreFilter message replaces per-node reasons',
      nodes: 3,
      d: diagnosis([['a', ['ignored']]], { preFilterMsg: 'pod affinity terms conflict' }),
      want: '0/3 nodes are available: pod affinity terms conflict.',
    },
    {
      name: 'absent nodes share the absent status',
      nodes: 3,
      d: diagnosis([['a', ['Insufficient cpu']]]),
      absent: Status.of(Code.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) [NodeAffinity]"),
      want: "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].",
    },
    {
      name: 'PostFilter message appended',
      nodes: 3,
      d: diagnosis([['a', ['Insufficient cpu']], ['b', ['Insufficient cpu']], ['c', ['Insufficient cpu']]], {
        postFilterMsg: 'preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
      }),
      want: '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      if (c.absent) c.d.nodeToStatus.absentNodesStatus = c.absent;
      assert.equal(new FitError(c.nodes, c.d).message, c.want);
    });
  }
});
