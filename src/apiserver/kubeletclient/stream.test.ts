import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kubeletStreamPath, kubeletStreamQuery, podStreamOptionsFromQuery } from './stream.js';

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
