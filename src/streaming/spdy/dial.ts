// The SPDY/3.1 upgrade handshake of Kubernetes' httpstream package: the client offers protocol
// versions in X-Stream-Protocol-Version (one header line each, in order of preference), the server
// answers 101 with the one it chose.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { dialUpgrade, type UpgradeTarget } from '../upgrade.js';
import { SpdyConnection, type SpdyStream } from './connection.js';

export const SPDY_UPGRADE = 'SPDY/3.1';
export const HEADER_PROTOCOL_VERSION = 'X-Stream-Protocol-Version';
export const HEADER_ACCEPTED_PROTOCOL_VERSIONS = 'X-Accepted-Stream-Protocol-Versions';

export interface SpdyDialed {
  connection: SpdyConnection;
  /** The protocol the server chose ("" when it named none). */
  protocol: string;
}

/** Upgrades to SPDY/3.1 (a POST, as client-go does) and starts a client session. */
export async function dialSpdy(target: UpgradeTarget, protocols: string[], signal?: AbortSignal): Promise<SpdyDialed> {
  const { response, socket } = await dialUpgrade(target, {
    method: 'POST',
    headers: { Connection: 'Upgrade', Upgrade: SPDY_UPGRADE, [HEADER_PROTOCOL_VERSION]: protocols },
    signal,
  });
  const protocol = headerValue(response, HEADER_PROTOCOL_VERSION);
  if (protocols.length > 0 && protocol && !protocols.includes(protocol)) {
    socket.destroy();
    throw new Error(`protocol ${JSON.stringify(protocol)} was not one of the requested ${JSON.stringify(protocols)}`);
  }
  return { connection: new SpdyConnection(socket, { role: 'client' }), protocol };
}

/**
 * Server side of the handshake on an 'upgrade' event: picks the first of the client's protocols the
 * server supports (upstream's negotiation), answers 101 and starts a server session. Answers 403 and
 * returns undefined when none matches.
 */
export function acceptSpdy(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  supported: string[],
  onStream: (stream: SpdyStream) => void,
): SpdyDialed | undefined {
  const offered = (req.headersDistinct[HEADER_PROTOCOL_VERSION.toLowerCase()] ?? []).flatMap((v) => v.split(',').map((s) => s.trim())).filter(Boolean);
  const protocol = offered.find((p) => supported.includes(p)) ?? '';
  if (offered.length > 0 && !protocol) {
    const body = `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server supports [${supported.join(' ')}]\n`;
    socket.end(
      `HTTP/1.1 403 Forbidden\r\n${HEADER_ACCEPTED_PROTOCOL_VERSIONS}: ${supported.join(', ')}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    return undefined;
  }
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${SPDY_UPGRADE}\r\n` +
      (protocol ? `${HEADER_PROTOCOL_VERSION}: ${protocol}\r\n` : '') +
      '\r\n',
  );
  if (head.length > 0) socket.unshift(head);
  return { connection: new SpdyConnection(socket, { role: 'server', onStream }), protocol };
}

function headerValue(res: IncomingMessage, name: string): string {
  const v = res.headers[name.toLowerCase()];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}
