import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { SubjectAccessReview } from 'kubernetes-types/authorization/v1.js';
import { FakeClock } from '../../util/clock.js';
import { allowedTtlMs, deniedTtlMs, DelegatingKubeletAuthorizer, forbiddenMessage, subresourceOf, verbOf } from './auth.js';

/** A fake API server: answers from `allow` and records each review it got. */
function fakeServer(allow: (review: SubjectAccessReview) => boolean | Error) {
  const reviews: SubjectAccessReview[] = [];
  const create = async (review: SubjectAccessReview): Promise<SubjectAccessReview> => {
    reviews.push(review);
    const answer = allow(review);
    if (answer instanceof Error) throw answer;
    return { ...review, status: { allowed: answer } };
  };
  return { reviews, create };
}

const bob = { name: 'bob', groups: ['dev', 'system:authenticated'], uid: '7' };

void describe('request attributes', () => {
  const paths: [string, string][] = [
    ['stats', 'stats'],
    ['metrics', 'metrics'],
    ['logs', 'log'],
    ['spec', 'spec'],
    ['pods', 'pods'],
    ['healthz', 'healthz'],
    ['configz', 'configz'],
    ['checkpoint', 'checkpoint'],
    ['containerLogs', 'proxy'],
    ['exec', 'proxy'],
    ['portForward', 'proxy'],
  ];
  for (const [first, want] of paths) void it(`/${first} is nodes/${want}`, () => assert.equal(subresourceOf(first), want));
  void it('maps methods to verbs', () => {
    assert.deepEqual(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].map(verbOf), ['get', 'get', 'create', 'update', 'patch', 'delete']);
  });
  void it("words a refusal as upstream's kubelet", () => {
    assert.equal(forbiddenMessage({ user: bob, verb: 'create', subresource: 'proxy', name: 'n1' }), 'Forbidden (user=bob, verb=create, resource=nodes, subresource=proxy)');
  });
});

void describe('DelegatingKubeletAuthorizer', () => {
  void it('asks with the user and the nodes attributes', async () => {
    const server = fakeServer(() => true);
    assert.equal(await new DelegatingKubeletAuthorizer(server.create, new FakeClock()).authorize({ user: { ...bob, extra: { k: ['v'] } }, verb: 'get', subresource: 'stats', name: 'n1' }), true);
    assert.deepEqual(server.reviews, [
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'bob', uid: '7', groups: ['dev', 'system:authenticated'], extra: { k: ['v'] }, resourceAttributes: { verb: 'get', version: 'v1', resource: 'nodes', subresource: 'stats', name: 'n1' } },
      },
    ]);
  });

  void it('keeps an allowed answer 5 minutes and a denied one 30 seconds', async () => {
    const clock = new FakeClock();
    let allowed = true;
    const server = fakeServer(() => allowed);
    const authorizer = new DelegatingKubeletAuthorizer(server.create, clock);
    const stats = { user: bob, verb: 'get', subresource: 'stats', name: 'n1' };
    assert.equal(await authorizer.authorize(stats), true);
    allowed = false;
    await clock.advance(allowedTtlMs - 1);
    assert.equal(await authorizer.authorize(stats), true, 'cached');
    assert.equal(server.reviews.length, 1);
    await clock.advance(1);
    assert.equal(await authorizer.authorize(stats), false, 'expired: asked again');
    allowed = true;
    await clock.advance(deniedTtlMs - 1);
    assert.equal(await authorizer.authorize(stats), false, 'denial cached');
    await clock.advance(1);
    assert.equal(await authorizer.authorize(stats), true);
    assert.equal(server.reviews.length, 3);
    // Another subresource or user is another question.
    await authorizer.authorize({ ...stats, subresource: 'metrics' });
    await authorizer.authorize({ ...stats, user: { name: 'bob', groups: [] } });
    assert.equal(server.reviews.length, 5);
  });

  void it('lets proxy cover the fine-grained subresources, not the others', async () => {
    const server = fakeServer((r) => r.spec.resourceAttributes?.subresource === 'proxy');
    const authorizer = new DelegatingKubeletAuthorizer(server.create, new FakeClock());
    assert.equal(await authorizer.authorize({ user: bob, verb: 'get', subresource: 'healthz', name: 'n1' }), true);
    assert.equal(await authorizer.authorize({ user: bob, verb: 'get', subresource: 'pods', name: 'n1' }), true);
    const fine = server.reviews.map((r) => r.spec.resourceAttributes?.subresource);
    assert.deepEqual(fine, ['healthz', 'proxy', 'pods']);
    assert.equal(await authorizer.authorize({ user: bob, verb: 'get', subresource: 'stats', name: 'n1' }), false);
  });

  void it('does not cache a failed review', async () => {
    let fail = true;
    const server = fakeServer(() => (fail ? new Error('connection refused') : true));
    const authorizer = new DelegatingKubeletAuthorizer(server.create, new FakeClock());
    const attrs = { user: bob, verb: 'get', subresource: 'log', name: 'n1' };
    await assert.rejects(authorizer.authorize(attrs), /connection refused/);
    fail = false;
    assert.equal(await authorizer.authorize(attrs), true);
  });
});
