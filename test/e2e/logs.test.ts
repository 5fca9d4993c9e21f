// `kubectl logs` end to end: the real kubectl → `kite server` (pods/log: validation, container
// choice, node lookup) → HTTPS with the API server's kubelet client certificate → a KubeletServer in
// this process serving pre-written CRI log files for a pod bound to a Node that points at it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { issueServingCertificate } from '../../src/apiserver/authn/pki.js';
import { realClock } from '../../src/util/clock.js';
import { Client } from '../../src/client/client.js';
import { formatCriLine } from '../../src/kubelet/logs/cri.js';
import { KubeletServer } from '../../src/kubelet/server/server.js';
import type { ContainerStatus } from '../../src/kubelet/runtime/types.js';
import { eventually, kubectlOk, removeDir, startServer, type CommandResult, type KiteServer } from './harness.js';

/** The kubelet answers from this process: kubectl must run without blocking the event loop (no spawnSync). */
function kubectlAsync(server: KiteServer, args: string[]): Promise<CommandResult> {
  const proc = spawn('kubectl', ['--kubeconfig', server.kubeconfig, '--cache-dir', join(server.dataDir, 'kubectl-cache'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => proc.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

async function logsOk(server: KiteServer, args: string[]): Promise<string> {
  const r = await kubectlAsync(server, ['logs', ...args]);
  if (r.code !== 0) throw new Error(`kubectl logs ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
  return r.stdout;
}

const rfc3339Nano = (ms: number) => new Date(ms).toISOString().replace(/Z$/, '123456Z');

describe('kubectl logs through the API server to a kubelet', () => {
  let server: KiteServer;
  let kubelet: KubeletServer;
  let logDir: string;
  const running = new Set(['c-now']);
  const t0 = Date.now() - 2 * 3600_000;
  const t1 = Date.now() - 60_000;

  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      nodeName: 'kn1',
      initContainers: [{ name: 'setup', image: 'busybox' }],
      containers: [
        { name: 'nginx', image: 'nginx' },
        { name: 'sidecar', image: 'busybox' },
      ],
    },
  };
  const status: Pod['status'] = {
    initContainerStatuses: [{ name: 'setup', ready: false, restartCount: 0, image: 'busybox', imageID: '', containerID: 'containerd://c-init', state: { terminated: { exitCode: 0, containerID: 'containerd://c-init' } } }],
    containerStatuses: [
      {
        name: 'nginx',
        ready: true,
        restartCount: 1,
        image: 'nginx',
        imageID: '',
        containerID: 'containerd://c-now',
        state: { running: {} },
        lastState: { terminated: { exitCode: 1, containerID: 'containerd://c-old' } },
      },
      { name: 'sidecar', ready: false, restartCount: 0, image: 'busybox', imageID: '', state: { waiting: { reason: 'ContainerCreating' } } },
    ],
  };
  const paths: Record<string, string> = {};

  before(async () => {
    server = await startServer();
    logDir = mkdtempSync(join(tmpdir(), 'kite-e2e-logs-'));
    for (const id of ['c-now', 'c-old', 'c-init']) paths[id] = join(logDir, `${id}.log`);
    writeFileSync(paths['c-now']!, formatCriLine(rfc3339Nano(t0), 'stdout', 'old line') + formatCriLine(rfc3339Nano(t1), 'stderr', 'recent ', true) + formatCriLine(rfc3339Nano(t1), 'stderr', 'line'));
    writeFileSync(paths['c-old']!, formatCriLine(rfc3339Nano(t0), 'stdout', 'the previous container'));
    writeFileSync(paths['c-init']!, formatCriLine(rfc3339Nano(t0), 'stdout', 'init done'));

    const pkiDir = join(server.dataDir, 'pki');
    const ca = { certPem: readFileSync(join(pkiDir, 'ca.crt'), 'utf8'), keyPem: readFileSync(join(pkiDir, 'ca.key'), 'utf8') };
    const serving = await issueServingCertificate({ ca, clock: realClock }, { commonName: 'kn1', sans: ['127.0.0.1'] });
    kubelet = new KubeletServer({
      config: { nodeIP: '127.0.0.1', port: 0, nodeName: 'kn1' },
      serving,
      // The API server's kubelet client is the only one here.
      authorizer: { authorize: async () => true },
      caPem: ca.certPem,
      clock: realClock,
      logger: pino({ level: 'silent' }),
      host: {
        getPodByName: (ns, name) => (ns === 'default' && name === 'web' ? { ...pod, status } : undefined),
        getPods: () => [{ ...pod, status }],
        runtime: {
          containerStatus: async (id: string) => ({ id, log_path: paths[id]!, state: running.has(id) ? 'CONTAINER_RUNNING' : 'CONTAINER_EXITED' }) as ContainerStatus,
        },
      },
    });
    await kubelet.start();

    for (const [name, port] of [['kn1', kubelet.port], ['kn2', 0]] as const) {
      kubectlOk(server, ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name } }));
      const nodeStatus = { status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } } };
      kubectlOk(server, ['patch', 'node', name, '--subresource=status', '--type=merge', '-p', JSON.stringify(nodeStatus)]);
    }
    kubectlOk(server, ['create', '-f', '-'], JSON.stringify(pod));
    kubectlOk(server, ['create', '-f', '-'], JSON.stringify({ ...pod, metadata: { name: 'nokubelet' }, spec: { ...pod.spec, nodeName: 'kn2' } }));
    kubectlOk(server, ['create', '-f', '-'], JSON.stringify({ ...pod, metadata: { name: 'pending' }, spec: { containers: [{ name: 'c', image: 'x' }] } }));
  });

  after(async () => {
    await kubelet?.stop();
    await server?.stop();
    removeDir(server.dataDir);
    removeDir(logDir);
  });

  it('shows the current, previous and init container logs', async () => {
    assert.equal(await logsOk(server, ['web', '-c', 'nginx']), 'old line\nrecent line\n');
    assert.equal(await logsOk(server, ['web', '-c', 'nginx', '--previous']), 'the previous container\n');
    assert.equal(await logsOk(server, ['web', '-c', 'setup']), 'init done\n');
    // No -c on a two-container pod: kubectl picks the first and says so.
    const r = await kubectlAsync(server, ['logs', 'web']);
    assert.equal(r.stdout, 'old line\nrecent line\n');
    assert.match(r.stderr, /Defaulted container "nginx" out of: nginx, sidecar, setup \(init\)/);
  });

  it('honours --tail, --timestamps, --since and --limit-bytes', async () => {
    assert.equal(await logsOk(server, ['web', '-c', 'nginx', '--tail=1']), 'line\n');
    assert.equal(await logsOk(server, ['web', '-c', 'nginx', '--tail=2', '--timestamps']), `${rfc3339Nano(t1)} recent line\n`);
    assert.equal(await logsOk(server, ['web', '-c', 'nginx', '--since=1h']), 'recent line\n');
    assert.equal(await logsOk(server, ['web', '-c', 'nginx', '--limit-bytes=5']), 'old l');
  });

  it('reports errors as upstream', async () => {
    const cases: [string[], string][] = [
      [['logs', 'web', '-c', 'sidecar'], 'Error from server (BadRequest): container "sidecar" in pod "web" is waiting to start: ContainerCreating'],
      // kubectl checks the name itself before asking (the server's answer is checked below).
      [['logs', 'web', '-c', 'nope'], 'error: container nope is not valid for pod web'],
      [['logs', 'web', '-c', 'setup', '--previous'], 'Error from server (BadRequest): previous terminated container "setup" in pod "web" not found'],
      [['logs', 'nokubelet', '-c', 'nginx'], 'Error from server (ServiceUnavailable): no kubelet serves node "kn2": the log subresource needs a kite agent on that node'],
      [['logs', 'ghost'], 'error: error from server (NotFound): pods "ghost" not found in namespace "default"'],
    ];
    for (const [args, want] of cases) {
      const r = await kubectlAsync(server, args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.equal(r.stderr.trim(), want, args.join(' '));
    }
    assert.equal(await logsOk(server, ['pending']), '', 'an unscheduled pod has an empty log');

    const client = await Client.fromKubeconfig(server.kubeconfig);
    try {
      await assert.rejects(client.getLog('default', 'web', { container: 'nope' }), { code: 400, message: 'container nope is not valid for pod web' });
      await assert.rejects(client.getLog('default', 'web'), {
        code: 400,
        message: 'a container name must be specified for pod web, choose one of: [nginx sidecar] or one of the init containers: [setup]',
      });
      // kubectl refuses a negative --tail itself; the API answers 422.
      await assert.rejects(client.getLog('default', 'web', { container: 'nginx', tailLines: -2 }), {
        code: 422,
        message: 'PodLogOptions "web" is invalid: tailLines: Invalid value: -2: must be greater than or equal to 0',
      });
      await assert.rejects(client.getLog('default', 'web', { container: 'nginx', sinceSeconds: 0 }), {
        code: 422,
        message: 'PodLogOptions "web" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0',
      });
    } finally {
      client.close();
    }
  });

  it('follows with -f until the container stops', async () => {
    const proc = spawn('kubectl', ['--kubeconfig', server.kubeconfig, '--cache-dir', join(server.dataDir, 'kubectl-cache'), 'logs', '-f', 'web', '-c', 'nginx', '--tail=1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    await eventually(() => (out === 'line\n' ? true : undefined), 'the tail of the log');
    appendFileSync(paths['c-now']!, formatCriLine(rfc3339Nano(Date.now()), 'stdout', 'appended while following'));
    await eventually(() => (out === 'line\nappended while following\n' ? true : undefined), 'the appended line');
    running.delete('c-now');
    assert.equal(await exited, 0);
    assert.equal(out, 'line\nappended while following\n');
  });
});
