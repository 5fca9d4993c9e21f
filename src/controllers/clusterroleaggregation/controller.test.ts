import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ClusterRole } from '../../api/types.js';
import { aggregatedRules } from './controller.js';

const role = (name: string, labels: Record<string, string>, verbs: string[]): ClusterRole => ({
  metadata: { name, labels },
  rules: [{ verbs, apiGroups: [''], resources: ['pods'] }],
});

void describe('aggregatedRules', () => {
  const view: ClusterRole = { metadata: { name: 'view' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'to-view': 'true' } }, { matchLabels: { extra: 'true' } }] } };
  const roles = [view, role('b', { 'to-view': 'true' }, ['list']), role('a', { 'to-view': 'true' }, ['get']), role('c', { extra: 'true', 'to-view': 'true' }, ['get']), role('d', {}, ['delete'])];

  void it('gathers the matching roles\' rules by selector then name, each rule once', () => {
    assert.deepEqual(aggregatedRules(view, roles)?.map((r) => r.verbs), [['get'], ['list']]);
  });

  void it('leaves roles without an aggregationRule alone', () => {
    assert.equal(aggregatedRules(roles[1]!, roles), undefined);
  });

  void it('gathers nothing when nothing matches', () => {
    assert.deepEqual(aggregatedRules({ ...view, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { none: 'x' } }] } }, roles), []);
  });
});
