import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { SPDY3_DICTIONARY } from './dictionary.js';
import { FrameReader, FrameType, decodeHeaderBlock, encodeControlFrame, encodeDataFrame, encodeHeaderBlock, RstStatus } from './frames.js';
import { SpdyConnection, type SpdyStream } from './connection.js';
import { duplexPair } from '../testing.js';

function readAll(stream: SpdyStream): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.once('end', () => resolve(Buffer.concat(chunks).toString()));
  });
}

function pair(onStream?: (s: SpdyStream) => void): { client: SpdyConnection; server: SpdyConnection } {
  const [a, b] = duplexPair();
  return { client: new SpdyConnection(a, { role: 'client' }), server: new SpdyConnection(b, { role: 'server', onStream }) };
}

describe('SPDY/3 dictionary', () => {
  it('is the spec dictionary byte for byte', () => {
    assert.equal(SPDY3_DICTIONARY.length, 1423);
    assert.equal(createHash('sha256').update(SPDY3_DICTIONARY).digest('hex'), '51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02');
  });
});

describe('SPDY frames', () => {
  it('round-trips a header block, lowercasing names', () => {
    const block = encodeHeaderBlock({ streamType: 'error', port: '80' });
    assert.equal(block.readUInt32BE(0), 2);
    assert.deepEqual(decodeHeaderBlock(block), { streamtype: 'error', port: '80' });
  });

  it('joins NUL-separated values and rejects truncated blocks', () => {
    const block = encodeHeaderBlock({ a: 'x\0y' });
    assert.deepEqual(decodeHeaderBlock(block), { a: 'x, y' });
    assert.throws(() => decodeHeaderBlock(block.subarray(0, block.length - 1)), /truncated/);
  });

  it('splits a byte stream into frames whatever the chunk boundaries', () => {
    const bytes = Buffer.concat([
      encodeDataFrame(1, 0x01, Buffer.from('hello')),
      encodeControlFrame(FrameType.Ping, 0, Buffer.from([0, 0, 0, 7])),
      encodeDataFrame(3, 0, Buffer.alloc(0)),
    ]);
    for (const step of [1, 3, 8, bytes.length]) {
      const reader = new FrameReader();
      const frames = [];
      for (let i = 0; i < bytes.length; i += step) frames.push(...reader.push(bytes.subarray(i, i + step)));
      assert.equal(frames.length, 3, `step ${step}`);
      assert.deepEqual(frames[0], { kind: 'data', streamId: 1, flags: 1, data: Buffer.from('hello') });
      assert.equal(frames[1]!.kind, 'control');
      if (frames[1]!.kind === 'control') {
        assert.equal(frames[1]!.version, 3);
        assert.equal(frames[1]!.type, FrameType.Ping);
      }
      assert.deepEqual(frames[2], { kind: 'data', streamId: 3, flags: 0, data: Buffer.alloc(0) });
    }
  });
});

describe('SpdyConnection', () => {
  it('opens streams with headers, carries data both ways and half-closes with FIN', async () => {
    const serverReads: Promise<string>[] = [];
    const { client, server } = pair((s) => {
      serverReads.push(readAll(s));
      void s.reply({ ok: s.headers.streamtype! });
      s.end(`echo:${s.headers.streamtype}`);
    });
    // Several streams in a row: the header compression context carries across blocks.
    const streams = await Promise.all(['stdin', 'stdout', 'stderr', 'error'].map((t) => client.openStream({ streamType: t })));
    assert.deepEqual(streams.map((s) => s.id), [1, 3, 5, 7]);
    assert.deepEqual(streams.map((s) => s.replyHeaders?.ok), ['stdin', 'stdout', 'stderr', 'error']);
    const clientReads = streams.map(readAll);
    streams.forEach((s, i) => s.end(Buffer.alloc(100_000, i)));
    assert.deepEqual(await Promise.all(clientReads), ['echo:stdin', 'echo:stdout', 'echo:stderr', 'echo:error']);
    const got = await Promise.all(serverReads);
    assert.deepEqual(got.map((s) => s.length), [100_000, 100_000, 100_000, 100_000]);
    await client.close();
    await server.closed;
  });

  it('answers pings from the peer', async () => {
    const { client, server } = pair();
    await client.ping();
    await server.ping();
    client.destroy();
    await server.closed;
  });

  it('refuses peer streams without a handler and rejects openStream on reset', async () => {
    const { client, server } = pair();
    await assert.rejects(client.openStream({ a: 'b' }), /reset \(status 3\)/);
    client.destroy();
    await server.closed;
  });

  it('keeps data received before a reset readable, and ends the stream', async () => {
    let serverStream!: SpdyStream;
    let resetSent!: () => void;
    const accepted = new Promise<void>((resolve) => (resetSent = resolve));
    const connections = pair((s) => {
      serverStream = s;
      void s.reply().then(() => {
        s.write('last words');
        s.reset(RstStatus.Cancel);
        resetSent();
      });
    });
    const stream = await connections.client.openStream({ streamtype: 'error' });
    const text = readAll(stream);
    await accepted;
    assert.equal(await text, 'last words');
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(stream.destroyed);
    assert.equal(stream.resetStatus, RstStatus.Cancel);
    assert.ok(serverStream.destroyed);
    connections.client.destroy();
  });

  it('ends every stream when the connection goes away', async () => {
    const { client, server } = pair((s) => void s.reply());
    const stream = await client.openStream({ x: 'y' });
    const closed = once(stream, 'close');
    stream.resume();
    server.destroy();
    await closed;
    await client.closed;
    await assert.rejects(client.openStream({}), /closed/);
  });
});
