// Test doubles for the streaming layer: an in-memory connection pair, and a streaming server that
// behaves like the runtime's (containerd's CRI streaming server: SPDY, v4 stream protocol).
import { createServer, type Server } from 'node:http';
import { Duplex } from 'node:stream';
import { acceptSpdy } from './spdy/dial.js';
import type { SpdyConnection, SpdyStream } from './spdy/connection.js';
import { STREAM_PROTOCOL_V4, STREAM_TYPE_HEADER, type RemoteCommandOptions } from './remotecommand/constants.js';
import { exitCodeStatus, successStatus } from './remotecommand/status.js';

/** Two connected in-memory duplexes: what one writes the other reads. */
export function duplexPair(): [Duplex, Duplex] {
  const ends: Duplex[] = [];
  const make = (peer: () => Duplex): Duplex =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        peer().push(chunk);
        cb();
      },
      final(cb) {
        peer().push(null);
        cb();
      },
      destroy(err, cb) {
        const other = peer();
        if (!other.destroyed) other.destroy();
        cb(err);
      },
    });
  ends.push(make(() => ends[1]!), make(() => ends[0]!));
  return [ends[0]!, ends[1]!];
}

/** The streams of one command session, as the fake server hands them to the command. */
export interface FakeCommandIO {
  stdin?: SpdyStream;
  stdout?: SpdyStream;
  stderr?: SpdyStream;
  resize?: SpdyStream;
  headers: Record<string, string>[];
}

/** A command: resolves with its exit code. */
export type FakeCommand = (io: FakeCommandIO) => Promise<number>;

/**
 * A streaming server like the runtime's: each upgrade on /<path> waits for the streams `options`
 * ask for, runs the command, writes the v4 status on the error stream, then resets every stream
 * and closes the connection (as Kubernetes' streaming server does).
 */
export class FakeStreamingServer {
  private server?: Server;
  private readonly connections = new Set<SpdyConnection>();
  /** The X-Stream-Protocol-Version each session negotiated. */
  readonly protocols: string[] = [];

  constructor(private readonly session: { options: RemoteCommandOptions; command: FakeCommand }) {}

  async start(): Promise<string> {
    const server = createServer((_req, res) => {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end('upgrade required');
    });
    server.on('upgrade', (req, socket, head) => this.accept(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    const addr = server.address();
    return `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/exec/token`;
  }

  async stop(): Promise<void> {
    for (const c of this.connections) c.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(req: Parameters<typeof acceptSpdy>[0], socket: Duplex, head: Buffer): void {
    const { options, command } = this.session;
    const expected = 1 + Number(options.stdin) + Number(options.stdout) + Number(options.stderr && !options.tty) + Number(options.tty);
    const streams: SpdyStream[] = [];
    let ready!: () => void;
    const allReady = new Promise<void>((resolve) => (ready = resolve));
    const dialed = acceptSpdy(req, socket, head, [STREAM_PROTOCOL_V4], (stream) => {
      streams.push(stream);
      void stream.reply().then(() => {
        if (streams.length === expected) ready();
      });
    });
    if (!dialed) return;
    this.protocols.push(dialed.protocol);
    this.connections.add(dialed.connection);
    void dialed.connection.closed.then(() => this.connections.delete(dialed.connection));
    void allReady.then(async () => {
      const byType = (t: string) => streams.find((s) => s.headers[STREAM_TYPE_HEADER] === t);
      const io: FakeCommandIO = { stdin: byType('stdin'), stdout: byType('stdout'), stderr: byType('stderr'), resize: byType('resize'), headers: streams.map((s) => s.headers) };
      const code = await command(io);
      const status = code === 0 ? successStatus() : { ...exitCodeStatus(code), message: `command terminated with non-zero exit code: error executing command, exit code ${code}` };
      byType('error')!.write(JSON.stringify(status));
      for (const s of streams) s.reset();
      await dialed.connection.close();
    });
  }
}
