import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { aggregateMessage } from '../../api/field.js';
import { podLogOptionsFromQuery, podLogOptionsToQuery, validatePodLogOptions } from '../../api/validation/podlogoptions.js';
import { kubeletEndpoint, responseError } from './client.js';
import { logContainer } from './podlog.js';

const pod = (containers: string[], init: string[] = []): Pod => ({
  metadata: { name: 'web' },
  spec: { containers: containers.map((name) => ({ name })), initContainers: init.map((name) => ({ name })) },
});

test('logContainer defaults and checks the container as upstream\'s ValidateContainer', () => {
  assert.equal(logContainer(pod(['a']), undefined), 'a');
  assert.equal(logContainer(pod(['a', 'b'], ['c']), 'c'), 'c');
  assert.throws(() => logContainer(pod(['a', 'b'], ['c']), undefined), {
    code: 400,
    message: 'a container name must be specified for pod web, choose one of: [a b] or one of the init containers: [c]',
  });
  assert.throws(() => logContainer(pod(['a']), 'x'), { code: 400, message: 'container x is not valid for pod web' });
});

test('PodLogOptions decode, validate and re-encode', () => {
  const q = new URLSearchParams('container=c&follow=true&previous=0&tailLines=5&limitBytes=10&sinceTime=2026-01-01T00:00:00.5Z&timestamps=1');
  const opts = podLogOptionsFromQuery(q);
  assert.deepEqual(opts, { container: 'c', follow: true, previous: false, timestamps: true, tailLines: 5, limitBytes: 10, sinceTime: '2026-01-01T00:00:00Z' });
  assert.equal(podLogOptionsToQuery(opts).toString(), 'follow=true&timestamps=true&sinceTime=2026-01-01T00%3A00%3A00Z&tailLines=5&limitBytes=10');
  assert.throws(() => podLogOptionsFromQuery(new URLSearchParams('tailLines=x')), /invalid syntax/);
  const cases: [object, string][] = [
    [{ tailLines: -1 }, 'tailLines: Invalid value: -1: must be greater than or equal to 0'],
    [{ limitBytes: 0 }, 'limitBytes: Invalid value: 0: must be greater than 0'],
    [{ sinceSeconds: 0 }, 'sinceSeconds: Invalid value: 0: must be greater than 0'],
    [{ sinceSeconds: 5, sinceTime: '2026-01-01T00:00:00Z' }, '[]: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified'],
  ];
  for (const [o, want] of cases) assert.equal(aggregateMessage(validatePodLogOptions(o)), want);
  assert.deepEqual(validatePodLogOptions({ tailLines: 0, limitBytes: 1, sinceSeconds: 1 }), []);
});

test('kubeletEndpoint: InternalIP and the reported port; no port or a simulated node means no kubelet', () => {
  const node = (port: number): Node => ({
    status: { addresses: [{ type: 'Hostname', address: 'n1' }, { type: 'InternalIP', address: '10.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } },
  });
  assert.deepEqual(kubeletEndpoint(node(10250)), { host: '10.0.0.1', port: 10250 });
  assert.equal(kubeletEndpoint(node(0)), undefined);
  assert.equal(kubeletEndpoint({ ...node(10250), metadata: { annotations: { 'kwok.x-k8s.io/node': 'fake' } } }), undefined, 'a simulated node is never dialled');
});

test('kubelet answers become API errors as upstream\'s GenericHttpResponseChecker', () => {
  const r = { group: '', resource: 'pods/log' };
  assert.deepEqual([responseError(400, 'bad', r, 'web').code, responseError(400, 'bad', r, 'web').message], [400, 'bad']);
  assert.equal(responseError(500, 'boom', r, 'web').message, 'Internal error occurred: boom');
  assert.equal(responseError(404, 'pod "web" does not exist', r, 'web').message, 'the server could not find the requested resource ( pods/log web)');
  assert.equal(responseError(403, 'Forbidden (user=x)', r, 'web').message, 'Forbidden (user=x) ( pods/log web)');
  assert.equal(responseError(502, 'gw', r, 'web').message, 'an error on the server ("gw") has prevented the request from succeeding ( pods/log web)');
});
