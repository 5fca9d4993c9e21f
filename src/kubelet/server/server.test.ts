import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { ensurePki, issueClientCertificate, issueServingCertificate, type CertKeyPair, type Pki } from '../../apiserver/authn/pki.js';
import { realClock } from '../../util/clock.js';
import { formatCriLine } from '../logs/cri.js';
import { RuntimeError, type ContainerStatus, type StreamingRequest } from '../runtime/types.js';
import { KubeletServer, type KubeletHost } from './server.js';
import { DelegatingKubeletAuthorizer } from './auth.js';
import { validateContainerLogStatus } from './containerlogs.js';
import { createServer, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket } from 'ws';
import { FakeStreamingServer } from '../../streaming/testing.js';
import { acceptWebSocket, translateRemoteCommand } from '../../streaming/remotecommand/translate.js';
import { Channel, WS_PROTOCOL_V5 } from '../../streaming/remotecommand/constants.js';
import { dialUpgrade, type UpgradeFailedError } from '../../streaming/upgrade.js';
import type { StatsProvider } from '../stats/types.js';
import { KubeletMetrics } from '../metrics/metrics.js';

let dir: string;
let pki: Pki;
let otherPki: Pki;
let server: KubeletServer;
const metrics = new KubeletMetrics();
const running = new Set(['c-now']);
/** The API server's answer as upstream's default policy gives it: admins and the API server's kubelet client. */
const reviewed: string[] = [];
const reviewedGroups = new Set<string>();
const authorizer = new DelegatingKubeletAuthorizer(async (review) => {
  const { user, groups, resourceAttributes: r } = review.spec;
  reviewed.push(`${user} ${r?.verb} ${r?.resource}/${r?.subresource} ${r?.name}`);
  for (const g of groups ?? []) reviewedGroups.add(g);
  return { ...review, status: { allowed: user === 'kube-apiserver-kubelet-client' || (groups ?? []).includes('system:masters') } };
}, realClock);

const pod: Pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { nodeName: 'n1', containers: [{ name: 'nginx' }, { name: 'waiting' }], initContainers: [{ name: 'init' }] },
  status: {
    containerStatuses: [
      {
        name: 'nginx',
        ready: true,
        restartCount: 1,
        image: 'nginx',
        imageID: '',
        containerID: 'containerd://c-now',
        state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
        lastState: { terminated: { exitCode: 1, containerID: 'containerd://c-old' } },
      },
      { name: 'waiting', ready: false, restartCount: 0, image: 'x', imageID: '', state: { waiting: { reason: 'ContainerCreating' } } },
    ],
  },
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kite-kubeletsrv-'));
  pki = await ensurePki(join(dir, 'pki'));
  otherPki = await ensurePki(join(dir, 'other'));
  await writeFile(join(dir, 'now.log'), formatCriLine('2026-01-01T00:00:01Z', 'stdout', 'current 1') + formatCriLine('2026-01-01T00:00:02Z', 'stderr', 'current 2'));
  await writeFile(join(dir, 'old.log'), formatCriLine('2026-01-01T00:00:00Z', 'stdout', 'previous'));
  const host: KubeletHost = {
    getPodByName: (ns, name) => (ns === 'default' && name === 'web' ? pod : undefined),
    getPods: () => [pod],
    runtime: {
      containerStatus: async (id: string) => {
        if (id === 'c-now') return { id, log_path: join(dir, 'now.log'), state: running.has(id) ? 'CONTAINER_RUNNING' : 'CONTAINER_EXITED' } as ContainerStatus;
        if (id === 'c-old') return { id, log_path: join(dir, 'old.log'), state: 'CONTAINER_EXITED' } as ContainerStatus;
        throw new RuntimeError('NOT_FOUND', `container ${id} not found`);
      },
    },
  };
  const serving = await issueServingCertificate(pki, { commonName: 'n1', sans: ['127.0.0.1'] });
  const stats: StatsProvider = {
    getCPUAndMemoryStats: async () => ({ node: { nodeName: 'n1', cpu: { time: 1_000, usageCoreNanoSeconds: 2_500_000_000 }, memory: { time: 1_000, workingSetBytes: 1024 } }, pods: [] }),
  };
  metrics.observePodStart(1.2, 4.5);
  server = new KubeletServer({ config: { nodeIP: '127.0.0.1', port: 0, nodeName: 'n1' }, serving, caPem: pki.ca.certPem, host, stats, metrics, authorizer, clock: realClock, logger: pino({ level: 'silent' }) });
  await server.start();
});

after(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

function get(path: string, client?: CertKeyPair, port = server.port): Promise<{ code: number; body: string; type?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, ca: pki.ca.certPem, cert: client?.certPem, key: client?.keyPem, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), type: res.headers['content-type'] }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a free port was bound and is exposed', () => {
  assert.ok(server.port > 0);
});

test('authentication and authorization', async () => {
  assert.deepEqual(await get('/healthz'), { code: 401, body: 'Unauthorized', type: 'text/plain; charset=utf-8' });
  assert.equal((await get('/healthz', otherPki.admin)).code, 401, 'a certificate from another CA');
  assert.equal((await get('/healthz', pki.admin)).body, 'ok');
  const apiserver = await issueClientCertificate(pki, { commonName: 'kube-apiserver-kubelet-client' });
  assert.equal((await get('/healthz', apiserver)).code, 200);
  const node = await issueClientCertificate(pki, { commonName: 'system:node:n2', organizations: ['system:nodes'] });
  assert.deepEqual(await get('/containerLogs/default/web/nginx', node), {
    code: 403,
    body: 'Forbidden (user=system:node:n2, verb=get, resource=nodes, subresource=proxy)',
    type: 'text/plain; charset=utf-8',
  });
  // Each question went to the API server as a SubjectAccessReview on this node.
  assert.ok(reviewed.includes('system:node:n2 get nodes/proxy n1'), reviewed.join('\n'));
  assert.ok(reviewedGroups.has('system:authenticated'), 'a certificate user is authenticated');
  assert.ok(reviewed.includes('kube-apiserver-kubelet-client get nodes/healthz n1'), reviewed.join('\n'));
});

test('/pods lists the pods as a PodList', async () => {
  const r = await get('/pods', pki.admin);
  const list = JSON.parse(r.body) as { kind: string; items: Pod[] };
  assert.equal(list.kind, 'PodList');
  assert.deepEqual(list.items.map((p) => p.metadata?.name), ['web']);
});

test('/containerLogs serves the current and previous container', async () => {
  assert.equal((await get('/containerLogs/default/web/nginx', pki.admin)).body, 'current 1\ncurrent 2\n');
  assert.equal((await get('/containerLogs/default/web/nginx?tailLines=1&timestamps=true', pki.admin)).body, '2026-01-01T00:00:02.000000000Z current 2\n');
  assert.equal((await get('/containerLogs/default/web/nginx?tail=1', pki.admin)).body, 'current 2\n');
  assert.equal((await get('/containerLogs/default/web/nginx?previous=true', pki.admin)).body, 'previous\n');
  assert.equal((await get('/containerLogs/default/web/nginx?limitBytes=3', pki.admin)).body, 'cur');
});

test('/containerLogs errors as upstream\'s kubelet', async () => {
  const cases: [string, number, string][] = [
    ['/containerLogs/default/nope/nginx', 404, 'pod "nope" does not exist'],
    ['/containerLogs/default/web/other', 404, 'container "other" not found in pod "web"'],
    ['/containerLogs/default/web/waiting', 400, 'container "waiting" in pod "web" is waiting to start: ContainerCreating'],
    ['/containerLogs/default/web/init', 400, 'container "init" in pod "web" is not available'],
    ['/containerLogs/default/web/nginx?tailLines=-1', 422, '{"message": "Invalid request."}'],
    ['/containerLogs/default/web/nginx?tailLines=x', 400, '{"message": "Unable to decode query."}'],
    ['/containerLogs/default/web', 400, '{"message": "Missing container name."}'],
    ['/exec/default/web/nginx', 501, 'exec is not implemented by this kubelet yet'],
    ['/nothing', 404, '404 page not found'],
  ];
  for (const [path, code, body] of cases) {
    const r = await get(path, pki.admin);
    assert.deepEqual([r.code, r.body], [code, body], path);
  }
});

test('follow ends once the container stops', async () => {
  running.add('c-now');
  const pending = get('/containerLogs/default/web/nginx?follow=true', pki.admin);
  running.delete('c-now');
  const r = await pending;
  assert.equal(r.body, 'current 1\ncurrent 2\n');
});

test('validateContainerLogStatus table', () => {
  const status = (s: object) => ({ containerStatuses: [{ name: 'c', ready: false, restartCount: 0, image: '', imageID: '', ...s }] });
  const cases: [object, boolean, string][] = [
    [{ state: { terminated: { exitCode: 0, containerID: 'containerd://t' } } }, false, 't'],
    [{ state: { terminated: { exitCode: 0 } }, lastState: { terminated: { exitCode: 1, containerID: 'containerd://l' } } }, false, 'l'],
    [{ state: { terminated: { exitCode: 0 } } }, false, 'container "c" in pod "p" is terminated'],
    [{ state: { waiting: { reason: 'ErrImagePull' } } }, false, 'container "c" in pod "p" is waiting to start: image can\'t be pulled'],
    [{ state: { waiting: { reason: 'ImagePullBackOff' } } }, false, 'container "c" in pod "p" is waiting to start: trying and failing to pull image'],
    [{ state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, containerID: 'containerd://l' } } }, false, 'l'],
    [{ state: {} }, false, 'container "c" in pod "p" is waiting to start - no logs yet'],
    [{ state: { running: {} }, containerID: 'containerd://r' }, true, 'previous terminated container "c" in pod "p" not found'],
  ];
  for (const [s, previous, want] of cases) {
    let got: string;
    try {
      got = validateContainerLogStatus('p', status(s), 'c', previous);
    } catch (err) {
      got = (err as Error).message;
    }
    assert.equal(got, want, JSON.stringify(s));
  }
});

test('/metrics/resource serves the resource metrics in the Prometheus text format', async () => {
  const r = await get('/metrics/resource', pki.admin);
  assert.equal(r.code, 200);
  assert.equal(r.type, 'text/plain; version=0.0.4; charset=utf-8');
  assert.match(r.body, /^node_cpu_usage_seconds_total 2\.5 1000$/m);
  assert.match(r.body, /^resource_scrape_error 0$/m);
  assert.equal((await get('/metrics/cadvisor', pki.admin)).code, 404);
  const node = await issueClientCertificate(pki, { commonName: 'system:node:n2', organizations: ['system:nodes'] });
  assert.equal((await get('/metrics/resource', node)).body, 'Forbidden (user=system:node:n2, verb=get, resource=nodes, subresource=metrics)');
});

test('/metrics serves the kubelet\'s own metrics: the pod start-up SLIs', async () => {
  const r = await get('/metrics', pki.admin);
  assert.equal(r.code, 200);
  assert.match(r.type ?? '', /^text\/plain; version=0\.0\.4/);
  assert.match(r.body, /^kubelet_pod_start_sli_duration_seconds_bucket\{le="2"\} 1$/m);
  assert.match(r.body, /^kubelet_pod_start_total_duration_seconds_sum 4\.5$/m);
  const node = await issueClientCertificate(pki, { commonName: 'system:node:n2', organizations: ['system:nodes'] });
  assert.equal((await get('/metrics', node)).body, 'Forbidden (user=system:node:n2, verb=get, resource=nodes, subresource=metrics)');
});

test('exec and attach upgrades are relayed to the runtime streaming server, with the same authentication', async () => {
  const fake = new FakeStreamingServer({
    options: { stdin: false, stdout: true, stderr: true, tty: false },
    command: async (io) => {
      io.stdout!.write('hello\n');
      io.stderr!.write('oops\n');
      return 3;
    },
  });
  const runtimeUrl = await fake.start();
  const requests: StreamingRequest[] = [];
  const streamingHost: KubeletHost = {
    getPodByName: (ns, name) => (ns === 'default' && name === 'web' ? pod : undefined),
    getPods: () => [pod],
    runtime: {
      containerStatus: async () => assert.fail('not used'),
      exec: async (req) => (requests.push(req), runtimeUrl),
      attach: async (req) => (requests.push(req), runtimeUrl),
      portForward: async () => runtimeUrl,
      listPodSandbox: async () => [],
    },
  };
  const serving = await issueServingCertificate(pki, { commonName: 'n1', sans: ['127.0.0.1'] });
  const kubelet = new KubeletServer({ config: { nodeIP: '127.0.0.1', port: 0, nodeName: 'n1' }, serving, caPem: pki.ca.certPem, host: streamingHost, authorizer, clock: realClock, logger: pino({ level: 'silent' }) });
  await kubelet.start();
  // An API-server-like front translating kubectl's v5 WebSocket to the kubelet's SPDY.
  const front = createServer();
  const tls = { ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem };
  front.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').replace(/^\/front/, '');
    void acceptWebSocket(req, socket, head, WS_PROTOCOL_V5).then((ws) => translateRemoteCommand(ws, { url: `https://127.0.0.1:${kubelet.port}${path}`, tls }, { stdin: false, stdout: true, stderr: true, tty: false }));
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  try {
    for (const route of ['exec', 'attach']) {
      const out = await v5Session(`ws://127.0.0.1:${(front.address() as { port: number }).port}/front/${route}/default/web/nginx?command=greet&stdout=1&stderr=1`);
      assert.deepEqual(out.output, { 1: 'hello\n', 2: 'oops\n' }, route);
      assert.equal(out.status.reason, 'NonZeroExitCode');
      assert.deepEqual(out.status.details, { causes: [{ reason: 'ExitCode', message: '3' }] });
    }
    assert.deepEqual(requests, [
      { container_id: 'c-now', cmd: ['greet'], stdin: false, stdout: true, stderr: true, tty: false },
      { container_id: 'c-now', stdin: false, stdout: true, stderr: true, tty: false },
    ]);
    // Refusals before the upgrade are plain answers on the connection.
    const upgradeHeaders = { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'v4.channel.k8s.io' };
    const base = `https://127.0.0.1:${kubelet.port}`;
    const refused = async (path: string, creds: CertKeyPair | undefined) =>
      dialUpgrade({ url: `${base}${path}`, tls: { ca: pki.ca.certPem, cert: creds?.certPem, key: creds?.keyPem } }, { method: 'POST', headers: upgradeHeaders }).then(
        () => assert.fail('upgraded'),
        (err: UpgradeFailedError) => [err.statusCode, err.body],
      );
    assert.deepEqual(await refused('/exec/default/web/nginx?command=ls&stdout=1', undefined), [401, 'Unauthorized']);
    assert.deepEqual(await refused('/exec/default/web/waiting?command=ls&stdout=1', pki.admin), [500, 'container not found ("waiting")']);
    assert.deepEqual(await refused('/exec/default/web/nginx?command=ls', pki.admin), [400, 'you must specify at least 1 of stdin, stdout, stderr']);
    assert.deepEqual(await refused('/portForward/default/web', pki.admin), [500, 'pod not found ("web_default")']);
    assert.equal(fake.protocols.length, 2, 'no refused request reached the runtime');
    const plain = await get('/exec/default/web/nginx?command=ls&stdout=1', pki.admin, kubelet.port);
    assert.deepEqual([plain.code, plain.body], [400, 'Upgrade request required']);
  } finally {
    front.closeAllConnections();
    await new Promise((r) => front.close(r));
    await kubelet.stop();
    await fake.stop();
  }
});

test('a kubelet whose runtime cannot stream answers 501', async () => {
  const r = await get('/exec/default/web/nginx?command=ls&stdout=1', pki.admin);
  assert.deepEqual([r.code, r.body], [501, 'exec is not implemented by this kubelet yet']);
});

function v5Session(url: string): Promise<{ output: Record<number, string>; status: { reason?: string; details?: unknown } }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [WS_PROTOCOL_V5]);
    const output: Record<number, string> = {};
    let status = {};
    ws.on('message', (data: Buffer) => {
      if (data[0] === Channel.Error) status = JSON.parse(data.subarray(1).toString()) as object;
      else output[data[0]!] = (output[data[0]!] ?? '') + data.subarray(1).toString();
    });
    ws.on('close', () => resolve({ output, status }));
    ws.on('error', reject);
  });
}
