// The streaming protocols against the real containerd's CRI streaming server: kubectl's v5
// WebSocket exec translated to SPDY (stdout, stderr, exit codes, stdin with half-close, a tty with
// resize), the same through the kubelet's byte relay, and port-forward over kubectl's WebSocket
// tunnel and over a plain SPDY upgrade. Own bridge, subnet and cgroup root; all gone afterwards.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { WebSocket } from 'ws';
import { podCgroupParent } from '../../src/kubelet/cm/cgroups.js';
import type { CriRuntime } from '../../src/kubelet/runtime/cri/client.js';
import type { PodSandboxConfig } from '../../src/kubelet/runtime/types.js';
import { acceptWebSocket, offersWebSocketProtocol, translateRemoteCommand } from '../../src/streaming/remotecommand/translate.js';
import { Channel, PORT_FORWARD_PROTOCOL_V1, WS_PORT_FORWARD_TUNNEL_PROTOCOL, WS_PROTOCOL_V5 } from '../../src/streaming/remotecommand/constants.js';
import { proxyUpgrade, tunnelPortForward, writeUpgradeFailure } from '../../src/streaming/proxy.js';
import { SpdyConnection, type SpdyStream } from '../../src/streaming/spdy/connection.js';
import { dialSpdy } from '../../src/streaming/spdy/dial.js';
import { dialUpgrade } from '../../src/streaming/upgrade.js';
import { startTestRuntime, type TestRuntime } from './runtime-fixture.js';

const isRoot = process.getuid?.() === 0;
const network = { name: 'kite-e2e-stream', bridge: 'kite-e2e2', subnet: '10.217.252.0/24' };
const cgroupRoot = '/kite-e2e-stream';
const busybox = 'docker.io/library/busybox:1.35';

interface Session {
  stdout: string;
  stderr: string;
  status: { status: string; reason?: string; message?: string; details?: { causes?: { reason?: string; message?: string }[] } };
  closeCode: number;
}

/** A v5 client as kubectl 1.33 is: channel-prefixed binary messages, close channel 255 on stdin EOF. */
function runV5(url: string, script: (send: (channel: number, data: string | Buffer) => void, output: { stdout: string }) => Promise<void> = async () => {}): Promise<Session> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [WS_PROTOCOL_V5]);
    const session: Session = { stdout: '', stderr: '', status: { status: '' }, closeCode: 0 };
    const send = (channel: number, data: string | Buffer): void => ws.send(Buffer.concat([Buffer.of(channel), Buffer.from(data)]));
    ws.on('open', () => {
      assert.equal(ws.protocol, WS_PROTOCOL_V5);
      script(send, session).catch(reject);
    });
    ws.on('message', (data: Buffer) => {
      const payload = data.subarray(1).toString();
      if (data[0] === Channel.Stdout) session.stdout += payload;
      else if (data[0] === Channel.Stderr) session.stderr += payload;
      else if (data[0] === Channel.Error) session.status = JSON.parse(payload) as Session['status'];
    });
    ws.on('close', (code) => {
      session.closeCode = code;
      resolve(session);
    });
    ws.on('error', reject);
  });
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond(), 'condition not reached');
}

function readAll(stream: SpdyStream | Duplex): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.once('end', () => resolve(Buffer.concat(chunks).toString()));
    stream.once('close', () => resolve(Buffer.concat(chunks).toString()));
  });
}

/** client-go's port-forward client for one connection: an error stream, then the data stream. */
async function forwardOnce(connection: SpdyConnection, port: number, requestId: string, request: string): Promise<{ data: string; error: string }> {
  const errorStream = await connection.openStream({ streamtype: 'error', port: String(port), requestid: requestId });
  errorStream.end();
  const error = readAll(errorStream);
  const dataStream = await connection.openStream({ streamtype: 'data', port: String(port), requestid: requestId });
  const data = readAll(dataStream);
  dataStream.end(request);
  return { data: await data, error: await error };
}

/**
 * A WebSocket client as kubectl's (gorilla) is for the port-forward tunnel: the ws library will not
 * offer a subprotocol with a '/', so this speaks the few frames needed itself (masked binary out,
 * unmasked binary and close in).
 */
async function tunnelClient(url: string, protocol: string): Promise<Duplex> {
  const { response, socket } = await dialUpgrade(
    { url },
    { method: 'GET', headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64'), 'Sec-WebSocket-Protocol': protocol } },
  );
  assert.equal(response.headers['sec-websocket-protocol'], protocol);
  let pending = Buffer.alloc(0);
  const stream: Duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      const mask = randomBytes(4);
      const len = chunk.length;
      const head = len < 126 ? Buffer.of(0x82, 0x80 | len) : Buffer.of(0x82, 0x80 | 126, len >> 8, len & 0xff);
      assert.ok(len < 65536);
      const body = Buffer.from(chunk.map((b, i) => b ^ mask[i % 4]!));
      socket.write(Buffer.concat([head, mask, body]), cb);
    },
    final(cb) {
      socket.end(Buffer.concat([Buffer.of(0x88, 0x80), randomBytes(4)]), cb);
    },
    destroy(err, cb) {
      socket.destroy();
      cb(err);
    },
  });
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 2) {
      let len = pending[1]! & 0x7f;
      let at = 2;
      if (len === 126) [len, at] = [pending.readUInt16BE(2), 4];
      else if (len === 127) [len, at] = [Number(pending.readBigUInt64BE(2)), 10];
      if (pending.length < at + len) break;
      const opcode = pending[0]! & 0x0f;
      if (opcode === 0x2 || opcode === 0x0) stream.push(pending.subarray(at, at + len));
      if (opcode === 0x8) stream.push(null);
      pending = pending.subarray(at + len);
    }
  });
  socket.on('close', () => stream.push(null));
  return stream;
}

describe('streaming against containerd', { skip: isRoot ? false : 'needs root (containerd, bridges, cgroups)', timeout: 300_000 }, () => {
  let runtime: TestRuntime;
  let dir: string;
  let cri: CriRuntime;
  let sandboxId: string;
  let containerId: string;
  let apiserver: Server;
  let kubelet: Server;
  let apiBase: string;

  before(async () => {
    runtime = await startTestRuntime({ name: 'stream', network, cgroupRoot, images: ['pause', 'busybox'] });
    ({ dir, cri } = runtime);
    await cri.pullImage({ image: busybox });

    const uid = '0b8d3a5e-strm-4e2e-9d6b-000000000001';
    const sandboxConfig: PodSandboxConfig = {
      metadata: { name: 'web', uid, namespace: 'default', attempt: 0 },
      hostname: 'web',
      log_directory: join(dir, 'pods', uid),
      linux: { cgroup_parent: podCgroupParent('BestEffort', uid, cgroupRoot), security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
    };
    sandboxId = await cri.runPodSandbox(sandboxConfig);
    containerId = await cri.createContainer(
      sandboxId,
      {
        metadata: { name: 'app', attempt: 0 },
        image: { image: busybox },
        command: ['sh', '-c', 'mkdir -p /tmp/www && echo hello-pf > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www'],
        log_path: 'app/0.log',
        linux: { security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
      },
      sandboxConfig,
    );
    await cri.startContainer(containerId);

    // A stand-in kubelet: asks the runtime for a streaming URL and relays the upgrade to it as bytes.
    kubelet = createServer((_req, res) => res.writeHead(400).end());
    kubelet.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://kubelet');
      const cmd = url.searchParams.getAll('command');
      const flag = (n: string) => url.searchParams.get(n) === '1' || url.searchParams.get(n) === 'true';
      const runtimeUrl =
        url.pathname === '/portForward'
          ? cri.portForward({ pod_sandbox_id: sandboxId, port: [8080] })
          : cri.exec({ container_id: containerId, cmd, stdin: flag('stdin'), stdout: flag('stdout'), stderr: flag('stderr'), tty: flag('tty') });
      runtimeUrl.then((u) => proxyUpgrade(req, socket, head, { url: u })).catch((err) => writeUpgradeFailure(socket, err));
    });
    await new Promise<void>((r) => kubelet.listen(0, '127.0.0.1', r));
    const kubeletBase = `http://127.0.0.1:${(kubelet.address() as { port: number }).port}`;

    // A stand-in API server: exec translates v5 to SPDY towards the runtime's URL directly
    // (/direct) or towards the kubelet (/viaKubelet); port-forward tunnels or relays to the kubelet.
    apiserver = createServer((_req, res) => res.writeHead(400).end());
    apiserver.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://apiserver');
      if (url.pathname === '/portforward') {
        const target = { url: `${kubeletBase}/portForward` };
        const relay = offersWebSocketProtocol(req, WS_PORT_FORWARD_TUNNEL_PROTOCOL) ? tunnelPortForward(req, socket, head, target) : proxyUpgrade(req, socket, head, target);
        relay.catch((err) => writeUpgradeFailure(socket, err));
        return;
      }
      const opts = { stdin: url.searchParams.get('stdin') === 'true', stdout: url.searchParams.get('stdout') === 'true', stderr: url.searchParams.get('stderr') === 'true', tty: url.searchParams.get('tty') === 'true' };
      const cmd = url.searchParams.getAll('command');
      void acceptWebSocket(req, socket, head, WS_PROTOCOL_V5).then(async (ws) => {
        let target: string;
        if (url.pathname === '/direct') {
          target = await cri.exec({ container_id: containerId, cmd, ...opts, stderr: opts.stderr && !opts.tty });
        } else {
          const q = new URLSearchParams(cmd.map((c): [string, string] => ['command', c]));
          for (const [k, v] of Object.entries(opts)) if (v) q.set(k, '1');
          target = `${kubeletBase}/exec?${q}`;
        }
        await translateRemoteCommand(ws, { url: target }, opts);
      });
    });
    await new Promise<void>((r) => apiserver.listen(0, '127.0.0.1', r));
    apiBase = `ws://127.0.0.1:${(apiserver.address() as { port: number }).port}`;
  });

  after(async () => {
    apiserver?.closeAllConnections();
    kubelet?.closeAllConnections();
    await new Promise((r) => (apiserver ? apiserver.close(r) : r(undefined)));
    await new Promise((r) => (kubelet ? kubelet.close(r) : r(undefined)));
    await runtime?.stop();
  });

  const execQuery = (cmd: string[], flags: string[]) => new URLSearchParams([...cmd.map((c): [string, string] => ['command', c]), ...flags.map((f): [string, string] => [f, 'true'])]).toString();

  for (const path of ['/direct', '/viaKubelet']) {
    it(`exec ${path}: stdout, stderr and exit code 3 as kubectl expects`, async () => {
      const s = await runV5(`${apiBase}${path}?${execQuery(['sh', '-c', 'echo out; echo err >&2; exit 3'], ['stdout', 'stderr'])}`);
      assert.equal(s.stdout, 'out\n');
      assert.equal(s.stderr, 'err\n');
      assert.deepEqual(s.status, {
        metadata: {},
        status: 'Failure',
        message: 'command terminated with non-zero exit code: command terminated with exit code 3',
        reason: 'NonZeroExitCode',
        details: { causes: [{ reason: 'ExitCode', message: '3' }] },
      });
      assert.equal(s.closeCode, 1000);
    });

    it(`exec ${path}: stdin reaches cat and its EOF ends the command`, async () => {
      const s = await runV5(`${apiBase}${path}?${execQuery(['sh', '-c', 'echo ready; exec cat'], ['stdin', 'stdout', 'stderr'])}`, async (send, out) => {
        // containerd 1.6 can lose stdin bytes, and the EOF, that reach it before the exec'd process
        // is running (cat then waits forever): write once the command has spoken, so the test checks
        // kite's relay and not that race.
        await until(() => out.stdout === 'ready\n');
        send(Channel.Stdin, 'hello\n');
        send(Channel.Stdin, 'world\n');
        send(Channel.Close, Buffer.of(Channel.Stdin));
      });
      assert.equal(s.stdout, 'ready\nhello\nworld\n');
      assert.deepEqual(s.status, { metadata: {}, status: 'Success' });
    });
  }

  it('exec with a tty: a terminal whose size follows resize messages', async () => {
    const s = await runV5(`${apiBase}/direct?${execQuery(['sh', '-c', 'tty; echo ready; read x; i=0; until [ -n "$(stty size 2>/dev/null)" ] || [ $i -ge 100 ]; do i=$((i+1)); sleep 0.2; done; stty size; exit 0'], ['stdin', 'stdout', 'stderr', 'tty'])}`, async (send, out) => {
      // containerd 1.6 drops a size that reaches an exec's terminal before the process runs
      // ("cannot resize a stopped container"), and applies one a moment after it is sent, so the
      // size goes once the command has spoken, and the command waits for it (busybox's stty
      // prints none while the size is 0x0).
      await until(() => out.stdout.includes('ready'));
      send(Channel.Resize, JSON.stringify({ Width: 100, Height: 30 }));
      send(Channel.Stdin, 'go\n');
    });
    assert.match(s.stdout, /^\/dev\/pts\/\d+\r\nready\r\n/);
    assert.match(s.stdout, /go\r\n30 100\r\n$/);
    assert.deepEqual(s.status, { metadata: {}, status: 'Success' });
  });

  it('a command that cannot start ends with an internal error status', async () => {
    const s = await runV5(`${apiBase}/direct?${execQuery(['/no/such/binary'], ['stdout', 'stderr'])}`);
    assert.equal(s.status.status, 'Failure');
    assert.equal((s.status as { code?: number }).code, 500);
    assert.match(s.status.message ?? '', /^Internal error occurred: .*no such file or directory/);
  });

  it("port-forward through kubectl's WebSocket tunnel carries an HTTP GET to the pod", async () => {
    const tunnel = await tunnelClient(`${apiBase.replace('ws:', 'http:')}/portforward`, WS_PORT_FORWARD_TUNNEL_PROTOCOL);
    const connection = new SpdyConnection(tunnel, { role: 'client' });
    for (const id of ['0', '1']) {
      const { data, error } = await forwardOnce(connection, 8080, id, 'GET /index.html HTTP/1.0\r\n\r\n');
      assert.match(data, /^HTTP\/1\.[01] 200 OK\r\n/);
      assert.match(data, /hello-pf\n$/);
      assert.equal(error, '');
    }
    await connection.close();
  });

  it('port-forward over a plain SPDY upgrade (the fallback), and the error stream for a closed port', async () => {
    const { connection, protocol } = await dialSpdy({ url: `${apiBase.replace('ws:', 'http:')}/portforward` }, [PORT_FORWARD_PROTOCOL_V1]);
    assert.equal(protocol, PORT_FORWARD_PROTOCOL_V1);
    const ok = await forwardOnce(connection, 8080, '0', 'GET /index.html HTTP/1.0\r\n\r\n');
    assert.match(ok.data, /hello-pf\n$/);
    const refused = await forwardOnce(connection, 9, '1', 'x');
    assert.match(refused.error, /connection refused/);
    await connection.close();
  });
});
