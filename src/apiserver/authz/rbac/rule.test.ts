import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PolicyRule } from '../../../api/types.js';
import type { AuthorizationAttributes } from '../authorizer.js';
import { compactRules, compactString, ruleAllows, uncoveredRules } from './rule.js';

const user = { name: 'u', groups: [] };
const res = (verb: string, group: string, resource: string, subresource = '', name = ''): AuthorizationAttributes => ({
  user, verb, isResourceRequest: true, path: '', namespace: 'ns', apiGroup: group, apiVersion: 'v1', resource, subresource, name,
});
const path = (verb: string, p: string): AuthorizationAttributes => ({
  user, verb, isResourceRequest: false, path: p, namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '',
});

void describe('ruleAllows', () => {
  const cases: [string, PolicyRule, AuthorizationAttributes, boolean][] = [
    ['exact', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('get', '', 'pods'), true],
    ['other verb', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('list', '', 'pods'), false],
    ['verb *', { verbs: ['*'], apiGroups: [''], resources: ['pods'] }, res('delete', '', 'pods'), true],
    ['other group', { verbs: ['get'], apiGroups: [''], resources: ['deployments'] }, res('get', 'apps', 'deployments'), false],
    ['group *', { verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] }, res('get', 'apps', 'deployments'), true],
    ['resource does not grant its subresource', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('get', '', 'pods', 'log'), false],
    ['pods/log', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, res('get', '', 'pods', 'log'), true],
    ['pods/log does not grant pods', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, res('get', '', 'pods'), false],
    ['*/scale', { verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }, res('get', 'apps', 'deployments', 'scale'), true],
    ['*/scale is not */status', { verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }, res('get', 'apps', 'deployments', 'status'), false],
    ['*/scale is not the resource', { verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }, res('get', 'apps', 'deployments'), false],
    ['resource *', { verbs: ['get'], apiGroups: [''], resources: ['*'] }, res('get', '', 'pods', 'log'), true],
    ['named', { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, res('get', '', 'configmaps', '', 'a'), true],
    ['other name', { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, res('get', '', 'configmaps', '', 'b'), false],
    ['names do not grant a list', { verbs: ['list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, res('list', '', 'configmaps'), false],
    ['url exact', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, path('get', '/healthz'), true],
    ['url prefix *', { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }, path('get', '/healthz/etcd'), true],
    ['url prefix * is not the parent', { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }, path('get', '/healthz'), false],
    ['url *', { verbs: ['get'], nonResourceURLs: ['*'] }, path('get', '/anything'), true],
    ['url verb', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, path('post', '/healthz'), false],
    ['a resource rule never grants a path', { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, path('get', '/api'), false],
    ['a url rule never grants a resource', { verbs: ['*'], nonResourceURLs: ['*'] }, res('get', '', 'pods'), false],
  ];
  for (const [name, rule, attrs, want] of cases) void it(name, () => assert.equal(ruleAllows(attrs, rule), want));
});

void describe('uncoveredRules', () => {
  const owner: PolicyRule[] = [
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', '*/scale'] },
    { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
    { verbs: ['get'], nonResourceURLs: ['/logs/*'] },
  ];
  const cases: [string, PolicyRule, PolicyRule[]][] = [
    ['covered', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, []],
    ['a verb missing', { verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }, [{ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }]],
    ['*/scale covers a scale subresource', { verbs: ['get'], apiGroups: [''], resources: ['replicationcontrollers/scale'] }, []],
    ['a name within the owner\'s names', { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, []],
    ['all names are more than some', { verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }, [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }]],
    ['url under a prefix', { verbs: ['get'], nonResourceURLs: ['/logs/x'] }, []],
  ];
  for (const [name, rule, want] of cases) void it(name, () => assert.deepEqual(uncoveredRules(owner, [rule]), want));
});

void describe('compactRules and compactString', () => {
  void it('joins the verbs of one resource and prints as upstream', () => {
    const rules = compactRules([
      { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] },
      { verbs: ['list'], apiGroups: ['apps'], resources: ['deployments'] },
      { verbs: ['get'], nonResourceURLs: ['/x'] },
    ]);
    assert.deepEqual(rules.map(compactString), ['{NonResourceURLs:["/x"], Verbs:["get"]}', '{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}']);
  });
});
