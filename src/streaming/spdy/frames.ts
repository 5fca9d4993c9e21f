// SPDY/3.1 framing (the wire format of the spec's section 2.2): the byte layout of data and control
// frames, splitting a byte stream into frames, and the uncompressed name/value header block.
// Compression of header blocks lives in compression.ts; stream state in connection.ts.

export const SPDY_VERSION = 3;
const FRAME_HEADER_SIZE = 8;
/** A frame's length field has 24 bits; refuse anything larger than this before buffering it. */
export const MAX_FRAME_PAYLOAD = 0xffffff;

export const FrameType = {
  SynStream: 1,
  SynReply: 2,
  RstStream: 3,
  Settings: 4,
  Ping: 6,
  GoAway: 7,
  Headers: 8,
  WindowUpdate: 9,
} as const;

export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

/** RST_STREAM status codes. */
export const RstStatus = {
  ProtocolError: 1,
  InvalidStream: 2,
  RefusedStream: 3,
  UnsupportedVersion: 4,
  Cancel: 5,
  InternalError: 6,
  FlowControlError: 7,
  StreamInUse: 8,
  StreamAlreadyClosed: 9,
} as const;

export const GoAwayStatus = { Ok: 0, ProtocolError: 1, InternalError: 2 } as const;

export type Frame =
  | { kind: 'data'; streamId: number; flags: number; data: Buffer }
  | { kind: 'control'; version: number; type: number; flags: number; payload: Buffer };

export type SpdyHeaders = Record<string, string>;

export function encodeDataFrame(streamId: number, flags: number, data: Buffer): Buffer {
  if (data.length > MAX_FRAME_PAYLOAD) throw new RangeError(`SPDY data frame of ${data.length} bytes is too large`);
  const head = Buffer.alloc(FRAME_HEADER_SIZE);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head.writeUInt32BE(((flags & 0xff) << 24) | data.length, 4);
  return Buffer.concat([head, data]);
}

export function encodeControlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(FRAME_HEADER_SIZE);
  head.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE((((flags & 0xff) << 24) | payload.length) >>> 0, 4);
  return Buffer.concat([head, payload]);
}

/** Splits a byte stream into frames; feed it chunks in order. */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const frames: Frame[] = [];
    while (this.buffered.length >= FRAME_HEADER_SIZE) {
      const word = this.buffered.readUInt32BE(4);
      const flags = word >>> 24;
      const length = word & 0xffffff;
      if (this.buffered.length < FRAME_HEADER_SIZE + length) break;
      const body = this.buffered.subarray(FRAME_HEADER_SIZE, FRAME_HEADER_SIZE + length);
      const first = this.buffered.readUInt32BE(0);
      if (first & 0x80000000) {
        frames.push({ kind: 'control', version: (first >>> 16) & 0x7fff, type: first & 0xffff, flags, payload: body });
      } else {
        frames.push({ kind: 'data', streamId: first & 0x7fffffff, flags, data: body });
      }
      this.buffered = this.buffered.subarray(FRAME_HEADER_SIZE + length);
    }
    // Copy the remainder so a retained subarray does not pin the whole previous chunk.
    if (this.buffered.length > 0) this.buffered = Buffer.from(this.buffered);
    return frames;
  }
}

/** SPDY/3 name/value block: 32-bit counts and lengths; names lowercase; several values joined by NUL. */
export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const entries = Object.entries(headers);
  const parts: Buffer[] = [uint32(entries.length)];
  for (const [name, value] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(value, 'utf8');
    parts.push(uint32(n.length), n, uint32(v.length), v);
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = {};
  let offset = 0;
  const read = (): Buffer => {
    if (offset + 4 > block.length) throw new Error('SPDY header block is truncated');
    const len = block.readUInt32BE(offset);
    offset += 4;
    if (offset + len > block.length) throw new Error('SPDY header block is truncated');
    const out = block.subarray(offset, offset + len);
    offset += len;
    return out;
  };
  if (block.length < 4) throw new Error('SPDY header block is truncated');
  const count = block.readUInt32BE(0);
  offset = 4;
  for (let i = 0; i < count; i++) {
    const name = read().toString('utf8').toLowerCase();
    const value = read().toString('utf8').split('\0').join(', ');
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return headers;
}

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** Payload layouts of the control frames kite sends and understands. */
export const Payload = {
  synStream(streamId: number, associatedId: number, priority: number, compressedHeaders: Buffer): Buffer {
    const b = Buffer.alloc(10);
    b.writeUInt32BE(streamId & 0x7fffffff, 0);
    b.writeUInt32BE(associatedId & 0x7fffffff, 4);
    b.writeUInt8((priority & 0x7) << 5, 8);
    return Buffer.concat([b, compressedHeaders]);
  },
  parseSynStream(p: Buffer): { streamId: number; associatedId: number; priority: number; headerBlock: Buffer } {
    need(p, 10, 'SYN_STREAM');
    return { streamId: p.readUInt32BE(0) & 0x7fffffff, associatedId: p.readUInt32BE(4) & 0x7fffffff, priority: p.readUInt8(8) >>> 5, headerBlock: p.subarray(10) };
  },
  /** SYN_REPLY and HEADERS share one layout: stream id, then the header block. */
  streamHeaders(streamId: number, compressedHeaders: Buffer): Buffer {
    return Buffer.concat([uint32(streamId & 0x7fffffff), compressedHeaders]);
  },
  parseStreamHeaders(p: Buffer): { streamId: number; headerBlock: Buffer } {
    need(p, 4, 'SYN_REPLY/HEADERS');
    return { streamId: p.readUInt32BE(0) & 0x7fffffff, headerBlock: p.subarray(4) };
  },
  /** RST_STREAM (stream id, status), GOAWAY (last good stream id, status) and WINDOW_UPDATE share a shape. */
  idAndCode(id: number, code: number): Buffer {
    return Buffer.concat([uint32(id & 0x7fffffff), uint32(code)]);
  },
  parseIdAndCode(p: Buffer): { id: number; code: number } {
    need(p, 8, 'control frame');
    return { id: p.readUInt32BE(0) & 0x7fffffff, code: p.readUInt32BE(4) };
  },
  ping(id: number): Buffer {
    return uint32(id);
  },
  parsePing(p: Buffer): number {
    need(p, 4, 'PING');
    return p.readUInt32BE(0);
  },
};

function need(p: Buffer, n: number, what: string): void {
  if (p.length < n) throw new Error(`SPDY ${what} frame is too short (${p.length} bytes)`);
}
