import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { RuntimeError, type PodSandbox, type PodSandboxFilter, type StreamingRequest } from '../runtime/types.js';
import { POD_UID_LABEL } from '../kuberuntime/labels.js';
import { portForwardPorts, remoteCommandOptions, runtimeStreamUrl, StreamingError, type StreamingHost } from './streaming.js';

const pod: Pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { containers: [{ name: 'app', tty: true }, { name: 'waiting' }, { name: 'plain' }] },
  status: {
    containerStatuses: [
      { name: 'app', ready: true, restartCount: 0, image: 'busybox', imageID: '', containerID: 'containerd://c-app', state: { running: {} } },
      { name: 'plain', ready: true, restartCount: 0, image: 'busybox', imageID: '', containerID: 'containerd://c-plain', state: { running: {} } },
      { name: 'waiting', ready: false, restartCount: 0, image: 'busybox', imageID: '', state: { waiting: { reason: 'ContainerCreating' } } },
    ],
  },
};

const sandbox = (id: string, createdAt: string): PodSandbox => ({
  id,
  metadata: { name: 'web', namespace: 'default', uid: 'u1', attempt: 0 },
  state: 'SANDBOX_READY',
  created_at: createdAt,
  labels: { [POD_UID_LABEL]: 'u1' },
  annotations: {},
});

/** A host whose runtime records each call and answers with a URL naming it. */
function host(opts: { sandboxes?: PodSandbox[]; failExec?: RuntimeError } = {}) {
  const calls: [string, StreamingRequest | PodSandboxFilter | undefined][] = [];
  const h: StreamingHost = {
    getPodByName: (ns, name) => (ns === 'default' && name === 'web' ? pod : undefined),
    runtime: {
      exec: async (req) => {
        calls.push(['exec', req]);
        if (opts.failExec) throw opts.failExec;
        return 'http://127.0.0.1:1/exec/t';
      },
      attach: async (req) => {
        calls.push(['attach', req]);
        return 'http://127.0.0.1:1/attach/t';
      },
      portForward: async (req) => {
        calls.push(['portForward', req]);
        return 'http://127.0.0.1:1/portforward/t';
      },
      listPodSandbox: async (filter) => {
        calls.push(['listPodSandbox', filter]);
        return opts.sandboxes ?? [];
      },
    },
  };
  return { h, calls };
}

const q = (s: string) => new URLSearchParams(s);

describe('runtimeStreamUrl', () => {
  it('exec: the running container, the command and the streams asked for (stderr dropped under a tty)', async () => {
    const { h, calls } = host();
    assert.equal(await runtimeStreamUrl(h, 'exec', ['exec', 'default', 'web', 'plain'], q('command=cat&command=/etc/hostname&stdout=1&stderr=1')), 'http://127.0.0.1:1/exec/t');
    assert.equal(await runtimeStreamUrl(h, 'exec', ['exec', 'default', 'web', 'u1', 'app'], q('command=sh&stdin=1&stdout=1&stderr=1&tty=1')), 'http://127.0.0.1:1/exec/t');
    assert.deepEqual(calls, [
      ['exec', { container_id: 'c-plain', cmd: ['cat', '/etc/hostname'], stdin: false, stdout: true, stderr: true, tty: false }],
      ['exec', { container_id: 'c-app', cmd: ['sh'], stdin: true, stdout: true, stderr: false, tty: true }],
    ]);
  });

  it("attach: the terminal follows the container's spec, not the request", async () => {
    const { h, calls } = host();
    await runtimeStreamUrl(h, 'attach', ['attach', 'default', 'web', 'app'], q('stdin=1&stdout=1'));
    await runtimeStreamUrl(h, 'attach', ['attach', 'default', 'web', 'plain'], q('stdin=1&stdout=1&tty=1'));
    assert.deepEqual(calls, [
      ['attach', { container_id: 'c-app', stdin: true, stdout: true, stderr: false, tty: true }],
      ['attach', { container_id: 'c-plain', stdin: true, stdout: true, stderr: false, tty: false }],
    ]);
  });

  const refusals: [string, Parameters<typeof runtimeStreamUrl>[1], string[], string, number, string][] = [
    ['no stream asked for', 'exec', ['exec', 'default', 'web', 'app'], 'command=ls&stdin=true', 400, 'you must specify at least 1 of stdin, stdout, stderr'],
    ['unknown pod', 'exec', ['exec', 'default', 'nope', 'app'], 'stdout=1', 404, 'pod does not exist'],
    ['a container that does not run', 'exec', ['exec', 'default', 'web', 'waiting'], 'stdout=1', 500, 'container not found ("waiting")'],
    ['a container not in the pod', 'attach', ['attach', 'default', 'web', 'x'], 'stdout=1', 500, 'container not found ("x")'],
    ['another pod UID', 'exec', ['exec', 'default', 'web', 'u2', 'app'], 'stdout=1', 500, 'container not found ("app")'],
    ['a path without a container', 'exec', ['exec', 'default', 'web'], 'stdout=1', 404, '404 page not found'],
    ['port-forward to an unknown pod', 'portForward', ['portForward', 'default', 'nope'], '', 404, 'pod does not exist'],
    ['port-forward with another UID', 'portForward', ['portForward', 'default', 'web', 'u2'], '', 404, 'pod not found'],
    ['port-forward without a ready sandbox', 'portForward', ['portForward', 'default', 'web'], '', 500, 'pod not found ("web_default")'],
  ];
  for (const [name, route, parts, query, code, message] of refusals) {
    it(`refuses: ${name}`, async () => {
      const { h, calls } = host();
      await assert.rejects(runtimeStreamUrl(h, route, parts, q(query)), (err: unknown) => {
        assert.ok(err instanceof StreamingError);
        assert.deepEqual([err.code, err.message], [code, message]);
        return true;
      });
      assert.ok(!calls.some(([m]) => m === 'exec' || m === 'attach' || m === 'portForward'), 'the runtime was not asked for a session');
    });
  }

  it('passes the runtime refusal on as upstream quotes it (NotFound is 404)', async () => {
    const { h } = host({ failExec: new RuntimeError('NOT_FOUND', 'container "c-plain" in namespace "k8s.io": not found') });
    await assert.rejects(runtimeStreamUrl(h, 'exec', ['exec', 'default', 'web', 'plain'], q('stdout=1')), {
      code: 404,
      message: 'rpc error: code = NotFound desc = container "c-plain" in namespace "k8s.io": not found',
    });
  });

  it("port-forward: the pod's newest ready sandbox, found by its UID label", async () => {
    const { h, calls } = host({ sandboxes: [sandbox('old', '1000'), sandbox('new', '3000'), sandbox('mid', '2000')] });
    assert.equal(await runtimeStreamUrl(h, 'portForward', ['portForward', 'default', 'web'], q('')), 'http://127.0.0.1:1/portforward/t');
    assert.deepEqual(calls, [
      ['listPodSandbox', { label_selector: { [POD_UID_LABEL]: 'u1' }, state: { state: 'SANDBOX_READY' } }],
      ['portForward', { pod_sandbox_id: 'new', port: [] }],
    ]);
  });

  it('port-forward over a WebSocket: the ports of the query go to the runtime with the session', async () => {
    const { h, calls } = host({ sandboxes: [sandbox('s', '1000')] });
    await runtimeStreamUrl(h, 'portForward', ['portForward', 'default', 'web'], q('port=80,8080&port=9090'), true);
    assert.deepEqual(calls.at(-1), ['portForward', { pod_sandbox_id: 's', port: [80, 8080, 9090] }]);
  });

  it('port-forward over a WebSocket refuses bad ports before looking for the pod', async () => {
    const { h, calls } = host();
    await assert.rejects(runtimeStreamUrl(h, 'portForward', ['portForward', 'default', 'nope'], q(''), true), { code: 400, message: 'query parameter "port" is required' });
    assert.deepEqual(calls, []);
  });
});

describe('portForwardPorts', () => {
  it('takes no ports from a SPDY request (they come per stream)', () => {
    assert.deepEqual(portForwardPorts(q('port=80'), false), []);
  });

  const refusals: [string, string][] = [
    ['', 'query parameter "port" is required'],
    ['port=', 'query parameter "port" cannot be empty'],
    ['port=http', 'unable to parse "http" as a port: strconv.ParseUint: parsing "http": invalid syntax'],
    ['port=80,', 'unable to parse "80," as a port: strconv.ParseUint: parsing "": invalid syntax'],
    ['port=-1', 'unable to parse "-1" as a port: strconv.ParseUint: parsing "-1": invalid syntax'],
    ['port=65536', 'unable to parse "65536" as a port: strconv.ParseUint: parsing "65536": value out of range'],
    ['port=0', 'port "0" must be > 0'],
  ];
  for (const [query, message] of refusals) {
    it(`refuses ${JSON.stringify(query)} with 400`, () => {
      assert.throws(() => portForwardPorts(q(query), true), (err: unknown) => err instanceof StreamingError && err.code === 400 && err.message === message);
    });
  }

  it('reads every value and every comma-separated port, in order', () => {
    assert.deepEqual(portForwardPorts(q('port=443&port=80,65535'), true), [443, 80, 65535]);
  });
});

describe('remoteCommandOptions', () => {
  it('takes only "1" as on, as the kubelet does', () => {
    assert.deepEqual(remoteCommandOptions(q('stdin=1&stdout=true&stderr=1')), { stdin: true, stdout: false, stderr: true, tty: false });
    assert.throws(() => remoteCommandOptions(q('stdout=true')), { code: 400 });
  });
});
