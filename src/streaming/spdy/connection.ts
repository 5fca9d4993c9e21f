// A SPDY/3.1 session over one upgraded connection, as Kubernetes uses it (moby/spdystream on the Go
// side): streams opened with a header set, answered with SYN_REPLY, carrying bytes both ways with
// half-close by FIN. Like spdystream, it does no flow control: it sends no WINDOW_UPDATE or
// SETTINGS and ignores the peer's, which is what every Kubernetes peer expects.
import { Duplex } from 'node:stream';
import { HeaderCompression } from './compression.js';
import {
  FLAG_FIN,
  FrameReader,
  FrameType,
  GoAwayStatus,
  Payload,
  RstStatus,
  SPDY_VERSION,
  encodeControlFrame,
  encodeDataFrame,
  type Frame,
  type SpdyHeaders,
} from './frames.js';

/** Data frames are cut to this size so one large write does not hold the connection for long. */
const MAX_DATA_CHUNK = 32 * 1024;

export interface SpdyConnectionOptions {
  /** The side that sent the HTTP upgrade request is the client: it opens odd stream ids. */
  role: 'client' | 'server';
  /** Called for each stream the peer opens; call stream.reply() to accept it. Without it peer streams are refused. */
  onStream?: (stream: SpdyStream) => void;
}

export class SpdyConnection {
  private readonly codec = new HeaderCompression();
  private readonly reader = new FrameReader();
  private readonly streams = new Map<number, SpdyStream>();
  private readonly pings = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private nextStreamId: number;
  private nextPingId: number;
  private lastPeerStreamId = 0;
  private inbound: Promise<void> = Promise.resolve();
  private outbound: Promise<void> = Promise.resolve();
  /** No new streams: we sent GOAWAY or received one. */
  private goingAway = false;
  private goAwaySent = false;
  private ended = false;
  private resolveClosed!: () => void;
  /** Resolves once the underlying connection has closed. */
  readonly closed: Promise<void> = new Promise((resolve) => (this.resolveClosed = resolve));

  constructor(
    private readonly socket: Duplex,
    private readonly options: SpdyConnectionOptions,
  ) {
    const odd = options.role === 'client';
    this.nextStreamId = odd ? 1 : 2;
    this.nextPingId = odd ? 1 : 2;
    socket.on('data', (chunk: Buffer) => this.onBytes(chunk));
    socket.on('error', () => socket.destroy());
    // The peer finished writing: finish ours once what is queued has gone out.
    socket.on('end', () => void this.outbound.then(() => socket.end()));
    // Frames already read may still be waiting for header inflation: let them through first.
    socket.on('close', () => void this.inbound.then(() => this.onSocketClosed()));
  }

  /** Opens a stream and resolves once the peer has replied (peers drop data sent before their reply). */
  openStream(headers: SpdyHeaders): Promise<SpdyStream> {
    if (this.goingAway || this.ended) return Promise.reject(new Error('SPDY connection is closed'));
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const stream = new SpdyStream(this, id, headers, true);
    this.streams.set(id, stream);
    // A failed send surfaces through `replied`, which the connection's end rejects.
    this.enqueue(async () => encodeControlFrame(FrameType.SynStream, 0, Payload.synStream(id, 0, 0, await this.codec.compress(headers)))).catch(() => undefined);
    return stream.replied.then(() => stream);
  }

  /** Round trip of a PING frame. */
  ping(): Promise<void> {
    const id = this.nextPingId;
    this.nextPingId = (this.nextPingId + 2) >>> 0;
    return new Promise((resolve, reject) => {
      if (this.ended) return reject(new Error('SPDY connection is closed'));
      this.pings.set(id, { resolve, reject });
      this.enqueue(() => encodeControlFrame(FrameType.Ping, 0, Payload.ping(id))).catch(reject);
    });
  }

  /** Sends GOAWAY after everything already queued, then ends the connection. */
  close(): Promise<void> {
    if (!this.goAwaySent && !this.ended) {
      this.goAwaySent = true;
      this.goingAway = true;
      this.enqueue(() => encodeControlFrame(FrameType.GoAway, 0, Payload.idAndCode(this.lastPeerStreamId, GoAwayStatus.Ok))).catch(() => undefined);
      void this.outbound.then(() => this.socket.end());
    }
    return this.closed;
  }

  /** Tears the connection down at once. */
  destroy(): void {
    this.socket.destroy();
  }

  /** @internal used by SpdyStream */
  sendData(id: number, data: Buffer, fin: boolean): Promise<void> {
    if (data.length === 0) return this.enqueue(() => encodeDataFrame(id, fin ? FLAG_FIN : 0, data));
    let last: Promise<void> = Promise.resolve();
    for (let at = 0; at < data.length; at += MAX_DATA_CHUNK) {
      const chunk = data.subarray(at, at + MAX_DATA_CHUNK);
      const isLast = at + MAX_DATA_CHUNK >= data.length;
      last = this.enqueue(() => encodeDataFrame(id, fin && isLast ? FLAG_FIN : 0, chunk));
    }
    return last;
  }

  /** @internal */
  sendReply(id: number, headers: SpdyHeaders, fin: boolean): Promise<void> {
    return this.enqueue(async () =>
      encodeControlFrame(FrameType.SynReply, fin ? FLAG_FIN : 0, Payload.streamHeaders(id, await this.codec.compress(headers))),
    );
  }

  /** @internal */
  sendReset(id: number, status: number): void {
    void this.enqueue(() => encodeControlFrame(FrameType.RstStream, 0, Payload.idAndCode(id, status))).catch(() => undefined);
  }

  /** @internal */
  forget(id: number): void {
    this.streams.delete(id);
  }

  // Frames leave in the order they were queued; a frame whose headers are still being compressed
  // holds back the ones queued after it.
  private enqueue(build: () => Buffer | Promise<Buffer>): Promise<void> {
    const run = this.outbound.then(async () => {
      const frame = await build();
      if (this.ended || this.socket.destroyed || this.socket.writableEnded) throw new Error('SPDY connection is closed');
      await new Promise<void>((resolve, reject) => this.socket.write(frame, (err) => (err ? reject(err) : resolve())));
    });
    this.outbound = run.catch(() => undefined);
    return run;
  }

  private onBytes(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.reader.push(chunk);
    } catch {
      this.socket.destroy();
      return;
    }
    for (const frame of frames) {
      this.inbound = this.inbound.then(() => this.handle(frame)).catch(() => {
        this.socket.destroy();
      });
    }
  }

  private async handle(frame: Frame): Promise<void> {
    if (frame.kind === 'data') {
      const stream = this.streams.get(frame.streamId);
      if (!stream) return; // already gone: spdystream also drops these
      if (frame.data.length > 0) stream.receive(frame.data);
      if (frame.flags & FLAG_FIN) stream.receiveFin();
      return;
    }
    if (frame.version !== SPDY_VERSION) throw new Error(`unsupported SPDY version ${frame.version}`);
    switch (frame.type) {
      case FrameType.SynStream: {
        const { streamId, headerBlock } = Payload.parseSynStream(frame.payload);
        // Inflate even when refusing: the compression context spans every block on the connection.
        const headers = await this.codec.decompress(headerBlock);
        const fromPeer = (streamId % 2 === 1) === (this.options.role === 'server');
        if (!fromPeer || streamId <= this.lastPeerStreamId || this.streams.has(streamId)) {
          this.sendReset(streamId, RstStatus.ProtocolError);
          return;
        }
        this.lastPeerStreamId = streamId;
        if (this.goingAway || !this.options.onStream) {
          this.sendReset(streamId, RstStatus.RefusedStream);
          return;
        }
        const stream = new SpdyStream(this, streamId, headers, false);
        this.streams.set(streamId, stream);
        if (frame.flags & FLAG_FIN) stream.receiveFin();
        this.options.onStream(stream);
        return;
      }
      case FrameType.SynReply:
      case FrameType.Headers: {
        const { streamId, headerBlock } = Payload.parseStreamHeaders(frame.payload);
        const headers = await this.codec.decompress(headerBlock);
        const stream = this.streams.get(streamId);
        if (!stream) return;
        if (frame.type === FrameType.SynReply) stream.receiveReply(headers);
        if (frame.flags & FLAG_FIN) stream.receiveFin();
        return;
      }
      case FrameType.RstStream: {
        const { id, code } = Payload.parseIdAndCode(frame.payload);
        this.streams.get(id)?.receiveReset(code);
        return;
      }
      case FrameType.Ping: {
        const id = Payload.parsePing(frame.payload);
        const ours = id % 2 === this.nextPingId % 2;
        if (!ours) void this.enqueue(() => encodeControlFrame(FrameType.Ping, 0, Payload.ping(id))).catch(() => undefined);
        else {
          this.pings.get(id)?.resolve();
          this.pings.delete(id);
        }
        return;
      }
      case FrameType.GoAway:
        // The peer opens no more streams; finish what is open, then close.
        this.goingAway = true;
        this.endWhenIdle();
        return;
      default:
        return; // SETTINGS, WINDOW_UPDATE and unknown types carry nothing kite needs
    }
  }

  /** @internal called when a stream is done both ways */
  endWhenIdle(): void {
    if (this.goingAway && this.streams.size === 0) void this.close();
  }

  private onSocketClosed(): void {
    if (this.ended) return;
    this.ended = true;
    // What a stream already received stays readable; its writable side fails from now on.
    for (const stream of [...this.streams.values()]) stream.receiveReset(RstStatus.Cancel);
    this.streams.clear();
    for (const ping of this.pings.values()) ping.reject(new Error('SPDY connection is closed'));
    this.pings.clear();
    this.codec.close();
    this.resolveClosed();
  }
}

/**
 * One SPDY stream as a Node duplex: writes become DATA frames, end() sends FIN, the peer's DATA is
 * readable and its FIN ends the readable side. A reset ends both sides without an error event.
 */
export class SpdyStream extends Duplex {
  /** Headers of the SYN_STREAM that opened the stream. */
  readonly headers: SpdyHeaders;
  replyHeaders: SpdyHeaders | undefined;
  /** The RST_STREAM status if the stream was reset. */
  resetStatus: number | undefined;
  /** @internal settles when the SYN_REPLY arrives (outgoing streams) */
  readonly replied: Promise<void>;
  private settleReply!: (err?: Error) => void;
  private localFin = false;
  private remoteFin = false;

  constructor(
    private readonly connection: SpdyConnection,
    readonly id: number,
    headers: SpdyHeaders,
    private readonly outgoing: boolean,
  ) {
    super({ allowHalfOpen: true });
    this.headers = headers;
    this.replied = new Promise<void>((resolve, reject) => {
      this.settleReply = (err) => (err ? reject(err) : resolve());
    });
    // An unawaited rejection of `replied` is reported through openStream's promise instead.
    this.replied.catch(() => undefined);
  }

  /** Accepts a stream the peer opened. */
  reply(headers: SpdyHeaders = {}): Promise<void> {
    return this.connection.sendReply(this.id, headers, false);
  }

  /** Abandons the stream, telling the peer with RST_STREAM. */
  reset(status: number = RstStatus.Cancel): void {
    if (this.resetStatus !== undefined) return;
    this.connection.sendReset(this.id, status);
    this.receiveReset(status, true);
  }

  override _read(): void {
    // Data is pushed as frames arrive; SPDY without flow control offers no way to pause the peer.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    if (this.resetStatus !== undefined) return callback(new Error('SPDY stream was reset'));
    this.connection.sendData(this.id, chunk, false).then(() => callback(), callback);
  }

  override _final(callback: (err?: Error | null) => void): void {
    if (this.resetStatus !== undefined) return callback();
    this.localFin = true;
    this.connection.sendData(this.id, Buffer.alloc(0), true).then(
      () => {
        this.maybeDone();
        callback();
      },
      () => callback(),
    );
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    if (this.resetStatus === undefined && !(this.localFin && this.remoteFin)) {
      this.resetStatus = RstStatus.Cancel;
      this.connection.sendReset(this.id, RstStatus.Cancel);
    }
    this.settleReply(new Error('SPDY stream closed before its reply'));
    this.connection.forget(this.id);
    this.connection.endWhenIdle();
    callback(err);
  }

  /** @internal */
  receive(data: Buffer): void {
    if (!this.remoteFin) this.push(data);
  }

  /** @internal */
  receiveFin(): void {
    if (this.remoteFin) return;
    this.remoteFin = true;
    this.push(null);
    this.maybeDone();
  }

  /** @internal */
  receiveReply(headers: SpdyHeaders): void {
    if (!this.outgoing || this.replyHeaders) return;
    this.replyHeaders = headers;
    this.settleReply();
  }

  /**
   * @internal Kubernetes servers reset every stream when a command ends, right after its last data:
   * data already received stays readable, unless `force` (we abandoned the stream ourselves).
   */
  receiveReset(status: number, force = false): void {
    if (this.resetStatus === undefined) {
      this.resetStatus = status;
      this.settleReply(new Error(`SPDY stream ${this.id} was reset (status ${status})`));
      if (!this.remoteFin) {
        this.remoteFin = true;
        this.push(null);
      }
    }
    // Destroying now would drop the pending 'end' (and any unread data) of the readable side.
    if (force || this.readableEnded) this.destroy();
    else this.once('end', () => this.destroy());
  }

  private maybeDone(): void {
    if (this.localFin && this.remoteFin) {
      this.connection.forget(this.id);
      this.connection.endWhenIdle();
    }
  }
}
