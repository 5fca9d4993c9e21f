import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { FakeRuntime } from '../runtime/fake/fake.js';
import { CONTAINER_NAME_LABEL, CONTAINER_RESTART_COUNT_ANNOTATION, CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL } from './labels.js';
import { getPodRuntimeState, listPodRuntimeStates } from './runtime-state.js';

test('runtime state: grouped by pod UID, newest first, restart counts and termination messages read back', async () => {
  const clock = new FakeClock();
  const rt = new FakeRuntime(clock);
  rt.addImage('busybox');
  const labels = (uid: string) => ({ [POD_NAME_LABEL]: `p-${uid}`, [POD_NAMESPACE_LABEL]: 'default', [POD_UID_LABEL]: uid });
  const sb = await rt.runPodSandbox({ metadata: { name: 'p-a', namespace: 'default', uid: 'a', attempt: 0 }, labels: labels('a') });
  const other = await rt.runPodSandbox({ metadata: { name: 'p-b', namespace: 'default', uid: 'b', attempt: 0 }, labels: labels('b') });
  const make = async (sandbox: string, uid: string, attempt: number) => {
    const id = await rt.createContainer(
      sandbox,
      {
        metadata: { name: 'app', attempt },
        image: { image: 'busybox' },
        labels: { ...labels(uid), [CONTAINER_NAME_LABEL]: 'app' },
        annotations: { [CONTAINER_RESTART_COUNT_ANNOTATION]: String(attempt), [CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION]: '/dev/termination-log' },
        mounts: [{ container_path: '/dev/termination-log', host_path: `/host/${uid}/${attempt}` }],
      },
      { metadata: { name: '', namespace: '', uid, attempt: 0 } },
    );
    await rt.startContainer(id);
    return id;
  };
  const first = await make(sb, 'a', 0);
  await clock.advance(5000);
  rt.exitContainer(first, 3);
  const second = await make(sb, 'a', 1);
  await make(other, 'b', 0);

  const state = await getPodRuntimeState(rt, 'a', { readTerminationMessage: async (p) => (p === '/host/a/0' ? 'boom' : undefined) });
  assert.deepEqual(
    state.containers.map((c) => [c.id, c.state, c.restartCount]),
    [
      [second, 'CONTAINER_RUNNING', 1],
      [first, 'CONTAINER_EXITED', 0],
    ],
  );
  assert.equal(state.containers[1]!.message, 'boom');
  assert.equal(state.containers[1]!.exitCode, 3);
  assert.equal(state.containers[1]!.finishedAt, clock.now());
  assert.equal(state.containers[0]!.imageRef.startsWith('docker.io/library/busybox@sha256:'), true);
  assert.deepEqual(state.sandboxes.map((s) => [s.id, s.state, s.ips]), [[sb, 'SANDBOX_READY', ['10.88.0.2']]]);
  assert.equal(state.name, 'p-a');

  const all = await listPodRuntimeStates(rt);
  assert.deepEqual([...all.keys()].sort(), ['a', 'b']);
  assert.deepEqual((await getPodRuntimeState(rt, 'zzz')).containers, []);
});

test('fake runtime: failNext injects one error, then the call works', async () => {
  const rt = new FakeRuntime(new FakeClock());
  rt.failNext('version', new Error('down'));
  await assert.rejects(rt.version(), /down/);
  assert.equal((await rt.version()).runtime_name, 'fake');
  assert.equal(rt.callsOf('version').length, 2);
});
