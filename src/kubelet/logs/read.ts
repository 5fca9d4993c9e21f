// Reading a container's CRI log file for `kubectl logs`, as upstream's kuberuntime/logs.ReadLogs:
// tail, since, timestamps and a byte limit; with follow, keep reading what is appended (waking on
// file-system events, or every second regardless), switch to the new file when the log is rotated,
// and stop once the container no longer runs and the file is drained. Like upstream, only the
// current file is read: rotated files are not served.
import { watch, type FSWatcher } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import type { PodLogOptions } from '../../api/validation/podlogoptions.js';
import type { Clock } from '../../util/clock.js';
import { formatLogTimeFixed, parseCriLine, type LogMessage } from './cri.js';

/** Upstream's logForceCheckPeriod: look for new data this often even without a file event. */
export const LOG_FORCE_CHECK_PERIOD_MS = 1000;
const BLOCK = 64 * 1024;
const EOL = 0x0a;

/** The options ReadLogs works with (upstream's kuberuntime LogOptions). */
export interface LogOptions {
  /** Lines from the end; -1 for all. */
  tail: number;
  /** Bytes to write at most; -1 for no limit. */
  bytes: number;
  /** Records older than this (ns since the epoch) are skipped. */
  sinceNanos?: bigint;
  follow: boolean;
  timestamp: boolean;
}

export function logOptionsFrom(opts: PodLogOptions, nowMs: number): LogOptions {
  let sinceNanos: bigint | undefined;
  if (opts.sinceSeconds !== undefined) sinceNanos = BigInt(nowMs - opts.sinceSeconds * 1000) * 1_000_000n;
  else if (opts.sinceTime) sinceNanos = BigInt(Date.parse(opts.sinceTime)) * 1_000_000n;
  return {
    tail: opts.tailLines ?? -1,
    bytes: opts.limitBytes ?? -1,
    sinceNanos,
    follow: opts.follow ?? false,
    timestamp: opts.timestamps ?? false,
  };
}

export interface ReadLogsContext {
  /** Whether the container still runs (following ends when it does not). */
  isRunning(): Promise<boolean>;
  /** Aborting ends the read quietly (the client went away). */
  signal?: AbortSignal;
  clock: Clock;
}

/** Where the last `n` lines begin (upstream's tail.FindTailLineStartIndex); n < 0 means the start. */
export async function findTailLineStart(fh: FileHandle, n: number): Promise<number> {
  if (n < 0) return 0;
  const size = (await fh.stat()).size;
  let count = 0;
  let left = size;
  let block = Buffer.alloc(0);
  for (let right = size; right > 0 && count <= n; right -= BLOCK) {
    left = Math.max(0, right - BLOCK);
    block = Buffer.alloc(right - left);
    await fh.read(block, 0, block.length, left);
    for (const b of block) if (b === EOL) count++;
  }
  // Drop whole lines from the front of the first block read until n newlines are left.
  for (; count > n; count--) {
    const idx = block.indexOf(EOL) + 1;
    block = block.subarray(idx);
    left += idx;
  }
  return left;
}

/** Writes messages as upstream's logWriter: since filter, timestamp prefix, byte limit. */
class LogWriter {
  private remain: number;
  /** Whether the next record starts a line (a fragment's continuation gets no timestamp). */
  private atLineStart = true;

  constructor(
    private readonly out: Writable,
    private readonly opts: LogOptions,
  ) {
    this.remain = opts.bytes >= 0 ? opts.bytes : Number.POSITIVE_INFINITY;
  }

  /** false once the byte limit is reached or the destination is gone. */
  async write(msg: LogMessage): Promise<boolean> {
    const startsLine = this.atLineStart;
    this.atLineStart = !msg.partial;
    if (this.opts.sinceNanos !== undefined && msg.timestamp.nanos < this.opts.sinceNanos) return true;
    let line = msg.log;
    if (this.opts.timestamp && startsLine) line = Buffer.concat([Buffer.from(`${formatLogTimeFixed(msg.timestamp)} `), line]);
    if (line.length > this.remain) line = line.subarray(0, this.remain);
    this.remain -= line.length;
    if (!(await writeTo(this.out, line))) return false;
    return this.remain > 0;
  }
}

/** Resolves false when the destination closed or failed instead of taking the data. */
async function writeTo(out: Writable, chunk: Buffer): Promise<boolean> {
  if (out.destroyed || out.writableEnded) return false;
  if (chunk.length === 0) return true;
  if (out.write(chunk)) return true;
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean) => () => {
      out.off('drain', onDrain);
      out.off('close', onClose);
      out.off('error', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    out.once('drain', onDrain);
    out.once('close', onClose);
    out.once('error', onClose);
  });
}

/** Wakes a follower on any change in the log's folder (appends, the rename and create of a rotation). */
class ChangeWaiter {
  private watcher?: FSWatcher;
  private changed = false;
  private wake?: () => void;

  constructor(private readonly dir: string) {}

  /** Resolves after a change since the last wait, or after the check period; rejects when aborted. */
  async wait(clock: Clock, signal?: AbortSignal): Promise<void> {
    if (!this.watcher) {
      try {
        this.watcher = watch(this.dir, () => this.notify());
        this.watcher.on('error', () => undefined);
      } catch {
        // Without inotify the periodic check still finds new data.
      }
    }
    if (this.changed) {
      this.changed = false;
      return;
    }
    const local = new AbortController();
    const onAbort = () => local.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.race([
        clock.sleep(LOG_FORCE_CHECK_PERIOD_MS, local.signal),
        new Promise<void>((resolve) => (this.wake = resolve)),
      ]);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      local.abort();
      this.wake = undefined;
      this.changed = false;
    }
  }

  private notify(): void {
    this.changed = true;
    this.wake?.();
  }

  close(): void {
    this.watcher?.close();
  }
}

async function inode(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).ino;
  } catch {
    return undefined;
  }
}

/**
 * Copies the log at path to out per opts. Resolves when done (end of file, byte limit, container
 * stopped while following, destination gone, or signal aborted); rejects when the file cannot be read.
 */
export async function readLogs(path: string, opts: LogOptions, out: Writable, ctx: ReadLogsContext): Promise<void> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    throw new Error(`failed to open log file ${JSON.stringify(path)}: ${(err as Error).message}`, { cause: err });
  }
  const writer = new LogWriter(out, opts);
  const waiter = new ChangeWaiter(dirname(path));
  try {
    let pos = await findTailLineStart(fh, opts.tail);
    let pending = Buffer.alloc(0);
    let drainThenStop = false;
    const buf = Buffer.alloc(BLOCK);
    for (;;) {
      if (ctx.signal?.aborted) return;
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead > 0) {
        pos += bytesRead;
        pending = pending.length ? Buffer.concat([pending, buf.subarray(0, bytesRead)]) : Buffer.from(buf.subarray(0, bytesRead));
        let start = 0;
        for (let nl = pending.indexOf(EOL); nl >= 0; nl = pending.indexOf(EOL, start)) {
          if (!(await emit(writer, pending.subarray(start, nl + 1)))) return;
          start = nl + 1;
        }
        pending = pending.subarray(start);
        continue;
      }
      // End of file.
      if (!opts.follow) {
        // An unterminated last record is still shown, as upstream does.
        if (pending.length) await emit(writer, pending);
        return;
      }
      if (drainThenStop) {
        if (pending.length) await emit(writer, pending);
        return;
      }
      // A rotation renamed our file away and the runtime reopened a new one at the path: once the
      // old one is drained, continue with the new one from its start.
      const current = await inode(path);
      if (current !== undefined && current !== (await fh.stat()).ino) {
        await fh.close();
        fh = await open(path, 'r');
        pos = 0;
        pending = Buffer.alloc(0);
        continue;
      }
      if (!(await ctx.isRunning())) {
        // Whatever the container wrote before it stopped is read once more, then we are done.
        drainThenStop = true;
        continue;
      }
      try {
        await waiter.wait(ctx.clock, ctx.signal);
      } catch {
        return;
      }
    }
  } finally {
    waiter.close();
    await fh.close().catch(() => undefined);
  }
}

/** Parses and writes one record; malformed records are skipped as upstream does. */
async function emit(writer: LogWriter, record: Buffer): Promise<boolean> {
  let msg: LogMessage;
  try {
    msg = parseCriLine(record);
  } catch {
    return true;
  }
  return writer.write(msg);
}
