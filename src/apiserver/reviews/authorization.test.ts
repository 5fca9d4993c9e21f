import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../api/errors.js';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from '../authz/authorizer.js';
import type { RuleResolver } from '../authz/rules.js';
import { localSubjectAccessReview, selfSubjectAccessReview, selfSubjectRulesReview, subjectAccessReview } from './authorization.js';

/** Allows bob to get pods, denies mallory everything, fails for "broken", has no opinion otherwise; records what it was asked. */
function fakeAuthorizer(asked: AuthorizationAttributes[] = []): Authorizer {
  return {
    authorize: async (a): Promise<AuthorizationResult> => {
      asked.push(a);
      if (a.user.name === 'broken') throw new Error('webhook unreachable');
      if (a.user.name === 'mallory') return { decision: 'deny', reason: 'denied by policy' };
      if (a.user.name === 'bob' && a.verb === 'get' && a.resource === 'pods') return { decision: 'allow', reason: 'bound' };
      return { decision: 'noOpinion' };
    },
  };
}

const sar = (spec: object, metadata: object = {}) => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata, spec }) as never;
const podGet = { resourceAttributes: { namespace: 'ns', verb: 'get', resource: 'pods', name: 'p' } };

async function statusError(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    if (isStatusError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  assert.fail('expected a StatusError');
}

void describe('SubjectAccessReview', () => {
  const answers: [string, object, object][] = [
    ['allowed with the reason', { user: 'bob', ...podGet }, { allowed: true, reason: 'bound' }],
    ['no opinion is not allowed', { user: 'alice', ...podGet }, { allowed: false }],
    ['denied', { user: 'mallory', ...podGet }, { allowed: false, denied: true, reason: 'denied by policy' }],
    ['an evaluation error is reported', { user: 'broken', ...podGet }, { allowed: false, evaluationError: 'webhook unreachable' }],
    ['groups alone name a subject', { groups: ['g'], nonResourceAttributes: { path: '/x', verb: 'get' } }, { allowed: false }],
  ];
  for (const [name, spec, status] of answers) {
    void it(name, async () => {
      const review = await subjectAccessReview(fakeAuthorizer(), sar(spec));
      assert.deepEqual(review.status, status);
      assert.deepEqual(review.spec, spec);
    });
  }

  void it('asks about exactly the spec (no authenticated group is added)', async () => {
    const asked: AuthorizationAttributes[] = [];
    await subjectAccessReview(fakeAuthorizer(asked), sar({ user: 'u', groups: ['g'], uid: '1', extra: { k: ['v'] }, resourceAttributes: { namespace: 'ns', verb: 'update', group: 'apps', version: 'v1', resource: 'deployments', subresource: 'scale', name: 'd' } }));
    assert.deepEqual(asked[0], {
      user: { name: 'u', groups: ['g'], uid: '1', extra: { k: ['v'] } },
      verb: 'update', isResourceRequest: true, path: '', namespace: 'ns', apiGroup: 'apps', apiVersion: 'v1', resource: 'deployments', subresource: 'scale', name: 'd',
    });
    await subjectAccessReview(fakeAuthorizer(asked), sar({ user: 'u', nonResourceAttributes: { path: '/healthz', verb: 'get' } }));
    assert.equal(asked[1]!.isResourceRequest, false);
    assert.equal(asked[1]!.path, '/healthz');
  });

  const invalid: [string, object, object, string][] = [
    ['no subject', podGet, {}, 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified'],
    ['no attributes', { user: 'u' }, {}, 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified'],
    [
      'both attributes',
      { user: 'u', ...podGet, nonResourceAttributes: { path: '/', verb: 'get' } },
      {},
      'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: map[string]string{"path":"/", "verb":"get"}: cannot be specified in combination with resourceAttributes',
    ],
    ['metadata', { user: 'u', ...podGet }, { name: 'x' }, 'SubjectAccessReview.authorization.k8s.io "" is invalid: metadata: Invalid value: map[string]string{"name":"x"}: must be empty'],
  ];
  for (const [name, spec, metadata, message] of invalid) {
    void it(`refuses ${name}`, async () => {
      assert.deepEqual(await statusError(subjectAccessReview(fakeAuthorizer(), sar(spec, metadata))), { code: 422, message });
    });
  }
});

void describe('LocalSubjectAccessReview', () => {
  const local = (namespace: string, spec: object) => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace }, spec }) as never;
  void it('answers in its namespace', async () => {
    const review = await localSubjectAccessReview(fakeAuthorizer(), 'ns', local('ns', { user: 'bob', ...podGet }));
    assert.deepEqual(review.status, { allowed: true, reason: 'bound' });
  });
  const refused: [string, string, object, number, string][] = [
    [
      'a spec namespace other than its own',
      'ns',
      { user: 'bob', resourceAttributes: { namespace: 'other', verb: 'get', resource: 'pods' } },
      422,
      'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace',
    ],
    [
      'non-resource attributes',
      'ns',
      { user: 'bob', nonResourceAttributes: { path: '/', verb: 'get' } },
      422,
      'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: map[string]string{"path":"/", "verb":"get"}: disallowed on this kind of request',
    ],
  ];
  for (const [name, namespace, spec, code, message] of refused) {
    void it(`refuses ${name}`, async () => {
      assert.deepEqual(await statusError(localSubjectAccessReview(fakeAuthorizer(), 'ns', local(namespace, spec))), { code, message });
    });
  }
  void it('refuses an object of another namespace than the request', async () => {
    const err = await statusError(localSubjectAccessReview(fakeAuthorizer(), 'ns', local('other', { user: 'bob', resourceAttributes: { namespace: 'other', verb: 'get', resource: 'pods' } })));
    assert.deepEqual(err, { code: 400, message: 'spec.resourceAttributes.namespace must match namespace: ns' });
  });
});

void describe('SelfSubjectAccessReview', () => {
  void it('asks about the requester', async () => {
    const asked: AuthorizationAttributes[] = [];
    const bob = { name: 'bob', groups: ['system:authenticated'] };
    const review = await selfSubjectAccessReview(fakeAuthorizer(asked), bob, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: podGet });
    assert.deepEqual(review.status, { allowed: true, reason: 'bound' });
    assert.deepEqual(asked[0]!.user, bob);
  });
  void it('needs exactly one kind of attributes', async () => {
    const err = await statusError(selfSubjectAccessReview(fakeAuthorizer(), { name: 'bob', groups: [] }, { spec: {} }));
    assert.equal(err.message, 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified');
  });
});

void describe('SelfSubjectRulesReview', () => {
  const user = { name: 'bob', groups: ['system:authenticated'] };
  const review = (namespace?: string) => ({ apiVersion: 'authorization.k8s.io/v1' as const, kind: 'SelfSubjectRulesReview' as const, spec: { namespace } });
  void it('is incomplete and empty without a rule resolver', async () => {
    const answer = await selfSubjectRulesReview(undefined, user, review('default'));
    assert.deepEqual(answer.status, { resourceRules: [], nonResourceRules: [], incomplete: true });
  });
  void it("lists the resolver's rules for the requester and namespace", async () => {
    const asked: [string, string][] = [];
    const resolver: RuleResolver = {
      rulesFor: async (u, ns) => {
        asked.push([u.name, ns]);
        return { resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api'] }], incomplete: false };
      },
    };
    const answer = await selfSubjectRulesReview(resolver, user, review('ns'));
    assert.deepEqual(asked, [['bob', 'ns']]);
    assert.deepEqual(answer.status, { resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api'] }], incomplete: false });
  });
  void it('reports a failing resolver as incomplete with its error', async () => {
    const resolver: RuleResolver = { rulesFor: async () => Promise.reject(new Error('no cache')) };
    const answer = await selfSubjectRulesReview(resolver, user, review('ns'));
    assert.deepEqual(answer.status, { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'no cache' });
  });
  void it('needs a namespace', async () => {
    assert.deepEqual(await statusError(selfSubjectRulesReview(undefined, user, review())), { code: 400, message: 'no namespace on request' });
  });
});
