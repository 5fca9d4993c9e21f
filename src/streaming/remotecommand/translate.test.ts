import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { WebSocket } from 'ws';
import { FakeStreamingServer, type FakeCommand } from '../testing.js';
import { Channel, WS_PROTOCOL_V5, type RemoteCommandOptions } from './constants.js';
import { acceptWebSocket, offersWebSocketProtocol, translateRemoteCommand } from './translate.js';
import { statusFromV4ErrorStream, type RemoteCommandStatus } from './status.js';

function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.once('end', () => resolve(Buffer.concat(chunks).toString()));
  });
}

interface Harness {
  url: string;
  fake?: FakeStreamingServer;
  results: (RemoteCommandStatus | undefined)[];
  offered: boolean[];
}

const servers: Server[] = [];
const fakes: FakeStreamingServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  for (const f of fakes.splice(0)) await f.stop();
});

/** An API-server-like front: accepts v5 and translates to `target` (a fake runtime unless given). */
async function harness(options: RemoteCommandOptions, command: FakeCommand, target?: string): Promise<Harness> {
  const h: Harness = { url: '', results: [], offered: [] };
  if (!target) {
    h.fake = new FakeStreamingServer({ options, command });
    fakes.push(h.fake);
    target = await h.fake.start();
  }
  const server = createServer();
  server.on('upgrade', (req, socket, head) => {
    h.offered.push(offersWebSocketProtocol(req, WS_PROTOCOL_V5));
    void acceptWebSocket(req, socket, head, WS_PROTOCOL_V5).then(async (ws) => h.results.push(await translateRemoteCommand(ws, { url: target! }, options)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  h.url = `ws://127.0.0.1:${(server.address() as { port: number }).port}/exec`;
  return h;
}

interface Session {
  out: Record<number, string>;
  /** The first message's bytes. */
  first: number[];
  status?: RemoteCommandStatus;
  closeCode: number;
}

function session(url: string, script: (send: (ch: number, data: string | Buffer) => void) => void = () => {}): Promise<Session> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [WS_PROTOCOL_V5]);
    const s: Session = { out: {}, first: [], closeCode: 0 };
    ws.on('open', () => script((ch, data) => ws.send(Buffer.concat([Buffer.of(ch), Buffer.from(data)]))));
    ws.on('message', (data: Buffer) => {
      if (s.first.length === 0) s.first = [...data];
      if (data[0] === Channel.Error && data.length === 1) return;
      if (data[0] === Channel.Error) s.status = JSON.parse(data.subarray(1).toString()) as RemoteCommandStatus;
      else s.out[data[0]!] = (s.out[data[0]!] ?? '') + data.subarray(1).toString();
    });
    ws.on('close', (code) => resolve({ ...s, closeCode: code }));
    ws.on('error', reject);
  });
}

describe('translateRemoteCommand', () => {
  it('opens the v4 streams the options ask for and passes output and the exit code on', async () => {
    const h = await harness({ stdin: false, stdout: true, stderr: true, tty: false }, async (io) => {
      io.stdout!.write('out\n');
      io.stderr!.write('err\n');
      return 3;
    });
    const s = await session(h.url);
    assert.deepEqual(h.offered, [true]);
    assert.deepEqual(h.fake!.protocols, ['v4.channel.k8s.io']);
    assert.deepEqual(s.out, { [Channel.Stdout]: 'out\n', [Channel.Stderr]: 'err\n' });
    assert.deepEqual(s.status, {
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: command terminated with exit code 3',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    assert.equal(s.closeCode, 1000);
    assert.deepEqual(h.results, [s.status]);
  });

  it('first sends an empty message on the lowest channel the client reads', async () => {
    const cases: [RemoteCommandOptions, number][] = [
      [{ stdin: false, stdout: true, stderr: true, tty: false }, Channel.Stdout],
      [{ stdin: false, stdout: false, stderr: true, tty: false }, Channel.Stderr],
      [{ stdin: true, stdout: false, stderr: false, tty: false }, Channel.Error],
    ];
    for (const [options, channel] of cases) {
      const h = await harness(options, async (io) => {
        io.stderr?.write('late\n');
        return 0;
      });
      const s = await session(h.url, (send) => send(Channel.Close, Buffer.of(Channel.Stdin)));
      assert.deepEqual(s.first, [channel], JSON.stringify(options));
      assert.deepEqual(s.status, { metadata: {}, status: 'Success' });
    }
  });

  it('forwards stdin and ends it on the v5 close message', async () => {
    let seen: Record<string, string>[] = [];
    const h = await harness({ stdin: true, stdout: true, stderr: true, tty: false }, async (io) => {
      seen = io.headers;
      io.stdout!.write(`got:${await readAll(io.stdin!)}`);
      return 0;
    });
    const s = await session(h.url, (send) => {
      send(Channel.Stdin, 'a');
      send(Channel.Stdin, 'b');
      send(Channel.Close, Buffer.of(Channel.Stdin));
    });
    assert.deepEqual(seen.map((x) => x.streamtype), ['error', 'stdin', 'stdout', 'stderr']);
    assert.equal(s.out[Channel.Stdout], 'got:ab');
    assert.deepEqual(s.status, { metadata: {}, status: 'Success' });
  });

  it('with a tty: no stderr stream, resize messages reach the resize stream', async () => {
    let seen: Record<string, string>[] = [];
    const h = await harness({ stdin: true, stdout: true, stderr: true, tty: true }, async (io) => {
      seen = io.headers;
      const size = await new Promise<string>((resolve) => io.resize!.once('data', (d: Buffer) => resolve(d.toString())));
      io.stdout!.write(size);
      return 0;
    });
    const s = await session(h.url, (send) => send(Channel.Resize, '{"Width":80,"Height":24}'));
    assert.deepEqual(seen.map((x) => x.streamtype), ['error', 'stdin', 'stdout', 'resize']);
    assert.equal(s.out[Channel.Stdout], '{"Width":80,"Height":24}');
    assert.equal(s.out[Channel.Stderr], undefined);
  });

  it('reports a refused upgrade as an internal error with the server text', async () => {
    const plain = createServer((_req, res) => res.writeHead(400, { 'Content-Type': 'text/plain' }).end('container not found ("app")\n'));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    servers.push(plain);
    const h = await harness({ stdin: false, stdout: true, stderr: false, tty: false }, async () => 0, `http://127.0.0.1:${(plain.address() as { port: number }).port}/exec/x`);
    const s = await session(h.url);
    assert.deepEqual(s.status, {
      metadata: {},
      status: 'Failure',
      message: 'Internal error occurred: unable to upgrade connection: container not found ("app")',
      reason: 'InternalError',
      details: { causes: [{ message: 'unable to upgrade connection: container not found ("app")' }] },
      code: 500,
    });
    assert.equal(s.closeCode, 1000);
  });

  it('passes a Status body of a refused upgrade through as it is', async () => {
    const body = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'pods "x" not found', reason: 'NotFound', code: 404 };
    const plain = createServer((_req, res) => res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify(body)));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    servers.push(plain);
    const h = await harness({ stdin: false, stdout: true, stderr: false, tty: false }, async () => 0, `http://127.0.0.1:${(plain.address() as { port: number }).port}/`);
    const s = await session(h.url);
    assert.deepEqual(s.status, body);
  });
});

describe('statusFromV4ErrorStream', () => {
  const table: [string, string, Partial<RemoteCommandStatus>][] = [
    ['empty stream', '', { status: 'Success' }],
    ['success', '{"metadata":{},"status":"Success"}', { status: 'Success' }],
    ['runtime failure', '{"status":"Failure","message":"boom"}', { status: 'Failure', reason: 'InternalError', message: 'Internal error occurred: boom', code: 500 }],
    ['no causes', '{"status":"Failure","reason":"NonZeroExitCode"}', { message: 'Internal error occurred: error stream protocol error: details must be set' }],
    ['no exit code cause', '{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[]}}', { message: 'Internal error occurred: error stream protocol error: no ExitCode cause given' }],
    ['exit code out of range', '{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"256"}]}}', { message: 'Internal error occurred: error stream protocol error: invalid exit code value "256"' }],
    ['exit code', '{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"137"}]}}', { reason: 'NonZeroExitCode', message: 'command terminated with non-zero exit code: command terminated with exit code 137' }],
    ['unknown status', '{"status":"Weird"}', { message: 'Internal error occurred: error stream protocol error: unknown error' }],
  ];
  for (const [name, input, want] of table) {
    it(name, () => {
      const got = statusFromV4ErrorStream(Buffer.from(input));
      for (const [k, v] of Object.entries(want)) assert.deepEqual(got[k as keyof RemoteCommandStatus], v, k);
    });
  }
});
