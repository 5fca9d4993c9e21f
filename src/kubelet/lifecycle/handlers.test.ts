import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Container, Pod } from '../../api/types.js';
import { FakeClock } from '../../util/clock.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { FakeRuntime } from '../runtime/fake/fake.js';
import { RuntimeError, type ExecSyncResponse } from '../runtime/types.js';
import { HandlerRunner, runtimePodIP, type LifecycleHandler } from './handlers.js';

const pod: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'uid-1' }, spec: { containers: [] } };

function setup(exec: (cmd: string[], timeout: number) => Promise<ExecSyncResponse>, podIP: string | undefined = '127.0.0.1') {
  const clock = new FakeClock();
  const recorder = new FakeRecorder();
  const calls: [string, string[], number][] = [];
  const hooks = new HandlerRunner({
    runner: {
      execSync: (id, cmd, timeout) => {
        calls.push([id, cmd, timeout]);
        return exec(cmd, timeout);
      },
    },
    recorder,
    clock,
    podIP: async () => podIP,
  });
  return { clock, recorder, hooks, calls, events: () => recorder.events.map((e) => `${e.type} ${e.reason} ${e.message} ${e.object.fieldPath ?? ''}`.trim()) };
}

const exitWith = (exit_code: number, stdout = '', stderr = '') => async (): Promise<ExecSyncResponse> => ({ stdout: Buffer.from(stdout), stderr: Buffer.from(stderr), exit_code });

function withHook(kind: 'postStart' | 'preStop', handler: LifecycleHandler): Container {
  return { name: 'nginx', lifecycle: { [kind]: handler } };
}

describe('HandlerRunner.run messages', () => {
  let server: http.Server;
  let port: number;
  const paths: string[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      paths.push(`${req.url} ${req.headers['user-agent']}`);
      res.writeHead(req.url === '/missing' ? 404 : 200).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const cases: { name: string; handler: () => LifecycleHandler; exec?: (cmd: string[], timeout: number) => Promise<ExecSyncResponse>; podIP?: string; want: () => string | undefined }[] = [
    { name: 'exec success', handler: () => ({ exec: { command: ['/bin/sh', '-c', 'echo started > /tmp/flag'] } }), exec: exitWith(0), want: () => undefined },
    {
      name: 'exec exit 1',
      handler: () => ({ exec: { command: ['/bin/sh', '-c', 'exit 1'] } }),
      exec: exitWith(1),
      want: () => 'Exec lifecycle hook ([/bin/sh -c exit 1]) for Container "nginx" in Pod "web_default(uid-1)" failed - error: command \'/bin/sh -c exit 1\' exited with 1: , message: ""',
    },
    {
      name: 'exec exit with output',
      handler: () => ({ exec: { command: ['check'] } }),
      exec: exitWith(2, 'out\n', 'bad "thing"\n'),
      want: () => 'Exec lifecycle hook ([check]) for Container "nginx" in Pod "web_default(uid-1)" failed - error: command \'check\' exited with 2: bad "thing"\n, message: "out\\nbad \\"thing\\"\\n"',
    },
    {
      name: 'exec runtime error',
      handler: () => ({ exec: { command: ['x'] } }),
      exec: async () => {
        throw new RuntimeError('UNKNOWN', 'failed to exec in container: container is in CONTAINER_EXITED state');
      },
      want: () => 'Exec lifecycle hook ([x]) for Container "nginx" in Pod "web_default(uid-1)" failed - error: rpc error: code = Unknown desc = failed to exec in container: container is in CONTAINER_EXITED state, message: ""',
    },
    { name: 'httpGet to the pod IP; any response will do', handler: () => ({ httpGet: { path: '/missing', port } }), want: () => undefined },
    {
      name: 'httpGet refused',
      handler: () => ({ httpGet: { path: '/hook', port: 1 } }),
      want: () => 'HTTP lifecycle hook (/hook) for Container "nginx" in Pod "web_default(uid-1)" failed - error: Get "http://127.0.0.1:1/hook": dial tcp 127.0.0.1:1: connect: connection refused',
    },
    {
      name: 'httpGet without a pod IP',
      handler: () => ({ httpGet: { path: '/hook', port: 80 } }),
      podIP: '',
      want: () => 'HTTP lifecycle hook (/hook) for Container "nginx" in Pod "web_default(uid-1)" failed - error: failed to find networking container: pod web_default(uid-1) has no IP',
    },
    { name: 'sleep 0', handler: () => ({ sleep: { seconds: 0 } }), want: () => undefined },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { hooks, clock } = setup(c.exec ?? exitWith(0), c.podIP ?? '127.0.0.1');
      const pending = hooks.run(pod, { name: 'nginx' }, 'c1', c.handler());
      await clock.advance(0);
      assert.equal(await pending, c.want());
    });
  }

  it('httpGet sends the kube-lifecycle User-Agent', async () => {
    paths.length = 0;
    const { hooks } = setup(exitWith(0));
    assert.equal(await hooks.run(pod, { name: 'nginx' }, 'c1', { httpGet: { path: '/hook', port } }), undefined);
    assert.deepEqual(paths, ['/hook kube-lifecycle/1.33']);
  });

  it('an HTTPS hook answered in HTTP is retried in HTTP, with an event', async () => {
    paths.length = 0;
    const { hooks, events } = setup(exitWith(0));
    assert.equal(await hooks.run(pod, { name: 'nginx' }, 'c1', { httpGet: { path: '/tls', port, scheme: 'HTTPS' } }), undefined);
    assert.deepEqual(paths, ['/tls kube-lifecycle/1.33']);
    assert.deepEqual(events(), [`Warning LifecycleHTTPFallback request to HTTPS lifecycle hook 127.0.0.1:${port} got HTTP response, retry with HTTP succeeded`]);
  });

  it('a sleep aborted early fails as upstream', async () => {
    const { hooks, clock } = setup(exitWith(0));
    const ac = new AbortController();
    const pending = hooks.run(pod, { name: 'nginx' }, 'c1', { sleep: { seconds: 10 } }, { signal: ac.signal });
    await clock.advance(3_000);
    ac.abort();
    assert.equal(await pending, 'Sleep lifecycle hook (10) for Container "nginx" in Pod "web_default(uid-1)" failed - error: container terminated before sleep hook finished');
  });
});

describe('postStart', () => {
  it('records FailedPostStartHook without the output and returns the message', async () => {
    const { hooks, events, calls } = setup(exitWith(1, 'secret'));
    const msg = await hooks.runPostStart(pod, withHook('postStart', { exec: { command: ['false'] } }), 'c1');
    assert.match(msg ?? '', /^Exec lifecycle hook \(\[false\]\)/);
    assert.deepEqual(events(), ['Warning FailedPostStartHook PostStartHook failed spec.containers{nginx}']);
    assert.equal(calls[0]![2], 0, 'postStart exec runs without a timeout');
  });

  it('is quiet on success and without a hook', async () => {
    const { hooks, events } = setup(exitWith(0));
    assert.equal(await hooks.runPostStart(pod, withHook('postStart', { exec: { command: ['true'] } }), 'c1'), undefined);
    assert.equal(await hooks.runPostStart(pod, { name: 'nginx' }, 'c1'), undefined);
    assert.deepEqual(events(), []);
  });
});

describe('preStop', () => {
  it('returns the whole seconds the hook used', async () => {
    const { hooks, clock, events } = setup(exitWith(0));
    const pending = hooks.runPreStop(pod, withHook('preStop', { sleep: { seconds: 5 } }), 'c1', 30);
    await clock.advance(5_000);
    assert.deepEqual(await pending, { elapsedSeconds: 5 });
    assert.deepEqual(events(), []);
    assert.equal(clock.pending(), 0, 'the grace timer is gone');
  });

  it('gives up at the end of the grace period without an event', async () => {
    const { hooks, clock, events } = setup(exitWith(0));
    const pending = hooks.runPreStop(pod, withHook('preStop', { sleep: { seconds: 600 } }), 'c1', 30);
    await clock.advance(30_000);
    assert.deepEqual(await pending, { elapsedSeconds: 30 });
    assert.deepEqual(events(), []);
    assert.equal(clock.pending(), 0, 'the abandoned sleep is cancelled');
  });

  it('passes the grace period as the exec timeout and records FailedPreStopHook', async () => {
    const { hooks, events, calls } = setup(exitWith(137));
    assert.deepEqual(await hooks.runPreStop(pod, withHook('preStop', { exec: { command: ['nginx', '-s', 'quit'] } }), 'c1', 20), { elapsedSeconds: 0 });
    assert.deepEqual(calls, [['c1', ['nginx', '-s', 'quit'], 20]]);
    assert.deepEqual(events(), ['Warning FailedPreStopHook PreStopHook failed spec.containers{nginx}']);
  });

  it('runs nothing without a hook or without grace', async () => {
    const { hooks, calls } = setup(exitWith(0));
    assert.deepEqual(await hooks.runPreStop(pod, { name: 'nginx' }, 'c1', 30), { elapsedSeconds: 0 });
    assert.deepEqual(await hooks.runPreStop(pod, withHook('preStop', { exec: { command: ['x'] } }), 'c1', 0), { elapsedSeconds: 0 });
    assert.equal(calls.length, 0);
  });
});

describe('runtimePodIP', () => {
  it('reads the IP of the pod ready sandbox', async () => {
    const clock = new FakeClock();
    const runtime = new FakeRuntime(clock);
    assert.equal(await runtimePodIP(runtime)(pod), undefined);
    await runtime.runPodSandbox({ metadata: { name: 'web', namespace: 'default', uid: 'uid-1', attempt: 0 }, labels: { 'io.kubernetes.pod.uid': 'uid-1' } });
    const ip = await runtimePodIP(runtime)(pod);
    assert.match(ip ?? '', /^\d+\.\d+\.\d+\.\d+$/);
  });
});
