import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../../api/errors.js';
import { kubeletStreamPath, kubeletStreamQuery, podStreamOptionsFromQuery, portForwardQuery } from './stream.js';

test("PodExecOptions from kubectl's query, and the kubelet's query as upstream's streamParams writes it", () => {
  const opts = podStreamOptionsFromQuery(new URLSearchParams('command=sh&command=-c&command=echo a b&container=app&stdin=true&stdout=true&tty=true'));
  assert.deepEqual(opts, { container: 'app', command: ['sh', '-c', 'echo a b'], stdin: true, stdout: true, stderr: false, tty: true });
  assert.equal(kubeletStreamQuery(opts, true).toString(), 'command=sh&command=-c&command=echo+a+b&stdin=1&stdout=1&tty=1');
  // attach carries no command.
  assert.equal(kubeletStreamQuery(opts, false).toString(), 'stdin=1&stdout=1&tty=1');
  // Go's bool codec: "0", "f", "false" are false, anything else true.
  assert.deepEqual(podStreamOptionsFromQuery(new URLSearchParams('stdin=0&stdout=1&stderr=False&tty=yes')), { container: undefined, command: [], stdin: false, stdout: true, stderr: false, tty: true });
});

test('kubelet paths for exec, attach and portForward', () => {
  assert.equal(kubeletStreamPath('exec', 'default', 'web', 'app'), '/exec/default/web/app');
  assert.equal(kubeletStreamPath('attach', 'default', 'web', 'app'), '/attach/default/web/app');
  assert.equal(kubeletStreamPath('portforward', 'default', 'web', ''), '/portForward/default/web');
});

test("PodPortForwardOptions' ports: repeated and comma-separated values become the kubelet's one port value", () => {
  assert.equal(portForwardQuery(new URLSearchParams('ports=80,8080&ports=0443')).toString(), 'port=80%2C8080%2C443');
  assert.equal(portForwardQuery(new URLSearchParams('')).toString(), '');
});

test('PodPortForwardOptions: a port that is no uint16 is a 400 with the conversion error', () => {
  const table: [string, string][] = [
    ['ports=http', 'cannot convert to []int32: strconv.ParseUint: parsing "http": invalid syntax'],
    ['ports=', 'cannot convert to []int32: strconv.ParseUint: parsing "": invalid syntax'],
    ['ports=80,-1', 'cannot convert to []int32: strconv.ParseUint: parsing "-1": invalid syntax'],
    ['ports=65536', 'cannot convert to []int32: strconv.ParseUint: parsing "65536": value out of range'],
  ];
  for (const [query, message] of table) {
    assert.throws(
      () => portForwardQuery(new URLSearchParams(query)),
      (err: unknown) => err instanceof StatusError && err.code === 400 && err.reason === 'BadRequest' && err.message === message,
      query,
    );
  }
});
