import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Container, Pod, Probe } from '../../api/types.js';
import { FakeClock } from '../../util/clock.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { RuntimeError, type ExecSyncResponse } from '../runtime/types.js';
import type { CommandRunner } from './exec.js';
import { HEALTH_CHECK_METHOD, decodeHealthCheckRequest, encodeHealthCheckResponse } from './grpc.js';
import { goQuote } from './goformat.js';
import { Prober, type ProbeType } from './prober.js';

const pod: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers: [] } };
const status = { podIP: '127.0.0.1' };

/** ExecSync answered by a function of the command. */
function runner(fn: (cmd: string[], timeout: number) => ExecSyncResponse | Error): CommandRunner & { calls: unknown[][] } {
  const calls: unknown[][] = [];
  return {
    calls,
    async execSync(id, cmd, timeout) {
      calls.push([id, cmd, timeout]);
      const r = fn(cmd, timeout);
      if (r instanceof Error) throw r;
      return r;
    },
  };
}

const out = (stdout: string, exit_code = 0, stderr = ''): ExecSyncResponse => ({ stdout: Buffer.from(stdout), stderr: Buffer.from(stderr), exit_code });

function setup(r: CommandRunner = runner(() => out(''))) {
  const clock = new FakeClock();
  const recorder = new FakeRecorder();
  return { clock, recorder, prober: new Prober({ runner: r, recorder, clock }) };
}

function container(type: ProbeType, probe: Probe, extra: Partial<Container> = {}): Container {
  const key = type === 'liveness' ? 'livenessProbe' : type === 'readiness' ? 'readinessProbe' : 'startupProbe';
  return { name: 'nginx', ...extra, [key]: probe };
}

async function probeOnce(probe: Probe, opts: { type?: ProbeType; runner?: CommandRunner; extra?: Partial<Container> } = {}) {
  const { prober, recorder } = setup(opts.runner);
  const type = opts.type ?? 'liveness';
  const res = await prober.probe(type, pod, status, container(type, probe, opts.extra), 'c1');
  return { res, events: recorder.events.map((e) => `${e.type} ${e.reason} ${e.message}`), recorder };
}

describe('exec probes', () => {
  const cases: { name: string; answer: ExecSyncResponse | Error; type?: ProbeType; want: string; events: string[] }[] = [
    { name: 'exit 0 succeeds', answer: out('ok'), want: 'Success', events: [] },
    { name: 'a non-zero exit fails with the output', answer: out('not yet\n', 1, 'err\n'), want: 'Failure', events: ['Warning Unhealthy Liveness probe failed: not yet\nerr\n'] },
    { name: 'readiness says so', type: 'readiness', answer: out('', 3), want: 'Failure', events: ['Warning Unhealthy Readiness probe failed: '] },
    { name: 'startup says so', type: 'startup', answer: out('', 3), want: 'Failure', events: ['Warning Unhealthy Startup probe failed: '] },
    {
      name: 'a runtime deadline is a timed-out command',
      answer: new RuntimeError('DEADLINE_EXCEEDED', 'context deadline exceeded'),
      want: 'Failure',
      events: ['Warning Unhealthy Liveness probe failed: command timed out: "sleep 10" timed out after 4s'],
    },
    {
      name: 'a runtime error is an errored probe',
      answer: new RuntimeError('NOT_FOUND', 'container "c1" not found'),
      want: 'Failure/error',
      events: ['Warning Unhealthy Liveness probe errored and resulted in unknown state: rpc error: code = NotFound desc = container "c1" not found'],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const r = runner(() => c.answer);
      const { res, events } = await probeOnce({ exec: { command: ['sleep', '10'] }, timeoutSeconds: 4 }, { type: c.type, runner: r });
      assert.equal(res.error ? `${res.result}/error` : res.result, c.want);
      assert.deepEqual(events, c.events);
      assert.deepEqual(r.calls[0], ['c1', ['sleep', '10'], 4], 'ExecSync gets the probe timeout');
      assert.equal(r.calls.length, res.error ? 3 : 1, 'an errored probe is tried three times');
    });
  }

  it('expands $(VAR) from the literal env only, with a 1 s default timeout', async () => {
    const r = runner(() => out(''));
    await probeOnce({ exec: { command: ['sh', '-c', 'test $(A) $(B) $(C)'] } }, { runner: r, extra: { env: [{ name: 'A', value: 'a' }, { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] } });
    assert.deepEqual(r.calls[0], ['c1', ['sh', '-c', 'test a  $(C)'], 1]);
  });

  it('keeps at most 10 KiB of output', async () => {
    const { events } = await probeOnce({ exec: { command: ['x'] } }, { runner: runner(() => out('y'.repeat(20_000), 1)) });
    assert.equal(events[0]!.length, 'Warning Unhealthy Liveness probe failed: '.length + 10 * 1024);
  });
});

describe('httpGet probes', () => {
  let server: http.Server;
  let port: number;
  const seen: http.IncomingHttpHeaders[] = [];
  let hang: () => void = () => {};
  before(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      const url = req.url ?? '/';
      if (url === '/hang') return hang();
      if (url === '/') return res.end('welcome');
      if (url === '/healthz') return res.writeHead(404).end('secret body');
      if (url === '/moved') return res.writeHead(301, { location: '/' }).end();
      if (url === '/away') return res.writeHead(302, { location: 'http://example.invalid/' }).end('see there');
      if (url.startsWith('/loop')) return res.writeHead(302, { location: `/loop${Number(url.slice(5) || 0) + 1}` }).end();
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('2xx succeeds, with upstream headers', async () => {
    seen.length = 0;
    const { res, events } = await probeOnce({ httpGet: { path: '/', port } });
    assert.equal(res.result, 'Success');
    assert.deepEqual(events, []);
    assert.equal(seen[0]!['user-agent'], 'kube-probe/1.33');
    assert.equal(seen[0]!.accept, '*/*');
    assert.equal(seen[0]!.host, `127.0.0.1:${port}`);
  });

  it('sends httpHeaders (User-Agent, Host and Accept overridable) and resolves a named port', async () => {
    seen.length = 0;
    const { res } = await probeOnce(
      { httpGet: { path: '/', port: 'web', httpHeaders: [{ name: 'x-custom', value: 'a' }, { name: 'User-Agent', value: 'mine' }, { name: 'Host', value: 'svc.local' }, { name: 'Accept', value: '' }] } },
      { extra: { ports: [{ name: 'web', containerPort: port }] } },
    );
    assert.equal(res.result, 'Success');
    assert.equal(seen[0]!['x-custom'], 'a');
    assert.equal(seen[0]!['user-agent'], 'mine');
    assert.equal(seen[0]!.host, 'svc.local');
    assert.equal(seen[0]!.accept, undefined);
  });

  const failures: { name: string; probe: () => Probe; events: () => string[]; error?: boolean }[] = [
    { name: '404 fails without the body', probe: () => ({ httpGet: { path: '/healthz', port } }), events: () => ['Warning Unhealthy Liveness probe failed: HTTP probe failed with statuscode: 404'] },
    { name: 'a same-host redirect is followed', probe: () => ({ httpGet: { path: '/moved', port } }), events: () => [] },
    { name: 'a redirect to another host succeeds with a warning', probe: () => ({ httpGet: { path: '/away', port } }), events: () => ['Warning ProbeWarning Liveness probe warning: Probe terminated redirects, Response body: see there'] },
    { name: 'redirects stop after 10', probe: () => ({ httpGet: { path: '/loop', port } }), events: () => ['Warning Unhealthy Liveness probe failed: Get "/loop10": stopped after 10 redirects'] },
    {
      name: 'a refused connection fails as Go says it',
      probe: () => ({ httpGet: { path: '/healthz', port: 1 } }),
      events: () => ['Warning Unhealthy Liveness probe failed: Get "http://127.0.0.1:1/healthz": dial tcp 127.0.0.1:1: connect: connection refused'],
    },
    {
      name: 'an unknown port name errors',
      probe: () => ({ httpGet: { path: '/', port: 'http' } }),
      events: () => ['Warning Unhealthy Liveness probe errored and resulted in unknown state: strconv.Atoi: parsing "http": invalid syntax'],
      error: true,
    },
  ];
  for (const c of failures) {
    it(c.name, async () => {
      const { res, events } = await probeOnce(c.probe());
      assert.deepEqual(events, c.events());
      assert.equal(res.error !== undefined, c.error ?? false);
    });
  }

  it('times out on the injected clock', async () => {
    const { prober, recorder, clock } = setup();
    const arrived = new Promise<void>((r) => (hang = r));
    const pending = prober.probe('readiness', pod, status, container('readiness', { httpGet: { path: '/hang', port }, timeoutSeconds: 2 }), 'c1');
    await arrived;
    await clock.advance(2_000);
    const output = `Get "http://127.0.0.1:${port}/hang": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`;
    assert.deepEqual(await pending, { result: 'Failure', output });
    assert.equal(recorder.events[0]!.message, `Readiness probe failed: ${output}`);
  });

  it('probes HTTPS without verifying the certificate', async () => {
    const { res, events } = await probeOnce({ httpGet: { path: '/', port, scheme: 'HTTPS' } });
    assert.equal(res.result, 'Failure');
    assert.deepEqual(events, [`Warning Unhealthy Liveness probe failed: Get "https://127.0.0.1:${port}/": http: server gave HTTP response to HTTPS client`]);
  });
});

describe('tcpSocket probes', () => {
  it('succeeds on an open port and fails on a closed one', async () => {
    const server = net.createServer((s) => s.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      assert.deepEqual((await probeOnce({ tcpSocket: { port } })).events, []);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
    const closed = await probeOnce({ tcpSocket: { port } }, { type: 'readiness' });
    assert.equal(closed.res.result, 'Failure');
    assert.deepEqual(closed.events, [`Warning Unhealthy Readiness probe failed: dial tcp 127.0.0.1:${port}: connect: connection refused`]);
  });
});

describe('grpc probes', () => {
  let server: grpc.Server;
  let port: number;
  const statuses: Record<string, number> = { '': 1, sick: 2 };
  let lastService = '';
  before(async () => {
    server = new grpc.Server();
    server.register(
      HEALTH_CHECK_METHOD,
      (call: grpc.ServerUnaryCall<{ service: string }, { status: number }>, cb: grpc.sendUnaryData<{ status: number }>) => {
        lastService = call.request.service;
        const s = statuses[call.request.service];
        if (s === undefined) return cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
        cb(null, { status: s });
      },
      encodeHealthCheckResponse,
      decodeHealthCheckRequest,
      'unary',
    );
    port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  });
  after(() => server.forceShutdown());

  it('SERVING succeeds', async () => {
    const { res, events } = await probeOnce({ grpc: { port } });
    assert.equal(res.result, 'Success');
    assert.deepEqual(events, []);
  });

  it('another status fails with upstream text, and the service name is sent', async () => {
    const { events } = await probeOnce({ grpc: { port, service: 'sick' } });
    assert.equal(lastService, 'sick');
    assert.deepEqual(events, ['Warning Unhealthy Liveness probe failed: service unhealthy (responded with "NOT_SERVING")']);
  });

  it('an RPC error fails as Go prints it', async () => {
    const { events } = await probeOnce({ grpc: { port, service: 'nope' } });
    assert.deepEqual(events, ['Warning Unhealthy Liveness probe failed: error: health rpc probe failed: rpc error: code = NotFound desc = unknown service']);
  });

  it('a refused connection', async () => {
    const { events } = await probeOnce({ grpc: { port: 1 } });
    assert.deepEqual(events, ['Warning Unhealthy Liveness probe failed: error: health rpc probe failed: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"']);
  });
});

describe('goQuote', () => {
  it('quotes as Go %q', () => {
    assert.equal(goQuote('a "b"\n\t\\'), '"a \\"b\\"\\n\\t\\\\"');
    assert.equal(goQuote('\x1b[0m é'), '"\\x1b[0m é"');
    assert.equal(goQuote(Buffer.from([0x61, 0xff])), '"a\\xff"');
    assert.equal(goQuote(''), '""');
  });
});
