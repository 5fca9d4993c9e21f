// Header block compression: one zlib stream per direction for the whole connection (SPDY/3 keeps
// the compression context across frames), primed with the SPDY/3 dictionary and sync-flushed after
// every block so each frame's block is complete on its own.
import zlib from 'node:zlib';
import { SPDY3_DICTIONARY } from './dictionary.js';
import { decodeHeaderBlock, encodeHeaderBlock, type SpdyHeaders } from './frames.js';

/** Refuse header blocks that inflate beyond this: a peer could otherwise make us buffer without bound. */
const MAX_HEADER_BLOCK = 256 * 1024;

type Zlib = zlib.Deflate | zlib.Inflate;

export class HeaderCompression {
  private readonly deflate = zlib.createDeflate({ dictionary: SPDY3_DICTIONARY, flush: zlib.constants.Z_SYNC_FLUSH });
  private readonly inflate = zlib.createInflate({ dictionary: SPDY3_DICTIONARY, flush: zlib.constants.Z_SYNC_FLUSH });
  // Blocks must pass through each context one at a time, in frame order.
  private deflating: Promise<unknown> = Promise.resolve();
  private inflating: Promise<unknown> = Promise.resolve();

  compress(headers: SpdyHeaders): Promise<Buffer> {
    const run = this.deflating.then(() => transform(this.deflate, encodeHeaderBlock(headers)));
    this.deflating = run.catch(() => undefined);
    return run;
  }

  decompress(block: Buffer): Promise<SpdyHeaders> {
    const run = this.inflating.then(() => transform(this.inflate, block)).then(decodeHeaderBlock);
    this.inflating = run.catch(() => undefined);
    return run;
  }

  close(): void {
    this.deflate.close();
    this.inflate.close();
  }
}

function transform(z: Zlib, input: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      out.push(chunk);
      size += chunk.length;
    };
    let settled = false;
    const finish = (err?: Error | null): void => {
      if (settled) return;
      settled = true;
      z.off('data', onData);
      z.off('error', finish);
      if (err) reject(err);
      else if (size > MAX_HEADER_BLOCK) reject(new Error(`SPDY header block inflates to more than ${MAX_HEADER_BLOCK} bytes`));
      else resolve(Buffer.concat(out));
    };
    z.on('data', onData);
    z.once('error', finish);
    // With flush: Z_SYNC_FLUSH every write ends on a flush point; its callback runs after its output.
    z.write(input, (err) => finish(err));
  });
}
