import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo } from './requestinfo.js';

const parse = (method: string, path: string) => parseRequestInfo(method, new URL(path, 'https://x'));

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
  ];
  for (const [method, path, want] of cases) {
    it(`${method} ${path}`, () => {
      const got = parse(method, path);
      for (const [k, v] of Object.entries(want)) assert.equal((got as any)[k], v, k);
    });
  }
});
