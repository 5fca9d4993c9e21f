// Container log rotation, as upstream's ContainerLogManager: every 10 s each running container's log
// is checked against the size limit; one that is over it is rotated: leftovers of an interrupted
// rotation are cleaned up, the oldest rotated files removed so at most maxFiles remain, the older
// rotated files gzipped, the current file renamed to <log>.<YYYYMMDD-hhmmss> and the runtime asked to
// reopen its log (a failed reopen renames the file back). The newest rotated file stays uncompressed
// (the runtime may still be flushing to it).
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { RuntimeService } from '../runtime/types.js';
import type { Clock } from '../../util/clock.js';
import { Periodic } from '../../util/periodic.js';
import type { Logger } from '../../util/log.js';

/** Upstream's containerLogMonitorInterval default. */
export const LOG_MONITOR_PERIOD_MS = 10_000;
const COMPRESS_SUFFIX = '.gz';
const TMP_SUFFIX = '.tmp';

export interface ContainerLogManagerOptions {
  runtime: Pick<RuntimeService, 'listContainers' | 'containerStatus' | 'reopenContainerLog'>;
  clock: Clock;
  logger: Logger;
  /** Bytes; a log larger than this is rotated (KubeletConfig.containerLogMaxSize). */
  maxSize: number;
  /** Files kept per container, the current one included (KubeletConfig.containerLogMaxFiles, at least 2). */
  maxFiles: number;
}

/** "20060102-150405" in UTC: the suffix of a rotated log. */
export function rotationSuffix(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

export class ContainerLogManager {
  private readonly monitor: Periodic;

  constructor(private readonly opts: ContainerLogManagerOptions) {
    if (opts.maxFiles < 2) throw new Error(`invalid MaxFiles ${opts.maxFiles}, must be > 1`);
    this.monitor = new Periodic({
      clock: opts.clock,
      periodMs: LOG_MONITOR_PERIOD_MS,
      run: () => this.rotateLogs(),
      onError: (err) => opts.logger.warn({ err }, 'failed to rotate container logs'),
    });
  }

  start(): void {
    this.monitor.start();
  }

  /** Stops the periodic check and waits for a rotation in progress. */
  stop(): Promise<void> {
    return this.monitor.stop();
  }

  /** One pass over the running containers. */
  async rotateLogs(): Promise<void> {
    const { runtime, logger } = this.opts;
    const containers = await runtime.listContainers({ state: { state: 'CONTAINER_RUNNING' } });
    for (const c of containers) {
      if (this.monitor.isStopped) return;
      try {
        const status = await runtime.containerStatus(c.id);
        const path = status.log_path;
        if (!path) continue;
        let size: number;
        try {
          size = (await stat(path)).size;
        } catch (err) {
          // The runtime may not have created it yet; reopening makes it.
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') await runtime.reopenContainerLog(c.id);
          continue;
        }
        if (size <= this.opts.maxSize) continue;
        await this.rotateLog(c.id, path);
      } catch (err) {
        logger.warn({ err, containerID: c.id }, 'failed to rotate log for container');
      }
    }
  }

  /** Rotates one container's log now. */
  async rotateLog(containerId: string, path: string): Promise<void> {
    let rotated = await this.rotatedLogs(path);
    rotated = await this.cleanupUnusedLogs(rotated);
    rotated = await this.removeExcessLogs(rotated);
    for (const f of rotated) if (!f.endsWith(COMPRESS_SUFFIX)) await compressLog(f);
    await this.rotateLatestLog(containerId, path);
  }

  /** Removes every rotated file of a container's log (when the container is removed). */
  async clean(path: string): Promise<void> {
    for (const f of await this.rotatedLogs(path)) await unlink(f).catch(() => undefined);
  }

  private async rotatedLogs(path: string): Promise<string[]> {
    const dir = dirname(path);
    const prefix = `${basename(path)}.`;
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return [];
    }
    return names.filter((n) => n.startsWith(prefix)).map((n) => join(dir, n)).sort();
  }

  /** Temporary files of an interrupted compression, and originals whose compressed copy exists. */
  private async cleanupUnusedLogs(logs: string[]): Promise<string[]> {
    const set = new Set(logs);
    const kept: string[] = [];
    for (const l of logs) {
      const unused = l.endsWith(TMP_SUFFIX) || (!l.endsWith(COMPRESS_SUFFIX) && set.has(l + COMPRESS_SUFFIX));
      if (unused) await unlink(l).catch(() => undefined);
      else kept.push(l);
    }
    return kept;
  }

  /** Keeps maxFiles - 2 rotated files: with the one about to be rotated and the new current file, maxFiles. */
  private async removeExcessLogs(logs: string[]): Promise<string[]> {
    const keep = this.opts.maxFiles - 2;
    const excess = Math.max(0, logs.length - keep);
    for (const l of logs.slice(0, excess)) await unlink(l);
    return logs.slice(excess);
  }

  private async rotateLatestLog(containerId: string, path: string): Promise<void> {
    const rotated = `${path}.${rotationSuffix(this.opts.clock.now())}`;
    await rename(path, rotated);
    try {
      await this.opts.runtime.reopenContainerLog(containerId);
    } catch (err) {
      // Without a new file the runtime keeps writing to the renamed one: put it back.
      await rename(rotated, path).catch((e: unknown) => this.opts.logger.error({ err: e, path }, 'failed to rename rotated log back'));
      throw new Error(`failed to reopen container log ${JSON.stringify(containerId)}: ${(err as Error).message}`, { cause: err });
    }
  }
}

async function compressLog(path: string): Promise<void> {
  const tmp = `${path}${COMPRESS_SUFFIX}${TMP_SUFFIX}`;
  await pipeline(createReadStream(path), createGzip(), createWriteStream(tmp));
  await rename(tmp, path + COMPRESS_SUFFIX);
  await unlink(path);
}
