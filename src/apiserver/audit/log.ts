// The log backend (`--audit-log-path`): one JSON Event per line, to a file or to stdout (`-`). The
// file rotates as upstream's lumberjack writer does: before a line would take it past
// --audit-log-maxsize megabytes it is renamed to `<name>-<UTC time>.<ext>`, then backups beyond
// --audit-log-maxbackup, or older than --audit-log-maxage days, are removed (0: keep them). Writes are
// synchronous, as upstream's default blocking mode; a failed write is logged, never the request's error.
import { closeSync, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import type { AuditEvent } from './event.js';

export interface LogBackendOptions {
  /** A file path, or `-` for stdout. */
  path: string;
  /** Days a backup is kept (0: no limit). */
  maxAgeDays: number;
  /** Backups kept (0: no limit). */
  maxBackups: number;
  /** Megabytes before rotation (0: lumberjack's default, 100). */
  maxSizeMB: number;
  clock: Clock;
  logger: Logger;
}

export interface AuditBackend {
  write(event: AuditEvent): void;
  close(): void;
}

const megabyte = 1024 * 1024;
const dayMs = 24 * 3600 * 1000;

/** lumberjack's backup time format, 2006-01-02T15-04-05.000, in UTC. */
export function backupTime(ms: number): string {
  return new Date(ms).toISOString().replace(/:/g, '-').replace(/Z$/, '');
}

export class LogBackend implements AuditBackend {
  private fd?: number;
  private size = 0;
  private readonly maxBytes: number;
  private readonly prefix: string;
  private readonly ext: string;

  constructor(private readonly opts: LogBackendOptions) {
    this.maxBytes = (opts.maxSizeMB || 100) * megabyte;
    this.ext = extname(opts.path);
    this.prefix = `${basename(opts.path, this.ext)}-`;
  }

  write(event: AuditEvent): void {
    const line = `${JSON.stringify(event)}\n`;
    try {
      if (this.opts.path === '-') {
        process.stdout.write(line);
        return;
      }
      const bytes = Buffer.byteLength(line);
      if (this.fd === undefined) this.open();
      if (this.size > 0 && this.size + bytes > this.maxBytes) this.rotate();
      writeSync(this.fd!, line);
      this.size += bytes;
    } catch (err) {
      this.opts.logger.error({ err, path: this.opts.path }, 'Error in audit plugin \'log\' affecting 1 audit events');
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private open(): void {
    mkdirSync(dirname(this.opts.path), { recursive: true });
    this.fd = openSync(this.opts.path, 'a', 0o600);
    this.size = statSync(this.opts.path).size;
  }

  private rotate(): void {
    this.close();
    renameSync(this.opts.path, join(dirname(this.opts.path), `${this.prefix}${backupTime(this.opts.clock.now())}${this.ext}`));
    this.open();
    this.removeOldBackups();
  }

  private removeOldBackups(): void {
    const { maxBackups, maxAgeDays, clock } = this.opts;
    if (maxBackups === 0 && maxAgeDays === 0) return;
    const dir = dirname(this.opts.path);
    // Newest first: the name's time sorts as text.
    const backups = readdirSync(dir)
      .filter((f) => f.startsWith(this.prefix) && f.endsWith(this.ext) && backupTimeOf(f.slice(this.prefix.length, f.length - this.ext.length)) !== undefined)
      .sort()
      .reverse();
    const cutoff = clock.now() - maxAgeDays * dayMs;
    backups.forEach((f, i) => {
      const at = backupTimeOf(f.slice(this.prefix.length, f.length - this.ext.length))!;
      if ((maxBackups > 0 && i >= maxBackups) || (maxAgeDays > 0 && at < cutoff)) unlinkSync(join(dir, f));
    });
  }
}

/** The time in a backup's name, or undefined when the name is not one of ours. */
function backupTimeOf(text: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(text);
  return m ? Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`) : undefined;
}
