import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { isWebSocketRequest, switchingProtocolsHead } from './upgrade.js';

describe('switchingProtocolsHead', () => {
  it('replays the upstream headers in order', () => {
    assert.equal(
      switchingProtocolsHead(['Upgrade', 'websocket', 'Connection', 'Upgrade', 'Sec-WebSocket-Protocol', 'v4.channel.k8s.io']),
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n',
    );
  });

  it('drops the empty subprotocol Go answers a client that offered none', () => {
    assert.equal(
      switchingProtocolsHead(['Upgrade', 'websocket', 'Sec-Websocket-Protocol', '', 'Sec-WebSocket-Accept', 'x']),
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: x\r\n\r\n',
    );
  });
});

describe('isWebSocketRequest', () => {
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
  const table: [Record<string, string>, boolean][] = [
    [{ connection: 'Upgrade', upgrade: 'websocket' }, true],
    [{ connection: 'keep-alive, Upgrade', upgrade: 'WebSocket' }, true],
    [{ connection: 'Upgrade', upgrade: 'SPDY/3.1' }, false],
    [{ upgrade: 'websocket' }, false],
    [{ connection: 'upgraded', upgrade: 'websocket' }, false],
  ];
  for (const [headers, want] of table) {
    it(`${JSON.stringify(headers)} → ${want}`, () => assert.equal(isWebSocketRequest(req(headers)), want));
  }
});
