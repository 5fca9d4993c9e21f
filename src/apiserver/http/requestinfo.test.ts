import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo, pathSegmentNameErrors, splitRequestTarget } from './requestinfo.js';

const parse = (method: string, target: string) => {
  const { path, query } = splitRequestTarget(target);
  return parseRequestInfo(method, path, query);
};

describe('parseRequestInfo', () => {
  const cases: [string, string, Partial<ReturnType<typeof parse>>][] = [
    ['GET', '/api/v1/namespaces/default/pods', { verb: 'list', resource: 'pods', namespace: 'default', name: '' }],
    ['GET', '/api/v1/namespaces/default/pods?watch=true', { verb: 'watch', resource: 'pods', namespace: 'default' }],
    ['GET', '/api/v1/watch/namespaces/default/pods', { verb: 'watch', resource: 'pods', namespace: 'default' }],
    ['GET', '/api/v1/namespaces/default/pods/web', { verb: 'get', resource: 'pods', name: 'web' }],
    ['GET', '/api/v1/namespaces/default/pods/web/log', { verb: 'get', resource: 'pods', name: 'web', subresource: 'log' }],
    ['POST', '/api/v1/namespaces/default/pods/web/binding', { verb: 'create', subresource: 'binding', name: 'web' }],
    ['DELETE', '/api/v1/namespaces/default/pods', { verb: 'deletecollection', resource: 'pods' }],
    ['GET', '/api/v1/pods', { verb: 'list', resource: 'pods', namespace: '' }],
    ['GET', '/api/v1/namespaces', { verb: 'list', resource: 'namespaces', namespace: '' }],
    ['GET', '/api/v1/namespaces/kube-system', { verb: 'get', resource: 'namespaces', name: 'kube-system', namespace: 'kube-system' }],
    ['PUT', '/api/v1/namespaces/x/finalize', { verb: 'update', resource: 'namespaces', name: 'x', subresource: 'finalize' }],
    ['PATCH', '/apis/apps/v1/namespaces/d/deployments/x/scale', { verb: 'patch', apiGroup: 'apps', resource: 'deployments', subresource: 'scale' }],
    ['GET', '/apis/apps/v1', { isResourceRequest: false, apiGroup: 'apps', apiVersion: 'v1' }],
    ['GET', '/version', { isResourceRequest: false, verb: 'get' }],
    ['GET', '/api/v1/namespaces/default/pods?watch=True', { verb: 'watch' }],
    ['GET', '/api/v1/namespaces/default/pods?watch=yes', { verb: 'watch' }],
    ['GET', '/api/v1/namespaces/default/pods?watch=FALSE', { verb: 'list' }],
    ['GET', '/api/v1/namespaces/default/pods?watch=0', { verb: 'list' }],
    ['GET', '/api/v1/namespaces/default/pods/web?watch=t', { verb: 'watch', name: 'web' }],
    ['GET', '/api/v1/namespaces/default/pods/', { verb: 'list', resource: 'pods' }],
    ['GET', '/api/v1/namespaces/default/configmaps/a%3Ab', { verb: 'get', name: 'a:b' }],
  ];
  for (const [method, path, want] of cases) {
    it(`${method} ${path}`, () => {
      const got = parse(method, path);
      for (const [k, v] of Object.entries(want)) assert.equal((got as any)[k], v, k);
    });
  }
});

describe('path segments as sent', () => {
  const refused: [string, string, RegExp][] = [
    ['DELETE', '/api/v1/namespaces/x/pods/..', /^Name parameter invalid: "\.\.": may not be '\.\.'$/],
    ['GET', '/api/v1/namespaces/x/pods/.', /^Name parameter invalid: "\.": may not be '\.'$/],
    ['DELETE', '/api/v1/namespaces/x/pods/%2e%2e', /may not be '\.\.'/],
    ['DELETE', '/api/v1/namespaces/x/pods/%2E%2E/status', /may not be '\.\.'/],
    ['GET', '/api/v1/namespaces/x/pods/a%25b', /^Name parameter invalid: "a%b": may not contain '%'$/],
    ['GET', '/api/v1/namespaces/../pods', /^Namespace parameter invalid: "\.\.": may not be '\.\.'$/],
    ['GET', '/api/v1/namespaces/..', /^Name parameter invalid/],
    ['GET', '/api/v1/namespaces//pods/x', /^Namespace parameter required\.$/],
    ['GET', '/api/v1/namespaces/x/pods//status', /^Name parameter required\.$/],
  ];
  for (const [method, target, message] of refused) {
    it(`${method} ${target} is a 400`, () => {
      assert.throws(() => parse(method, target), (err: any) => err.code === 400 && err.reason === 'BadRequest' && message.test(err.message));
    });
  }
  it('an empty segment elsewhere routes nowhere', () => {
    assert.throws(() => parse('GET', '/api/v1/namespaces/x/pods/y//log'), (err: any) => err.code === 404);
  });
  it('a malformed escape is a 400 naming it', () => {
    assert.throws(() => splitRequestTarget('/api/v1/namespaces/x/pods/%zz'), (err: any) => err.code === 400 && err.message === 'invalid URL escape "%zz"');
    assert.throws(() => splitRequestTarget('/api/v1/pods/%'), (err: any) => err.code === 400 && err.message === 'invalid URL escape "%"');
    assert.throws(() => splitRequestTarget('/api/v1/pods/%ff'), (err: any) => err.code === 400);
  });
  it('dot segments are not resolved', () => {
    assert.equal(splitRequestTarget('/api/v1/namespaces/x/pods/../..?a=1').path, '/api/v1/namespaces/x/pods/../..');
  });
  it('pathSegmentNameErrors is upstream\'s IsValidPathSegmentName', () => {
    assert.deepEqual(pathSegmentNameErrors('ok'), []);
    assert.deepEqual(pathSegmentNameErrors('a/b%c'), ["may not contain '/'", "may not contain '%'"]);
  });
});
