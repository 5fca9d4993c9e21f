// The API server's stream translator (upstream's StreamTranslatorHandler, 1.30+): kubectl speaks
// the v5 WebSocket channel protocol, the kubelet and the runtime's streaming server speak SPDY with
// the v4 stream protocol. Channels become SPDY streams and back; the runtime's v4 error stream
// becomes the v5 status on channel 3, then the WebSocket closes normally.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { dialSpdy } from '../spdy/dial.js';
import type { SpdyStream } from '../spdy/connection.js';
import { isWebSocketRequest, type UpgradeTarget } from '../upgrade.js';
import { Channel, STREAM_PROTOCOL_V4, STREAM_TYPE_HEADER, StreamType, type RemoteCommandOptions } from './constants.js';
import { statusFromDialError, statusFromV4ErrorStream, type RemoteCommandStatus } from './status.js';

/** Whether the upgrade request offers this WebSocket subprotocol (the translator needs v5). */
export function offersWebSocketProtocol(req: IncomingMessage, protocol: string): boolean {
  if (!isWebSocketRequest(req)) return false;
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  return offered.includes(protocol);
}

/** RFC 7230 token characters: the ws library accepts only these in subprotocol names. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const STAND_IN_PROTOCOL = 'kite-stand-in';

/**
 * Completes a WebSocket handshake on an 'upgrade' event, choosing `protocol` (which the client
 * must offer: check with offersWebSocketProtocol first).
 */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, protocol: string): Promise<WebSocket> {
  // kubectl's tunnel subprotocol (SPDY/3.1+portforward.k8s.io) has a '/', which ws refuses to
  // parse: ws negotiates a stand-in, and the real name goes back into the 101's headers.
  const negotiated = TOKEN.test(protocol) ? protocol : STAND_IN_PROTOCOL;
  if (negotiated !== protocol) req.headers['sec-websocket-protocol'] = STAND_IN_PROTOCOL;
  const server = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: (offered) => (offered.has(negotiated) ? negotiated : false) });
  if (negotiated !== protocol) {
    server.on('headers', (headers) => {
      const i = headers.findIndex((h) => h.toLowerCase().startsWith('sec-websocket-protocol:'));
      if (i >= 0) headers[i] = `Sec-WebSocket-Protocol: ${protocol}`;
    });
  }
  return new Promise((resolve) => server.handleUpgrade(req, socket, head, (ws) => resolve(ws)));
}

/**
 * Runs one exec/attach session: `ws` is kubectl's accepted v5 WebSocket, `target` the SPDY URL of
 * the kubelet's or the runtime's exec/attach endpoint for the same command. Resolves with the
 * status sent to the client once the command has ended and the WebSocket is closed, or undefined
 * when the client went away first (the SPDY side is then torn down).
 */
export async function translateRemoteCommand(ws: WebSocket, target: UpgradeTarget, options: RemoteCommandOptions): Promise<RemoteCommandStatus | undefined> {
  // Upstream drops stderr under a tty: the terminal merges it into stdout.
  const opts = { ...options, stderr: options.stderr && !options.tty };
  const early: Buffer[] = [];
  let deliver: ((message: Buffer) => void) | undefined;
  ws.on('message', (data: RawData) => {
    const message = toBuffer(data);
    if (deliver) deliver(message);
    else early.push(message);
  });
  // As upstream: an empty message on the lowest channel the client reads tells it the session is up.
  const firstChannel = opts.stdout ? Channel.Stdout : opts.stderr ? Channel.Stderr : Channel.Error;
  if (ws.readyState === ws.OPEN) ws.send(Buffer.of(firstChannel), { binary: true });
  let clientGone = ws.readyState !== ws.OPEN;
  const clientClosed = new Promise<'client-closed'>((resolve) => {
    if (clientGone) resolve('client-closed');
    ws.once('close', () => {
      clientGone = true;
      resolve('client-closed');
    });
  });

  let dialed;
  try {
    dialed = await dialSpdy(target, [STREAM_PROTOCOL_V4]);
  } catch (err) {
    return finish(ws, statusFromDialError(err));
  }
  const connection = dialed.connection;
  if (clientGone) {
    connection.destroy();
    return undefined;
  }

  try {
    // client-go's order: the error stream first, then the data streams, resize last. Readers are
    // attached as each stream opens, so nothing the runtime sends early is missed.
    const open = (type: string, wanted: boolean): Promise<SpdyStream | undefined> =>
      wanted ? connection.openStream({ [STREAM_TYPE_HEADER]: type }) : Promise.resolve(undefined);
    const errorBytes = open(StreamType.Error, true).then((s) => readAll(s!));
    const openStdin = open(StreamType.Stdin, opts.stdin);
    const outputs = [
      open(StreamType.Stdout, opts.stdout).then((s) => forward(s, Channel.Stdout, ws)),
      open(StreamType.Stderr, opts.stderr).then((s) => forward(s, Channel.Stderr, ws)),
    ];
    const [stdin, resize] = await Promise.all([openStdin, open(StreamType.Resize, opts.tty)]);

    deliver = (message) => {
      if (message.length === 0) return;
      const payload = message.subarray(1);
      switch (message[0]) {
        case Channel.Stdin:
          if (stdin && !stdin.writableEnded) stdin.write(payload);
          break;
        case Channel.Resize:
          if (resize && !resize.writableEnded) resize.write(payload);
          break;
        case Channel.Close:
          if (payload[0] === Channel.Stdin) stdin?.end();
          else if (payload[0] === Channel.Resize) resize?.end();
          break;
      }
    };
    for (const message of early.splice(0)) deliver(message);

    const outcome = await Promise.race([Promise.all([errorBytes, ...outputs]), clientClosed]);
    if (outcome === 'client-closed') {
      connection.destroy();
      return undefined;
    }
    const status = statusFromV4ErrorStream(outcome[0]);
    void connection.close();
    return finish(ws, status);
  } catch (err) {
    connection.destroy();
    return finish(ws, statusFromDialError(err));
  }
}

/** Copies a SPDY stream's data to a channel; resolves when the stream is done. */
function forward(stream: SpdyStream | undefined, channel: number, ws: WebSocket): Promise<void> {
  if (!stream) return Promise.resolve();
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.of(channel), chunk]), { binary: true });
    });
    stream.once('end', resolve);
    stream.once('close', resolve);
  });
}

function readAll(stream: SpdyStream): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    const done = (): void => resolve(Buffer.concat(chunks));
    stream.once('end', done);
    stream.once('close', done);
  });
}

/** Sends the status on channel 3 and closes the WebSocket normally. */
function finish(ws: WebSocket, status: RemoteCommandStatus): RemoteCommandStatus {
  if (ws.readyState === ws.OPEN) {
    ws.send(Buffer.concat([Buffer.of(Channel.Error), Buffer.from(JSON.stringify(status))]), { binary: true });
    ws.close(1000);
  }
  return status;
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
