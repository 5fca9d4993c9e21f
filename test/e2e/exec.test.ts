// kubectl exec, attach and port-forward end to end: the real kubectl against `kite up` on real
// containerd. kubectl's v5 WebSocket is translated by the API server to the kubelet's SPDY, the
// kubelet relays it to containerd's streaming server; port-forward travels as SPDY tunnelled in a
// WebSocket. Own bridge, subnet and cgroup root, so it never meets another test cluster.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { httpGetText, kubectl, kubectlOk, repoRoot } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, type KiteCluster } from './cluster.js';
import { WebSocket } from 'ws';
import { dialUpgrade, UpgradeFailedError, type UpgradeTarget } from '../../src/streaming/upgrade.js';

const skip = canRunContainers ? false : 'running containers needs root';

const pod = (name: string, spec: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { terminationGracePeriodSeconds: 1, ...spec } });
const busybox = (name: string, script: string, extra: Record<string, unknown> = {}) => ({ name, image: 'busybox:1.35', command: ['sh', '-c', script], ...extra });

const pods = {
  // The seed's nginx with its postStart hook (no init container or probes: not what this test is about).
  web: pod('web', {
    containers: [{ name: 'nginx', image: 'nginx:1.22', ports: [{ containerPort: 80 }], lifecycle: { postStart: { exec: { command: ['/bin/sh', '-c', 'echo started > /tmp/flag'] } } } }],
  }),
  shell: pod('shell', { containers: [busybox('sh', 'sleep 3600')] }),
  // Reads stdin while someone is attached; stdinOnce closes it when the first attach ends.
  echo: pod('echo', { restartPolicy: 'Never', containers: [busybox('echo', 'while read line; do echo "got: $line"; done; echo bye', { stdin: true, stdinOnce: true })] }),
  done: pod('done', { restartPolicy: 'Never', containers: [busybox('app', 'true')] }),
  pending: pod('pending', { nodeSelector: { 'kite.test/nowhere': 'true' }, containers: [busybox('app', 'true')] }),
};

/** A loopback port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** kubectl as a child that keeps running (attach, port-forward): its output so far, and a way to end it. */
function kubectlAsync(cluster: KiteCluster, args: string[], env: Record<string, string> = {}): { proc: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const proc = spawn('kubectl', ['--kubeconfig', cluster.kubeconfig, '--cache-dir', join(cluster.kubeconfig, '..', 'kubectl-cache'), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, out: () => out, exited };
}

async function until(what: string, cond: () => boolean, detail?: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${detail ? `: ${detail()}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('kubectl exec, attach and port-forward', { skip }, () => {
  let cluster: KiteCluster;

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-exec', '--pod-cidr', '10.217.242.0/24', '--cgroup-root', '/kite-exec'] });
    for (const manifest of Object.values(pods)) kubectlOk(cluster, ['apply', '-f', '-'], manifest);
    kubectlOk(cluster, ['wait', '--for=condition=Ready', 'pod/web', 'pod/shell', 'pod/echo', '--timeout=120s']);
    kubectlOk(cluster, ['wait', '--for=jsonpath={.status.phase}=Succeeded', 'pod/done', '--timeout=60s']);
  });

  after(() => stopAndReset(cluster));

  it('exec prints the output of a command in the container', () => {
    assert.equal(kubectlOk(cluster, ['exec', 'web', '--', 'cat', '/etc/hostname']), 'web\n');
  });

  it("exec ends with the command's exit code", () => {
    const r = kubectl(cluster, ['exec', 'shell', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, 'out\n');
    assert.equal(r.stderr, 'err\ncommand terminated with exit code 3\n');
  });

  it('exec over SPDY (kubectl without WebSockets): the API server relays it to the kubelet as is', async () => {
    const k = kubectlAsync(cluster, ['exec', '-i', 'shell', '--', 'sh', '-c', 'cat; exit 3'], { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' });
    k.proc.stdin!.end('over spdy\n');
    assert.equal(await k.exited, 3, k.out());
    assert.equal(k.out(), 'over spdy\ncommand terminated with exit code 3\n');
  });

  it('exec -i passes stdin through, and its end ends the command', () => {
    const r = kubectl(cluster, ['exec', '-i', 'shell', '--', 'cat'], 'hello\nworld\n');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'hello\nworld\n');
  });

  it('exec -it runs the command on a terminal (kubectl itself on a pseudo-terminal from script)', async () => {
    const cache = join(cluster.kubeconfig, '..', 'kubectl-cache');
    const command = `stty cols 100 rows 30; kubectl --kubeconfig ${cluster.kubeconfig} --cache-dir ${cache} exec -it shell -- sh -c 'tty; i=0; until [ -n "$(stty size 2>/dev/null)" ] || [ $i -ge 100 ]; do i=$((i+1)); sleep 0.2; done; stty size; read x; echo "read $x"; exit 4'`;
    // kubectl sends its terminal's size as the exec starts; containerd applies it a moment after the
    // process runs, so the command waits for a size (busybox's stty prints none while it is 0x0).
    // script's stdin stays open: its end would reach the container's terminal as an end of input.
    const proc = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
    await until('the terminal size', () => out.includes('30 100'), () => JSON.stringify(out));
    // Typed on kubectl's terminal, echoed by the container's.
    proc.stdin.write('typed\r');
    const code = await exited;
    proc.stdin.end();
    assert.equal(code, 4, out);
    // The container's own terminal, sized as kubectl's (kubectl sends its size on the resize channel).
    assert.match(out, /\/dev\/pts\/\d+\r\n30 100\r\n/);
    assert.match(out, /typed\r\nread typed\r\n/);
    assert.match(out, /command terminated with exit code 4/);
  });

  it("exec -c checks the container, and a pod without a node is refused with upstream's messages", () => {
    const nope = kubectl(cluster, ['exec', 'web', '-c', 'nope', '--', 'true']);
    assert.equal(nope.code, 1);
    assert.match(nope.stderr, /Error from server \(BadRequest\): container nope is not valid for pod web/);
    const pending = kubectl(cluster, ['exec', 'pending', '--', 'true']);
    assert.equal(pending.code, 1);
    assert.match(pending.stderr, /Error from server \(BadRequest\): pod pending does not have a host assigned/);
    const done = kubectl(cluster, ['exec', 'done', '--', 'true']);
    assert.equal(done.code, 1);
    assert.match(done.stderr, /cannot exec into a container in a completed pod; current phase is Succeeded/);
  });

  it('attach -i reaches the running process: its stdin and its stdout', async () => {
    const k = kubectlAsync(cluster, ['attach', '-i', 'echo']);
    try {
      k.proc.stdin!.write('hello\n');
      await until('the echo of the first line', () => k.out().includes('got: hello'));
      k.proc.stdin!.end('again\n');
      // stdinOnce: the end of this attach's stdin is the end of the container's.
      await until('the container to finish', () => k.out().includes('bye'));
      assert.equal(await k.exited, 0, k.out());
      assert.match(k.out(), /got: hello\ngot: again\nbye\n/);
    } finally {
      k.proc.kill();
    }
  });

  for (const [how, env] of [
    ['a WebSocket tunnel', {}],
    ['SPDY (kubectl without WebSockets)', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }],
  ] as const) {
    it(`port-forward carries HTTP to the pod's port over ${how}`, async () => {
      const port = await freePort();
      const k = kubectlAsync(cluster, ['port-forward', 'pod/web', `${port}:80`], env);
      try {
        await until('port-forward to listen', () => k.out().includes(`Forwarding from 127.0.0.1:${port} -> 80`));
        for (let i = 0; i < 2; i++) {
          const r = await httpGetText(`http://127.0.0.1:${port}/`);
          assert.equal(r.status, 200);
          assert.match(r.body, /Welcome to nginx!/);
        }
        assert.match(k.out(), /Handling connection for \d+/);
      } finally {
        k.proc.kill();
        await k.exited;
      }
    });
  }

  it('exec and port-forward speak every WebSocket subprotocol upstream serves (binary and base64 channels)', async () => {
    const pki = join(cluster.kubeconfig, '..', 'pki');
    const tls = { ca: readFileSync(join(pki, 'ca.crt'), 'utf8'), cert: readFileSync(join(pki, 'admin.crt'), 'utf8'), key: readFileSync(join(pki, 'admin.key'), 'utf8') };
    const base = cluster.url.replace(/^https:/, 'wss:') + '/api/v1/namespaces/default/pods';
    /** One session: the negotiated subprotocol and each message as "<channel>:<payload>", base64 decoded. */
    const session = (path: string, protocols: string[], request?: string) =>
      new Promise<{ protocol: string; messages: string[] }>((resolve, reject) => {
        const ws = new WebSocket(`${base}/${path}`, protocols, tls);
        const messages: string[] = [];
        const timer = setTimeout(() => ws.terminate(), 20_000);
        const base64 = () => ws.protocol.includes('base64');
        ws.on('open', () => {
          if (request === undefined) return;
          ws.send(base64() ? `0${Buffer.from(request).toString('base64')}` : Buffer.concat([Buffer.of(0), Buffer.from(request)]));
        });
        ws.on('message', (data: Buffer, binary: boolean) => {
          const [channel, payload] = binary ? [data[0]!, data.subarray(1)] : [Number(data.toString()[0]), Buffer.from(data.toString().slice(1), 'base64')];
          messages.push(`${channel}:${payload.toString('latin1')}`);
          // Port-forward: the two port prefixes (80 little-endian), then the start of nginx's answer.
          if (request !== undefined && messages.length === 3) ws.close();
        });
        ws.on('close', () => {
          clearTimeout(timer);
          resolve({ protocol: ws.protocol, messages });
        });
        ws.on('error', reject);
      });
    const exitStatus = JSON.stringify({
      metadata: {}, status: 'Failure', message: 'command terminated with non-zero exit code: error executing command [sh -c echo hi; exit 3], exit code 3',
      reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    const v5Status = JSON.stringify({ ...JSON.parse(exitStatus), message: 'command terminated with non-zero exit code: command terminated with exit code 3' });
    const exec = `shell/exec?${new URLSearchParams([['command', 'sh'], ['command', '-c'], ['command', 'echo hi; exit 3'], ['stdout', 'true'], ['stderr', 'true']])}`;
    // Before v4 the error channel carries the message alone; no subprotocol means channel.k8s.io.
    const preV4 = 'command terminated with non-zero exit code: error executing command [sh -c echo hi; exit 3], exit code 3';
    for (const [protocols, negotiated, status] of [
      [[], '', preV4],
      [['channel.k8s.io'], 'channel.k8s.io', preV4],
      [['base64.channel.k8s.io'], 'base64.channel.k8s.io', preV4],
      [['v4.channel.k8s.io'], 'v4.channel.k8s.io', exitStatus],
      [['v4.base64.channel.k8s.io'], 'v4.base64.channel.k8s.io', exitStatus],
      [['v5.channel.k8s.io', 'v4.channel.k8s.io'], 'v5.channel.k8s.io', v5Status],
    ] as const) {
      const s = await session(exec, [...protocols]);
      assert.deepEqual(s, { protocol: negotiated, messages: ['1:', '1:hi\n', `3:${status}`] }, JSON.stringify(protocols));
    }
    for (const protocols of [[], ['v4.channel.k8s.io'], ['v4.base64.channel.k8s.io']]) {
      const s = await session('web/portforward?ports=80', protocols, 'GET / HTTP/1.0\r\n\r\n');
      assert.deepEqual(s.messages.slice(0, 2), ['0:P\0', '1:P\0'], JSON.stringify(protocols));
      assert.match(s.messages[2] ?? '', /^0:HTTP\/1\.1 200 OK/, JSON.stringify(protocols));
    }
  });

  it('upgrades are authenticated as any request; other paths are answered as plain requests', async () => {
    const pki = join(cluster.kubeconfig, '..', 'pki');
    const ca = readFileSync(join(pki, 'ca.crt'), 'utf8');
    const admin = { ca, cert: readFileSync(join(pki, 'admin.crt'), 'utf8'), key: readFileSync(join(pki, 'admin.key'), 'utf8') };
    const headers = { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64'), 'Sec-WebSocket-Protocol': 'v5.channel.k8s.io' };
    const refused = async (target: UpgradeTarget) => {
      const err: unknown = await dialUpgrade(target, { method: 'GET', headers }).then((u) => u.socket.destroy(), (e: unknown) => e);
      assert.ok(err instanceof UpgradeFailedError, 'not upgraded');
      return { code: err.statusCode, body: JSON.parse(err.body) as { kind?: string; reason?: string; gitVersion?: string } };
    };
    const anonymous = await refused({ url: `${cluster.url}/api/v1/namespaces/default/pods/web/exec?command=true&stdout=true`, tls: { ca } });
    assert.deepEqual([anonymous.code, anonymous.body.reason], [401, 'Unauthorized']);
    const version = await refused({ url: `${cluster.url}/version`, tls: admin });
    assert.equal(version.code, 200);
    assert.match(version.body.gitVersion ?? '', /^v1\.33\./);
    // Port-forward's ports: the API server decodes them first; a WebSocket without any is the kubelet's 400.
    const badPort = await refused({ url: `${cluster.url}/api/v1/namespaces/default/pods/web/portforward?ports=http`, tls: admin });
    assert.deepEqual([badPort.code, badPort.body.reason], [400, 'BadRequest']);
    const noPorts: unknown = await dialUpgrade({ url: `${cluster.url}/api/v1/namespaces/default/pods/web/portforward`, tls: admin }, { method: 'GET', headers: { ...headers, 'Sec-WebSocket-Protocol': 'v4.channel.k8s.io' } }).then(
      (u) => u.socket.destroy(),
      (e: unknown) => e,
    );
    assert.ok(noPorts instanceof UpgradeFailedError, 'not upgraded');
    assert.deepEqual([noPorts.statusCode, noPorts.body.trim()], [400, 'query parameter "port" is required']);
    const plain = kubectl(cluster, ['get', '--raw', '/api/v1/namespaces/default/pods/web/exec?command=true&stdout=true']);
    assert.match(plain.stderr, /Error from server \(BadRequest\): Upgrade request required/);
  });

  it('the postStart hook ran in the container before it counted as started', (t) => {
    const kubelet = readFileSync(join(repoRoot, 'dist', 'src', 'kubelet', 'kubelet.js'), 'utf8');
    if (!kubelet.includes('runPostStart')) {
      t.skip('postStart hooks are not wired into the kubelet in this build');
      return;
    }
    assert.equal(kubectlOk(cluster, ['exec', 'web', '--', 'cat', '/tmp/flag']), 'started\n');
  });
});
