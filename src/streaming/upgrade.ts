// Dialing an HTTP/1.1 upgrade (SPDY or WebSocket) towards a streaming server: the runtime's (plain
// http on loopback) or a kubelet's (https with the API server's client certificate).
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** Where to upgrade: the URL plus TLS material when it is https. */
export interface UpgradeTarget {
  url: string | URL;
  /** Passed to https.request (ca, cert, key, servername, rejectUnauthorized...). */
  tls?: Pick<https.RequestOptions, 'ca' | 'cert' | 'key' | 'servername' | 'rejectUnauthorized'>;
}

/** The server answered something other than 101: its status code and (bounded) body. */
export class UpgradeFailedError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string,
    readonly headers: http.IncomingHttpHeaders,
  ) {
    super(`unable to upgrade connection: ${body.trim() || `status ${statusCode}`}`);
  }
}

export interface Upgraded {
  /** The 101 response (its headers tell the negotiated protocol). */
  response: http.IncomingMessage;
  /** The raw connection after the 101, with any bytes that came with the response put back. */
  socket: Duplex;
}

const MAX_ERROR_BODY = 50_000;

export function dialUpgrade(
  target: UpgradeTarget,
  init: { method: string; headers: http.OutgoingHttpHeaders; signal?: AbortSignal },
): Promise<Upgraded> {
  const url = typeof target.url === 'string' ? new URL(target.url) : target.url;
  const secure = url.protocol === 'https:';
  const send = secure ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = send(url, {
      method: init.method,
      headers: init.headers,
      signal: init.signal,
      // A private agent-less request: the socket leaves the pool for good after the upgrade.
      agent: false,
      ...(secure ? target.tls : {}),
    });
    req.on('upgrade', (response, socket, head) => {
      if (head.length > 0) socket.unshift(head);
      resolve({ response, socket });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < MAX_ERROR_BODY) chunks.push(c.subarray(0, MAX_ERROR_BODY - size));
        size += c.length;
      });
      res.on('end', () => reject(new UpgradeFailedError(res.statusCode ?? 0, Buffer.concat(chunks).toString(), res.headers)));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * The raw header block of a 101 answer, to replay an upstream's upgrade to our own client. An
 * empty Sec-WebSocket-Protocol goes: Go's WebSocket server sends one when the client offered no
 * subprotocol, and browsers and other clients then fail the handshake.
 */
export function switchingProtocolsHead(rawHeaders: string[]): string {
  let head = 'HTTP/1.1 101 Switching Protocols\r\n';
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const [name, value] = [rawHeaders[i]!, rawHeaders[i + 1]!];
    if (name.toLowerCase() === 'sec-websocket-protocol' && value.trim() === '') continue;
    head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n`;
}

/** Upstream's wsstream.IsWebSocketRequest: "Connection" lists upgrade and "Upgrade" is websocket. */
export function isWebSocketRequest(req: http.IncomingMessage): boolean {
  const connection = (req.headers.connection ?? '').toLowerCase().split(',').map((t) => t.trim());
  return connection.includes('upgrade') && (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/** An upgrade request as Node hands it over: the raw connection and the bytes read past the headers. */
export interface UpgradeRequest {
  socket: Duplex;
  head: Buffer;
}

/**
 * A ServerResponse on an upgrade request's connection, so a refused upgrade is answered like any
 * other request (Status bodies, headers); the connection closes once the answer is sent. Whoever
 * accepts the upgrade instead calls takeOverUpgrade first.
 */
export function responseForUpgrade(req: http.IncomingMessage, socket: Duplex): http.ServerResponse {
  const res = new http.ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => {
    res.detachSocket(socket as Socket);
    socket.end();
  });
  return res;
}

/** Detaches the response from the connection: from here on the caller owns the raw socket. */
export function takeOverUpgrade(res: http.ServerResponse, socket: Duplex): void {
  res.detachSocket(socket as Socket);
  res.statusCode = 101;
}
