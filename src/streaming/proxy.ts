// Streams that need no translation are relayed as bytes, as upstream's UpgradeAwareHandler does:
// the kubelet relays exec/attach/port-forward upgrades to the runtime's streaming server, and the
// API server relays port-forward (plain SPDY, or SPDY tunnelled in WebSocket messages by kubectl
// 1.30+) to the kubelet. Neither end of a relay parses SPDY.
import { STATUS_CODES, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData } from 'ws';
import { HEADER_PROTOCOL_VERSION, SPDY_UPGRADE } from './spdy/dial.js';
import { dialUpgrade, switchingProtocolsHead, UpgradeFailedError, type UpgradeTarget } from './upgrade.js';
import { PORT_FORWARD_PROTOCOL_V1, WS_PORT_FORWARD_TUNNEL_PROTOCOL } from './remotecommand/constants.js';
import { acceptWebSocket } from './remotecommand/translate.js';

/** Request headers an upgrade needs end to end; credentials and the rest stay on their own hop. */
const FORWARDED_HEADERS = [
  'upgrade',
  'connection',
  HEADER_PROTOCOL_VERSION.toLowerCase(),
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-protocol',
  'sec-websocket-extensions',
];

/**
 * Replays the client's upgrade request (method and upgrade headers) to `target`; on 101 relays the
 * answer and then pipes bytes both ways until either side closes. Rejects without touching
 * `socket` when the target cannot be reached or refuses (UpgradeFailedError): the caller answers,
 * e.g. with writeUpgradeFailure.
 */
export async function proxyUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: UpgradeTarget): Promise<void> {
  const headers: OutgoingHttpHeaders = {};
  for (const name of FORWARDED_HEADERS) {
    const values = req.headersDistinct[name];
    if (values && values.length > 0) headers[name] = values.length === 1 ? values[0] : values;
  }
  const upstream = await dialUpgrade(target, { method: req.method ?? 'POST', headers });
  socket.write(switchingProtocolsHead(upstream.response.rawHeaders));
  if (head.length > 0) upstream.socket.write(head);
  pipeBoth(socket, upstream.socket);
}

/**
 * Port-forward for kubectl's WebSocket tunnel (subprotocol SPDY/3.1+portforward.k8s.io): upgrades
 * to SPDY towards `target` first, then accepts the WebSocket and carries the SPDY bytes in binary
 * messages. Rejects like proxyUpgrade, before the WebSocket is accepted, so the client can fall
 * back or report the error.
 */
export async function tunnelPortForward(req: IncomingMessage, socket: Duplex, head: Buffer, target: UpgradeTarget): Promise<void> {
  const upstream = await dialUpgrade(target, {
    method: 'POST',
    headers: { Connection: 'Upgrade', Upgrade: SPDY_UPGRADE, [HEADER_PROTOCOL_VERSION]: PORT_FORWARD_PROTOCOL_V1 },
  });
  const ws = await acceptWebSocket(req, socket, head, WS_PORT_FORWARD_TUNNEL_PROTOCOL);
  const spdy = upstream.socket;
  ws.on('message', (data: RawData) => {
    if (!spdy.destroyed) spdy.write(Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer));
  });
  spdy.on('data', (chunk: Buffer) => {
    if (ws.readyState === ws.OPEN) ws.send(chunk, { binary: true });
  });
  ws.once('close', () => spdy.destroy());
  spdy.once('close', () => ws.close(1000));
  spdy.on('error', () => spdy.destroy());
  ws.on('error', () => ws.terminate());
}

/** Answers an upgrade that could not be relayed: the target's own answer, or 500 with the error. */
export function writeUpgradeFailure(socket: Duplex, err: unknown): void {
  const code = err instanceof UpgradeFailedError ? err.statusCode : 500;
  const body = err instanceof UpgradeFailedError ? err.body : `${err instanceof Error ? err.message : String(err)}\n`;
  const type = err instanceof UpgradeFailedError ? (err.headers['content-type'] ?? 'text/plain; charset=utf-8') : 'text/plain; charset=utf-8';
  socket.end(
    `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function pipeBoth(a: Duplex, b: Duplex): void {
  a.pipe(b);
  b.pipe(a);
  const teardown = (): void => {
    a.destroy();
    b.destroy();
  };
  a.once('close', teardown);
  b.once('close', teardown);
  a.on('error', teardown);
  b.on('error', teardown);
}
