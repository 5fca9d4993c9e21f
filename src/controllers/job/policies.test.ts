import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodFailurePolicy } from 'kubernetes-types/batch/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { OrderedIntervals } from './indexes.js';
import { matchPodFailurePolicy, matchSuccessPolicy } from './policies.js';

const failed = (exitCodes: Record<string, number>, conditions: { type: string; status: string }[] = [], init: Record<string, number> = {}): Pod => {
  const statuses = (codes: Record<string, number>) =>
    Object.entries(codes).map(([name, exitCode]) => ({ name, image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode } } }));
  return { metadata: { name: 'p', namespace: 'ns' }, status: { phase: 'Failed', conditions, containerStatuses: statuses(exitCodes), initContainerStatuses: statuses(init) } };
};

test('matchPodFailurePolicy: the first matching rule decides, as upstream', () => {
  const policy: PodFailurePolicy = {
    rules: [
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
      { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
      { action: 'FailIndex', onExitCodes: { operator: 'In', values: [3] } },
      { action: 'Count', onExitCodes: { operator: 'NotIn', values: [1] } },
    ],
  };
  const cases: [string, Pod, { countFailed: boolean; action?: string; failJobMessage?: string }][] = [
    ['disruption ignored', failed({ main: 42 }, [{ type: 'DisruptionTarget', status: 'True' }]), { countFailed: false, action: 'Ignore' }],
    ['condition False does not match', failed({ main: 1 }, [{ type: 'DisruptionTarget', status: 'False' }]), { countFailed: true }],
    [
      'FailJob with its message',
      failed({ main: 42 }),
      { countFailed: true, action: 'FailJob', failJobMessage: 'Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1' },
    ],
    ['FailJob only for its container', failed({ side: 42 }), { countFailed: true, action: 'Count' }],
    ['FailIndex', failed({ main: 3 }), { countFailed: true, action: 'FailIndex' }],
    ['init containers too', failed({ main: 0 }, [], { init: 3 }), { countFailed: true, action: 'FailIndex' }],
    ['exit 0 never matches', failed({ main: 0 }), { countFailed: true }],
    ['no rule: counted', failed({ main: 1 }), { countFailed: true }],
  ];
  for (const [name, pod, want] of cases) assert.deepEqual(matchPodFailurePolicy(policy, pod), want, name);
  assert.deepEqual(matchPodFailurePolicy(undefined, failed({ main: 1 })), { countFailed: true });
  const onCondition = matchPodFailurePolicy({ rules: [{ action: 'FailJob', onPodConditions: [{ type: 'ConfigIssue', status: 'True' }] }] }, failed({ main: 1 }, [{ type: 'ConfigIssue', status: 'True' }]));
  assert.equal(onCondition.failJobMessage, 'Pod ns/p has condition ConfigIssue matching FailJob rule at index 0');
});

test('matchSuccessPolicy: succeededIndexes and succeededCount rules', () => {
  const succeeded = (s: string) => OrderedIntervals.parse(s, 10);
  const cases: [string, { succeededIndexes?: string; succeededCount?: number }[], string, string | undefined][] = [
    ['no succeeded', [{ succeededCount: 1 }], '', undefined],
    ['count met', [{ succeededCount: 2 }], '1,5', 'Matched rules at index 0'],
    ['count not met', [{ succeededCount: 3 }], '1,5', undefined],
    ['all the indexes', [{ succeededIndexes: '0-2' }], '0-3', 'Matched rules at index 0'],
    ['missing one', [{ succeededIndexes: '0-2' }], '0,2', undefined],
    ['some of the indexes', [{ succeededIndexes: '0-4', succeededCount: 2 }], '1,3', 'Matched rules at index 0'],
    ['second rule', [{ succeededIndexes: '7' }, { succeededCount: 1 }], '2', 'Matched rules at index 1'],
  ];
  for (const [name, rules, s, want] of cases) assert.equal(matchSuccessPolicy({ rules }, 10, succeeded(s)), want, name);
});
